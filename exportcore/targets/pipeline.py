# Over 300 lines: one target check end to end (reuse, lower, load, examples, drawn and out-of-range shapes).
"""One (case, target) check: inference export (reused), lower, load, numerics, shape promise.

The runtime gets the same questions as ``ep.module()``: equal to eager on the examples
and on hypothesis-drawn in-range shapes, every in-range shape accepted, every out-of-range
shape rejected. A runtime that silently runs an out-of-range shape yields the finding
``reject_unguarded`` with the shapes; each shape's verdict in every runtime goes to
``outcome.shape_table``.
"""

from __future__ import annotations

import tempfile
from typing import TYPE_CHECKING, Any

from exportcore.compare import compare, default_tolerances
from exportcore.execute import clone_tree
from exportcore.guards import is_guard_error
from exportcore.failures import target_guard_rejected, target_numerics, target_unavailable
from exportcore.sides import prepare, run_side
from exportcore.stages import capture, eager
from exportcore.targets import cache, get_target, unavailable
from exportcore.targets.base import flat_tensors
from exportcore.targets.failures import target_failure

if TYPE_CHECKING:
    from exportcore.context import Run
    from exportcore.targets.base import Runner, Target

__all__ = ["run_target", "remember_export", "MODULE_COLUMN"]

#: The table column of the exported program itself.
MODULE_COLUMN = ".module()"
_MAX_ROWS = 24


def remember_export(run: Run, ep: Any) -> None:
    """Keep a mode's inference export for the targets of the same case (when a session asked for targets)."""
    if cache.enabled() and not run.mode.training:
        cache.store(_key(run), ep)


def _key(run: Run) -> tuple:
    # The outcome's case id is the same for a case's modes and targets (the plugin strips the column id).
    return (run.outcome.case_id, run.mode.name, run.device,
            cache.fingerprint(run.model, run.args, run.kwargs, run.dynamic_shapes))


def run_target(run: Run) -> None:
    """Check the case in ``run.target``'s runtime; failures and findings land in ``run.outcome``."""
    name = run.target
    reason = unavailable(name) or get_target(name).unsupported_device(run.device)
    if reason is not None:
        run.fail(target_unavailable(reason), status="skipped")
    target = get_target(name)
    eager.run(run)
    reference = run.reference
    ep = cache.lookup(_key(run)) if cache.enabled() else None
    if ep is None:
        capture.run(run)
        ep = run.ep
        remember_export(run, ep)
    else:
        # No note in the outcome: serial and xdist runs (where the mode ran elsewhere) must record the same.
        capture.describe_program(run, ep)
        run.ep = ep
    run.programs["exported"] = ep.module()
    mutated = _mutated_state(ep)
    stateful = bool(mutated)
    if stateful:
        # Runtimes keep mutated buffers differently (ExecuTorch keeps them, ONNX Runtime drops them,
        # ep.module() shares them with the program): only the first call is comparable with eager.
        run.outcome.notes.append(
            f"{name}: the program mutates buffers ({', '.join(mutated)}); "
            "numerics are checked on the example inputs (the first call) only; drawn and out-of-range "
            "shapes are checked for acceptance and rejection"
        )
    tolerances = _tolerances(run, target, reference.outputs)
    with tempfile.TemporaryDirectory(prefix=f"pytest-export-{name}-") as workdir:
        with run.clock.stage("lower"):
            try:
                lowered = target.lower(ep, *clone_tree((run.args, run.kwargs)), workdir, run.target_options)
            except Exception as exc:
                run.fail(target_failure(exc, "lower", name))
        with run.clock.stage("load"):
            try:
                runner = target.load(lowered, ep, run.target_options, run.device)
            except Exception as exc:
                run.fail(target_failure(exc, "load", name))
        run.outcome.notes.extend(lowered.notes)
        try:
            _examples(run, target, runner, reference.outputs, tolerances)
            later = None if stateful else tolerances  # None: no numerics after the first call
            if run.spec is not None:
                _explore(run, target, runner, later)
                if "reject" in run.checks:
                    _reject(run, target, runner, later)
        finally:
            runner = None  # the loaded artifact must not outlive its directory
            prepare(run)


def _mutated_state(ep: Any) -> list[str]:
    """Return the buffers/parameters the program writes to (the export IR keeps in-place ops, e.g. add_)."""
    signature = ep.graph_signature
    names = set(signature.buffers_to_mutate.values())
    state = {**signature.inputs_to_buffers, **signature.inputs_to_parameters}
    for node in ep.graph.nodes:
        schema = getattr(node.target, "_schema", None)
        if node.op != "call_function" or schema is None or not schema.is_mutable:
            continue
        source = node.args[0] if node.args else None
        for _ in range(16):  # through views (calls[0].add_) back to a placeholder
            if getattr(source, "op", None) != "call_function" or not source.args:
                break
            source = source.args[0]
        if getattr(source, "name", None) in state:
            names.add(state[source.name])
    return sorted(names)


