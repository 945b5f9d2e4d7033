"""Runtime checks over drawn shapes: numerics, guards accept/reject, and what torch lets through."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from exportcore.classify import classify
from exportcore.execute import clone_tree
from exportcore.guards import exported_input_shapes, is_guard_error
from exportcore.links import nearest_case
from exportcore.outcome import Failure
from exportcore.programs import compare_runs, prepare, run_side
from exportcore.shapes.shapes_spec import is_shapes_spec

if TYPE_CHECKING:
    from exportcore.context import Run

__all__ = ["dynamic_checks"]

_PROGRAMS = ("exported", "decomposed", "reloaded")


def dynamic_checks(run: Run) -> None:
    """Run the hypothesis loop over valid shapes, then the reject probes and the findings."""
    if run.spec is None:
        return
    if "accept" in run.checks or "reject" in run.checks:
        # Static facts first, so they are reported even when the accept check fails below.
        _specialization_findings(run)
    _explore_valid(run)
    if "reject" in run.checks:
        _reject(run)
    if "accept" in run.checks or "reject" in run.checks:
        _size01_findings(run)
    if "dtype" in run.checks:
        _dtype_finding(run)
    prepare(run)


def _ranges_text(run: Run) -> str:
    from exportcore.guards import symbol_names

    names = symbol_names(run.programs["ep"], run.spec, run.args, run.kwargs) if "ep" in run.programs else {}
    declared = ", ".join(f"{k}: {v}" for k, v in run.outcome.declared.items()) or "none"
    exported = ", ".join(
        f"{names[k]} ({k}): {v}" if k in names else f"{k}: {v}" for k, v in run.outcome.range_constraints.items()
    ) or "none (all static)"
    return f"declared {declared}; exported range_constraints {exported}"


def _explore_valid(run: Run) -> None:
    from exportcore.shapes import Probe, explore

    wanted = {"numerics", "accept"} & run.checks
    if not wanted or run.examples <= 0:
        return

    def probe(args: tuple, kwargs: dict) -> Any:
        try:
            reference = run_side(run, run.model, args, kwargs)
        except Exception:
            return Probe("discard", "eager rejected the drawn shape")
        for label in _PROGRAMS:
            program = run.programs.get(label)
            if program is None:
                continue
            try:
                actual = run_side(run, program, args, kwargs, backward=label != "decomposed")
            except Exception as exc:
                if is_guard_error(exc, runtime_asserts=is_shapes_spec(run.dynamic_shapes)):
                    if "accept" not in run.checks:
                        return Probe("discard", "guard rejected (accept check off)")
                    first = str(exc).strip().splitlines()[0]
                    return Probe(
                        "fail",
                        f"in-spec shape rejected by {label} program ({first}); the export specialized or "
                        f"narrowed a dimension declared dynamic: {_ranges_text(run)}",
                        stage="guards",
                    )
                failure = classify(exc, "run")
                return Probe("fail", f"{label} program raised {failure.exc_type}: {failure.message}", stage="run")
            if "numerics" in run.checks:
                failure = compare_runs(
                    run, label, reference, actual, grads=label != "decomposed", inputs=(args, kwargs)
                )
                if failure is not None:
                    return Probe("fail", failure.message + "\n" + failure.detail, stage=failure.stage)
        return Probe("ok")

    with run.clock.stage("run"):
        result = explore(
            run.spec, run.args, run.kwargs, probe, examples=run.examples, seed=run.seed,
            inputs=run.inputs, settings=run.hypothesis_settings,
        )
    prepare(run)
    run.outcome.examples = result.stats
    if result.failure is not None and result.failure.stage == "input":
        _factory_failed(run, result)
    if result.failure is not None:
        run.outcome.counterexample = result.counterexample
        stage = result.failure.stage
        shapes = result.counterexample.shapes if result.counterexample else {}
        message = result.failure.message.splitlines()[0]
        run.fail(
            Failure(
                stage=stage,
                category="guards" if stage == "guards" else ("numerics" if stage in ("numerics", "training") else "internal"),
                exc_type="GuardRejected" if stage == "guards" else "NumericsMismatch" if stage != "run" else "RuntimeError",
                message=f"{message} (minimal failing shapes: {shapes})",
                detail=result.failure.message,
                hint=(
                    "declare the dimension with a range the model really supports, or remove the code that "
                    "specializes it (see range_constraints)"
                    if stage == "guards"
                    else "reproduce with the counterexample shapes; the exported program diverges from eager there"
                ),
                exportdb_case=nearest_case("GuardRejected", message, "guards", "guards") if stage == "guards" else None,
            )
        )


def _factory_failed(run: Run, result: Any) -> None:
    """The user's ``inputs=`` factory raised or built other shapes than drawn: the case's input is broken."""
    run.outcome.counterexample = result.counterexample
    strategy = result.failure.message.startswith("inputs strategy")
    run.fail(
        Failure(
            stage="input", category="input", exc_type="InputFactoryError", message=result.failure.message,
            hint="an inputs= strategy must draw (args, kwargs) inside the declared dynamic_shapes" if strategy else
            "inputs=(shapes, rng) -> (args, kwargs) must return tensors of exactly the shapes it is given, "
            "keyed like the example inputs",
        ),
        status="error",
    )


def _reject(run: Run) -> None:
    from exportcore.shapes import reject_inputs

    exported = run.programs["exported"]
    with run.clock.stage("guards"):
        cases = reject_inputs(run.spec, run.args, run.kwargs, count=max(4, min(run.examples, 12)), seed=run.seed)
        for label, args, kwargs in cases:
            args, kwargs = clone_tree((args, kwargs))
            try:
                _call_quiet(exported, args, kwargs)
            except Exception as exc:
                if is_guard_error(exc, runtime_asserts=is_shapes_spec(run.dynamic_shapes)):
                    run.outcome.examples.rejected += 1
                else:
                    first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
                    run.finding(
                        "reject_unguarded",
                        f"out-of-spec input ({label}) passed the guards and failed inside the program "
                        f"({type(exc).__name__}: {first[:200]})",
                    )
                continue
            run.fail(
                Failure(
                    stage="guards",
                    category="guards",
                    exc_type="GuardAccepted",
                    message=f"ep.module() computed on an out-of-spec input ({label}) instead of raising a guard error",
                    detail=_ranges_text(run),
                    hint="the exported range is wider than declared; check dynamic_shapes and range_constraints",
                )
            )
    prepare(run)


def _call_quiet(program: Any, args: tuple, kwargs: dict) -> Any:
    import torch

    with torch.no_grad():
        return program(*args, **kwargs)


def _specialization_findings(run: Run) -> None:
    exported = exported_input_shapes(run.programs["ep"], run.args, run.kwargs)
    for path, axis, name in _root_axes(run.spec):
        shape = exported.get(path)
        if shape is None or axis >= len(shape):
            continue
        if isinstance(shape[axis], int):
            run.finding(
                "specialized",
                f"{path} dim {axis} ({name}) was declared dynamic but the export specialized it to "
                f"{shape[axis]}",
                input=path,
            )
            continue
        symbol = shape[axis]
        exported_range = run.outcome.range_constraints.get(symbol)
        root = run.spec.roots.get(name)
        if exported_range is None or root is None or root.kind != "named":
            continue
        lo, hi = _bounds(exported_range)
        dlo, dhi = root.min, (float("inf") if root.max is None else root.max)
        # lo > dlo only counts from 2 up: torch's 0/1 specialization is reported by the size01 check.
        if (lo > dlo and lo > 2) or hi < dhi:
            run.finding(
                "narrowed",
                f"{path} dim {axis} ({name}) declared [{dlo}, {dhi}] but exported as {exported_range}",
                input=path,
            )


def _root_axes(spec: Any) -> list[tuple[str, int, str]]:
    """Return (input path, axis, root dim name) for every axis that is a root dim itself."""
    out = []
    for slot in spec.tensors:
        for i, axis in enumerate(slot.axes):
            if axis.root is not None and not axis.derived:
                out.append((slot.path, i, axis.root))
    return out


def _bounds(text: str) -> tuple[float, float]:
    from exportcore.shapes.solve import parse_range

    lo, hi = parse_range(text)
    return float(lo), float("inf") if hi is None else float(hi)


def _size01_findings(run: Run) -> None:
    """torch 2.14 does not guard the lower bound 2 it infers for Dim.AUTO/DYNAMIC: sizes 0/1 get through."""
    from exportcore.shapes import synthesize

    exported = exported_input_shapes(run.programs["ep"], run.args, run.kwargs)
    program = run.programs["exported"]
    seen: set[str] = set()
    for path, axis, name in _root_axes(run.spec):
        shape = exported.get(path)
        if name in seen or shape is None or axis >= len(shape) or isinstance(shape[axis], int):
            continue
        seen.add(name)
        rng = run.outcome.range_constraints.get(shape[axis])
        if rng is None or _bounds(rng)[0] < 2:
            continue
        for size in (0, 1):
            try:
                shapes = run.spec.shapes_for(run.spec.example_assignment() | {name: size})
                args, kwargs = synthesize(run.args, run.kwargs, shapes, seed=run.seed)
                _call_quiet(program, args, kwargs)
            except Exception:
                continue
            run.finding(
                "size01_accepted",
                f"ep.module() accepted size {size} for {name} ({path} dim {axis}) although the exported range "
                f"is {rng}: torch does not guard the 0/1 specialization; results for that size are unchecked",
                input=path,
            )
            break


def _dtype_finding(run: Run) -> None:
    import torch
    import torch.utils._pytree as pytree

    program = run.programs["exported"]
    swap = {torch.float32: torch.float64, torch.float64: torch.float32, torch.float16: torch.float32, torch.bfloat16: torch.float32}
    changed: list[tuple[Any, Any]] = []

    def cast(t: Any) -> Any:
        if isinstance(t, torch.Tensor) and t.dtype in swap:
            changed.append((t.dtype, swap[t.dtype]))
            return t.detach().to(swap[t.dtype])
        return t

    args, kwargs = pytree.tree_map(cast, clone_tree((run.args, run.kwargs)))
    if not changed:
        return
    try:
        _call_quiet(program, args, kwargs)
    except Exception:
        return
    before, after = changed[0]
    run.finding(
        "dtype_accepted",
        f"ep.module() silently accepted inputs of another dtype ({before} -> {after}); "
        "the program was exported for the example dtypes only",
    )
