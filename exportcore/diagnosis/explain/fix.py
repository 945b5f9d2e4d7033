"""A corrected ``dynamic_shapes`` for a failing case, re-exported to verify it before it is shown."""

from __future__ import annotations

import re
import time
from typing import TYPE_CHECKING, Any

from exportcore.case import Case, EngineOptions
from exportcore.checks.small_sizes import failed_size
from exportcore.diagnosis.explain.bounds import Violation, solve, violations
from exportcore.diagnosis.explain.example_size import pins_example_size
from exportcore.diagnosis.explain.specs import render_spec, replace_bounds, spec_changes, unpinned
from exportcore.outcome import Failure, SpecFix
from exportcore.shapes.form import SpecForm
from exportcore.shapes.parse import read_form

if TYPE_CHECKING:
    from exportcore.diagnosis.explain.context import FailedRun as Run
    from exportcore.diagnosis.explain.context import Recheck

__all__ = ["wants_fix", "corrected_spec"]

#: Re-exports one fix may spend: torch reports one layer of violations per export.
_MAX_EXPORTS = 3
#: SpecFix.verified_by of a fix re-checked the way the case ran (exportcore.diagnosis.explain.fix._verify ``as_run``).
_ALL_CHECKS = "all the checks the case ran"
_NARROWED = re.compile(r"\((?P<name>\w+)\) declared \[.*?\] but exported as \[(?P<lo>-?\d+), (?P<hi>\S+?)\]")
_FIXES_LINE = re.compile(r"^\s*\w+ = \S")
_GUARD_FAILED = re.compile(r"Guard failed: (?P<guard>.*?)(?:\); the export|\)?$)")
_SIZE = re.compile(r"(?P<input>\w+)\.size\(\)\[(?P<axis>\d+)\]")


def wants_fix(run: Run) -> bool:
    """Return whether the failure is one a corrected dynamic_shapes can fix."""
    failure = run.outcome.failure
    if failure is None or run.outcome.status != "failed" or run.dynamic_shapes is None:
        return False
    if failed_size(failure) is not None:  # a size 0 or 1 inside the range: a min above it
        return True
    if failure.stage in ("constraints", "capture") and failure.category == "torch.dynamic-shape":
        return True
    if failure.stage != "guards":
        return False
    if "Guard failed:" in failure.message or any(f.kind == "narrowed" for f in run.outcome.findings):
        return True
    # Where torch specializes a 0/1 example silently (Dim.AUTO on 2.6) the failure is a guard one with
    # no guard message; the example is still what a fix changes.
    from exportcore.diagnosis.explain.example_size import example_sized_roots

    return bool(example_sized_roots(run))


def corrected_spec(run: Run, recheck: Recheck) -> SpecFix | None:
    """Derive a corrected spec, re-export with it, and return it verified or merely suggested.

    An example of size 0/1 on a declared dim specializes it whatever the model does, so the
    example comes first: the same spec is re-exported from inputs where those dims are 2, and
    only what still fails then is derived into the spec (exportcore.diagnosis.explain.example_size).
    The spec is the parsed one (``run.spec.form``): a fix is shown in the user's own spelling.
    """
    failure = run.outcome.failure
    assert failure is not None
    search = _Search(run, recheck)
    small = failed_size(failure)
    if small is not None:
        return _floor_fix(search, *small)
    verified = search.example_first()
    if verified is not None:
        return verified
    new, origin, more = _derive(run, search.declared, search.failure)
    search.notes += more
    if search.example_changes:
        origin = f"{_EXAMPLE_ORIGIN}, then {origin}" if origin else _EXAMPLE_ORIGIN
    if new is None:
        return None if not search.notes else SpecFix(
            status="suggested", dynamic_shapes="", origin=origin, reason="; ".join(search.notes),
            changes=search.example_changes, exports=search.exports, seconds=search.seconds(),
        )
    spec, reason, exported, found = search.layers(new)
    relaxed = None if reason else search.relaxed(spec)
    if relaxed is not None:  # the least restrictive fix that passes: the pin was torch's solver's, not the model's
        spec, found = relaxed
        origin = f"{origin}, then {_UNPINNED_ORIGIN}" if origin else _UNPINNED_ORIGIN
        status = "verified"
    elif not reason and not search.example_changes and pins_example_size(search.declared, spec):
        # The pin passes only because the example already had that size; it proves nothing about the model.
        search.notes.insert(0, "not verified: it pins a dim to its example size (0 or 1), and export specializes"
                               " example sizes 0 and 1 whatever the model does; keep it static only if the model"
                               " really needs that size")
        status = "suggested"
    else:
        status = "verified" if not reason else "suggested"
    notes = [] if status == "verified" else search.notes  # what a verified spec leaves out no longer matters
    return SpecFix(
        status=status, dynamic_shapes=render_spec(spec), origin=origin,
        changes=search.example_changes + _changes(search.declared, spec), exports=search.exports,
        reason="; ".join(([f"{'exported, but its checks failed' if exported else 'did not export'}: {reason}"]
                          if reason else []) + notes),
        seconds=search.seconds(), findings=found if status == "verified" else [], verified_by=search.verified_by,
    )


