"""The programs under test: each one a Side that the numerics, drawn-shape and reject checks loop over.

A mode builds up to three programs (``ep.module()``, the decomposed and the reloaded one); a
target column (aoti, onnx, executorch) adds its loaded runtime artifact and shows ``ep.module()``
beside it. A side says how to call it, whether an exception is its rejection of the input, how
its result is compared with eager (tolerance, gradients, the output metadata its graph declares),
whether it carries state, and how its failures are written; the checks never ask which kind of
program they hold.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from exportcore.programs.execute import RunResult, clone_tree
from exportcore.programs.context import ProgramRun
from exportcore.programs.parity import PROGRAM_NAMES

if TYPE_CHECKING:
    from exportcore.compare import Meter, Mismatch
    from exportcore.outcome import Failure
    from exportcore.targets.base import Lowered, Runner, Target

__all__ = ["MODULE_COLUMN", "PROGRAMS", "ColumnRun", "ProgramSide", "RuntimeSide", "Side", "sides"]

#: The programs a mode's stages may build, in the order they are checked.
PROGRAMS = ("exported", "decomposed", "reloaded")

#: The shapes table's column of the exported program itself.
MODULE_COLUMN = ".module()"


class Side:
    """A program under test. ``judged``: its failures fail the check (a target shows ep.module() only)."""

    label: str  # its key: "exported", "decomposed", "reloaded", or the target ("aoti")
    column: str  # its column in the shapes table
    judged: bool = True
    #: Writes state the next call sees in a way no restore undoes: only its first call is compared.
    stateful: bool = False
    #: Accepting an out-of-range input fails the reject check (else it is a finding: runtimes compile
    #: without input checks by design).
    must_reject: bool = True

    @property
    def name(self) -> str:
        """How messages name it."""
        return PROGRAM_NAMES.get(self.label, self.label)

    def call(self, run: ProgramRun, args: tuple, kwargs: dict) -> RunResult:
        """Run it on copies of ``args``/``kwargs`` (the mode's way, from the snapshot state)."""
        raise NotImplementedError

    def rejects(self, run: ProgramRun, exc: BaseException) -> bool:
        """Whether ``exc`` is this program refusing its input (a guard), not a crash."""
        raise NotImplementedError

    def compare(self, run: ProgramRun, reference: RunResult, actual: RunResult, where: str,
                inputs: tuple[tuple, dict], *, values: bool) -> Failure | None:
        """Compare its run with eager's on ``inputs``: the Failure, or None when they agree.

        ``values`` False (the numerics check is off): a program is held only to the output metadata
        its graph declares; a runtime's values are still compared, for its table cell.
        """
        raise NotImplementedError

    def raised(self, exc: BaseException, where: str) -> Failure:
        """The Failure of a call that raised something other than a rejection, on ``where``."""
        raise NotImplementedError

    def probe(self, run: ProgramRun, args: tuple, kwargs: dict) -> Any:
        """Call it once on copies, quietly (no grad, no state restore), as a probe: its outputs."""
        raise NotImplementedError

    def crash_text(self, label: str, shapes: str, exc: BaseException) -> str:
        """How its out_of_spec_findings name an out-of-range input (``label``) it crashed on past its checks."""
        raise NotImplementedError

    def table_tolerance(self, run: ProgramRun) -> tuple[float | None, float | None]:
        """(rtol, atol) its cell in the shapes table is judged with."""
        return run.rtol, run.atol

    # A drawn in-spec shape: what the probe says (message, stage) and the Failure kept for the
    # shrunk counterexample (exportcore.checks.accept).

    def in_spec_rejected(self, run: ProgramRun, exc: BaseException) -> tuple[str, Failure | None]:
        raise NotImplementedError

    def in_spec_raised(self, run: ProgramRun, exc: BaseException) -> tuple[str, Failure | None]:
        raise NotImplementedError

    def in_spec_differs(self, failure: Failure) -> str:
        raise NotImplementedError

    def drawn_failure(self, run: ProgramRun, kept: Failure | None, message: str, stage: str, shapes: dict) -> Failure:
        """The check's Failure for the shrunk counterexample (``message``: its probe's, ``kept``: the probe's own)."""
        raise NotImplementedError

    # An out-of-range input it did not reject (exportcore.checks.reject).

    def out_of_spec_findings(self, run: ProgramRun, accepted: list[str], crashed: list[str]) -> None:
        """Record what it ran instead of rejecting (``accepted``) and where it crashed past its checks."""
        raise NotImplementedError


class ProgramSide(Side):
    """One of the mode's programs: run the mode's way (training: backward too), compared like eager."""

    def __init__(self, label: str, program: Any, *, judged: bool = True) -> None:
        self.label = label
        self.column = MODULE_COLUMN if label == "exported" else label
        self.program = program
        self.judged = judged
        # backward through a decomposed training program is not supported by torch.export
        self.grads = label != "decomposed"

    def call(self, run: ProgramRun, args: tuple, kwargs: dict) -> RunResult:
        from exportcore.programs.sides import run_side

        return run_side(run, self.program, args, kwargs, backward=self.grads)

    def rejects(self, run: ProgramRun, exc: BaseException) -> bool:
        from exportcore.guards import is_guard_error

        return is_guard_error(exc, runtime_asserts=run.spec.runtime_asserts if run.spec is not None else ())

    def compare(self, run: ProgramRun, reference: RunResult, actual: RunResult, where: str,
                inputs: tuple[tuple, dict], *, values: bool) -> Failure | None:
        from exportcore.programs.output_meta import contradiction
        from exportcore.diagnosis.failures import output_metadata_mismatch
        from exportcore.programs.parity import compare_runs

        # the metadata first: eager runs the same kernels, so a lying fake kernel passes the comparison
        wrong = contradiction(self.program, inputs[0], inputs[1], actual.outputs)
        if wrong is not None:
            return output_metadata_mismatch(self.name, wrong)
        if not values:
            return None
        return compare_runs(run, self.label, reference, actual, grads=self.grads, inputs=inputs,
                            rerun=lambda: self.call(run, *inputs), where=where)

    def raised(self, exc: BaseException, where: str) -> Failure:
        from exportcore.diagnosis.classify import classify

        failure = classify(exc, "run")
        failure.message = f"{self.label} program failed on {where}: {failure.message}"
        return failure

    def probe(self, run: ProgramRun, args: tuple, kwargs: dict) -> Any:
        from exportcore.programs.sides import call_quiet

        return call_quiet(self.program, *clone_tree((args, kwargs)), run)

    def crash_text(self, label: str, shapes: str, exc: BaseException) -> str:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        return (f"out-of-spec input ({label}) passed the guards and failed inside the program "
                f"({type(exc).__name__}: {first[:200]})")

    def in_spec_rejected(self, run: ProgramRun, exc: BaseException) -> tuple[str, Failure | None]:
        from exportcore.guards import ranges_text

        first = str(exc).strip().splitlines()[0]
        return (f"in-spec shape rejected by {self.label} program ({first}); the export specialized or narrowed a "
                f"dimension declared dynamic: {ranges_text(run.outcome.declared, run.ranges, run.symbols)}"), None

    def in_spec_raised(self, run: ProgramRun, exc: BaseException) -> tuple[str, Failure | None]:
        from exportcore.diagnosis.classify import classify

        failure = classify(exc, "run")
        return f"{self.label} program raised {failure.exc_type}: {failure.message}", None

    def in_spec_differs(self, failure: Failure) -> str:
        if failure.exc_type == "OutputMetadataMismatch":  # a fake kernel right at the example only
            return failure.message
        return failure.message + "\n" + failure.detail

    def drawn_failure(self, run: ProgramRun, kept: Failure | None, message: str, stage: str, shapes: dict) -> Failure:
        from exportcore.diagnosis.failures import drawn_shape_failure
        from exportcore.diagnosis.links import nearest_case

        first = message.splitlines()[0]
        if kept is not None and kept.exc_type == "OutputMetadataMismatch":
            kept.message = f"{kept.message} (minimal failing shapes: {shapes})"
            return kept
        case = nearest_case("GuardRejected", first, "guards", "guards") if stage == "guards" else None
        return drawn_shape_failure(stage, first, message, shapes, case)

    def out_of_spec_findings(self, run: ProgramRun, accepted: list[str], crashed: list[str]) -> None:
        # accepted: never here, the reject check fails on the first (must_reject)
        for text in crashed:
            run.finding("reject_unguarded", text)


@dataclass(eq=False)
class RuntimeSide(Side):
    """A target's program under test: the artifact loaded in its runtime (built by exportcore.stages.runtime)."""

    label: str  # the target: "aoti", "onnx", "executorch"
    target: Target  # the adapter (exportcore.targets): lower, load, what counts as its rejection
    workdir: str = ""  # where the artifact lives while the walk runs
    lowered: Lowered | None = None
    runner: Runner | None = None  # the loaded artifact: (args, kwargs) -> flat output tensors
    #: (rtol, atol) for its outputs: the user's, else the loosest dtype default widened to the target's floor.
    tolerance: tuple[float | None, float | None] = (None, None)
    stateful: bool = False
    judged: bool = True
    must_reject: bool = False

    @property
    def column(self) -> str:  # type: ignore[override]
        return self.label

    def call(self, run: ProgramRun, args: tuple, kwargs: dict) -> RunResult:
        assert self.runner is not None, "the runtime stage 'load' runs before the checks"
        return RunResult(outputs=self.runner(*clone_tree((args, kwargs))))

    def rejects(self, run: ProgramRun, exc: BaseException) -> bool:
        return bool(self.target.rejection(exc))

    def compare(self, run: ProgramRun, reference: RunResult, actual: RunResult, where: str,
                inputs: tuple[tuple, dict], *, values: bool) -> Failure | None:
        from exportcore.compare import Meter
        from exportcore.programs.parity import measured

        meter = Meter()
        found = self.mismatch(reference, actual, meter)
        if values:  # compared without the numerics check only for its table cell: not measured
            measured(run, self.label, [meter], where, inputs)
        if found is None:
            return None
        from exportcore.diagnosis.failures import target_numerics

        return target_numerics(self.label, found, where, self.tolerance)

    def mismatch(self, reference: RunResult, actual: RunResult, meter: Meter | None = None) -> Mismatch | None:
        """How its flat outputs differ from eager's (None: within its tolerance); ``meter`` measures each leaf."""
        from exportcore.compare import compare
        from exportcore.targets.base import flat_tensors

        rtol, atol = self.tolerance
        return compare(flat_tensors(reference.outputs), actual.outputs, rtol=rtol, atol=atol, path="output",
                       meter=meter)

    def raised(self, exc: BaseException, where: str) -> Failure:
        from exportcore.targets.failures import target_failure

        failure = target_failure(exc, "run", self.label)
        failure.message = f"{self.label} failed on {where}: {failure.message}"
        return failure

    def probe(self, run: ProgramRun, args: tuple, kwargs: dict) -> Any:
        return self.call(run, args, kwargs).outputs

    def crash_text(self, label: str, shapes: str, exc: BaseException) -> str:
        return f"{shapes} ({label}): {type(exc).__name__}: {_first_line(exc, 160)}"

    def table_tolerance(self, run: ProgramRun) -> tuple[float | None, float | None]:
        return self.tolerance

    def in_spec_rejected(self, run: ProgramRun, exc: BaseException) -> tuple[str, Failure | None]:
        from exportcore.diagnosis.failures import target_guard_rejected

        message = f"{self.label} rejected an in-range shape ({_first_line(exc, 300)})"
        return message, target_guard_rejected(self.label, message)

    def in_spec_raised(self, run: ProgramRun, exc: BaseException) -> tuple[str, Failure | None]:
        from exportcore.targets.failures import target_failure

        message = f"{self.label} raised {type(exc).__name__} on an in-range shape: {_first_line(exc, 300)}"
        return message, target_failure(exc, "run", self.label)

    def in_spec_differs(self, failure: Failure) -> str:
        from exportcore.diagnosis.failures import without_tolerances

        return f"{self.label} output differs from eager: {without_tolerances(failure)}"

    def drawn_failure(self, run: ProgramRun, kept: Failure | None, message: str, stage: str, shapes: dict) -> Failure:
        from exportcore.diagnosis.failures import target_guard_rejected

        failure = kept if kept is not None else target_guard_rejected(self.label, message.splitlines()[0])
        counterexample = run.outcome.counterexample
        if counterexample is not None:
            counterexample.reproduce = counterexample.reproduce.replace(
                "got = ep.module()(*args, **kwargs)", f"got = <the loaded {self.label} artifact>(*args, **kwargs)")
        failure.message = f"{failure.message} (minimal failing shapes: {shapes})"[:500]
        failure.detail = message + ("\n" + failure.detail if failure.detail else "")
        return failure

    def out_of_spec_findings(self, run: ProgramRun, accepted: list[str], crashed: list[str]) -> None:
        declared = ", ".join(f"{k}: {v}" for k, v in run.outcome.declared.items()) or "none"
        hint = getattr(self.target, "unguarded_hint", "")
        if accepted:
            run.finding("reject_unguarded",
                        f"{self.label} ran {len(accepted)} out-of-range input(s) instead of rejecting them (declared "
                        f"{declared}): {'; '.join(accepted)}" + (f". {hint}" if hint else ""))
        if crashed:
            run.finding("reject_unguarded",
                        f"{self.label}: {len(crashed)} out-of-range input(s) passed the runtime's input checks and "
                        f"failed inside the program: {'; '.join(crashed)}")


class ColumnRun(ProgramRun, Protocol):
    """A column's run as its sides are read from it: a mode's programs, or a target's runtime beside ep.module()."""

    runtime: RuntimeSide | None  # a target's loaded artifact (set by exportcore.stages.runtime)


def sides(run: ColumnRun, *, distinct: bool = False, guards: bool = False) -> list[Side]:
    """Return the programs under test, in the order they are checked.

    A mode: its built programs (``distinct``: without those proven the same program as an earlier
    one, which drawn shapes need not probe twice; ``guards``: ep.module(), and a decomposed or
    reloaded program only when its input checks were not proven ep.module()'s: ``own_guards``).
    A target: ``ep.module()``, shown and not judged (its
    verdict is the mode column's), then the loaded runtime artifact.
    """
    if run.runtime is not None:
        return [ProgramSide("exported", run.programs["exported"], judged=False), run.runtime]
    labels = PROGRAMS
    if guards:
        labels = tuple(label for label in PROGRAMS if label == "exported" or label in run.own_guards)
    return [ProgramSide(label, run.programs[label]) for label in labels
            if label in run.programs and not (distinct and label in run.same_as)]


def _first_line(exc: BaseException, limit: int) -> str:
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0][:limit]
