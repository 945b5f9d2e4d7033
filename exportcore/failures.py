"""One factory per kind of failure the engine decides itself (not classified from a torch exception).

Each says where the kind fails (stage), what it is (category, exc_type) and what to do (hint) in one
place, so a kind reads the same wherever it is raised. A torch exception goes through
``classify.classify`` instead, an output difference through ``classify.mismatch_failure``, a
runtime's error through ``targets.failures.target_failure``.
"""

from __future__ import annotations

from typing import Any

from exportcore.outcome import Failure, Finding

__all__ = [
    "alias_lost", "case_timeout", "device_unavailable", "drawn_shape_failure", "finding_error", "guard_accepted",
    "input_factory_error", "output_metadata_mismatch", "target_guard_rejected", "target_numerics",
    "target_unavailable",
]

#: Where a finding made an error (--export-findings=error) fails; the rest fail at guards.
_FINDING_STAGES = {
    "state_missing": ("state", "torch.mutation"),
    "state_differs": ("state", "torch.mutation"),
    "no_shape_checked": ("input", "input"),  # the case's inputs or range, not the program
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
        detail=f"{mismatch.message}\ntolerances: rtol={tol[0]}, atol={tol[1]}",
        hint=f"the {name} runtime computes something else here; if the difference is rounding, pass rtol/atol",
    )


def target_guard_rejected(name: str, message: str) -> Failure:
    """The runtime ``name`` rejects a drawn in-spec shape: it narrowed a dimension declared dynamic."""
    return Failure(stage="guards", category="guards", exc_type="GuardRejected", message=message,
                   hint=f"{name} narrowed a dimension declared dynamic; compare the declared ranges with what the"
                   " backend kept")
