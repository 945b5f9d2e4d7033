"""Parse and validate ``@pytest.mark.exportable(...)`` arguments into an ExportSpec.

A test may carry the marker at several levels: on a ``pytest.param(..., marks=...)``, on the
function, on its class, on its module (``pytestmark``). They merge, **closest wins per argument**:
a parameter's marker is closest, then the function's, the class's, the module's. An argument a
closer marker gives (even ``None``, "the run's default") replaces the same argument of a farther
one whole (``expect=`` is replaced, not merged key by key); arguments it does not give come from
the farther marker. The merged arguments are validated as one marker, so a combination that
cannot be honoured (a function's ``expect={"strict": ...}`` under a parameter's
``modes=["non_strict"]``) is a collection error naming the test and the argument.

No torch here: validation runs at collection time, before any export.
"""

from __future__ import annotations

import difflib
import unittest
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Iterable, Mapping, Sequence

from exportcore.case import CHECKS, recorded_inputs_problem
from exportcore.columns import Column
from exportcore.devices import DEVICES
from exportcore.modes import mode_names, target_mode_problem
from exportcore.targets import TARGETS
from pytest_export.results.expectation import Expectation

if TYPE_CHECKING:
    import pytest

__all__ = [
    "MARKER", "MARKER_HELP", "MODE_PARAM", "Expectation", "ExportSpec", "MarkerError", "ModeParam", "item_case_id",
    "item_column", "item_mode", "item_spec", "markers_of", "parse_marker", "parse_markers", "refused_item",
]

MARKER = "exportable"
#: The parametrize argname that carries the mode (a test may take it as an argument).
MODE_PARAM = "export_mode"

MARKER_HELP = (
    "exportable(dynamic_shapes=None, modes=None, checks=None, rtol=None, atol=None, examples=None, "
    "inputs=None, expect=None): the test returns (model, args), (model, args, kwargs) or an "
    "exportcore.Case; pytest-export runs it once per export mode (strict, non_strict, training) "
    "and checks it exports and behaves like eager. expect={mode: reason} marks an expected "
    "failure (like xfail(strict=True)); expect={mode: {'reason': ..., 'category': ...}} also pins "
    "the failure category. targets=['aoti', 'onnx', 'executorch'] also checks the case in those "
    "runtimes (target_mode='strict' to start from a strict export; target_options={'aoti': "
    "{'check_inputs': True}}); devices=['cpu', 'cuda'] runs each on those devices; "
    "export_config={'backed_size_oblivious': True} sets torch.fx.experimental._config options "
    "around the export and its checks; recorded_inputs=[(x1,), (x2,)] (or a torch.export.AdditionalInputs, "
    "a torch.onnx.InputObserver) checks each recorded input set like the example. Also valid on "
    "pytest.param(..., marks=...): markers merge, the closest (parameter, function, class, module) "
    "winning per argument."
)

ARGUMENTS = ("dynamic_shapes", "modes", "checks", "rtol", "atol", "examples", "inputs", "expect",
             "targets", "devices", "target_mode", "target_options", "export_config", "recorded_inputs")


class MarkerError(ValueError):
    """A misused exportable marker; the message names the argument."""


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
    targets: tuple[str, ...] | None = None
    devices: tuple[str, ...] | None = None
    target_mode: str | None = None
    target_options: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    #: torch.fx.experimental._config options set around the export and its checks
    #: (``{"backed_size_oblivious": True}``: what a verified option rescue says to write)
    export_config: Mapping[str, Any] = field(default_factory=dict)
    #: input sets the model really sees, each checked like the example (exportcore.checks.recorded)
    recorded_inputs: Any = None


class ModeParam(str):
    """An item's export column (its ``export_mode`` argument), carrying the Column and the parsed marker of its test.

    Both are made once, where the test is parametrized (pytest_export.parametrize); pytest hands
    parameter values on to each item (``item.callspec.params``), so the item reads the column and
    spec it was parametrized with instead of parsing its label and markers again. A str (the
    column's label), so a test comparing ``export_mode == "strict"`` or using it as a key sees the
    column as before.
    """

    column: Column
    spec: ExportSpec

    def __new__(cls, column: Column, spec: ExportSpec) -> ModeParam:
        self = super().__new__(cls, column.label)
        self.column = column
        self.spec = spec
        return self

    def __reduce__(self) -> tuple[type, tuple[str]]:
        # A test may hand its mode to another process (multiprocessing pickles it): it travels as the
        # plain column, since the spec (an inputs= factory, Dims) need not pickle.
        return str, (str(self),)


