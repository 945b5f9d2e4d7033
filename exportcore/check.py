"""check(): validate one case, walk the pipeline (exportcore.pipeline) in one mode, and judge the result.

Every way into the engine ends in run_check(case, options, session): check() and check_case() build
its EngineOptions (exportcore.case) from their keywords, the plugin from its command line and markers.
"""

from __future__ import annotations

import math
import zlib
from typing import TYPE_CHECKING, Any, Iterable, Mapping

from exportcore.case import DEFAULT_CHECKS, Case, EngineOptions

if TYPE_CHECKING:
    from exportcore.context import Run
    from exportcore.modes import Mode
    from exportcore.outcome import Outcome
    from exportcore.reuse.session import EngineSession
    from exportcore.shapes.spec import ShapeSpec

# `import exportcore` binds check() at once (the package's name `check` must be the function,
# not this submodule), and the plugin imports exportcore in every pytest session: the engine's
# own modules load on the first check() call, so a session without exportable tests pays nothing.
__all__ = ["check", "check_case", "run_check"]


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
    session: EngineSession | None = None,
) -> Outcome:
    """Export ``model`` once in ``mode``, run every enabled check, and return the Outcome.

    ``examples`` shapes are drawn (default: the ``hypothesis_settings`` profile's
    ``max_examples`` when it sets one, else 10), none whose tensor inputs take more than
    ``input_budget`` bytes (``"256MiB"`` works too; default: see exportcore.input_budget).
    With ``target`` ("aoti", "onnx", "executorch") the inference export in ``mode`` is
    lowered to that runtime and the checks run there (outcome.mode is the target's name);
    ``device`` ("cpu", "cuda") moves model and inputs first (outcome.mode gains "-cuda").
    Raises TypeError/ValueError only for wrong arguments (naming the argument); every
    failure of the model or of the export is reported in the returned Outcome. ``explain``
    ("off", "fix", "full") is the extra work spent on a failing case (exportcore.diagnosis.explain).
    ``session`` (exportcore.EngineSession) is what checks share: pass one session to every call
    whose work may be shared. A mode whose captured program is proven identical to an earlier mode's
    in the session (same case, options, model state and inputs) takes that mode's run results
    (exportcore.reuse.donations); ``EngineSession(cache=ResultCache(path))`` extends that proof across
    sessions: a mode whose program, state, inputs, eager answer, options, torch and engine match a
    stored walk takes its results; a passing non-strict or training (case, mode) proven unchanged before
    eager (exportcore.reuse.whole) is served its whole outcome, with neither eager nor the capture run.
    Without a session the check runs in a private one and shares nothing.
    """
    options = EngineOptions(
        mode=mode, checks=checks, rtol=rtol, atol=atol, examples=examples, inputs=inputs, case_id=case_id,
        seed=seed, findings_as_errors=findings_as_errors, timeout=timeout, hypothesis_settings=hypothesis_settings,
        input_budget=input_budget, target=target, device=device, target_options=target_options, explain=explain,
    )
    return run_check(Case(model=model, args=args, kwargs=kwargs, dynamic_shapes=dynamic_shapes), options, session)


def check_case(case: Case, mode: str = "non_strict", *, session: EngineSession | None = None,
               **options: Any) -> Outcome:
    """Run check() on a Case; keyword options override the case's own tolerances and inputs."""
    return run_check(case, EngineOptions.for_case(case, mode, **options), session)


def run_check(case: Case, options: EngineOptions, session: EngineSession | None = None) -> Outcome:
    """Check ``case`` under ``options`` in ``session`` (None: a private one): the engine's one entry."""
    import contextlib

    from exportcore.reuse.session import EngineSession

    session = session if session is not None else EngineSession()
    options = _with_case_fields(case, options)
    with contextlib.ExitStack() as stack:
        stack.enter_context(session.activated())
        stack.enter_context(session.heap.own_cycles(case.model))
        if options.export_config:
            from exportcore.diagnosis.explain.rescue import export_config

            stack.enter_context(export_config(dict(options.export_config)))
        return _check(case, options, session)


def _with_case_fields(case: Case, options: EngineOptions) -> EngineOptions:
    """``options`` with what the case says where the options leave it unset (tolerances, inputs, recorded sets, name).

    ``EngineOptions.for_case`` does this for check_case(); a caller that builds the options itself
    (``run_check(case, EngineOptions(mode="strict"))``) would otherwise check the case without the
    recorded sets and tolerances it carries, and say nothing.
    """
    import dataclasses

    own = {"rtol": case.rtol, "atol": case.atol, "inputs": case.inputs, "recorded_inputs": case.recorded_inputs,
           "case_id": case.name or None}
    unset = {name: value for name, value in own.items() if value is not None and getattr(options, name) is None}
    return dataclasses.replace(options, **unset) if unset else options


def _check(case: Case, options: EngineOptions, session: EngineSession) -> Outcome:
    from exportcore.devices import model_device, move_inputs, move_model
    from exportcore.diagnosis import failures

    from exportcore.outcome import Outcome

    run = _prepared(case, options, session)
    if isinstance(run, Outcome):  # the device is not here
        return run
    home = model_device(run.model) if run.device != "cpu" else None
    if run.device != "cpu":
        move_model(run.model, run.device)
        run.args, run.kwargs = move_inputs(run.args, run.kwargs, run.device)
    _walked(run, options)
    move_model(run.model, home)  # the user's model goes back where it was
    outcome = run.outcome
    outcome.timings = run.clock.timings
    if outcome.status == "passed" and any(f.severity == "error" for f in outcome.findings):
        outcome.status = "failed"
        outcome.failure = failures.finding_error(next(f for f in outcome.findings if f.severity == "error"))
    if run.whole is not None:
        from exportcore.reuse.whole import store

        store(run)  # a pass whose every part and all the code it ran are named: served whole next time
    return outcome


