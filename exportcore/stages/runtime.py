"""The stages of a target column (aoti, onnx, executorch): its runtime, the inference export, lower, load.

A target walks exportcore.pipeline.TARGET_PIPELINE: these stages build ``ctx.runtime`` (an
exportcore.programs.under_test.RuntimeSide: the loaded artifact, its tolerance, whether it carries state),
then the numerics, drawn-shape and reject checks ask it what they ask a mode's programs.
The adapters themselves (exportcore.targets) only probe, lower, load and judge a rejection.
"""

from __future__ import annotations

import contextlib
import tempfile
from typing import TYPE_CHECKING, Any, Iterator

from exportcore.compare import default_tolerances
from exportcore.programs.execute import clone_tree
from exportcore.diagnosis.failures import target_unavailable
from exportcore.reuse.native_code import generated
from exportcore.programs.under_test import RuntimeSide
from exportcore.programs.sides import prepare
from exportcore.stages import capture as capture_stage
from exportcore.reuse.prove import before_capture
from exportcore.targets import get_target, unavailable
from exportcore.targets.base import flat_tensors
from exportcore.targets.cache import export_key
from exportcore.targets.failures import target_failure

if TYPE_CHECKING:
    from exportcore.context import Run

__all__ = ["available", "capture", "load", "lower", "remember_export", "workspace"]


def remember_export(run: Run, ep: Any) -> None:
    """Keep a mode's inference export for the targets of the same case (when the session keeps exports)."""
    if run.session.exports.enabled and not run.mode.training:
        run.session.exports.store(_key(run), ep)


def _key(run: Run) -> tuple | None:
    """The case, its export mode and device, what its capture is a function of and the spec it declares
    (exportcore.targets.cache.export_key; None: not comparable)."""
    try:
        inputs = before_capture(run).capture_key
    except Exception:  # noqa: BLE001 - a model or inputs we cannot read: export again, as without keeping
        return None
    # The outcome's case id is the same for a case's modes and targets (the plugin strips the column id).
    return None if inputs is None else export_key(run.outcome.case_id, run.mode.name, run.device, inputs, run.spec)


@contextlib.contextmanager
def workspace(run: Run) -> Iterator[None]:
    """Hold the target's side and its artifact's directory for the walk; the loaded artifact must not outlive it."""
    with tempfile.TemporaryDirectory(prefix=f"pytest-export-{run.target}-") as workdir:
        run.runtime = RuntimeSide(label=run.target, target=get_target(run.target), workdir=workdir)
        try:
            yield
        finally:
            run.runtime.runner = None
            prepare(run)


def available(run: Run) -> None:
    """Skip the column when the target's packages (or its device support) are missing here."""
    reason = unavailable(run.target) or _side(run).target.unsupported_device(run.device)
    if reason is not None:
        run.fail(target_unavailable(reason), status="skipped")


def capture(run: Run) -> None:
    """The mode's inference export (reused from the case's mode column when it ran in this process)."""
    side = _side(run)
    exports = run.session.exports
    ep = exports.lookup(_key(run)) if exports.enabled else None
    exports.enable()  # a target asked: from now on the session's modes keep their inference exports
    if ep is None:
        capture_stage.run(run)
        ep = run.ep
        remember_export(run, ep)
    else:
        # No note in the outcome: serial and xdist runs (where the mode ran elsewhere) must record the same.
        capture_stage.describe_program(run, ep)
        run.ep = ep
    run.programs["exported"] = ep.module()
    mutated = _mutated_state(ep)
    side.stateful = bool(mutated)
    if side.stateful:
        # Runtimes keep mutated buffers differently (ExecuTorch keeps them, ONNX Runtime drops them,
        # ep.module() shares them with the program): only the first call is comparable with eager.
        run.outcome.notes.append(
            f"{side.label}: the program mutates buffers ({', '.join(mutated)}); "
            "numerics are checked on the example inputs (the first call) only; drawn and out-of-range "
            "shapes are checked for acceptance and rejection"
        )
    side.tolerance = _tolerances(run, side, run.reference.outputs)


def lower(run: Run) -> None:
    """Lower the export into the runtime's artifact (in the workspace)."""
    side = _side(run)
    with run.clock.stage("lower"):
        try:
            with generated():  # the compiled program, if it is mapped here, is not the user's native code
                side.lowered = side.target.lower(run.ep, *clone_tree((run.args, run.kwargs)), side.workdir,
                                                 run.target_options)
        except Exception as exc:
            run.fail(target_failure(exc, "lower", side.label))


def load(run: Run) -> None:
    """Load the artifact in its runtime: ``ctx.runtime.runner`` runs it."""
    side = _side(run)
    with run.clock.stage("load"):
        try:
            with generated():
                side.runner = side.target.load(side.lowered, run.ep, run.target_options, run.device)
        except Exception as exc:
            run.fail(target_failure(exc, "load", side.label))
    run.outcome.notes.extend(side.lowered.notes)


def _side(run: Run) -> RuntimeSide:
    assert run.runtime is not None, "the runtime stages run inside exportcore.stages.runtime.workspace"
    return run.runtime


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


def _tolerances(run: Run, side: RuntimeSide, outputs: Any) -> tuple[float | None, float | None]:
    """Return the user's tolerances where given, else the loosest dtype default widened to the target's floor."""
    rtol, atol = side.target.tolerance
    for t in flat_tensors(outputs):
        if t.is_floating_point() or t.is_complex():
            d_rtol, d_atol = default_tolerances(t.dtype)
            rtol, atol = max(rtol, d_rtol), max(atol, d_atol)
    return (rtol if run.rtol is None else run.rtol), (atol if run.atol is None else run.atol)
