"""Parse and validate ``@pytest.mark.exportable(...)`` arguments into an ExportSpec.

No torch here: validation runs at collection time, before any export.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping, Sequence

from exportcore.case import CHECKS

__all__ = ["MARKER", "MARKER_HELP", "Expectation", "ExportSpec", "MarkerError", "parse_marker"]

MARKER = "exportable"

MARKER_HELP = (
    "exportable(dynamic_shapes=None, modes=None, checks=None, rtol=None, atol=None, examples=None, "
    "inputs=None, expect=None): the test returns (model, args), (model, args, kwargs) or an "
    "exportcore.Case; pytest-export runs it once per export mode (strict, non_strict, training) "
    "and checks it exports and behaves like eager. expect={mode: reason} marks an expected "
    "failure (like xfail(strict=True)); expect={mode: {'reason': ..., 'category': ...}} also pins "
    "the failure category."
)

ARGUMENTS = ("dynamic_shapes", "modes", "checks", "rtol", "atol", "examples", "inputs", "expect")


class MarkerError(ValueError):
    """A misused exportable marker; the message names the argument."""


@dataclass(frozen=True)
class Expectation:
    """An expected failure in one mode."""

    reason: str
    category: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """Return the plain-dict form stored in records."""
        return {"reason": self.reason, "category": self.category}


@dataclass(frozen=True)
class ExportSpec:
    """Validated marker arguments; None means "use the run's default"."""

    dynamic_shapes: Any = None
    modes: tuple[str, ...] | None = None
    checks: tuple[str, ...] | None = None
    rtol: float | None = None
    atol: float | None = None
    examples: int | None = None
    inputs: Any = None
    expect: Mapping[str, Expectation] = field(default_factory=dict)


def parse_marker(args: Sequence[Any], kwargs: Mapping[str, Any], known_modes: Sequence[str]) -> ExportSpec:
    """Return the ExportSpec for a marker's arguments; raise MarkerError naming the bad one."""
    if args:
        raise MarkerError(f"takes keyword arguments only, got positional {args!r}")
    unknown = sorted(set(kwargs) - set(ARGUMENTS))
    if unknown:
        raise MarkerError(f"unknown argument {unknown[0]!r}; expected one of {', '.join(ARGUMENTS)}")
    dynamic_shapes = kwargs.get("dynamic_shapes")
    # torch.export takes a dict, tuple or list (or a ShapesCollection, which is dict-like).
    if dynamic_shapes is not None and not _is_shapes_container(dynamic_shapes):
        raise MarkerError(
            f"dynamic_shapes must be a dict, tuple, list or None, got {type(dynamic_shapes).__name__}"
        )
    modes = _names("modes", kwargs.get("modes"), known_modes, "mode")
    if modes == ():
        raise MarkerError("modes must name at least one mode")
    checks = _names("checks", kwargs.get("checks"), CHECKS, "check")
    rtol = _tolerance("rtol", kwargs.get("rtol"))
    atol = _tolerance("atol", kwargs.get("atol"))
    examples = kwargs.get("examples")
    if examples is not None and (isinstance(examples, bool) or not isinstance(examples, int) or examples < 0):
        raise MarkerError(f"examples must be a non-negative int, got {examples!r}")
    inputs = kwargs.get("inputs")
    if inputs is not None and not callable(inputs) and not _is_strategy(inputs):
        raise MarkerError(f"inputs must be a callable or a hypothesis strategy, got {type(inputs).__name__}")
    expect = _expectations(kwargs.get("expect"), modes if modes is not None else tuple(known_modes))
    return ExportSpec(dynamic_shapes, modes, checks, rtol, atol, examples, inputs, expect)


def _is_shapes_container(value: Any) -> bool:
    if isinstance(value, (dict, tuple, list)):
        return True
    # by name: validating a marker never imports torch (ShapesSpec/ParamsSpec: torch >= 2.14)
    return type(value).__name__ in ("ShapesCollection", "AdditionalInputs", "ShapesSpec", "ParamsSpec")


def _is_strategy(value: Any) -> bool:
    # Checked by class name so that validating a marker never imports hypothesis.
    return any(c.__name__ == "SearchStrategy" for c in type(value).__mro__)


def _names(arg: str, value: Any, known: Iterable[str], what: str) -> tuple[str, ...] | None:
    if value is None:
        return None
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, (list, tuple, set, frozenset)):
        raise MarkerError(f"{arg} must be a list of {what} names, got {type(value).__name__}")
    known = tuple(known)
    names: list[str] = []
    for name in value:
        if not isinstance(name, str):
            raise MarkerError(f"{arg} must contain {what} names (str), got {name!r}")
        if name not in known:
            raise MarkerError(f"{arg}: unknown {what} {name!r}; known: {', '.join(known)}")
        if name not in names:
            names.append(name)
    return tuple(names)


def _tolerance(arg: str, value: Any) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
        raise MarkerError(f"{arg} must be a non-negative number, got {value!r}")
    return float(value)


def _expectations(value: Any, modes: Sequence[str]) -> dict[str, Expectation]:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise MarkerError(f"expect must be a dict {{mode: reason}}, got {type(value).__name__}")
    out: dict[str, Expectation] = {}
    for mode, spec in value.items():
        if mode not in modes:
            raise MarkerError(f"expect names mode {mode!r}, which this test does not run (modes: {', '.join(modes)})")
        if isinstance(spec, str):
            out[mode] = Expectation(spec)
            continue
        if not isinstance(spec, Mapping):
            raise MarkerError(f"expect[{mode!r}] must be a reason string or a dict, got {type(spec).__name__}")
        extra = sorted(set(spec) - {"reason", "category"})
        if extra:
            raise MarkerError(f"expect[{mode!r}]: unknown key {extra[0]!r}; expected 'reason' and 'category'")
        reason, category = spec.get("reason"), spec.get("category")
        if not isinstance(reason, str) or not reason:
            raise MarkerError(f"expect[{mode!r}]['reason'] must be a non-empty string, got {reason!r}")
        if category is not None and not isinstance(category, str):
            raise MarkerError(f"expect[{mode!r}]['category'] must be a string or None, got {category!r}")
        out[mode] = Expectation(reason, category)
    return out
