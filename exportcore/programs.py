"""The export stages proper: eager reference, capture, decompose, serialize, module, numerics."""

from __future__ import annotations

import contextlib
import io
import logging
from typing import TYPE_CHECKING, Any, Iterator

from exportcore.classify import classify
from exportcore.compare import Mismatch, compare, compare_with_reference
from exportcore.execute import RunResult, clone_tree, run_inference, run_training
from exportcore.guards import range_strings
from exportcore.outcome import Failure, GraphStats

if TYPE_CHECKING:
    from exportcore.context import Run

__all__ = [
    "prepare",
    "eager_reference",
    "capture",
    "add_programs",
    "run_side",
    "compare_runs",
    "numerics_on_examples",
    "state_parity",
    "graph_stats",
]

_GRAPH_CODE_LIMIT = 40_000


def prepare(run: Run) -> None:
    """Put the model back in its snapshot state and in the mode's train/eval setting."""
    import torch

    run.model_state.restore(run.model)
    if isinstance(run.model, torch.nn.Module):
        run.model.train(run.mode.training)


def run_side(run: Run, fn: Any, args: tuple, kwargs: dict, *, backward: bool = True) -> RunResult:
    """Run eager or exported code on copies of the inputs, the mode's way, from the snapshot state."""
    # Every side, on every input, starts from the state eager started from: ep.module() and
    # the decomposed module share the model's tensors, the reloaded one has its own copies, and
    # a counter or a KV cache written by one run must not feed the next.
    prepare(run)
    state = run.program_states.get(id(fn))
    if state is not None:
        state.restore(fn)
    with traced_path():
        if run.mode.training:
            return run_training(fn, args, kwargs, seed=run.seed, backward=backward)
        return run_inference(fn, args, kwargs, seed=run.seed)


@contextlib.contextmanager
def traced_path() -> Iterator[None]:
    """Run eager along the path torch.export traces: the MHA/TransformerEncoder fast path off.

    Under no_grad, nn.MultiheadAttention and nn.TransformerEncoder(Layer) take a fused fast path
    (nested tensors: zeros at padded positions of src_key_padding_mask); export traces the regular
    path, so an eager reference taken on the fast path is not the eager the program came from.
    """
    import torch

    mha = getattr(torch.backends, "mha", None)
    if mha is None or not hasattr(mha, "set_fastpath_enabled"):
        yield
        return
    previous = mha.get_fastpath_enabled()
    mha.set_fastpath_enabled(False)
    try:
        yield
    finally:
        mha.set_fastpath_enabled(previous)


def _remember(run: Run, label: str, program: Any) -> None:
    """Keep ``program`` and a snapshot of its own state (taken while it equals the model's snapshot)."""
    from exportcore.isolation import ModelState

    run.programs[label] = program
    run.program_states[id(program)] = ModelState.capture(program, shared_with=run.model_state)


def eager_reference(run: Run) -> RunResult:
    """Run the user's model on independent copies of the example inputs; eager failure stops the case."""
    with run.clock.stage("eager"):
        prepare(run)
        try:
            reference = run_side(run, run.model, run.args, run.kwargs)
        except Exception as exc:  # the model itself is broken: say so, not "export failed"
            run.fail(classify(exc, "eager"), status="error")
        prepare(run)
    return reference


def capture(run: Run) -> Any:
    """Call torch.export.export exactly once; classify a failure."""
    import torch

    from exportcore.export_hooks import no_leaked_hooks

    with run.clock.stage("capture"):
        prepare(run)
        args, kwargs = clone_tree((run.args, run.kwargs))
        try:
            with no_leaked_hooks():
                ep = torch.export.export(
                    run.model, args, kwargs or None, dynamic_shapes=run.dynamic_shapes, strict=run.mode.strict
                )
        except Exception as exc:
            prepare(run)
            run.fail(classify(exc, "capture"))
        prepare(run)
    run.outcome.range_constraints = range_strings(ep)
    run.outcome.graph = graph_stats(ep)
    run.programs["ep"] = ep
    return ep


def add_programs(run: Run, ep: Any) -> None:
    """Build .module() of the exported program, its decomposition and its reloaded copy."""
    import torch

    prepare(run)
    with run.clock.stage("module"):
        try:
            _remember(run, "exported", ep.module())
        except Exception as exc:
            run.fail(classify(exc, "module"))
    if "decompose" in run.checks:
        with run.clock.stage("decompose"):
            try:
                decomposed = ep.run_decompositions()
                _remember(run, "decomposed", decomposed.module())
            except Exception as exc:
                run.fail(classify(exc, "decompose"))
        run.outcome.graph = graph_stats(decomposed)
        if run.mode.training:
            run.outcome.notes.append(
                "decompose (training): forward outputs and buffer mutations of the core-ATen program are "
                "compared with eager; gradients are not, because backward through a decomposed training "
                "program is not supported by torch.export"
            )
    if "serialize" in run.checks:
        with run.clock.stage("serialize"):
            try:
                buffer = io.BytesIO()
                with _tolerant_logging():
                    torch.export.save(ep, buffer)
                    buffer.seek(0)
                    _remember(run, "reloaded", torch.export.load(buffer).module())
            except Exception as exc:
                run.fail(classify(exc, "serialize"))


