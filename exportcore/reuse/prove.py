"""Take a run's proof (exportcore.reuse.proof), each half once: before capture right after eager, the rest at
the first step after the mode's own program is built."""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING

from exportcore.reuse.proof import BeforeCapture, Proof

if TYPE_CHECKING:
    from exportcore.reuse.context import ReuseRun

__all__ = ["before_capture", "proof_of", "options_digest"]


def before_capture(run: ReuseRun, eager_code: str | None = None) -> BeforeCapture:
    """Return the run's pre-capture proof, taken once (``run.before_capture``), the model as its snapshot.

    ``eager_code``: the digest of the code eager ran on the examples (exportcore.stages.eager takes the
    proof right after eager with it, where a disk store is used); without it the proof holds no part
    across processes.
    """
    from exportcore.reuse.identity import module_digest
    from exportcore.sandbox.tensor_digest import values_digest
    from exportcore.reuse.python_digest import state_digest

    if run.before_capture is not None:
        return run.before_capture
    run.model_state.prepare(run.model, run.mode.training)  # the state eager and every program start from
    reference = run.reference
    parts: dict[str, str | None] = dict(
        options=options_digest(run), values=module_digest(run.model), attributes=state_digest(run.model),
        inputs=values_digest((run.args, run.kwargs)),
        # eager's own answer on the examples: Python state no tensor shows (a call counter, a flag) still
        # makes the two models different references. In training its gradients too: a custom
        # autograd.Function's backward is eager's alone (the program differentiates the traced forward),
        # so an edited backward changes the verdict and nothing else.
        answer=values_digest((reference.outputs, reference.buffers, reference.grads)) if reference is not None else None,
    )
    if run.session.disk is not None and eager_code is not None:
        parts.update(_across_processes(run, eager_code))
    run.before_capture = BeforeCapture(**parts)
    return run.before_capture


def proof_of(run: ReuseRun) -> Proof | None:
    """Return the run's whole proof, taken once (``run.proof``); None where the run may not share at all."""
    if run.proof is not None:
        return run.proof
    if run.target is not None or run.ep is None or not run.session.reuse:
        return None
    from exportcore.reuse.identity import constants_digest, structure
    from exportcore.reuse.program_code import program_code

    try:
        text, code, constants = structure(run.ep), program_code(run.ep), constants_digest(run.ep)
    except Exception:  # noqa: BLE001 - a program we cannot describe is not shared, never an error
        text = code = constants = None
    digest = hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=20).hexdigest() if text else None
    run.proof = Proof(before_capture(run), digest, code, constants, run.mode.name, run.inputs)
    return run.proof


def options_digest(run: ReuseRun) -> str | None:
    """Every option that decides what is checked, and what the process runs under; None: not comparable."""
    from exportcore.devices import device_facts
    from exportcore.sandbox.isolation import settings_text

    settings = settings_text()  # deterministic algorithms, TF32, default dtype
    if settings is None:
        return None
    # Modes share by proof, but a training program runs in train() with its own eager reference and
    # steps: it is served only by an earlier run of its own mode (the disk store; the memory store's
    # donations go between modes, so it never answers a training run).
    family = run.mode.name if run.mode.training else "inference"
    options = (
        settings, family, run.outcome.case_id, type(run.model).__module__, type(run.model).__qualname__,
        sorted(run.checks), run.rtol, run.atol, run.examples, run.seed, run.findings_as_errors, run.device,
        device_facts(run.device), _draw_settings(run), getattr(run.spec, "budget", None), run.outcome.declared,
    )
    exporting = run.export_kwargs  # export's own options (a rescue's): left out when none, so older keys still hold
    if exporting:
        options += (sorted(exporting.items()),)
    return hashlib.blake2b(repr(options).encode("utf-8", "surrogatepass"), digest_size=20).hexdigest()


def _draw_settings(run: ReuseRun) -> str:
    """The hypothesis settings the drawn shapes run under, as exportcore.shapes.explore builds them.

    Not the profile as given: its example database is a folder under the checkout, so a result
    cache restored into another folder (a CI runner with another workspace path, a second
    worktree) would never match; and explore replaces the database, deadline and verbosity,
    which draw nothing. The number of examples is the run's own option (``run.examples``, 0 when
    nothing is drawn), next to this in the key.
    """
    from exportcore.shapes.explore import hypothesis_settings

    try:
        return repr(hypothesis_settings(1, run.hypothesis_settings))
    except Exception:  # noqa: BLE001 - settings explore could not run under: the profile as given
        return repr(run.hypothesis_settings)


def _across_processes(run: ReuseRun, eager_code: str) -> dict[str, str | None]:
    """The parts a later process must also match: eager's code, the factory, what outside the process decides."""
    from exportcore.reuse.input_factory import factory_identity
    from exportcore.reuse.native_code import native_code
    from exportcore.reuse.result_cache import environment

    # The Python code eager ran (exportcore.reuse.eager_code): code only eager runs can differ at shapes
    # the examples do not show. A user's inputs= factory, compared by identity in memory, is compared
    # across processes by its code and by what it builds at the examples' shapes (None: a strategy or
    # another callable, never served). And the native code no version names (a custom op's kernel).
    # the gate took the factory's part before eager (exportcore.reuse.whole): the factory is called once
    whole = getattr(run, "whole", None)
    factory = whole.parts["factory"] if whole is not None else factory_identity(run)
    return dict(eager_code=eager_code, factory=factory, environment=f"{environment()}\n{native_code()}")
