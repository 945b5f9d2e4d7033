"""The incremental gate: a (case, mode) proven unchanged before eager is served its whole outcome.

The after-capture store (exportcore.reuse.stores) needs eager and the capture to run first: its
proof is read off the captured program. But a capture is a function of what it ran and read:
the Python the tracer executed, the model's tensors and Python state, the examples, the spec,
the options, torch's configuration and versions. So this module keys a whole outcome on what is
known before eager runs (``parts``: every option, the model's values and attributes, the inputs,
the factory, the environment with the native code, torch's capture configuration, what torch's
registries hold outside torch (exportcore.reuse.registries), the mode),
and keeps with it witnesses of ALL the code the cold walk ran (eager at the examples, the capture,
every step after: exportcore.reuse.code_witnesses) and the environment variables it read. A later
session whose parts are equal and whose witnesses all hold, live, is given the stored outcome:
no eager, no capture; ``reused_from`` says ``cache: whole, MODE, RUN``. Anything else runs in
full as before (the after-capture store still applies).

What is not stored whole, never served on a guess:

- strict captures: dynamo translates the user's frames instead of running them, and the record
  (exportcore.reuse.eager_code) sees a compile context it cannot name: its capture is never recorded,
  so strict pairs always run eager and capture (the after-capture store serves them);
- outcomes that did not pass: a failure keeps its live diagnosis and its explanation, whose
  re-checks run code no record covers; a gate with known failures pays for them each run;
- targets (aoti, onnx, executorch): their lowering and runtimes are outside every record;
- a walk that loaded a native library it had not loaded before it started (the key, taken at the
  start, could not name it), or whose record is incomplete (another profile hook, a compile).
"""

from __future__ import annotations

import copy
import dataclasses
import hashlib
import os
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from exportcore.codec import version
from exportcore.outcome import Outcome
from exportcore.reuse.code_witnesses import Witness

if TYPE_CHECKING:
    from exportcore.reuse.context import ReuseRun
    from exportcore.reuse.eager_code import CodeRecord
    from exportcore.reuse.stores import Donation

__all__ = ["WholeEntry", "WholeState", "served", "capture_record", "taken", "store", "LABEL"]

#: Bumped when what a whole entry means changes (exportcore.reuse.result_cache.FORMAT is the other entries').
WHOLE_FORMAT = 1
#: how ``reused_from`` starts for an outcome served whole: ``cache: whole, MODE, RUN`` (every result
#: served from the cache starts ``cache:``; pytest_export counts and audits by it)
LABEL = "cache: whole"


@dataclass
class WholeEntry:
    """One (case, mode)'s whole outcome, under every part known before eager."""

    format: int = field(metadata=version(WHOLE_FORMAT))
    identity: str
    mode: str
    run: str  # when and where the cold walk ran
    outcome: Outcome
    #: every function the cold walk ran (eager, capture, the steps after), resolved live when served
    witnesses: list[Witness] = field(default_factory=list)
    #: the environment variables it read: a digest of the value, None when unset
    environ: dict[str, str | None] = field(default_factory=dict)


@dataclass
class WholeState:
    """One walk's gate: its parts and key, what capture ran, what it took from another walk."""

    parts: dict[str, str | None]
    key: str | None
    native: str  # the native code at the start: a library loaded during the walk is not in the key
    capture: CodeRecord | None = None
    given: Donation | None = None  # an after-capture donation this walk took (its code is the walk's too)
    served: bool = False


