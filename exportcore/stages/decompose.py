"""Stage decompose: run_decompositions() to core ATen; its .module() joins the programs checked against eager."""

from __future__ import annotations

import warnings
from typing import TYPE_CHECKING, Any

from exportcore.reuse import shared_programs
from exportcore.diagnosis.classify import classify
from exportcore.reuse.eager_code import CodeRecord
from exportcore.programs.graph_stats import graph_stats
from exportcore.programs.sides import compare_guards, remember

if TYPE_CHECKING:
    from exportcore.context import Run
    from exportcore.outcome import Failure

__all__ = ["run"]


def _same(ep: object, decomposed: object) -> bool:
    from exportcore.reuse.identity import same_program

    try:
        return same_program(ep, decomposed)
    except Exception:  # noqa: BLE001 - not known to be the same: both are probed
        return False


def _decompose(ctx: Run) -> tuple[Any, CodeRecord | None]:
    """``run_decompositions()``, and what it ran of the user's code.

    It may run some in every program: a decomposition a project put in torch's table and the
    helpers that calls, a custom op's CompositeImplicitAutograd kernel (which may take a path no
    eager run takes, under ``torch.compiler.is_compiling()``), a pytree node's functions. That
    code is a witness of this walk's results (exportcore.reuse.code_witnesses), or an edit to it would
    be served the old verdict, so it is recorded whatever the program calls. (The profile hook
    costs time on every call: a dynamic four-layer transformer encoder's ``run_decompositions``
    takes 2.7 s recorded, 1.0 s not, in a cold session; a session that is served does not
    decompose at all. A trace hook that sees only each frame's entry saved a sixth of that.)
    """
    if ctx.code_records is None:
        return ctx.ep.run_decompositions(), None
    ran = CodeRecord()
    decomposed = ran.run(ctx.ep.run_decompositions)
    ctx.code_records[1].merge(ran)
    return decomposed, ran


def _exported_failure(ctx: Run) -> Failure | None:
    """The exported program's own failure on the examples, where it has one.

    run_decompositions re-traces the program and trips over what already breaks it (strict export
    of an autocast region asserts float32 on a bfloat16 result): blamed on the decomposition, the
    failure would point at a decomposition table that has nothing to do with it.
    """
    from exportcore.programs.under_test import ProgramSide
    from exportcore.programs.sides import prepare

    program = ctx.programs.get("exported")
    if program is None:
        return None
    side = ProgramSide("exported", program)
    try:
        side.call(ctx, ctx.args, ctx.kwargs)
    except Exception as exc:  # noqa: BLE001 - the program's own failure, written up as the examples' check would
        return side.raised(exc, "the example inputs")
    finally:
        prepare(ctx)
    return None


def run(ctx: Run) -> None:
    """Set ``ctx.programs["decomposed"]``; the outcome's graph statistics become the core-ATen graph's."""
    with ctx.clock.stage("decompose"):
        shared = shared_programs.take(ctx, "decomposed")
        try:
            if shared is not None:
                decomposed, donor = shared
                ctx.outcome.notes.append(
                    f"decompose: this capture is the program {donor} decomposed (graph, ranges and tensors by value), "
                    "so its core-ATen program was taken, not built again; it is checked here this mode's way")
            else:
                with warnings.catch_warnings():
                    # torch 2.10-2.12 warn from inside run_decompositions (deep-copying its own LeafSpec):
                    # nothing the user wrote, nothing they can change. (The FutureWarning came with
                    # pytorch/pytorch#160843; drop this when 2.12 is no longer supported.)
                    warnings.filterwarnings("ignore", message=r"`isinstance\(treespec, LeafSpec\)` is deprecated")
                    decomposed, ran = _decompose(ctx)
            remember(ctx, "decomposed", decomposed.module())
            compare_guards(ctx, "decomposed", decomposed)
        except Exception as exc:
            ctx.fail(_exported_failure(ctx) or classify(exc, "decompose"))
        if shared is None:
            shared_programs.keep(ctx, "decomposed", decomposed, ran)
        if not ctx.mode.training and _same(ctx.ep, decomposed):
            # already core ATen: the decomposed program is the exported one (training compares grads
            # of the exported program only, so there both stay)
            ctx.same_as["decomposed"] = "exported"
    ctx.outcome.graph = graph_stats(decomposed)
    if ctx.mode.training:
        ctx.outcome.notes.append(
            "decompose (training): forward outputs and buffer mutations of the core-ATen program are "
            "compared with eager; gradients are not, because backward through a decomposed training "
            "program is not supported by torch.export"
        )
