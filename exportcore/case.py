"""What to export (a Case: a model, example inputs, a dynamic-shape spec and expectations) and how (EngineOptions).

Every way into the engine builds one EngineOptions and calls exportcore.check.run_check: check() from
its keywords, check_case() from a Case and its keywords, the plugin from its command line, markers and
column (pytest_export.runner.engine_options).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Mapping

__all__ = ["Case", "CHECKS", "DEFAULT_CHECKS", "DEFAULT_EXAMPLES", "EngineOptions", "EXPORT_KWARGS", "RECORDED_INPUTS",
           "recorded_inputs_problem", "recorded_sets"]

#: Checks a user can switch on or off (``checks=`` / ``--export-checks``).
#: numerics: exported module == eager on the example inputs and on drawn shapes.
#: decompose: run_decompositions() to core ATen, then numerics on that program.
#: serialize: torch.export.save/load round trip, then numerics on the reloaded program.
#: accept / reject: guards accept every in-spec shape and reject out-of-spec ones.
#: state: exported parameters/buffers match the model's.
#: dtype: flag that the exported module silently accepts another dtype.
CHECKS = ("numerics", "decompose", "serialize", "accept", "reject", "state", "dtype")
DEFAULT_CHECKS = CHECKS
#: Drawn shapes per case and mode when neither the caller nor a hypothesis profile says.
DEFAULT_EXAMPLES = 10
#: The names ``export_config`` may carry that are torch.export.export's own keyword arguments (its other
#: names are torch.fx.experimental._config flags): the capture passes them to the export call.
EXPORT_KWARGS = ("prefer_deferred_runtime_asserts_over_guards",)

#: The field holding a case's recorded input sets (exportcore.checks.recorded reads each set).
RECORDED_INPUTS = "recorded_inputs"


@dataclass
class Case:
    """One exportable case; the plugin's tests return this (or a plain tuple)."""

    model: Any
    args: tuple = ()
    kwargs: dict[str, Any] | None = None
    dynamic_shapes: Any = None
    name: str = ""
    #: Input factory for drawn shapes: a callable ``(shapes, rng) -> (args, kwargs)``
    #: or a hypothesis strategy of ``(args, kwargs)``; default resizes the examples.
    inputs: Callable[..., Any] | Any = None
    rtol: float | None = None
    atol: float | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    #: Input sets the model really sees, each run and compared like the example (exportcore.checks.recorded):
    #: a list of input tuples or (args, kwargs) pairs, a torch.export.AdditionalInputs or a torch.onnx.InputObserver.
    recorded_inputs: Any = None


@dataclass(frozen=True)
class EngineOptions:
    """exportcore.check's keyword arguments (see its docstring), plus ``export_config``: torch's
    symbolic-shapes config flags set around the check, and torch.export.export's keyword options
    (``EXPORT_KWARGS``) passed to its capture (exportcore.diagnosis.explain.rescue.export_config)."""

    mode: str = "non_strict"
    checks: Iterable[str] = DEFAULT_CHECKS
    rtol: float | None = None
    atol: float | None = None
    examples: int | None = None
    inputs: Any = None
    case_id: str | None = None
    seed: int | None = None
    findings_as_errors: bool = False
    timeout: float | None = None
    hypothesis_settings: Any = None
    input_budget: int | str | None = None
    target: str | None = None
    device: str = "cpu"
    target_options: Mapping[str, Any] | None = None
    explain: str = "fix"
    export_config: Mapping[str, Any] = field(default_factory=dict)
    recorded_inputs: Any = None  # Case.recorded_inputs

    @classmethod
    def for_case(cls, case: Case, mode: str = "non_strict", **keywords: Any) -> EngineOptions:
        """The options for ``case`` in ``mode``: ``keywords`` override the case's own tolerances, inputs and name."""
        if not isinstance(case, Case):
            raise TypeError(f"check_case() expects an exportcore.Case, got {type(case).__name__}")
        keywords.setdefault("rtol", case.rtol)
        keywords.setdefault("atol", case.atol)
        keywords.setdefault("inputs", case.inputs)
        keywords.setdefault("case_id", case.name or None)
        keywords.setdefault("recorded_inputs", case.recorded_inputs)
        return cls(mode=mode, **keywords)

    def keywords(self) -> dict[str, Any]:
        """The options that differ from the defaults, as check_case's keyword arguments (mode and export_config aside)."""
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)
                if f.name not in ("mode", "export_config") and not _is_default(getattr(self, f.name), f)}

    def export_kwargs(self) -> dict[str, Any]:
        """torch.export.export's own options among ``export_config`` (the capture passes them to the export)."""
        return {name: value for name, value in self.export_config.items() if name in EXPORT_KWARGS}


def _is_default(value: Any, f: dataclasses.Field) -> bool:
    default = f.default_factory() if f.default_factory is not dataclasses.MISSING else f.default  # type: ignore[misc]
    # by value only for plain values: an inputs= strategy or factory is compared by identity
    return value is default or (isinstance(value, (bool, int, float, str, tuple)) and type(value) is type(default)
                                and value == default)



def recorded_inputs_problem(value: Any) -> str | None:
    """Why ``value`` cannot be a case's recorded input sets (None: it can).

    Only the outer type, by name: the plugin validates its marker without importing torch; each set's
    structure is checked in the run (exportcore.checks.recorded).
    """
    if value is None or isinstance(value, (list, tuple)) or type(value).__name__ in ("AdditionalInputs",
                                                                                      "InputObserver"):
        return None
    return (f"{RECORDED_INPUTS} must be a list of input tuples or (args, kwargs) pairs, "
            f"a torch.export.AdditionalInputs or a torch.onnx.InputObserver, got {type(value).__name__}")


def recorded_sets(value: Any) -> list[tuple[tuple, dict]]:
    """The (args, kwargs) of every recorded set in ``value``; raise TypeError naming the field and the set."""
    problem = recorded_inputs_problem(value)
    if problem:
        raise TypeError(problem + _torch_lacks())
    if value is None:
        return []
    if type(value).__name__ == "AdditionalInputs":
        # its sets have no public reader; _examples has held them as (args, kwargs) since the class appeared
        return [(tuple(args), dict(kwargs or {})) for args, kwargs in getattr(value, "_examples", [])]
    if type(value).__name__ == "InputObserver":
        return [_pair(value.infer_arguments(i, as_args_kwargs=True), i) for i in range(value.num_obs())]
    return [_pair(entry, i) for i, entry in enumerate(value)]


def _pair(entry: Any, index: int) -> tuple[tuple, dict]:
    if isinstance(entry, (tuple, list)) and len(entry) == 2 and isinstance(entry[0], (tuple, list)) \
            and isinstance(entry[1], dict):
        return tuple(entry[0]), dict(entry[1])
    if isinstance(entry, tuple):
        return entry, {}
    raise TypeError(f"{RECORDED_INPUTS}[{index}] must be a tuple of inputs (wrap one input as (x,)) or an (args, kwargs) "
                    f"pair, got {type(entry).__name__}")


def _torch_lacks() -> str:
    import torch

    missing = [name for name, where in (("AdditionalInputs", torch.export), ("InputObserver", torch.onnx))
               if not hasattr(where, name)]
    return f" (torch {torch.__version__} has no {' or '.join(missing)})" if missing else ""
