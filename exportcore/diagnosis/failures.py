"""One factory per kind of failure decided by a check (not classified from a torch exception).

Each says where the kind fails (stage), what it is (category, exc_type) and what to do (hint) in one
place, so a kind reads the same wherever it is raised. A torch exception goes through
``classify.classify`` instead, an output difference through ``classify.mismatch_failure``, a
runtime's error through ``targets.failures.target_failure``.
"""

from __future__ import annotations

from typing import Any

from exportcore.outcome import Failure, Finding
from exportcore.diagnosis.categories.rules_stage import deferred_assert

__all__ = [
    "alias_lost", "case_not_checked", "case_timeout", "device_unavailable", "drawn_shape_failure", "duplicate_key",
    "failed_after_export", "finding_error", "finding_filtered_to_error", "finding_missing", "guard_accepted",
    "harness_timeout", "input_factory_error", "output_metadata_mismatch", "target_guard_rejected", "target_numerics",
    "target_unavailable", "without_tolerances", "worker_crashed",
]

#: Where a finding made an error (--export-findings=error) fails; the rest fail at guards.
_FINDING_STAGES = {
    "state_missing": ("state", "torch.mutation"),
    "state_differs": ("state", "torch.mutation"),
    "no_shape_checked": ("input", "input"),  # the case's inputs or range, not the program
    "python_state": ("numerics", "torch.mutation"),  # the second calls' answers differ
}

OUTPUT_METADATA_HINT = (
    "The graph's output metadata (meta['val'], from the ops' fake/meta kernels) contradicts what the program"
    " returns: fix the fake kernel (torch.library.register_fake / register_meta) of the op that makes this"
    " output so it returns the real shape and dtype; AOTInductor and ExecuTorch plan buffers from it")


def device_unavailable(reason: str) -> Failure:
    """The case's device (cuda, mps) is not usable in this process: the case is skipped."""
    return Failure(stage="input", category="device", exc_type="DeviceUnavailable", message=reason)


def case_timeout(stage: str, message: str) -> Failure:
    """The case ran past its time limit (--export-timeout) in ``stage``."""
    return Failure(stage=stage, category="timeout", exc_type="CaseTimeout", message=message,
                   hint=f"the case hung or is too slow in stage {stage!r}; raise the limit (--export-timeout) or make"
                   " the model smaller")


def finding_error(finding: Finding) -> Failure:
    """A finding that fails the case because findings are errors in this run (--export-findings=error)."""
    stage, category = _FINDING_STAGES.get(finding.kind, ("guards", "guards"))
    return Failure(stage=stage, category=category, exc_type="Finding", message=finding.message,
                   hint="findings are errors in this run (--export-findings=error)")


def drawn_shape_failure(stage: str, message: str, detail: str, shapes: dict, exportdb_case: str | None) -> Failure:
    """A drawn in-spec shape the program rejects (guards), computes wrongly (numerics) or crashes on (run)."""
    guards = stage == "guards"
    deferred = deferred_assert(message) if stage == "run" else None
    if deferred is not None:  # the program refusing a declared size with a runtime assert: the model's limit
        category, hint = deferred
        return Failure(stage=stage, category=category, exc_type="RuntimeError",
                       message=f"{message} (minimal failing shapes: {shapes})", detail=detail, hint=hint,
                       exportdb_case=exportdb_case)
    return Failure(
        stage=stage,
        category="guards" if guards else ("numerics" if stage in ("numerics", "training") else "internal"),
        exc_type="GuardRejected" if guards else "NumericsMismatch" if stage != "run" else "RuntimeError",
        message=f"{message} (minimal failing shapes: {shapes})",
        detail=detail,
        hint=("declare the dimension with a range the model really supports, or remove the code that specializes it"
              " (see range_constraints)" if guards
              else "reproduce with the counterexample shapes; the exported program diverges from eager there"),
        exportdb_case=exportdb_case,
    )


def input_factory_error(message: str, *, strategy: bool) -> Failure:
    """The case's ``inputs=`` factory or strategy raised, built other shapes than drawn, or eager rejects them."""
    if "eager rejects" in message:
        hint = ("build inputs the model accepts, like the examples: their dtypes, value ranges (token ids below the"
                " vocabulary size) and keywords")
    elif "NaN/inf" in message:
        hint = ("build inputs with finite values in the examples' value domain, on which eager's outputs are finite:"
                " an all-NaN input makes any program that also returns NaN compare equal to eager")
    elif strategy:
        hint = "an inputs= strategy must draw (args, kwargs) inside the declared dynamic_shapes"
    else:
        hint = ("inputs=(shapes, rng) -> (args, kwargs) must return tensors of exactly the shapes it is given, keyed"
                " like the example inputs")
    return Failure(stage="input", category="input", exc_type="InputFactoryError", message=message, hint=hint)


def guard_accepted(label: str, detail: str) -> Failure:
    """``ep.module()`` ran an out-of-spec input (``label``) instead of raising a guard error."""
    return Failure(stage="guards", category="guards", exc_type="GuardAccepted",
                   message=f"ep.module() computed on an out-of-spec input ({label}) instead of raising a guard error",
                   detail=detail,
                   hint="the exported range is wider than declared; check dynamic_shapes and range_constraints")