@contextlib.contextmanager
def _tolerant_logging() -> Iterator[None]:
    # torch 2.14's load logs a malformed record (a stray '%') when it falls back from
    # weights_only for a registered dataclass/namedtuple; under pytest's log capture a bad
    # record raises (logging.raiseExceptions) and would fail a round trip that works.
    previous = logging.raiseExceptions
    logging.raiseExceptions = False
    try:
        yield
    finally:
        logging.raiseExceptions = previous


def compare_runs(
    run: Run, label: str, expected: RunResult, actual: RunResult, *, grads: bool = True,
    inputs: tuple[tuple, dict] | None = None,
) -> Failure | None:
    """Compare one program's run with eager (outputs, buffers after the call, grads); a Failure or None.

    ``inputs`` (the call's args and kwargs) lets a float mismatch be judged against a float64
    eager reference (compare.compare_with_reference), computed only when the plain check fails.
    """
    def check(part: str, exp: Any, act: Any) -> Mismatch | None:
        found = compare(exp, act, rtol=run.rtol, atol=run.atol, path=part)
        if found is None or found.kind != "value" or inputs is None:
            return found
        wide = _float64_run(run, expected, inputs)
        if wide is None:
            return found
        ref = wide.outputs if part == "output" else (wide.buffers if part == "buffers" else wide.grads)
        return compare_with_reference(exp, act, {} if ref is None else ref, rtol=run.rtol, atol=run.atol, path=part)

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
        return None
    return mismatch_failure(label, mismatch, stage)


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
    what = {"exported": "ep.module()", "decomposed": "run_decompositions().module()", "reloaded": "load(save(ep)).module()"}
    message = f"{what.get(label, label)} program lost a weight tie: {lost}; {mismatch.message}"
    return Failure(
        stage="training",
        category="serialization" if label == "reloaded" else "numerics",
        exc_type="AliasLost",
        message=message[:400],
        detail=message,
        hint="tied weights must stay one storage: re-tie them after loading (module.b.weight = module.a.weight)"
        " or report it to PyTorch; gradients of the two copies differ from eager's shared gradient",
    )


def mismatch_failure(label: str, mismatch: Mismatch, stage: str = "numerics") -> Failure:
    """Return the Failure for a program whose results differ from eager."""
    from exportcore.classify import mismatch_failure as classified

    what = {"exported": "ep.module()", "decomposed": "run_decompositions().module()", "reloaded": "load(save(ep)).module()"}
    return classified(mismatch, stage=stage, program=what.get(label, label))


def numerics_on_examples(run: Run, reference: RunResult) -> None:
    """Check every built program against eager on the example inputs."""
    if "numerics" not in run.checks:
        return
    with run.clock.stage("run"):
        for label in ("exported", "decomposed", "reloaded"):
            program = run.programs.get(label)
            if program is None:
                continue
            try:
                actual = run_side(run, program, run.args, run.kwargs, backward=label != "decomposed")
            except Exception as exc:
                failure = classify(exc, "run")
                failure.message = f"{label} program failed on the example inputs: {failure.message}"
                run.fail(failure)
            failure = compare_runs(
                run, label, reference, actual, grads=label != "decomposed", inputs=(run.args, run.kwargs)
            )
            if failure is not None:
                run.fail(failure)
        prepare(run)


def state_parity(run: Run) -> None:
    """Report parameters/buffers of the model missing from, or different in, ep.module()."""
    import torch

    if not isinstance(run.model, torch.nn.Module):
        return
    exported = run.programs["exported"]
    with run.clock.stage("state"):
        mine = dict(run.model.named_parameters())
        mine.update({k: v for k, v in run.model.named_buffers() if v is not None})
        theirs = dict(exported.named_parameters())
        theirs.update({k: v for k, v in exported.named_buffers() if v is not None})
        missing = sorted(set(mine) - set(theirs))
        if missing:
            run.finding(
                "state_missing",
                f"ep.module() lacks {len(missing)} of the model's parameters/buffers: {', '.join(missing[:8])}"
                + (" ..." if len(missing) > 8 else "")
                + " (torch.export drops state the traced forward never reads)",
            )
        differing = []
        for name in sorted(set(mine) & set(theirs)):
            a, b = mine[name], theirs[name]
            if a.shape != b.shape or a.dtype != b.dtype or not torch.equal(a.detach().cpu(), b.detach().cpu()):
                differing.append(name)
        if differing:
            run.finding("state_differs", f"ep.module() state differs from the model's: {', '.join(differing[:8])}")


def graph_stats(ep: Any) -> GraphStats:
    """Return node count, call_function op histogram and code of an exported program."""
    hist: dict[str, int] = {}
    count = 0
    for node in ep.graph.nodes:
        count += 1
        if node.op == "call_function":
            # OpOverloads print as "aten.mm.default"; plain callables by their name.
            is_op = hasattr(node.target, "_overloadpacket")
            name = str(node.target) if is_op else getattr(node.target, "__name__", str(node.target))
            hist[name] = hist.get(name, 0) + 1
    try:
        code = ep.graph_module.code
    except Exception:  # pragma: no cover - code generation is best effort
        code = ""
    if len(code) > _GRAPH_CODE_LIMIT:
        code = code[:_GRAPH_CODE_LIMIT] + "\n# ... truncated ..."
    return GraphStats(node_count=count, op_histogram=dict(sorted(hist.items())), code=code.strip())