def _tolerances(run: Run, target: Target, outputs: Any) -> tuple[float | None, float | None]:
    """Return the user's tolerances where given, else the loosest dtype default widened to the target's floor."""
    rtol, atol = target.tolerance
    for t in flat_tensors(outputs):
        if t.is_floating_point() or t.is_complex():
            d_rtol, d_atol = default_tolerances(t.dtype)
            rtol, atol = max(rtol, d_rtol), max(atol, d_atol)
    return (rtol if run.rtol is None else run.rtol), (atol if run.atol is None else run.atol)


def _shapes_text(args: tuple, kwargs: dict) -> str:
    from exportcore.shapes import input_shapes

    return ", ".join(f"{p}={list(s)}" for p, s in input_shapes(args, kwargs).items())


def _add_row(run: Run, row: dict[str, str]) -> None:
    table = run.outcome.shape_table
    if len(table) < _MAX_ROWS and all(r["shapes"] != row["shapes"] for r in table):
        table.append(row)


def _module_verdict(run: Run, args: tuple, kwargs: dict, reference: Any, numerics: bool = True) -> str:
    import torch

    args, kwargs = clone_tree((args, kwargs))
    try:
        with torch.no_grad():
            out = run.programs["exported"](*args, **kwargs)
    except Exception as exc:
        return "rejected" if is_guard_error(exc) else "error"
    if reference is None or not numerics:
        return "accepted"
    same = compare(reference, flat_tensors(out), rtol=run.rtol, atol=run.atol, path="output") is None
    return "accepted" if same else "wrong result"


def _eager(run: Run, args: tuple, kwargs: dict) -> list | None:
    # From the snapshot state every time: a runtime starts each call from the exported state.
    prepare(run)
    try:
        return flat_tensors(run_side(run, run.model, args, kwargs).outputs)
    except Exception:
        return None


def _examples(run: Run, target: Target, runner: Runner, outputs: Any, tol: tuple) -> None:
    """Numerics on the example inputs: the runtime must run them and match eager."""
    name = run.target
    expected = flat_tensors(outputs)
    row = {"shapes": _shapes_text(run.args, run.kwargs), "kind": "example",
           MODULE_COLUMN: _module_verdict(run, run.args, run.kwargs, expected)}
    with run.clock.stage("run"):
        try:
            actual = runner(*clone_tree((run.args, run.kwargs)))
        except Exception as exc:
            row[name] = "rejected" if target.rejection(exc) else "error"
            _add_row(run, row)
            failure = target_failure(exc, "run", name)
            failure.message = f"{name} failed on the example inputs: {failure.message}"
            run.fail(failure)
    mismatch = compare(expected, actual, rtol=tol[0], atol=tol[1], path="output")
    row[name] = "accepted" if mismatch is None else "wrong result"
    _add_row(run, row)
    if mismatch is not None and "numerics" in run.checks:
        run.fail(target_numerics(name, mismatch, "the example inputs", tol))