def parse_marker(args: Sequence[Any], kwargs: Mapping[str, Any], known_modes: Sequence[str]) -> ExportSpec:
    """Return the ExportSpec for a marker's arguments; raise MarkerError naming the bad one."""
    if args:
        raise MarkerError(f"takes keyword arguments only, got positional {args!r}")
    unknown = sorted(set(kwargs) - set(ARGUMENTS))
    if unknown:
        raise MarkerError(f"unknown argument {unknown[0]!r}{_did_you_mean(unknown[0], ARGUMENTS)}; "
                          f"expected one of {', '.join(ARGUMENTS)}")
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
    targets = _names("targets", kwargs.get("targets"), TARGETS, "target")
    devices = _names("devices", kwargs.get("devices"), DEVICES, "device")
    if devices == ():
        raise MarkerError("devices must name at least one device")
    target_mode = kwargs.get("target_mode")
    if target_mode is not None and target_mode_problem(target_mode):
        raise MarkerError(f"target_mode {target_mode_problem(target_mode)}")
    target_options = _target_options(kwargs.get("target_options"))
    names = (*(modes if modes is not None else tuple(known_modes)), *TARGETS)
    expect = _expectations(kwargs.get("expect"), names)
    export_config = kwargs.get("export_config") or {}
    if not isinstance(export_config, Mapping) or not all(isinstance(k, str) for k in export_config):
        # the names are checked where torch is loaded (the run), against the installed torch's config
        raise MarkerError(f"export_config must be a dict of torch.fx.experimental._config option names to values, "
                          f"got {export_config!r}")
    recorded_inputs = kwargs.get("recorded_inputs")
    if recorded_inputs_problem(recorded_inputs):  # each set's own structure is checked in the run (torch loaded)
        raise MarkerError(recorded_inputs_problem(recorded_inputs))
    return ExportSpec(dynamic_shapes, modes, checks, rtol, atol, examples, inputs, expect,
                      targets, devices, target_mode, target_options, dict(export_config), recorded_inputs)


def markers_of(node: Any, param_marks: Iterable[Any] = ()) -> list[Any]:
    """Return the exportable markers that apply to ``node``, closest first.

    pytest lists a parametrized item's own markers function-first, then its parameters' marks,
    so its get_closest_marker() would let the function's marker hide a parameter's: the
    parameters' marks (``param_marks``, or the item's callspec) are put first here.
    """
    callspec = getattr(node, "callspec", None)
    params = [m for m in (param_marks or getattr(callspec, "marks", ())) if m.name == MARKER]
    rest = [m for m in node.iter_markers(MARKER) if not any(m is p for p in params)]
    return [*params, *rest]


def parse_markers(markers: Sequence[Any], known_modes: Sequence[str]) -> ExportSpec:
    """Return the ExportSpec of several exportable markers (closest first), merged per argument."""
    args = next((m.args for m in markers if m.args), ())
    kwargs: dict[str, Any] = {}
    for marker in reversed(markers):  # farthest first, so a closer marker's argument replaces it
        kwargs.update(marker.kwargs)
    return parse_marker(args, kwargs, known_modes)


def item_spec(item: Any, known_modes: Sequence[str]) -> ExportSpec:
    """Return the merged ExportSpec of an exportable item (see the module docstring for the rule).

    The spec parsed when the test was parametrized (:class:`ModeParam`); the markers are parsed here
    only for an item whose mode parameter another plugin replaced.
    """
    param = getattr(getattr(item, "callspec", None), "params", {}).get(MODE_PARAM)
    if isinstance(param, ModeParam):
        return param.spec
    return parse_markers(markers_of(item), known_modes)


def _target_options(value: Any) -> dict[str, dict[str, Any]]:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise MarkerError(f"target_options must be a dict {{target: {{option: value}}}}, got {type(value).__name__}")
    out: dict[str, dict[str, Any]] = {}
    for name, options in value.items():
        if name not in TARGETS:
            raise MarkerError(f"target_options: unknown target {name!r}; known: {', '.join(TARGETS)}")
        if not isinstance(options, Mapping):
            raise MarkerError(f"target_options[{name!r}] must be a dict, got {type(options).__name__}")
        out[name] = dict(options)
    return out


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
            raise MarkerError(f"{arg}: unknown {what} {name!r}{_did_you_mean(name, known)}; known: {', '.join(known)}")
        if name not in names:
            names.append(name)
    return tuple(names)


def _tolerance(arg: str, value: Any) -> float | None:
    from exportcore.compare import tolerance_problem

    problem = tolerance_problem(value)
    if problem:
        raise MarkerError(f"{arg} {problem}")
    return None if value is None else float(value)


def _expectations(value: Any, names: Sequence[str]) -> dict[str, Expectation]:
    """``expect=`` by column label: a mode's or target's name (every device), or one column's label (``strict-cuda``)."""
    if value is None:
        return {}
    modes = (*names, *(Column(n, d).label for n in names for d in DEVICES))
    if not isinstance(value, Mapping):
        raise MarkerError(f"expect must be a dict {{mode: reason}}, got {type(value).__name__}")
    out: dict[str, Expectation] = {}
    for mode, spec in value.items():
        if mode not in modes:
            raise MarkerError(f"expect names mode {mode!r}, which this test does not run "
                              f"(modes: {', '.join(dict.fromkeys(names))})")
        if isinstance(spec, str):
            if not spec.strip():
                raise MarkerError(f"expect[{mode!r}] must be a non-empty reason, got {spec!r}")
            out[mode] = Expectation(spec)
            continue
        if not isinstance(spec, Mapping):
            raise MarkerError(f"expect[{mode!r}] must be a reason string or a dict, got {type(spec).__name__}")
        extra = sorted(set(spec) - {"reason", "category"})
        if extra:
            raise MarkerError(f"expect[{mode!r}]: unknown key {extra[0]!r}; expected 'reason' and 'category'")
        reason, category = spec.get("reason"), spec.get("category")
        if not isinstance(reason, str) or not reason.strip():
            raise MarkerError(f"expect[{mode!r}]['reason'] must be a non-empty string, got {reason!r}")
        if category is not None and not isinstance(category, str):
            raise MarkerError(f"expect[{mode!r}]['category'] must be a string or None, got {category!r}")
        _check_category(mode, category)
        out[mode] = Expectation(reason, category)
    return out


