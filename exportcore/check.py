"""check(): validate one case, walk the pipeline (exportcore.pipeline) in one mode, and judge the result."""

from __future__ import annotations

import math
import zlib
from typing import TYPE_CHECKING, Any, Iterable, Mapping

from exportcore.case import CHECKS, DEFAULT_CHECKS, Case
from exportcore.sandbox.heap import own_cycles

if TYPE_CHECKING:
    from exportcore.context import Run
    from exportcore.modes import Mode
    from exportcore.outcome import Outcome
    from exportcore.reuse.result_cache import ResultCache
    from exportcore.shapes.spec import ShapeSpec

# `import exportcore` binds check() at once (the package's name `check` must be the function,
# not this submodule), and the plugin imports exportcore in every pytest session: the engine's
# own modules load on the first check() call, so a session without exportable tests pays nothing.
__all__ = ["check", "check_case"]


@own_cycles
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
    examples: int | None = None,
    inputs: Any = None,
    case_id: str | None = None,
    seed: int | None = None,
    findings_as_errors: bool = False,
    timeout: float | None = None,
    hypothesis_settings: Any = None,
    input_budget: int | str | None = None,
    target: str | None = None,
    device: str = "cpu",
    target_options: Mapping[str, Any] | None = None,
    explain: str = "fix",
    reuse: bool = True,
    cache: ResultCache | None = None,
) -> Outcome:
    """Export ``model`` once in ``mode``, run every enabled check, and return the Outcome.

    ``examples`` shapes are drawn (default: the ``hypothesis_settings`` profile's
    ``max_examples`` when it sets one, else 10), none whose tensor inputs take more than
    ``input_budget`` bytes (``"256MiB"`` works too; default: see exportcore.shapes.input_budget).
    With ``target`` ("aoti", "onnx", "executorch") the inference export in ``mode`` is
    lowered to that runtime and the checks run there (outcome.mode is the target's name);
    ``device`` ("cpu", "cuda") moves model and inputs first (outcome.mode gains "-cuda").
    Raises TypeError/ValueError only for wrong arguments (naming the argument); every
    failure of the model or of the export is reported in the returned Outcome. ``explain``
    ("off", "fix", "full") is the extra work spent on a failing case (exportcore.diagnosis.explain).
    ``reuse``: a mode whose captured program is proven identical to an earlier mode's (same
    case, options, model state and inputs) takes that mode's run results (exportcore.reuse.memo).
    ``cache``: a ResultCache (exportcore.reuse.result_cache) extends that proof across sessions: a mode
    whose program, state, inputs, eager answer, options, torch and engine match a stored walk
    takes its results. Capture and eager always run.
    """
    import torch

    from exportcore.clock import StageClock
    from exportcore.context import CheckFailed, Run
    from exportcore.sandbox.deadline import CaseTimeout, deadline
    from exportcore.diagnosis.explain import DEPTHS
    from exportcore.shapes.input_budget import budget_notes, default_budget, parse_bytes
    from exportcore.diagnosis import failures
    from exportcore.reuse import shared_programs
    from exportcore.outcome import Outcome
    from exportcore.pipeline import walk
    from exportcore.shapes import examples_for

    mode_obj = _validate(model, args, kwargs, mode, checks, examples, rtol, atol)
    label = _target_label(mode_obj, target, device, target_options)
    if timeout is not None and (
        isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not timeout > 0
    ):
        raise ValueError(f"timeout must be a positive number of seconds or None, got {timeout!r}")
    if input_budget is not None:
        try:
            input_budget = parse_bytes(input_budget)
        except ValueError as exc:
            raise ValueError(f"input_budget: {exc}") from None
    examples = examples_for(examples, hypothesis_settings)
    if explain not in DEPTHS:
        raise ValueError(f"explain must be 'off', 'fix' or 'full', got {explain!r}")
    kwargs = dict(kwargs or {})
    case_id = case_id or _default_case_id(model)
    shared_programs.enter_case(case_id)
    model = _as_module(model)
    if seed is None:
        seed = zlib.crc32(case_id.encode("utf-8", "surrogatepass")) & 0x7FFFFFFF
    from exportcore.shapes.parse import resolve_identity_keys

    from exportcore.sandbox.nesting import room_to_walk
    from exportcore.programs.sides import aliasing_notes

    with room_to_walk(args, kwargs, dynamic_shapes):
        dynamic_shapes = resolve_identity_keys(dynamic_shapes, args, kwargs, model)  # keyed by id(): before any copy
        spec = _parse_spec(model, args, kwargs, dynamic_shapes)
        notes = aliasing_notes(tuple(args), kwargs)
    if spec is not None:
        spec = spec.with_budget(input_budget if input_budget is not None else default_budget(spec.example_bytes()))
    outcome = Outcome(case_id=case_id, mode=label, checks=sorted(set(checks)), torch_version=str(torch.__version__))
    outcome.notes.extend(notes)
    if spec is not None:
        outcome.declared = spec.declared_ranges()
        outcome.notes.extend(budget_notes(spec))
    from exportcore.devices import device_unavailable, model_device, move_inputs, move_model

    reason = device_unavailable(device)
    if reason is not None:
        outcome.status = "skipped"
        outcome.failure = failures.device_unavailable(reason)
        return outcome
    home = model_device(model) if device != "cpu" else None
    if device != "cpu":
        move_model(model, device)
        args, kwargs = move_inputs(args, kwargs, device)
    run = Run(
        model=model, args=tuple(args), kwargs=kwargs, dynamic_shapes=dynamic_shapes, mode=mode_obj,
        checks=frozenset(checks), rtol=rtol, atol=atol, examples=examples, inputs=inputs, seed=seed,
        findings_as_errors=findings_as_errors, hypothesis_settings=hypothesis_settings,
        outcome=outcome, clock=StageClock(), spec=spec, target=target, device=device,
        target_options=dict(target_options or {}), reuse=bool(reuse),
        cache=cache if reuse else None,
    )

    from exportcore.sandbox.isolation import isolated

    with isolated(model) as model_state:
        run.model_state = model_state
        try:
            with deadline(timeout):
                walk(run)
        except CheckFailed:
            from exportcore.programs.sides import blame_randomness

            blame_randomness(run)
        except SystemExit as exc:
            # A model calling sys.exit() must not end the whole session: it is a broken case.
            from exportcore.diagnosis.classify import classify

            stage = run.clock.current
            outcome.status = "error" if stage == "eager" else "failed"
            outcome.failure = classify(exc, stage if stage != "input" else "eager")
            outcome.failure.message = f"the model called sys.exit({exc.code!r}) in stage {stage!r}"
        except CaseTimeout as exc:
            outcome.status = "timeout"
            outcome.failure = failures.case_timeout(run.clock.current, str(exc))
        finally:
            _name_ranges(run)
            run.ep = run.reference = None  # the programs and eager's outputs are not kept past the verdict
            run.programs.clear()
            run.program_states.clear()
            run.same_as.clear()
            run.own_guards.clear()
        if outcome.status == "failed" and explain != "off":
            from exportcore.diagnosis.explain import explain as explain_failure

            outcome.explanation = explain_failure(run, explain, check, timeout)
    move_model(model, home)  # the user's model goes back where it was
    outcome.timings = run.clock.timings
    if outcome.status == "passed" and any(f.severity == "error" for f in outcome.findings):
        outcome.status = "failed"
        outcome.failure = failures.finding_error(next(f for f in outcome.findings if f.severity == "error"))
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
    from exportcore.modes import get_mode

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
    if examples is not None and (not isinstance(examples, int) or isinstance(examples, bool) or examples < 0):
        raise ValueError(f"examples must be a non-negative int, got {examples!r}")
    for name, tol in (("rtol", rtol), ("atol", atol)):
        # NaN and inf tolerances would let every mismatch pass.
        if tol is not None and (isinstance(tol, bool) or not isinstance(tol, (int, float)) or not 0 <= tol < math.inf):
            raise ValueError(f"{name} must be a finite non-negative number or None, got {tol!r}")
    return mode_obj