def _explore(run: Run, target: Target, runner: Runner, tol: tuple | None) -> None:
    """Hypothesis-drawn in-range shapes: accepted by the runtime and equal to eager."""
    from exportcore.shapes import Probe, explore

    name = run.target
    if not {"numerics", "accept"} & run.checks or run.examples <= 0:
        return
    last: dict[str, Any] = {}

    def probe(args: tuple, kwargs: dict) -> Any:
        if run.device != "cpu":  # a user's inputs= factory builds CPU tensors
            from exportcore.devices import move_inputs

            args, kwargs = move_inputs(args, kwargs, run.device)
        expected = _eager(run, args, kwargs)
        if expected is None:
            return Probe("discard", "eager rejected the drawn shape")
        row = {"shapes": _shapes_text(args, kwargs), "kind": "in range",
               MODULE_COLUMN: _module_verdict(run, args, kwargs, expected, tol is not None)}
        try:
            actual = runner(*clone_tree((args, kwargs)))
        except Exception as exc:
            rejected = target.rejection(exc)
            row[name] = "rejected" if rejected else "error"
            _add_row(run, row)
            if rejected and "accept" not in run.checks:
                return Probe("discard", "runtime rejected (accept check off)")
            last["exc"] = exc
            first = (str(exc).strip().splitlines() or [type(exc).__name__])[0][:300]
            if rejected:
                return Probe("fail", f"{name} rejected an in-range shape ({first})", stage="guards")
            return Probe("fail", f"{name} raised {type(exc).__name__} on an in-range shape: {first}", stage="run")
        mismatch = None if tol is None else compare(expected, actual, rtol=tol[0], atol=tol[1], path="output")
        row[name] = "accepted" if mismatch is None else "wrong result"
        _add_row(run, row)
        if mismatch is not None and "numerics" in run.checks:
            last["mismatch"] = mismatch
            return Probe("fail", f"{name} output differs from eager: {mismatch.message}", stage="numerics")
        return Probe("ok")

    with run.clock.stage("run"):
        result = explore(run.spec, run.args, run.kwargs, probe, examples=run.examples, seed=run.seed,
                         inputs=run.inputs, settings=run.hypothesis_settings)
    prepare(run)
    run.outcome.examples = result.stats
    if result.failure is None:
        return
    run.outcome.counterexample = result.counterexample
    if result.counterexample is not None:
        result.counterexample.reproduce = result.counterexample.reproduce.replace(
            "got = ep.module()(*args, **kwargs)", f"got = <the loaded {name} artifact>(*args, **kwargs)")
    shapes = result.counterexample.shapes if result.counterexample else {}
    stage = result.failure.stage
    if stage == "run" and "exc" in last:
        failure = target_failure(last["exc"], "run", name)
    elif stage == "numerics" and "mismatch" in last:
        failure = target_numerics(name, last["mismatch"], "a drawn in-range shape", tol)
    else:
        failure = target_guard_rejected(name, result.failure.message.splitlines()[0])
    failure.message = f"{failure.message} (minimal failing shapes: {shapes})"[:500]
    failure.detail = result.failure.message + ("\n" + failure.detail if failure.detail else "")
    run.fail(failure)


def _just_below_min(run: Run) -> list[tuple[str, tuple, dict]]:
    """Return one input per named dim declared ``min >= 2`` at ``min - 1`` (torch's own probes skip 0/1)."""
    from exportcore.shapes import synthesize

    out = []
    for name, root in run.spec.roots.items():
        if root.kind != "named" or root.min is None or root.min < 2:
            continue
        try:
            shapes = run.spec.shapes_for(run.spec.example_assignment() | {name: root.min - 1})
            args, kwargs = synthesize(run.args, run.kwargs, shapes, seed=run.seed)
        except Exception:  # noqa: BLE001 - a spec whose relations cannot take that size: no such probe
            continue
        out.append((f"below_min:{name}", args, kwargs))
    return out


def _reject(run: Run, target: Target, runner: Runner, tol: tuple | None) -> None:
    """Out-of-range shapes: each must be refused by the runtime's own input checks."""
    from exportcore.shapes import reject_inputs

    name = run.target
    accepted: list[str] = []
    inside: list[str] = []
    with run.clock.stage("guards"):
        cases = reject_inputs(run.spec, run.args, run.kwargs, count=max(4, min(run.examples, 12)), seed=run.seed)
        seen: set[str] = set()
        for label, args, kwargs in [*_just_below_min(run), *cases]:
            shapes = _shapes_text(args, kwargs)
            if shapes in seen:
                continue
            seen.add(shapes)
            expected = _eager(run, args, kwargs)
            row = {"shapes": shapes, "kind": f"out of range ({label})",
                   MODULE_COLUMN: _module_verdict(run, args, kwargs, expected, tol is not None)}
            try:
                actual = runner(*clone_tree((args, kwargs)))
            except Exception as exc:
                if target.rejection(exc):
                    row[name] = "rejected"
                    run.outcome.examples.rejected += 1
                else:
                    row[name] = "error"
                    first = (str(exc).strip().splitlines() or [type(exc).__name__])[0][:160]
                    inside.append(f"{shapes} ({label}): {type(exc).__name__}: {first}")
                _add_row(run, row)
                continue
            wrong = expected is not None and tol is not None and compare(
                expected, actual, rtol=tol[0], atol=tol[1]) is not None
            row[name] = "wrong result" if wrong else "accepted"
            accepted.append(f"{shapes} ({label}{', wrong result' if wrong else ''})")
            _add_row(run, row)
    prepare(run)
    declared = ", ".join(f"{k}: {v}" for k, v in run.outcome.declared.items()) or "none"
    hint = getattr(target, "unguarded_hint", "")
    if accepted:
        run.finding("reject_unguarded",
                    f"{name} ran {len(accepted)} out-of-range input(s) instead of rejecting them (declared "
                    f"{declared}): {'; '.join(accepted)}" + (f". {hint}" if hint else ""))
    if inside:
        run.finding("reject_unguarded",
                    f"{name}: {len(inside)} out-of-range input(s) passed the runtime's input checks and failed "
                    f"inside the program: {'; '.join(inside)}")