def alias_lost(label: str, message: str) -> Failure:
    """A program (``label``: exported, decomposed, reloaded) keeps apart weights eager ties."""
    return Failure(
        stage="training", category="serialization" if label == "reloaded" else "numerics", exc_type="AliasLost",
        message=message[:400], detail=message,
        hint="tied weights must stay one storage: re-tie them after loading (module.b.weight = module.a.weight) or"
        " report it to PyTorch; gradients of the two copies differ from eager's shared gradient",
    )


def output_metadata_mismatch(program_name: str, what: str) -> Failure:
    """A program whose outputs contradict its graph's output metadata (a wrong fake/meta kernel)."""
    message = f"{program_name} program: output metadata contradicts the output: {what}"
    return Failure(stage="run", category="torch.operator", exc_type="OutputMetadataMismatch", message=message[:400],
                   detail=message, hint=OUTPUT_METADATA_HINT, exportdb_case="custom_op_wrong_fake_shape")


def target_unavailable(reason: str) -> Failure:
    """The target's packages or compiler are missing, or it does not run on the case's device: skipped."""
    return Failure(stage="lower", category="target.unavailable", exc_type="TargetUnavailable", message=reason,
                   hint="install what the message names, or drop the target")


def target_numerics(name: str, mismatch: Any, where: str, tol: tuple) -> Failure:
    """The runtime ``name`` computes another output than eager on ``where``."""
    return Failure(
        stage="numerics", category="numerics", exc_type="NumericsMismatch",
        message=f"{name} output differs from eager on {where}: {mismatch.message.splitlines()[0]}"[:400],
        detail=f"{mismatch.message}{_TOLERANCES}rtol={tol[0]}, atol={tol[1]}",
        hint=f"the {name} runtime computes something else here; if the difference is rounding, pass rtol/atol",
    )


_TOLERANCES = "\ntolerances: "


def without_tolerances(failure: Failure) -> str:
    """Return a target_numerics failure's mismatch alone, without the tolerances line its detail ends with."""
    return (failure.detail or failure.message).split(_TOLERANCES)[0]


def target_guard_rejected(name: str, message: str) -> Failure:
    """The runtime ``name`` rejects a drawn in-spec shape: it narrowed a dimension declared dynamic."""
    return Failure(stage="guards", category="guards", exc_type="GuardRejected", message=message,
                   hint=f"{name} narrowed a dimension declared dynamic; compare the declared ranges with what the"
                   " backend kept")


# Kinds decided around the engine by a harness (the pytest plugin), kept here so every kind has one home.

def harness_timeout(message: str) -> Failure:
    """An outer time limit (pytest-timeout's) stopped the case in a stage nobody recorded."""
    return Failure(stage="run", category="timeout", exc_type="Timeout", message=message.splitlines()[0],
                   hint="pytest-timeout stopped the test in an unknown stage; set --export-timeout below its limit to"
                   " record the stage")


def case_not_checked(exc_type: str, message: str, *, category: str = "input", traceback: str = "") -> Failure:
    """The case could not be checked at all: its input (the test's return value, the marker) is broken."""
    first = message.strip().splitlines()[0] if message.strip() else exc_type
    return Failure(stage="input", category=category, exc_type=exc_type, message=first, detail=message,
                   traceback=traceback)


def failed_after_export(exc_type: str, text: str) -> Failure:
    """The export passed, but the test failed on something else (a hook, a fixture, a warnings filter)."""
    first = (text.strip().splitlines() or [exc_type])[0]
    return Failure(stage="test", category="test", exc_type=exc_type, message=first, detail=text,
                   hint="the export passed, but pytest failed the test (a hook, fixture or warnings filter)")


def finding_filtered_to_error(kind: str, warning_class: str, message: str) -> Failure:
    """A warnings filter (``filterwarnings = error``) turned the finding ``kind`` into an error."""
    state = kind in ("state_missing", "state_differs")
    return Failure(stage="state" if state else "guards", category="torch.mutation" if state else "guards",
                   exc_type=warning_class, message=message,
                   hint="a warnings filter (e.g. filterwarnings = error) turns this finding into an error; fix the"
                   " model or the dynamic_shapes, or ignore this kind only (filterwarnings ="
                   f" ignore::pytest_export.{warning_class})")


def duplicate_key(message: str) -> Failure:
    """Two tests recorded a result under one (case, mode) key."""
    return Failure(stage="input", category="input", exc_type="DuplicateKey", message=message,
                   hint="case ids must be unique in a session")


def worker_crashed(message: str) -> Failure:
    """The process died while it ran the case (segfault, os._exit, out of memory, a signal)."""
    return Failure(stage="run", category="crashed", exc_type="WorkerCrashed", message=message,
                   hint="the process died (segfault, os._exit, out of memory, a signal); rerun the test alone with"
                   " -n 1 to see it fail on its own while every other result is kept")


def finding_missing(missing: list[str]) -> Failure:
    """An ExportDB case documents findings this run did not report (drift)."""
    return Failure(stage="guards", category="drift", exc_type="FindingMissing",
                   message=f"expected finding(s) {missing} were not reported; the case documents them")
