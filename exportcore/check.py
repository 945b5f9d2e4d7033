"""check(): run one case through the whole export core in one mode and judge the result."""

from __future__ import annotations

import zlib
from dataclasses import dataclass, field
from typing import Any, Iterable

from exportcore.case import CHECKS, DEFAULT_CHECKS, Case
from exportcore.modes import Mode, get_mode
from exportcore.outcome import Failure, Finding, GraphStats, Outcome
from exportcore.stages import CaseTimeout, StageClock, deadline

__all__ = ["check", "check_case", "CheckFailed"]


class CheckFailed(Exception):
    """Internal: stops the pipeline once ``outcome.failure`` is set."""


@dataclass
class Run:
    """Everything one check needs while it runs; dropped when check() returns."""

    model: Any
    args: tuple
    kwargs: dict
    dynamic_shapes: Any
    mode: Mode
    checks: frozenset[str]
    rtol: float | None
    atol: float | None
    examples: int
    inputs: Any
    seed: int
    findings_as_errors: bool
    hypothesis_settings: Any
    outcome: Outcome
    clock: StageClock
    model_state: Any = None
    spec: Any = None
    programs: dict[str, Any] = field(default_factory=dict)  # label -> callable exported module
    program_states: dict[int, Any] = field(default_factory=dict)  # id(program) -> its ModelState when built

    def fail(self, failure: Failure, status: str = "failed") -> None:
        self.outcome.status = status
        self.outcome.failure = failure
        raise CheckFailed

    def finding(self, kind: str, message: str, input: str | None = None) -> None:
        severity = "error" if self.findings_as_errors else "warning"
        self.outcome.findings.append(Finding(kind=kind, severity=severity, message=message, input=input))


def check(
    model: Any,
    args: tuple,
    kwargs: dict[str, Any] | None = None,
    *,
    dynamic_shapes: Any = None,
    mode: str = "non_strict",
    checks: Iterable[str] = DEFAULT_CHECKS,
    rtol: float | None = None,
    atol: float | None = None,
    examples: int = 10,
    inputs: Any = None,
    case_id: str | None = None,
    seed: int | None = None,
    findings_as_errors: bool = False,
    timeout: float | None = None,
    hypothesis_settings: Any = None,
) -> Outcome:
    """Export ``model`` once in ``mode``, run every enabled check, and return the Outcome.

    Raises TypeError/ValueError only for wrong arguments (naming the argument); every
    failure of the model or of the export is reported in the returned Outcome.
    """
    import torch

    mode_obj = _validate(model, args, kwargs, mode, checks, examples, rtol, atol)
    if timeout is not None and (
        isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not timeout > 0
    ):
        raise ValueError(f"timeout must be a positive number of seconds or None, got {timeout!r}")
    kwargs = dict(kwargs or {})
    case_id = case_id or _default_case_id(model)
    model = _as_module(model)
    if seed is None:
        seed = zlib.crc32(f"{case_id}".encode()) & 0x7FFFFFFF
    spec = _parse_spec(model, args, kwargs, dynamic_shapes)
    outcome = Outcome(case_id=case_id, mode=mode_obj.name, checks=sorted(set(checks)), torch_version=str(torch.__version__))
    run = Run(
        model=model, args=tuple(args), kwargs=kwargs, dynamic_shapes=dynamic_shapes, mode=mode_obj,
        checks=frozenset(checks), rtol=rtol, atol=atol, examples=examples, inputs=inputs, seed=seed,
        findings_as_errors=findings_as_errors, hypothesis_settings=hypothesis_settings,
        outcome=outcome, clock=StageClock(), spec=spec,
    )
    if spec is not None:
        outcome.declared = spec.declared_ranges()

    from exportcore.isolation import isolated

    with isolated(model) as model_state:
        run.model_state = model_state
        try:
            with deadline(timeout):
                _pipeline(run)
        except CheckFailed:
            pass
        except SystemExit as exc:
            # A model calling sys.exit() must not end the whole session: it is a broken case.
            from exportcore.classify import classify

            stage = run.clock.current
            outcome.status = "error" if stage == "eager" else "failed"
            outcome.failure = classify(exc, stage if stage != "input" else "eager")
            outcome.failure.message = f"the model called sys.exit({exc.code!r}) in stage {stage!r}"
        except CaseTimeout as exc:
            outcome.status = "timeout"
            outcome.failure = Failure(
                stage=run.clock.current, category="timeout", exc_type="CaseTimeout", message=str(exc),
                hint=f"the case hung or is too slow in stage {run.clock.current!r}; raise the limit "
                "(--export-timeout) or make the model smaller",
            )
        finally:
            run.programs.clear()
            run.program_states.clear()
    outcome.timings = run.clock.timings
    if outcome.status == "passed" and any(f.severity == "error" for f in outcome.findings):
        first = next(f for f in outcome.findings if f.severity == "error")
        outcome.status = "failed"
        outcome.failure = Failure(
            stage="guards" if first.kind not in ("state_missing", "state_differs") else "state",
            category="guards" if first.kind not in ("state_missing", "state_differs") else "torch.mutation",
            exc_type="Finding", message=first.message, hint="findings are errors in this run (--export-findings=error)",
        )
    return outcome