def _prepared(case: Case, options: EngineOptions, session: EngineSession) -> Run | Outcome:
    """Validate the case and its options and return its Run (or, for a device not here, the skipped Outcome)."""
    import torch

    from exportcore.clock import StageClock
    from exportcore.context import Run
    from exportcore.devices import device_unavailable
    from exportcore.diagnosis import failures
    from exportcore.outcome import Outcome
    from exportcore.programs.sides import aliasing_notes
    from exportcore.sandbox.nesting import room_to_walk
    from exportcore.shapes import examples_for
    from exportcore.input_budget import budget_notes, default_budget
    from exportcore.shapes.parse import resolve_identity_keys

    model, args, kwargs, dynamic_shapes = case.model, case.args, case.kwargs, case.dynamic_shapes
    mode, label, budget = _validated(options, model, args, kwargs)
    examples = examples_for(options.examples, options.hypothesis_settings)
    kwargs = dict(kwargs or {})
    case_id = options.case_id or _default_case_id(model)
    session.memory.enter_case(case_id)
    model = _as_module(model)
    seed = options.seed if options.seed is not None else zlib.crc32(case_id.encode("utf-8", "surrogatepass")) & 0x7FFFFFFF
    with room_to_walk(args, kwargs, dynamic_shapes):
        dynamic_shapes = resolve_identity_keys(dynamic_shapes, args, kwargs, model)  # keyed by id(): before any copy
        spec = _parse_spec(model, args, kwargs, dynamic_shapes)
        notes = aliasing_notes(tuple(args), kwargs)
    if spec is not None:
        spec = spec.with_budget(budget if budget is not None else default_budget(spec.example_bytes()))
    outcome = Outcome(case_id=case_id, mode=label, checks=sorted(set(options.checks)),
                      torch_version=str(torch.__version__))
    outcome.notes.extend(notes)
    if spec is not None:
        outcome.declared = spec.declared_ranges()
        outcome.notes.extend(budget_notes(spec))
    reason = device_unavailable(options.device)
    if reason is not None:
        outcome.status, outcome.failure = "skipped", failures.device_unavailable(reason)
        return outcome
    return Run(
        model=model, args=tuple(args), kwargs=kwargs, dynamic_shapes=dynamic_shapes, mode=mode,
        checks=frozenset(options.checks), rtol=options.rtol, atol=options.atol, examples=examples,
        inputs=options.inputs, seed=seed, findings_as_errors=options.findings_as_errors,
        hypothesis_settings=options.hypothesis_settings, outcome=outcome, clock=StageClock(), spec=spec,
        target=options.target, device=options.device, target_options=dict(options.target_options or {}),
        export_kwargs=options.export_kwargs(), session=session, recorded_inputs=options.recorded_inputs,
    )
def _walked(run: Run, options: EngineOptions) -> None:
    """Walk the pipeline in the model's sandbox under the case's time limit; explain a failure where asked."""
    from exportcore.context import CheckFailed
    from exportcore.diagnosis import failures
    from exportcore.pipeline import walk
    from exportcore.sandbox.deadline import CaseTimeout, deadline
    from exportcore.sandbox.isolation import isolated

    outcome = run.outcome
    with isolated(run.model) as model_state:
        run.model_state = model_state
        try:
            with deadline(options.timeout):
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
        if outcome.status == "failed" and options.explain != "off":
            from exportcore.diagnosis.explain import explain as explain_failure

            outcome.explanation = explain_failure(run, options.explain, run_check, options.timeout)


def _validated(options: EngineOptions, model: Any, args: Any, kwargs: Any) -> tuple[Mode, str, int | None]:
    """Raise TypeError/ValueError for a wrong argument (naming it); return the mode, the outcome's column
    key and the input budget in bytes (None: the default for the case's examples)."""
    from exportcore.diagnosis.explain import DEPTHS

    mode = _validate(model, args, kwargs, options.mode, options.checks, options.examples, options.rtol, options.atol)
    label = _target_label(mode, options.target, options.device, options.target_options)
    timeout = options.timeout
    if timeout is not None and (
        isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not timeout > 0
    ):
        raise ValueError(f"timeout must be a positive number of seconds or None, got {timeout!r}")
    budget = None
    if options.input_budget is not None:
        from exportcore.input_budget import parse_bytes

        try:
            budget = parse_bytes(options.input_budget)
        except ValueError as exc:
            raise ValueError(f"input_budget: {exc}") from None
    if options.explain not in DEPTHS:
        raise ValueError(f"explain must be 'off', 'fix' or 'full', got {options.explain!r}")
    return mode, label, budget


def _validate(model: Any, args: Any, kwargs: Any, mode: str, checks: Any, examples: Any, rtol: Any, atol: Any) -> Mode:
    from exportcore.case import CHECKS
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
    from exportcore.columns import Column
    from exportcore.targets import TARGETS

    if target is not None and target not in TARGETS:
        raise ValueError(f"target: unknown target {target!r}; expected one of {list(TARGETS)} or None")
    if target is not None and mode.training:
        raise ValueError(f"target {target!r} starts from an inference export; mode {mode.name!r} is training")
    if device not in DEVICES:
        raise ValueError(f"device: unknown device {device!r}; expected one of {list(DEVICES)}")
    if options is not None and not isinstance(options, Mapping):
        raise TypeError(f"target_options must be a dict or None, got {type(options).__name__}")
    return Column(target or mode.name, device).label


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
