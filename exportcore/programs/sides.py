"""Run one side of a comparison (eager or an exported program) the mode's way, from the snapshot state."""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING, Any, Callable, Iterator, TypeVar

from exportcore.programs.execute import RunResult, run_inference, run_training

if TYPE_CHECKING:
    from exportcore.programs.context import ProgramRun

__all__ = ["prepare", "run_side", "recording", "traced_path", "remember", "compare_guards", "call_quiet",
           "blame_randomness", "aliasing_notes"]

T = TypeVar("T")


def prepare(run: ProgramRun) -> None:
    """Put the model back in its snapshot state and in the mode's train/eval setting."""
    run.model_state.prepare(run.model, run.mode.training)


def run_side(run: ProgramRun, fn: Any, args: tuple, kwargs: dict, *, backward: bool = True) -> RunResult:
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
            return recording(run, lambda: run_training(fn, args, kwargs, seed=run.seed, backward=backward))
        return recording(run, lambda: run_inference(fn, args, kwargs, seed=run.seed))


def recording(run: ProgramRun, fn: Callable[[], T]) -> T:
    """Return ``fn()``; with a cache, the Python code it runs joins what the walk ran beyond the examples."""
    if run.code_records is None:
        return fn()
    return run.code_records[1].run(fn)


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


def remember(run: ProgramRun, label: str, program: Any) -> None:
    """Keep ``program`` and a snapshot of its own state (taken while it equals the model's snapshot)."""
    from exportcore.sandbox.model_state import ModelState

    run.programs[label] = program
    run.program_states[id(program)] = ModelState.capture(program, shared_with=run.model_state)


def compare_guards(run: ProgramRun, label: str, program: Any) -> None:
    """Have the reject check probe ``label`` (an ExportedProgram built from ``run.ep``) too, unless its
    input checks are proven ep.module()'s (exportcore.reuse.identity.guard_structure)."""
    from exportcore.reuse.identity import guard_structure

    try:
        same = program is run.ep or guard_structure(program) == guard_structure(run.ep)
    except Exception:  # noqa: BLE001 - not proven: probe it
        same = False
    if not same:
        run.own_guards.add(label)


def call_quiet(program: Any, args: tuple, kwargs: dict, run: ProgramRun | None = None) -> Any:
    """Call ``program`` once under no_grad, as a probe whose result is not compared (recorded for ``run``)."""
    import torch

    with torch.no_grad():
        if run is None:
            return program(*args, **kwargs)
        return recording(run, lambda: program(*args, **kwargs))


def blame_randomness(run: ProgramRun) -> None:
    """Explain a numerics failure by eager's own randomness when eager differs from itself.

    Every side starts from the same snapshot (model tensors, the generators it holds) and the same
    torch seed (CPU and CUDA), so two eager runs on the examples agree unless the model draws from
    something neither restores: Python's ``random``, numpy, a generator held outside the model, the
    clock. A program cannot reproduce that, and a float-tolerance hint would send the user astray.
    """
    from exportcore.compare import compare

    failure = run.outcome.failure
    if failure is None or failure.stage not in ("numerics", "training") or run.reference is None:
        return
    try:
        first = run_side(run, run.model, run.args, run.kwargs)
        second = run_side(run, run.model, run.args, run.kwargs)
    except Exception:  # noqa: BLE001 - eager ran before; if it no longer does, the failure stands as found
        return
    finally:
        prepare(run)
    found = compare(first.outputs, second.outputs, rtol=run.rtol, atol=run.atol, path="output")
    if found is None and first.buffers is not None and second.buffers is not None:
        found = compare(first.buffers, second.buffers, rtol=run.rtol, atol=run.atol, path="buffers")
    if found is None:
        return
    failure.detail = f"{failure.message}\n{failure.detail}".strip()
    failure.message = (f"eager itself is not reproducible: two eager runs on the example inputs from the same "
                       f"model state and torch seed differ ({found.message}); no program can match it")
    failure.hint = ("the model draws randomness that is neither torch's seeded RNG nor a torch.Generator it "
                    "holds (Python's random, numpy.random, a generator outside the model, the clock): export "
                    "bakes one draw in as a constant. Use torch's RNG (seeded) or pass the random values in as an input")


def aliasing_notes(args: tuple, kwargs: dict) -> list[str]:
    """Return one note per group of example inputs that share memory (kept aliased in every copy: execute.clone_tree)."""
    import torch

    from exportcore.shapes.parse import input_paths

    groups: dict[int, list[tuple[str, Any]]] = {}
    for path, value in input_paths(args, kwargs):
        if isinstance(value, torch.Tensor) and value.layout == torch.strided and not value.is_quantized:
            storage = value.untyped_storage()
            if storage.nbytes():
                groups.setdefault(storage.data_ptr(), []).append((path, value))
    notes = []
    for members in groups.values():
        if len(members) < 2:
            continue
        paths = [p for p, _ in members]
        named = ", ".join(paths[:-1]) + f" and {paths[-1]}"
        same = len({id(v) for _, v in members}) == 1
        what = "are one tensor" if same else "share one storage (views)"
        notes.append(f"inputs {named} {what}: every copy keeps them aliased, as torch.export.export(model, args) "
                     "sees them (an in-place write to one is seen through the other)")
    return notes