class _Search:
    """One fix's re-exports: the declared spec, the inputs it is verified on, what it cost, what it noted."""

    def __init__(self, run: Run, recheck: Recheck) -> None:
        self.run, self.recheck = run, recheck
        self.start = time.perf_counter()
        self.declared: SpecForm = run.spec.form
        self.failure: Failure = run.outcome.failure  # type: ignore[assignment]
        self.args, self.kwargs = run.args, run.kwargs
        self.exports = 0
        self.notes: list[str] = []
        self.example_changes: list[str] = []
        # Where findings are errors, a finding of a check the accept/reject re-check does not run (dtype)
        # fails the case with the fixed spec: then only every check the case ran can verify it.
        self.whole = bool(run.findings_as_errors)
        self.verified_by = _ALL_CHECKS if self.whole else SpecFix.verified_by

    def seconds(self) -> float:
        return round(time.perf_counter() - self.start, 3)

    def verify(self, spec: SpecForm, args: tuple | None = None, kwargs: dict | None = None, *,
               as_run: bool | None = None) -> Any:
        """Re-check the model with ``spec`` (on this search's inputs unless given), counting the export."""
        self.exports += 1
        return _verify(self.run, spec, self.recheck, self.args if args is None else args,
                       self.kwargs if kwargs is None else kwargs, as_run=self.whole if as_run is None else as_run)

    def example_first(self) -> SpecFix | None:
        """Re-export the declared spec from examples of size 2 where they were 0 or 1: the fix when it passes.

        When it still fails at constraints or guards, that failure (on those examples) is what the spec
        must fix; otherwise a note says so and the spec is derived from the first failure.
        """
        from exportcore.diagnosis.explain.example_size import SIZE, resized_examples

        resized = resized_examples(self.run)
        if resized is None:
            return None
        verdict = self.verify(self.declared, resized[0], resized[1])
        if verdict.status == "passed":
            return SpecFix(status="verified", dynamic_shapes=render_spec(self.declared), origin=_EXAMPLE_ORIGIN,
                           changes=resized[2], exports=self.exports, seconds=self.seconds(),
                           findings=_finding_kinds(verdict), verified_by=self.verified_by)
        if verdict.failure is not None and verdict.failure.stage in ("constraints", "guards"):
            self.args, self.kwargs, self.example_changes = resized  # what still fails with a good example is the spec's
            self.failure = verdict.failure
        else:
            self.notes.append(f"an example of size {SIZE} did not pass either: "
                              f"{verdict.failure.headline() if verdict.failure else verdict.status}")
        return None

    def layers(self, spec: SpecForm) -> tuple[SpecForm, str, bool, list[str]]:
        """Verify ``spec``, deriving again from each failure (torch reports one layer of violations per export).

        Return (the last spec, why it failed or "", whether it exported, the passing re-check's finding kinds).
        """
        while True:
            verdict = self.verify(spec)
            if verdict.status == "passed":
                return spec, "", False, _finding_kinds(verdict)
            reason = verdict.failure.headline() if verdict.failure else verdict.status
            exported = verdict.failure is not None and verdict.failure.stage not in ("input", "capture", "constraints")
            again = None
            layered = verdict.failure is not None and verdict.failure.stage in ("constraints", "guards")
            if self.exports < _MAX_EXPORTS and layered:
                again, _, more = _derive(self.run, spec, verdict.failure)
                self.notes += more
            if again is None:
                return spec, reason, exported, []
            spec = again

    def relaxed(self, spec: SpecForm) -> tuple[SpecForm, list[str]] | None:
        """Return ``spec`` with its pins given back their declared range, with its findings, when that passes."""
        candidate = unpinned(self.declared, spec)
        if candidate is None:
            return None
        verdict = self.verify(candidate)
        return (candidate, _finding_kinds(verdict)) if verdict.status == "passed" else None