def served(run: ReuseRun) -> bool:
    """Before eager: whether the run's whole outcome is served from the cache (then written to run.outcome)."""
    if not _gated(run):
        return False
    from exportcore.reuse.changes import changed, first_failing, remember

    disk = run.session.disk
    with run.clock.timed("reuse"):  # a timeout here names the stage before it (input)
        state = _state(run)
        run.whole = state
        if state.key is None or not disk.cache.reads:  # type: ignore[union-attr]
            return False
        entry = disk.cache.get(state.key, WholeEntry)  # type: ignore[union-attr]
        reason = changed(disk.cache, run.outcome.case_id, run.mode.name, state.parts)  # type: ignore[union-attr]
        if entry is not None and entry.mode == run.mode.name:
            failing = first_failing(entry.witnesses, entry.environ, run.model)
            if failing is None:
                _serve(run, entry)
                state.served = True
                if reason is not None and disk.writes:  # an older entry served: the next walk compares with it
                    remember(disk.cache, run.outcome.case_id, run.mode.name, state.parts)  # type: ignore[union-attr]
                return True
            reason = failing
        run.outcome.rechecked_because = reason
    return False


def capture_record(run: ReuseRun) -> CodeRecord | None:
    """The record capture runs under, where the gate may store this walk (None: capture runs bare)."""
    state = getattr(run, "whole", None)
    if state is None or state.key is None or run.mode.strict or run.code_records is None:
        return None
    from exportcore.reuse.eager_code import CodeRecord

    state.capture = CodeRecord(after=run.code_records[0])
    return state.capture


def taken(run: ReuseRun, given: Donation) -> None:
    """This walk took ``given`` for its after-capture steps: what it rests on is the walk's too."""
    state = getattr(run, "whole", None)
    if state is not None:
        state.given = given


def store(run: ReuseRun) -> None:
    """The walk is over: keep its whole outcome where it passed and everything it ran is named."""
    state = getattr(run, "whole", None)
    disk = run.session.disk
    outcome = run.outcome
    if state is None or state.served or state.key is None or disk is None or not disk.writes:
        return
    if outcome.status != "passed" or any(f.severity == "error" for f in outcome.findings):
        return
    named = _everything_ran(run, state)
    if named is None:
        return
    from exportcore.reuse.changes import remember
    from exportcore.reuse.native_code import native_code
    from exportcore.reuse.result_cache import run_label

    if native_code() != state.native:
        return
    kept = copy.deepcopy(outcome)
    kept.reused_from, kept.rechecked_because, kept.timings = None, None, {}
    witnesses, environ = named
    disk.cache.put(state.key, WholeEntry(format=WHOLE_FORMAT, identity=state.key, mode=run.mode.name,
                                         run=run_label(), outcome=kept, witnesses=witnesses, environ=environ))
    remember(disk.cache, outcome.case_id, run.mode.name, state.parts)


def _gated(run: ReuseRun) -> bool:
    disk = run.session.disk
    return run.target is None and run.session.reuse and disk is not None and not run.mode.strict


def _state(run: ReuseRun) -> WholeState:
    from exportcore.reuse.native_code import native_code

    native = native_code()
    parts = parts_of(run, native)
    key = None if None in parts.values() else "whole " + _digest(repr(sorted(parts.items())))
    return WholeState(parts=parts, key=key, native=native)


def parts_of(run: ReuseRun, native: str) -> dict[str, str | None]:
    """What the outcome is a function of that is known before eager, by name (None: cannot be taken)."""
    from exportcore.reuse.identity import module_digest
    from exportcore.reuse.input_factory import factory_identity
    from exportcore.reuse.prove import options_digest
    from exportcore.reuse.registries import registries_digest
    from exportcore.reuse.python_digest import state_digest
    from exportcore.reuse.result_cache import environment
    from exportcore.sandbox.tensor_digest import values_digest

    run.model_state.prepare(run.model, run.mode.training)  # type: ignore[union-attr]  # as eager starts from
    spec = (repr(sorted(run.outcome.declared.items())), getattr(run.spec, "budget", None), repr(run.spec))
    return {
        "environment": environment(), "native": _digest(native), "config": config_digest(),
        "registries": registries_digest(),
        "options": options_digest(run), "spec": _digest(repr(spec)), "mode": run.mode.name,
        "weights": module_digest(run.model), "attributes": state_digest(run.model),
        "inputs": values_digest((run.args, run.kwargs)), "factory": factory_identity(run),
        # the user's recorded input sets (exportcore.checks.recorded) by value: a list of tuples digests; an
        # AdditionalInputs or InputObserver holds them in its own object, so such a case is not served whole
        "recorded": values_digest(getattr(run, "recorded_inputs", None)),
    }


