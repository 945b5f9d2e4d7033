"""Compare one program's run with eager's (outputs, buffers after the call, grads): a Failure or None.

Shared by the numerics check (example inputs), the drawn-shape check and the tests. In training
mode the buffers and gradients are compared too (failure stage "training").
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from exportcore.compare import ROUNDING_FACTOR, Mismatch, Rounding, compare, compare_with_reference
from exportcore.execute import RunResult, clone_tree, run_inference, run_training
from exportcore.failures import alias_lost
from exportcore.outcome import Failure
from exportcore.random_draws import redrawn
from exportcore.sides import prepare, traced_path

if TYPE_CHECKING:
    from exportcore.context import Run

__all__ = ["compare_runs", "mismatch_failure", "PROGRAM_NAMES"]

#: How a failure names each program.
PROGRAM_NAMES = {"exported": "ep.module()", "decomposed": "run_decompositions().module()",
                 "reloaded": "load(save(ep)).module()"}


def compare_runs(
    run: Run, label: str, expected: RunResult, actual: RunResult, *, grads: bool = True,
    inputs: tuple[tuple, dict] | None = None,
) -> Failure | None:
    """Compare one program's run with eager (outputs, buffers after the call, grads); a Failure or None.

    ``inputs`` (the call's args and kwargs) lets a float mismatch be judged against a float64
    eager reference (compare.compare_with_reference), computed only when the plain check fails.
    """
    forgiven: list[Rounding] = []

    def check(part: str, exp: Any, act: Any) -> Mismatch | None:
        found = compare(exp, act, rtol=run.rtol, atol=run.atol, path=part)
        if found is None or found.kind != "value" or inputs is None:
            return found
        wide = _float64_run(run, expected, inputs)
        if wide is None:
            return found
        ref = wide.outputs if part == "output" else (wide.buffers if part == "buffers" else wide.grads)
        return compare_with_reference(exp, act, {} if ref is None else ref, rtol=run.rtol, atol=run.atol, path=part,
                                      forgiven=forgiven)

    mismatch = check("output", expected.outputs, actual.outputs)
    stage = "numerics"
    if mismatch is None and expected.buffers is not None and actual.buffers is not None:
        stage = "training" if run.mode.training else "numerics"
        common = {k: v for k, v in actual.buffers.items() if k in expected.buffers}
        mismatch = check("buffers", {k: expected.buffers[k] for k in common}, common)
    if mismatch is None and run.mode.training and grads and expected.grads is not None and actual.grads is not None:
        stage = "training"
        common = {k: v for k, v in actual.grads.items() if k in expected.grads}
        mismatch = check("grads", {k: expected.grads[k] for k in common}, common)
        if mismatch is not None:
            lost = _lost_tie(mismatch.path, expected, actual)
            if lost:
                return _alias_failure(label, mismatch, lost)
    if mismatch is None:
        if forgiven:
            _less_precise(run, label, forgiven[0])
        return None
    failure = mismatch_failure(label, mismatch, stage)
    why = redrawn(run, label, failure)
    if why is not None:  # not the program's fault: a stage rewrote its random ops
        if why not in run.outcome.notes:
            run.outcome.notes.append(why)
        return None
    return failure


def _less_precise(run: Run, label: str, rounding: Rounding) -> None:
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


def _float64_run(run: Run, expected: RunResult, inputs: tuple[tuple, dict]) -> RunResult | None:
    """Return eager's run in float64 on a deep copy (cached on ``expected``), or None if impossible."""
    if expected.float64 is not None:
        return expected.float64 or None
    expected.float64 = False
    import copy

    import torch

    def wide(t: torch.Tensor) -> torch.Tensor:
        return t.to(torch.float64) if t.is_floating_point() and t.dtype != torch.float64 else t

    prepare(run)
    try:
        model = copy.deepcopy(run.model).double()
        args, kwargs = torch.utils._pytree.tree_map_only(torch.Tensor, wide, clone_tree(inputs))
        with traced_path():
            if run.mode.training:
                result = run_training(model, args, kwargs, seed=run.seed)
            else:
                result = run_inference(model, args, kwargs, seed=run.seed)
    except Exception:  # a model that cannot run in float64 (or be copied): the plain rule stands
        return None
    finally:
        prepare(run)
    expected.float64 = result
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
    from exportcore.classify import mismatch_failure as classified

    return classified(mismatch, stage=stage, program=PROGRAM_NAMES.get(label, label))
