"""Compare one program's run with eager's (outputs, buffers after the call, grads): a Failure or None.

Shared by the numerics check (example inputs), the drawn-shape check and the tests. In training
mode the buffers and gradients are compared too (failure stage "training").
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable

from exportcore.compare import ROUNDING_FACTOR, LeafError, Meter, Mismatch, Rounding, compare, compare_with_reference
from exportcore.programs.execute import RunResult, clone_tree, run_inference, run_training
from exportcore.diagnosis.failures import alias_lost
from exportcore.sandbox.float32_precision import full_float32, reduced_float32
from exportcore.outcome import Failure, ProgramError
from exportcore.programs.discrete import tie_judge
from exportcore.programs.random_draws import redrawn
from exportcore.programs.sides import prepare, traced_path

if TYPE_CHECKING:
    from exportcore.compare.ties import Tie
    from exportcore.programs.context import ProgramRun

__all__ = ["EXAMPLE_INPUTS", "compare_runs", "mismatch_failure", "measured", "PROGRAM_NAMES"]

#: How checks and measurements name the case's own inputs (any other input set is named by its shapes).
EXAMPLE_INPUTS = "the example inputs"

#: How a failure names each program.
PROGRAM_NAMES = {"exported": "ep.module()", "decomposed": "run_decompositions().module()",
                 "reloaded": "load(save(ep)).module()"}


def compare_runs(
    run: ProgramRun, label: str, expected: RunResult, actual: RunResult, *, grads: bool = True,
    inputs: tuple[tuple, dict] | None = None, rerun: Callable[[], RunResult] | None = None,
    where: str = EXAMPLE_INPUTS,
) -> Failure | None:
    """Compare one program's run with eager (outputs, buffers after the call, grads); a Failure or None.

    ``inputs`` (the call's args and kwargs) lets a float mismatch be judged against a float64
    eager reference (compare.compare_with_reference), computed only when the plain check fails.
    ``rerun`` runs the program again on them: where float32 math on the run's device may go below
    float32 precision (TF32 on CUDA), a mismatch is judged on eager and the program both run again
    at full float32 precision (exportcore.sandbox.float32_precision). Each leaf's error is measured
    into the outcome's numerics (``where``: what the inputs are), on the run the verdict was judged on.
    """
    forgiven: list[Rounding] = []
    full: list[tuple[RunResult, RunResult] | None] = []  # made on the first mismatch that needs it
    meters: dict[str, Meter] = {}
    tie = tie_judge(run, inputs, lambda path, found: _tie_note(run, label, path, found, where))

    def check(part: str, keys: Any = None) -> Mismatch | None:
        exp, act = _part(expected, part, keys), _part(actual, part, keys)
        meter = meters[part] = Meter()
        found = compare(exp, act, rtol=run.rtol, atol=run.atol, path=part, meter=meter, tie=tie)
        if found is None or found.kind != "value" or inputs is None:
            return found
        reduced = reduced_float32(run.device) if rerun is not None else ()
        if reduced and not full:
            full.append(_full_precision(run, expected, inputs, rerun))
        if reduced and full[0] is not None:
            exp, act = _part(full[0][0], part, keys), _part(full[0][1], part, keys)
            meter = meters[part] = Meter()  # judged on the full-precision runs: measured there
            found = compare(exp, act, rtol=run.rtol, atol=run.atol, path=part, meter=meter, tie=tie)
            if found is None or found.kind != "value":
                _reduced_note(run, reduced, found is None)
                return found
        wide = _reference_run(run, expected, inputs, "float64")
        if wide is None:
            return found
        ref = _part(wide, part, keys)
        found = compare_with_reference(exp, act, {} if ref is None else ref, rtol=run.rtol, atol=run.atol, path=part,
                                       forgiven=forgiven, meter=meter, tie=tie)
        if reduced and full[0] is not None:
            _reduced_note(run, reduced, found is None)
        return found

    mismatch = check("output")
    stage = "numerics"
    if mismatch is None and expected.buffers is not None and actual.buffers is not None:
        stage = "training" if run.mode.training else "numerics"
        mismatch = check("buffers", [k for k in actual.buffers if k in expected.buffers])
    if mismatch is None and run.mode.training and grads and expected.grads is not None and actual.grads is not None:
        stage = "training"
        mismatch = check("grads", [k for k in actual.grads if k in expected.grads])
        if mismatch is not None:
            lost = _lost_tie(mismatch.path, expected, actual)
            if lost:
                measured(run, label, list(meters.values()), where, inputs)
                return _alias_failure(label, mismatch, lost)
    if mismatch is None:
        if forgiven:
            _less_precise(run, label, forgiven[0])
        measured(run, label, list(meters.values()), where, inputs)
        return None
    failure = mismatch_failure(label, mismatch, stage)
    why = redrawn(run, label, failure)
    if why is not None:  # not the program's fault: a stage rewrote its random ops (nothing measured)
        if why not in run.outcome.notes:
            run.outcome.notes.append(why)
        return None
    measured(run, label, list(meters.values()), where, inputs)
    return failure


def measured(run: ProgramRun, label: str, meters: list[Meter], where: str, inputs: tuple[tuple, dict] | None) -> None:
    """Fold one comparison's measured leaves into the outcome's entry for program ``label`` (its worst, its maxima).

    ``where`` names the inputs; a drawn shape's are named by their shapes, the first time they hold the worst.
    Beyond the examples, a program proven the same as ``label`` (``run.same_as``) is not run again
    (exportcore.programs.under_test.sides): what ``label`` measured there is its measurement too.
    """
    leaves = [leaf for meter in meters for leaf in meter.leaves.values()]
    if not leaves or getattr(run, "outcome", None) is None:
        return  # nothing compared, or a comparison made by hand with no outcome to keep it (tests call it so)
    same_as = getattr(run, "same_as", {})
    twins = [] if where == EXAMPLE_INPUTS else [twin for twin, of in same_as.items() if of == label]
    for program in [label, *twins]:
        _fold(run, program, leaves, where, inputs)


def _fold(run: ProgramRun, label: str, leaves: list[LeafError], where: str, inputs: tuple[tuple, dict] | None) -> None:
    errors = run.outcome.numerics
    entry = next((e for e in errors if e.program == label), None)
    if entry is None:
        entry = ProgramError(program=label)
        errors.append(entry)
    entry.samples += 1
    entry.max_abs = max([entry.max_abs] + [leaf.max_abs for leaf in leaves])
    entry.max_rel = max([entry.max_rel] + [leaf.max_rel for leaf in leaves])
    entry.max_ulp = max([entry.max_ulp] + [leaf.max_ulp for leaf in leaves])
    worst = max(leaves, key=lambda leaf: leaf.fraction)  # the first of equals
    if entry.samples == 1 or worst.fraction > entry.worst_fraction:
        entry.worst_fraction, entry.where, entry.forgiven = worst.fraction, worst.path, worst.forgiven
        entry.inputs = _inputs_text(where, inputs)


def _inputs_text(where: str, inputs: tuple[tuple, dict] | None) -> str:
    if inputs is None or where == EXAMPLE_INPUTS:
        return where
    from exportcore.shapes.synth import input_shapes

    shapes = ", ".join(f"{path}={list(shape)}" for path, shape in input_shapes(*inputs).items())
    return f"{where} ({shapes})" if shapes else where


def _less_precise(run: ProgramRun, label: str, rounding: Rounding) -> None:
    """Keep the signal of a program forgiven as rounding while less exact than eager: one finding per program."""
    name = PROGRAM_NAMES.get(label, label)
    if any(f.kind == "less_precise" and f.message.startswith(name) for f in run.outcome.findings):
        return
    run.finding(
        "less_precise",
        f"{name} is less precise than eager: at {rounding.path} its largest distance to eager's float64 run is"
        f" {rounding.program_error:.2g} (eager's own: {rounding.eager_error:.2g}) and {rounding.beyond} element(s)"
        f" differ from eager beyond rtol/atol; within them norm-wise (relative RMS error {rounding.relative_rms:.2g})"
        f" and within {ROUNDING_FACTOR:g}x them everywhere: float rounding (another accumulation order), not a failure",
    )


def _tie_note(run: ProgramRun, label: str, path: str, tie: Tie, where: str) -> None:
    """Say, once per program and leaf, that a flipped index output was judged a tie of eager's scores."""
    if getattr(run, "outcome", None) is None:
        return  # a comparison made by hand (tests): nothing to note it on
    name = PROGRAM_NAMES.get(label, label)
    lead = f"tie: {name} {path}"
    if any(n.startswith(lead + " ") for n in run.outcome.notes):
        return
    run.outcome.notes.append(
        f"{lead} picks another index than eager at {tie.flipped} of {tie.total} position(s) on {where}, each a tie: "
        f"eager's {tie.op} scores at both indices are within the tolerance of each other (the worst gap "
        f"{tie.fraction:.2g} of it), so either pick is right; not a mismatch")


def _part(result: RunResult, part: str, keys: Any = None) -> Any:
    """The outputs, or the buffers or grads named in ``keys`` (those both sides have)."""
    if part == "output":
        return result.outputs
    values = result.buffers if part == "buffers" else result.grads
    return values if values is None or keys is None else {k: values[k] for k in keys if k in values}


def _full_precision(
    run: ProgramRun, expected: RunResult, inputs: tuple[tuple, dict], rerun: Callable[[], RunResult],
) -> tuple[RunResult, RunResult] | None:
    """Eager and the program run again with float32 at full precision; None where either cannot."""
    eager = _reference_run(run, expected, inputs, "full32")
    if eager is None:
        return None
    try:
        with full_float32():
            return eager, rerun()
    except Exception:  # noqa: BLE001 - it ran at reduced precision; the comparison there stands
        return None


def _reduced_note(run: ProgramRun, reduced: tuple[str, ...], agree: bool) -> None:
    verdict = "agree there" if agree else "differ there too"
    note = (f"numerics on {run.device}: float32 math may run below float32 precision here ({', '.join(reduced)});"
            f" eager and the program, which differ beyond float32's tolerances, were run again at full float32"
            f" precision and {verdict}")
    if note not in run.outcome.notes:
        run.outcome.notes.append(note)


def _reference_run(run: ProgramRun, expected: RunResult, inputs: tuple[tuple, dict], kind: str) -> RunResult | None:
    """Return eager's run in float64, or (``kind="full32"``) with float32 at full precision, on a deep copy.

    Cached on ``expected``; None where the model cannot run so (or be copied).
    """
    cached = getattr(expected, kind)
    if cached is not None:
        return cached or None
    setattr(expected, kind, False)
    import contextlib
    import copy

    import torch

    def wide(t: torch.Tensor) -> torch.Tensor:
        return t.to(torch.float64) if t.is_floating_point() and t.dtype != torch.float64 else t

    prepare(run)
    try:
        model = copy.deepcopy(run.model)
        args, kwargs = clone_tree(inputs)
        if kind == "float64":
            model = model.double()
            args, kwargs = torch.utils._pytree.tree_map_only(torch.Tensor, wide, (args, kwargs))
        with traced_path(), (full_float32() if kind == "full32" else contextlib.nullcontext()):
            if run.mode.training:
                result = run_training(model, args, kwargs, seed=run.seed)
            else:
                result = run_inference(model, args, kwargs, seed=run.seed)
    except Exception:  # a model that cannot run so (or be copied): the plain rule stands
        return None
    finally:
        prepare(run)
    setattr(expected, kind, result)
    return result


def _lost_tie(path: str, expected: RunResult, actual: RunResult) -> str:
    """Return a sentence when the grads path names a weight tied in eager but not in the program."""
    import re

    found = re.match(r"grads\[(['\"])(.*)\1\]", path)
    if not found or not expected.tied or actual.tied is None:
        return ""
    name = found.group(2)
    mine, theirs = expected.tied.get(name, (name,)), actual.tied.get(name, (name,))
    if len(mine) > 1 and set(mine) - set(theirs):
        return (f"eager ties {', '.join(mine)} (one storage) but the program keeps "
                f"{', '.join(sorted(set(mine) - set(theirs)))} apart from {name}")
    return ""


def _alias_failure(label: str, mismatch: Mismatch, lost: str) -> Failure:
    return alias_lost(label, f"{PROGRAM_NAMES.get(label, label)} program lost a weight tie: {lost}; {mismatch.message}")


def mismatch_failure(label: str, mismatch: Mismatch, stage: str = "numerics") -> Failure:
    """Return the Failure for a program whose results differ from eager."""
    from exportcore.diagnosis.classify import mismatch_failure as classified

    return classified(mismatch, stage=stage, program=PROGRAM_NAMES.get(label, label))