#: SpecFix.origin's tail when a pin torch suggested was given back its range (exportcore.diagnosis.explain.specs.unpinned).
_UNPINNED_ORIGIN = ("the dims it pins kept dynamic over their declared range (Dim.DYNAMIC): torch's solver could not"
                    " prove a guard there, yet the export keeps it and passes")


def _floor_fix(search: _Search, name: str, size: int) -> SpecFix | None:
    """The range of ``name`` from ``size + 1``, after a program failed at size 0 or 1 inside it.

    Verified by every check the failing run ran, values included: a range from 1 runs size 1 there,
    so a fix that moves the failure from 0 to 1 is not verified, and the min goes one step more; a
    re-check failing at size 0 or 1 of another dim raises that one too (at most _FLOOR_EXPORTS re-exports).
    """
    declared = search.declared.bounds()
    bounds: dict[str, tuple[int, int | None]] = {}
    spec, reason, exported, found = search.declared, "", False, []
    failed: tuple[str, int] | None = (name, size)
    while failed is not None and search.exports < _FLOOR_EXPORTS:
        dim, at = failed
        low, high = bounds.get(dim) or declared.get(dim, (None, None))
        if low is None or low > at or (high is not None and at + 1 > high):
            break  # no Dim of that name (Dim.AUTO), no progress, or no range left above the size
        bounds[dim] = (at + 1, high)
        spec = replace_bounds(search.declared, bounds)
        verdict = search.verify(spec, as_run=True)
        if verdict.status == "passed":
            reason, found = "", _finding_kinds(verdict)
            break
        reason = verdict.failure.headline() if verdict.failure else verdict.status
        exported = verdict.failure is not None and verdict.failure.stage not in ("input", "capture", "constraints")
        failed = failed_size(verdict.failure) if verdict.failure is not None else None
    if search.exports == 0:
        return None
    raised = ", ".join(f"{dim} static {low}" if low == high else f"{dim} from {low}"
                       for dim, (low, high) in bounds.items())
    return SpecFix(
        status="suggested" if reason else "verified", dynamic_shapes=render_spec(spec),
        origin=f"0/1 specialization: {raised}, the sizes torch traced for",
        changes=_changes(search.declared, spec), exports=search.exports,
        reason=f"{'exported, but its checks failed' if exported else 'did not export'}: {reason}" if reason else "",
        seconds=search.seconds(), verified_by=_ALL_CHECKS, findings=found,
    )


#: Re-exports a sizes-0/1 fix may spend: two steps (0, then 1) for each of two dims.
_FLOOR_EXPORTS = 4


def _finding_kinds(verdict: Any) -> list[str]:
    """The kinds of a passing re-check's findings: what the fixed spec still warns about."""
    return sorted({f.kind for f in verdict.findings})


_EXAMPLE_ORIGIN = "0/1 specialization: an example of size 2 on the dims whose example was 0 or 1"


def _derive(run: Run, spec: SpecForm, failure: Failure) -> tuple[SpecForm | None, str, list[str]]:
    """Return (new spec or None, where it came from, notes on what could not be fixed)."""
    text = failure.detail or failure.message
    if "Suggested fixes:" in text:
        refined = _torch_suggestion(text, spec)
        if refined is not None:
            return refined, "torch's suggested fixes", []
    found = violations(text) or _runtime_guard(run, failure)
    if found:
        examples = run.spec.example_assignment() if run.spec is not None else {}
        solutions = solve(found, spec.bounds(), examples)
        bounds = {s.name: s.bounds for s in solutions if s.bounds is not None}
        notes = [f"{s.name}: {s.note} (guard: {' and '.join(s.guards)})" for s in solutions if s.note]
        steps = {s.name: s.step for s in solutions if s.bounds is not None and s.step > 1}
        if bounds:
            return replace_bounds(spec, bounds, steps), "solved from the violated guard", notes
        return None, "solved from the violated guard", notes
    narrowed = {m["name"]: (int(m["lo"]), None if "oo" in m["hi"] else int(m["hi"]))
                for f in run.outcome.findings if f.kind == "narrowed" for m in [_NARROWED.search(f.message)] if m}
    if narrowed and failure.stage == "guards":
        return replace_bounds(spec, narrowed), "the exported range_constraints", []
    return None, "", []


