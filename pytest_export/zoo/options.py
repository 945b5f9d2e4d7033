"""The zoo options: --export-model, --export-model-max-params, --export-model-shapes (and their ini twins)."""

from __future__ import annotations

import fnmatch
import re
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

import pytest

from pytest_export.session_state import plugin_session

__all__ = ["SHAPE_CHOICES", "ZooOptions", "add_options", "resolve", "zoo_options"]

#: How a --export-model-shapes rule replaces the inferred dynamic dims of the models it matches.
SHAPE_CHOICES = ("inferred", "batch", "static")


@dataclass(frozen=True)
class ZooOptions:
    specs: tuple[str, ...] = ()
    max_params: int | None = None
    shapes: tuple[tuple[str, str], ...] = ()  # (glob over zoo ids, one of SHAPE_CHOICES), first match wins

    def shapes_for(self, zoo_id: str) -> str:
        """Return how the dynamic dims of ``zoo_id`` are chosen (the first matching rule, else inferred)."""
        return next((how for glob, how in self.shapes if fnmatch.fnmatchcase(zoo_id, glob)), "inferred")


def zoo_options(config: pytest.Config) -> ZooOptions:
    """Return the session's zoo options (resolved in the zoo's pytest_configure, kept on the PluginSession)."""
    return plugin_session(config).zoo


def add_options(parser: pytest.Parser, group: Any) -> None:
    """Register the zoo options."""
    group.addoption("--export-model", action="append", dest="export_model", default=[], metavar="SPEC",
                    help="check a zoo's models with no test code: torchvision:GLOB, timm:GLOB, hf:GLOB "
                    "(hf:TYPE@AutoClass), package.module:factory; !GLOB leaves models out (repeatable; ini "
                    "export_models, one per line)")
    group.addoption("--export-model-max-params", dest="export_model_max_params", default=None, metavar="N",
                    help="skip zoo models with more parameters than N, e.g. 25M (default 100M; "
                    "ini export_model_max_params)")
    group.addoption("--export-model-shapes", action="append", dest="export_model_shapes", default=[],
                    metavar="GLOB=HOW", help="override the inferred dynamic dims of the zoo models whose id "
                    "(timm/test_vit) matches GLOB: inferred, batch (the batch only) or static (repeatable; ini "
                    "export_model_shapes)")
    parser.addini("export_models", "zoo specs to check, one per line (see --export-model)", type="linelist",
                  default=[])
    parser.addini("export_model_max_params", "most parameters a zoo model may have (default 100M)", default="")
    parser.addini("export_model_shapes", "GLOB=HOW rules for zoo dynamic dims, one per line", type="linelist",
                  default=[])


def resolve(config: pytest.Config) -> ZooOptions:
    """Return the session's zoo options; raise pytest.UsageError naming a bad one."""
    from exportcore.zoo.common import DEFAULT_MAX_PARAMS
    from exportcore.zoo.specs import parse_spec
    from exportcore.zoo.common import ZooSpecError

    specs = tuple(config.getoption("export_model") or config.getini("export_models") or ())
    for spec in specs:
        try:
            parse_spec(spec)
        except ZooSpecError as exc:
            raise pytest.UsageError(f"--export-model: {exc}") from None
    raw = config.getoption("export_model_max_params") or config.getini("export_model_max_params") or ""
    max_params = _count(str(raw)) if str(raw).strip() else DEFAULT_MAX_PARAMS
    rules = []
    for rule in config.getoption("export_model_shapes") or config.getini("export_model_shapes") or ():
        glob, sep, how = str(rule).partition("=")
        if not sep or not glob.strip() or how.strip() not in SHAPE_CHOICES:
            raise pytest.UsageError(f"--export-model-shapes {rule!r}: expected GLOB=HOW with HOW one of "
                                    f"{', '.join(SHAPE_CHOICES)} (e.g. 'timm/*vit*=batch')")
        rules.append((glob.strip(), how.strip()))
    return ZooOptions(specs, max_params, tuple(rules))


#: Counts above this are clamped: no model has that many parameters, and a count such as 1e400 (inf as a
#: float, an INTERNALERROR once) or 1e999999999 (a billion-digit int) must not cost anything to hold.
_MOST_PARAMS = 10**18


def _count(raw: str) -> int:
    match = re.fullmatch(r"\s*([0-9]*\.?[0-9]+(?:[eE]\+?[0-9]+)?)\s*([kKmMbBgG]?)\s*", raw)
    if not match:
        raise pytest.UsageError(f"--export-model-max-params must be a parameter count such as 25M, 1.5B, 1e6 or "
                                f"25000000, got {raw!r}")
    scale = {"": 1, "k": 10**3, "m": 10**6, "b": 10**9, "g": 10**9}[match.group(2).lower()]
    # Decimal, not float: exact for 1.5B, and "1e400" stays a number (float makes it inf, int(inf) raises)
    number = Decimal(match.group(1))
    if number.adjusted() > 18:  # before any arithmetic: 1e999999999 * 10**6 overflows Decimal's context
        return _MOST_PARAMS
    value = number * scale
    return _MOST_PARAMS if value > _MOST_PARAMS else int(value)