def config_digest() -> str:
    """torch's configuration that changes what a capture does, by value (plain values only: no address enters)."""
    import importlib

    parts = []
    for name in _CONFIGS:
        try:
            module = importlib.import_module(name)
            values = module.get_config_copy()
        except (ImportError, AttributeError):
            continue  # not in this torch: its version is in the key
        parts.append((name, sorted((key, _plain(value)) for key, value in values.items() if _plain(value) is not None)))
    return _digest(repr(parts))


#: dynamo's (strict, and the control-flow operators' bodies), the symbolic shapes' (backed_size_oblivious),
#: functorch's (the training and decomposition traces) and export's own where torch has one
_CONFIGS = ("torch._dynamo.config", "torch.fx.experimental._config", "torch._functorch.config", "torch._export.config")


def _plain(value: Any) -> str | None:
    """``value`` as text the same in every process, or None where it holds an object or a path (left out)."""
    if isinstance(value, str) and os.path.isabs(value):
        return None  # a folder (dynamo's debug_dir_root follows the working directory): no capture reads it
    if value is None or isinstance(value, (bool, int, float, str)):
        return repr(value)
    if isinstance(value, (list, tuple)):
        items = [_plain(item) for item in value]
        return None if None in items else repr(items)
    if isinstance(value, (set, frozenset)):
        items = [_plain(item) for item in value]
        return None if None in items else repr(sorted(items))  # type: ignore[type-var]
    if isinstance(value, dict):
        items = [(_plain(k), _plain(v)) for k, v in value.items()]
        return None if any(None in pair for pair in items) else repr(sorted(items))  # type: ignore[type-var]
    return None


def _everything_ran(run: ReuseRun, state: WholeState) -> tuple[list[Witness], dict[str, str | None]] | None:
    """Witnesses of all the code the walk ran and what it read (None: something cannot be named)."""
    from exportcore.reuse.code_witnesses import witnesses
    from exportcore.reuse.eager_code import CodeRecord

    if run.code_records is None or state.capture is None:
        return None
    given = state.given
    if given is not None and given.origin is None and given.ran is None:
        return None  # another mode's results whose code is not at hand
    everything = CodeRecord()
    for record in (*run.code_records, state.capture, *([given.ran] if given is not None and given.ran else [])):
        everything.merge(record)
    try:
        found = witnesses(everything, CodeRecord(), run.model)
    except Exception:  # noqa: BLE001 - what ran cannot be named: nothing is stored
        return None
    if found is None:
        return None
    environ = dict(everything.environ)
    if given is not None and given.origin is not None:  # a disk donation: what it rests on beyond the examples
        if given.witnesses is None:
            return None
        found = _union(found, given.witnesses)
        environ.update(given.environ)
    return found, environ


def _union(first: list[Witness], second: list[Witness]) -> list[Witness]:
    keyed = {(w.module, w.file, w.line): w for w in second}
    for witness in first:
        known = keyed.get((witness.module, witness.file, witness.line))
        keyed[(witness.module, witness.file, witness.line)] = witness if known is None else dataclasses.replace(
            witness, paths={**known.paths, **witness.paths})
    return [keyed[k] for k in sorted(keyed)]


def _serve(run: ReuseRun, entry: WholeEntry) -> None:
    outcome, kept = run.outcome, entry.outcome
    for item in dataclasses.fields(Outcome):
        if item.name not in ("case_id", "mode", "timings", "schema"):
            setattr(outcome, item.name, copy.deepcopy(getattr(kept, item.name)))
    outcome.reused_from = f"{LABEL}, {entry.mode}, {entry.run}"
    outcome.rechecked_because = None
    outcome.notes.append(
        f"served whole from the result cache ({entry.run}): the model, inputs, options, environment and every "
        "function eager, the capture and the checks ran are unchanged, so neither eager nor the capture ran")


def _digest(text: str) -> str:
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=20).hexdigest()