def check_case(case: Case, mode: str = "non_strict", **options: Any) -> Outcome:
    """Run check() on a Case; keyword options override the case's own tolerances and inputs."""
    if not isinstance(case, Case):
        raise TypeError(f"check_case() expects an exportcore.Case, got {type(case).__name__}")
    options.setdefault("rtol", case.rtol)
    options.setdefault("atol", case.atol)
    options.setdefault("inputs", case.inputs)
    options.setdefault("case_id", case.name or None)
    return check(case.model, case.args, case.kwargs, dynamic_shapes=case.dynamic_shapes, mode=mode, **options)


def _validate(model: Any, args: Any, kwargs: Any, mode: str, checks: Any, examples: Any, rtol: Any, atol: Any) -> Mode:
    if not callable(model):
        raise TypeError(f"model must be a torch.nn.Module or a callable, got {type(model).__name__}")
    if not isinstance(args, tuple):
        raise TypeError(f"args must be a tuple of example inputs, got {type(args).__name__} (wrap one input as (x,))")
    if kwargs is not None and not isinstance(kwargs, dict):
        raise TypeError(f"kwargs must be a dict or None, got {type(kwargs).__name__}")
    mode_obj = get_mode(mode)
    if isinstance(checks, str):
        raise TypeError("checks must be a collection of check names, not a str")
    unknown = sorted(set(checks) - set(CHECKS))
    if unknown:
        raise ValueError(f"checks: unknown check(s) {unknown}; expected a subset of {list(CHECKS)}")
    if not isinstance(examples, int) or isinstance(examples, bool) or examples < 0:
        raise ValueError(f"examples must be a non-negative int, got {examples!r}")
    for name, tol in (("rtol", rtol), ("atol", atol)):
        if tol is not None and (not isinstance(tol, (int, float)) or tol < 0):
            raise ValueError(f"{name} must be a non-negative number or None, got {tol!r}")
    return mode_obj


def _as_module(model: Any) -> Any:
    """Wrap a plain callable in an nn.Module whose forward has the callable's signature."""
    import inspect

    import torch

    if isinstance(model, torch.nn.Module):
        return model
    fn = model

    class FunctionModule(torch.nn.Module):
        def forward(self, *args: Any, **kwargs: Any) -> Any:
            return fn(*args, **kwargs)

    try:
        sig = inspect.signature(fn)
        # torch.export binds dynamic_shapes by forward's parameter names: give it the function's.
        self_param = inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)
        FunctionModule.forward.__signature__ = sig.replace(  # type: ignore[attr-defined]
            parameters=[self_param, *sig.parameters.values()]
        )
    except (TypeError, ValueError):
        pass
    FunctionModule.__name__ = FunctionModule.__qualname__ = getattr(fn, "__name__", "FunctionModule")
    return FunctionModule()


def _default_case_id(model: Any) -> str:
    import inspect

    if inspect.isfunction(model) or inspect.ismethod(model):
        return model.__qualname__
    return type(model).__qualname__


def _parse_spec(model: Any, args: tuple, kwargs: dict, dynamic_shapes: Any) -> Any:
    from exportcore.shapes import ShapeSpec

    return ShapeSpec.from_export_spec(dynamic_shapes, tuple(args), kwargs, model=model)


def _pipeline(run: Run) -> None:
    from exportcore import programs, runtime

    reference = programs.eager_reference(run)
    ep = programs.capture(run)
    programs.add_programs(run, ep)
    programs.numerics_on_examples(run, reference)
    if "state" in run.checks:
        programs.state_parity(run)
    runtime.dynamic_checks(run)
    run.outcome.graph = run.outcome.graph or GraphStats()

