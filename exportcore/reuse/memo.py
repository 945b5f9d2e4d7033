"""Reuse between modes: a mode whose capture is another mode's program takes that mode's results.

Strict and non-strict export often capture the same program. Everything after capture that
only runs the programs (decompose, save/load, numerics on the examples and on drawn shapes,
reject, size 0/1, dtype: the steps marked ``reusable`` in exportcore.pipeline) then gives
the same answers, so the second mode takes the first mode's findings and notes for those
steps instead of running them; the steps that read the mode's own program structure (state,
specialization) still run. The outcome says so (``reused_from``).

"The same" is proven, not assumed (exportcore.reuse.identity): the canonical program structure (and the
code outside torch only the later steps run: exportcore.reuse.program_code),
the model's own parameters and buffers by value (eager is the reference), the program's
lifted constants by value, the example inputs by value, eager's outputs on them (bit for
bit), and every option that decides what is checked. Only a program whose walk passed donates: a
failing mode keeps its own diagnosis and explanation. A training mode's program is served only by
an earlier walk of the same training mode (from the disk cache), never by an inference mode's. The memo is per
process and small; ``run.cache`` (exportcore.reuse.result_cache) keeps donations on disk under the
same proof plus torch, engine, hypothesis, sympy and Python versions, for later sessions and
other xdist workers.
"""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from exportcore.outcome import ExampleStats, Finding, GraphStats

if TYPE_CHECKING:
    from exportcore.context import Run

__all__ = ["Donation", "key_of", "lookup", "store", "clear", "MEMO_SIZE"]

MEMO_SIZE = 8


@dataclass
class Donation:
    """What the reusable steps of one walk contributed, per step name."""

    mode: str
    digest: str  # model state, program constants and inputs by value (checked on a key match)
    inputs: Any  # the user's inputs= object: compared by identity, kept alive so its id is not reused
    findings: dict[str, list[Finding]] = field(default_factory=dict)
    notes: dict[str, list[str]] = field(default_factory=dict)
    graph: GraphStats | None = None  # set when decompose ran (the core-ATen graph's statistics)
    examples: ExampleStats | None = None  # set when the drawn shapes ran
    origin: str | None = None  # a donation from exportcore.reuse.result_cache: when and where it ran

    def label(self) -> str:
        """Return what ``outcome.reused_from`` names: the mode, or the cache entry's mode and run."""
        return self.mode if self.origin is None else f"cache: {self.mode}, {self.origin}"


_MEMO: OrderedDict[str, Donation] = OrderedDict()


def key_of(run: Run) -> str | None:
    """Return the cheap half of the identity (structure and options), or None when ``run`` may not share."""
    from exportcore.devices import device_facts
    from exportcore.reuse.identity import structure
    from exportcore.sandbox.isolation import settings_text
    from exportcore.reuse.program_code import program_code

    if run.target is not None or run.ep is None or not run.reuse:
        return None
    # Modes share by proof, but a training program runs in train() with its own eager reference and
    # steps: it is served only by an earlier run of its own mode (the disk cache; the memo's donations
    # go between modes, so it never answers a training run).
    family = run.mode.name if run.mode.training else "inference"
    settings = settings_text()  # what the process runs under: deterministic algorithms, TF32, default dtype
    if settings is None:
        return None
    options = (
        settings, family, run.outcome.case_id, type(run.model).__module__, type(run.model).__qualname__,
        sorted(run.checks), run.rtol, run.atol, run.examples, run.seed, run.findings_as_errors, run.device,
        device_facts(run.device),
        _draw_settings(run), getattr(run.spec, "budget", None), run.outcome.declared,
    )
    try:
        # and the code outside torch that only the steps after capture run: a decomposition a project
        # put in torch's table, the pytree nodes .module() and save/load build its outputs with
        text = f"{structure(run.ep)}\n{program_code(run.ep)}"
    except Exception:  # noqa: BLE001 - a program we cannot describe is not shared, never an error
        return None
    return hashlib.blake2b(f"{options!r}\n{text}".encode("utf-8", "surrogatepass"), digest_size=20).hexdigest()


def digest_of(run: Run) -> str | None:
    """Return the by-value half of the identity: the model's tensors, the program's constants, the inputs."""
    parts = _value_parts(run)
    return None if None in parts else "/".join(parts)  # type: ignore[arg-type]


def program_digest(run: Run) -> str | None:
    """Return what of digest_of a program alone depends on: the model's tensors and the program's constants.

    (Not the inputs nor eager's answer: exportcore.reuse.shared_programs shares work that only reads the program.)
    """
    parts = _value_parts(run)[:2]
    return None if None in parts else "/".join(parts)  # type: ignore[arg-type]