def _check_category(mode: str, category: str | None) -> None:
    """Refuse a category the engine never reports: the expectation could never be met."""
    if category is None or mode not in mode_names():
        return  # a plugin's own mode (pytest_export_modes) reports categories of its own
    from exportcore.diagnosis.categories import CATEGORIES

    if category not in CATEGORIES:
        close = difflib.get_close_matches(category, CATEGORIES, n=1)
        also = f" (did you mean {close[0]!r}?)" if close else ""
        raise MarkerError(
            f"expect[{mode!r}]['category']: unknown category {category!r}{also}; known: {', '.join(CATEGORIES)}"
        )


def _did_you_mean(name: str, known: Iterable[str]) -> str:
    close = difflib.get_close_matches(name, list(known), n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""


def refused_item(node: Any, mode: str | None, known_modes: Sequence[str]) -> str | None:
    """Return why an exportable test cannot be checked truthfully (made a collection error), or None.

    A unittest.TestCase method is never parametrized over modes nor called by pytest, so the
    marker would be silently ignored; pytest's own xfail marker next to ``expect=`` for the
    same mode would hide whether that expectation still holds (XFAIL either way).
    """
    markers = markers_of(node) if hasattr(node, "iter_markers") else []
    if not markers:
        return None
    cls = getattr(node, "cls", None)
    if isinstance(cls, type) and issubclass(cls, unittest.TestCase):
        return (f"{node.nodeid}: @pytest.mark.{MARKER} does not work on a unittest.TestCase method "
                "(pytest cannot parametrize it over export modes, so nothing would be exported); "
                "mix pytest_export.unittest.ExportableMixin into the TestCase and call "
                "self.assertExportable(model, args, dynamic_shapes=...) in the method (one record per mode), "
                "or make it a plain test function")
    import pytest

    if not isinstance(node, pytest.Function):
        return None  # a class or module collector: its items are checked one by one
    callspec = getattr(node, "callspec", None)
    if callspec is None or MODE_PARAM not in callspec.params:
        # Never parametrized over modes (a marker this pytest's parametrization did not show us):
        # the test would run as a plain function and pass without exporting anything.
        return (f"{node.nodeid}: @pytest.mark.{MARKER} on this test could not be honoured (it was not "
                "parametrized over export modes, so nothing would be exported); put the marker on the test "
                "function or report this with your pytest version")
    if mode is None or node.get_closest_marker("xfail") is None:
        return None
    try:
        spec = item_spec(node, known_modes)
    except MarkerError:
        return None  # reported where the test is parametrized
    if mode in spec.expect:
        return (f"{node.nodeid}: @pytest.mark.xfail together with @pytest.mark.{MARKER}(expect=...) for mode "
                f"{mode!r}: pytest's xfail would report XFAIL even when the export now passes; keep one "
                "(expect= states the expected failure per mode)")
    return None


def item_mode(item: pytest.Item) -> str | None:
    """Return the export mode of an exportable test item, or None for any other item."""
    callspec = getattr(item, "callspec", None)
    if callspec is None or item.get_closest_marker(MARKER) is None:
        return None
    mode = callspec.params.get(MODE_PARAM)
    return str(mode) if isinstance(mode, str) else None  # a plain str: it keys records and reports


def item_column(item: pytest.Item) -> Column | None:
    """Return the column of an exportable test item (the one it was parametrized with), or None for any other item."""
    mode = item_mode(item)
    if mode is None:
        return None
    param = item.callspec.params[MODE_PARAM]  # type: ignore[attr-defined]
    # a label another plugin put in the mode's place is parsed: a string from outside
    return param.column if isinstance(param, ModeParam) else Column.parse(mode)


def item_case_id(item: pytest.Item, mode: str) -> str:
    """Return the case id of an exportable test item: its node id without the mode's parameter id."""
    from pytest_export.results.records import split_mode  # the records load with the first exportable test

    callspec = getattr(item, "callspec", None)
    ids: list[str] | None = getattr(callspec, "_idlist", None)
    if callspec is None or not ids or ids[-1] == mode:
        return split_mode(item.nodeid, mode)
    # Another plugin parametrized after the mode: drop the mode's own id, wherever it sits.
    rest = list(ids)
    if mode in rest:
        del rest[len(rest) - 1 - rest[::-1].index(mode)]
    base = item.nodeid[: -len(item.name)] + getattr(item, "originalname", item.name)
    return f"{base}[{'-'.join(rest)}]" if rest else base