def _target_label(mode: Mode, target: Any, device: Any, options: Any) -> str:
    """Validate target/device/target_options; return the outcome's column key (e.g. ``aoti``, ``strict-cuda``)."""
    from exportcore.devices import DEVICES
    from exportcore.targets import TARGETS, column_label

    if target is not None and target not in TARGETS:
        raise ValueError(f"target: unknown target {target!r}; expected one of {list(TARGETS)} or None")
    if target is not None and mode.training:
        raise ValueError(f"target {target!r} starts from an inference export; mode {mode.name!r} is training")
    if device not in DEVICES:
        raise ValueError(f"device: unknown device {device!r}; expected one of {list(DEVICES)}")
    if options is not None and not isinstance(options, Mapping):
        raise TypeError(f"target_options must be a dict or None, got {type(options).__name__}")
    return column_label(target or mode.name, device)


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


def _parse_spec(model: Any, args: tuple, kwargs: dict, dynamic_shapes: Any) -> ShapeSpec | None:
    from exportcore.shapes import ShapeSpec
    from exportcore.shapes.shapes_spec import export_accepts_shapes_spec, is_shapes_spec, unsupported_message

    if is_shapes_spec(dynamic_shapes) and not export_accepts_shapes_spec():
        raise ValueError(unsupported_message())  # the case's input, not a capture failure of the model
    return ShapeSpec.from_export_spec(dynamic_shapes, tuple(args), kwargs, model=model)


def _name_ranges(run: Run) -> None:
    """Key the exported range_constraints by the user's dim names ("batch"), keeping torch's symbols aside."""
    from exportcore.guards import named_ranges

    if run.ep is None or not run.outcome.range_constraints:
        return
    run.outcome.range_constraints, run.outcome.range_symbols = named_ranges(run.outcome.range_constraints,
                                                                            run.symbols)