def _value_parts(run: Run) -> tuple[str | None, ...]:
    from exportcore.reuse.identity import constants_digest, module_digest, values_digest
    from exportcore.sandbox.python_state import state_digest
    from exportcore.programs.sides import prepare

    prepare(run)  # the model as its snapshot: the state eager and every program start from
    if run.value_parts is None:
        reference = run.reference
        run.value_parts = (
            module_digest(run.model), constants_digest(run.ep), values_digest((run.args, run.kwargs)),
            # eager's own answer on the examples: Python state no tensor shows (a call counter, a flag)
            # still makes the two models different references. In training its gradients too: a custom
            # autograd.Function's backward is eager's alone (the program differentiates the traced
            # forward), so an edited backward changes the verdict and nothing else.
            values_digest((reference.outputs, reference.buffers, reference.grads)) if reference is not None else None,
            # the modules' Python attributes (a threshold, a config): what eager's own branches read
            # may differ where neither the graph nor the examples' answer shows it
            state_digest(run.model),
        )
    return run.value_parts


def _draw_settings(run: Run) -> str:
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


def lookup(run: Run, key: str | None) -> Donation | None:
    """Return the donation for ``key`` when its by-value half matches ``run`` too (memo, then ``run.cache``)."""
    donation = _MEMO.get(key) if key is not None else None
    if donation is None or donation.mode == run.mode.name or donation.inputs is not run.inputs:
        return _cached(run, key)
    if digest_of(run) != donation.digest:
        return _cached(run, key)
    _MEMO.move_to_end(key)
    return donation


def _identity(run: Run, key: str | None) -> str | None:
    # The Python code eager ran is part of it too (exportcore.reuse.eager_code): code only eager runs can
    # differ at shapes the examples do not show; within one process it is the same code.
    if key is None or run.cache is None or run.eager_code is None:
        return None
    if run.identity is not None and run.identity.startswith(f"{key}|"):
        return run.identity
    digest = digest_of(run)
    if digest is None:
        return None
    from exportcore.reuse.input_factory import factory_identity

    # A user's inputs= factory is compared by identity in the memo; across processes by its code
    # and by what it builds at the examples' shapes (None: a strategy or other callable, never served).
    factory = factory_identity(run)
    if factory is None:
        return None
    from exportcore.reuse.native_code import native_code
    from exportcore.reuse.result_cache import environment

    # and the native code no version names (a custom op's kernel built in the user's tree)
    run.identity = f"{key}|{digest}|{run.eager_code}|{environment()}|{native_code()}"
    if factory:
        run.identity += f"|{factory}"
    return run.identity


def _cached(run: Run, key: str | None) -> Donation | None:
    if run.cache is None or not run.cache.reads:
        return None
    identity = _identity(run, key)
    entry = run.cache.get(identity) if identity is not None else None
    if entry is None:
        return None
    from exportcore.reuse.code_witnesses import hold
    from exportcore.reuse.environ_reads import unchanged as same_environ

    try:
        unchanged = hold(entry.witnesses, run.model) and same_environ(entry.environ)
    except Exception:  # noqa: BLE001 - a witness that cannot be read again proves nothing: run in full
        unchanged = False
    if not unchanged:  # code the earlier walk ran beyond the examples was edited since, or what it read
        return None
    return Donation(mode=entry.mode, digest=identity.split("|")[1], inputs=None, findings=entry.findings,
                    notes=entry.notes, graph=entry.graph, examples=entry.examples, origin=entry.run)


def store(run: Run, key: str | None, donation: Donation) -> None:
    """Keep ``donation`` for the next mode of this case (only a walk that passed donates)."""
    if key is None or run.outcome.status != "passed":
        return
    digest = digest_of(run)
    if digest is None:
        return
    donation.digest = digest
    _MEMO[key] = donation
    _MEMO.move_to_end(key)
    while len(_MEMO) > MEMO_SIZE:
        _MEMO.popitem(last=False)
    if run.cache is not None and run.cache.writes and run.code_records is not None:
        from exportcore.reuse.code_witnesses import witnesses

        identity = _identity(run, key)
        try:
            beyond = witnesses(run.code_records[1], run.code_records[0], run.model)
        except Exception:  # noqa: BLE001 - what ran beyond the examples cannot be named: store nothing
            beyond = None
        if identity is not None and beyond is not None:
            from exportcore.reuse.result_cache import Entry, FORMAT, run_label

            examples, later = run.code_records
            # the examples' reads are in the identity already (eager_code's digest)
            environ = {name: value for name, value in later.environ.items() if name not in examples.environ}
            run.cache.put(identity, Entry(format=FORMAT, identity=identity, mode=run.mode.name, run=run_label(),
                                          findings=donation.findings, notes=donation.notes, graph=donation.graph,
                                          examples=donation.examples, witnesses=beyond, environ=environ))


def clear() -> None:
    """Forget every donation (tests; a session that changes the models under the same ids)."""
    _MEMO.clear()