def _runtime_guard(run: Run, failure: Failure) -> list[Violation]:
    """Return the guard an exported program failed on an in-spec shape, as violations of the declared dims."""
    match = _GUARD_FAILED.search(failure.message) if failure.stage == "guards" else None
    if match is None or run.spec is None:
        return []
    guard = match["guard"].strip()
    found = []
    for source in dict.fromkeys(m.group(0) for m in _SIZE.finditer(guard)):
        size = _SIZE.match(source)
        name = _root_of(run, size["input"], int(size["axis"])) if size else None
        if name is None:
            return []  # a size we cannot name: solving the rest would be a guess
        found.append(Violation(name, source, guard))
    return found


def _root_of(run: Run, param: str, axis: int) -> str | None:
    import inspect

    try:
        names = [p for p in inspect.signature(run.model.forward).parameters]
    except (TypeError, ValueError):
        names = []
    paths = {f"['{param}']", f"[{param!r}]"}
    if param in names:
        index = names.index(param)
        paths |= {f"args[{index}]", f"[{index}]", f"kwargs[{param!r}]"}
    for ax in run.spec.axes():
        if ax.root is None or ax.derived:
            continue
        head, _, last = ax.field.rpartition("[")
        if last.rstrip("]") == str(axis) and any(head.endswith(p) for p in paths):
            return ax.root
    return None


def _torch_suggestion(text: str, spec: SpecForm) -> SpecForm | None:
    try:
        from torch.export.dynamic_shapes import refine_dynamic_shapes_from_suggested_fixes
    except ImportError:  # older torch: fall back to solving the guards
        return None
    head, _, tail = text.partition("Suggested fixes:")
    lines = []
    for line in tail.splitlines():
        if not line.strip():
            continue
        if not _FIXES_LINE.match(line):
            break
        lines.append(line.strip())
    if not lines:
        return None
    try:
        refined = refine_dynamic_shapes_from_suggested_fixes(head + "Suggested fixes:\n" + "\n".join(lines),
                                                             spec.build())
    except Exception:  # noqa: BLE001 - torch could not apply its own suggestion: solve the guards instead
        return None
    return read_form(refined)  # torch's refined spec, read in the user's spelling like theirs


def _verify(run: Run, spec: SpecForm, recheck: Recheck, args: tuple, kwargs: dict, *, as_run: bool = False) -> Any:
    """Re-check the model with ``spec``: its accept/reject checks, or (``as_run``) everything the run checked, its way."""
    # on the run's device: the model and the examples are there already, and a user's inputs= factory's
    # CPU tensors go there as in the run (check() moves them only for a device it is given)
    settings: dict[str, Any] = {"checks": ("accept", "reject"), "examples": max(2, min(run.examples, 5)),
                                "device": run.device}
    if as_run:
        # the same column: a target's failure is verified by lowering the fix to that runtime again
        settings = {"checks": tuple(sorted(run.checks)), "examples": run.examples, "rtol": run.rtol, "atol": run.atol,
                    "findings_as_errors": run.findings_as_errors, "target": run.target, "device": run.device,
                    "target_options": run.target_options}
    options = EngineOptions(mode=run.mode.name, inputs=run.inputs, seed=run.seed, case_id=run.outcome.case_id,
                            explain="off", **settings)
    # the re-export is a check like any other, in the run's session: a warm run serves its program-only steps
    # under the same proof
    return recheck(Case(model=run.model, args=args, kwargs=kwargs, dynamic_shapes=spec.build()), options, run.session)


def _changes(before: SpecForm, after: SpecForm) -> list[str]:
    return spec_changes(before, after) or ["spec rewritten as torch suggested"]
