"""A corrected ``dynamic_shapes`` for a failing case, re-exported to verify it before it is shown."""

from __future__ import annotations

import re
import time
from typing import TYPE_CHECKING, Any

from exportcore.programs.small_sizes import failed_size
from exportcore.diagnosis.explain.bounds import Violation, solve, violations
from exportcore.diagnosis.explain.specs import dim_bounds, render_spec, replace_bounds, spec_changes, unpinned
from exportcore.outcome import Failure, SpecFix

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
    """
    from exportcore.diagnosis.explain.example_size import SIZE, pins_example_size, resized_examples

    start = time.perf_counter()
    failure = run.outcome.failure
    assert failure is not None
    small = failed_size(failure)
    if small is not None:
        return _floor_fix(run, recheck, *small, start)
    spec, notes, exports, example_changes = run.dynamic_shapes, [], 0, []
    args, kwargs = run.args, run.kwargs
    # Where findings are errors, a finding of a check the accept/reject re-check does not run (dtype)
    # fails the case with the fixed spec: then only every check the case ran can verify it.
    whole = bool(run.findings_as_errors)
    verified_by = _ALL_CHECKS if whole else SpecFix.verified_by
    resized = resized_examples(run)
    if resized is not None:
        exports += 1
        verdict = _verify(run, spec, recheck, resized[0], resized[1], as_run=whole)
        if verdict.status == "passed":
            return SpecFix(status="verified", dynamic_shapes=render_spec(spec), origin=_EXAMPLE_ORIGIN,
                           changes=resized[2], exports=exports, seconds=round(time.perf_counter() - start, 3),
                           findings=_finding_kinds(verdict), verified_by=verified_by)
        if verdict.failure is not None and verdict.failure.stage in ("constraints", "guards"):
            args, kwargs, example_changes = resized  # what still fails with a good example is the spec's
            failure = verdict.failure
        else:
            notes.append(f"an example of size {SIZE} did not pass either: "
                         f"{verdict.failure.headline() if verdict.failure else verdict.status}")
    new, origin, more = _derive(run, spec, failure)
    notes += more
    if example_changes:
        origin = f"{_EXAMPLE_ORIGIN}, then {origin}" if origin else _EXAMPLE_ORIGIN
    if new is None:
        return None if not notes else SpecFix(
            status="suggested", dynamic_shapes="", origin=origin, reason="; ".join(notes),
            changes=example_changes, exports=exports, seconds=round(time.perf_counter() - start, 3),
        )
    spec, reason, exported, found = new, "", False, []
    while True:
        exports += 1
        verdict = _verify(run, spec, recheck, args, kwargs, as_run=whole)
        if verdict.status == "passed":
            found = _finding_kinds(verdict)
            break
        reason = verdict.failure.headline() if verdict.failure else verdict.status
        exported = verdict.failure is not None and verdict.failure.stage not in ("input", "capture", "constraints")
        again = None
        layered = verdict.failure is not None and verdict.failure.stage in ("constraints", "guards")
        if exports < _MAX_EXPORTS and layered:
            again, _, more = _derive(run, spec, verdict.failure)  # torch reports one layer per export
            notes += more
        if again is None:
            break
        spec, reason = again, ""
    candidate = None if reason else unpinned(run.dynamic_shapes, spec)
    relaxed = None
    if candidate is not None:
        exports += 1
        verdict = _verify(run, candidate, recheck, args, kwargs, as_run=whole)
        relaxed = (candidate, _finding_kinds(verdict)) if verdict.status == "passed" else None
    if relaxed is not None:  # the least restrictive fix that passes: the pin was torch's solver's, not the model's
        spec, found = relaxed
        origin = f"{origin}, then {_UNPINNED_ORIGIN}" if origin else _UNPINNED_ORIGIN
        status = "verified"
    elif not reason and not example_changes and pins_example_size(run.dynamic_shapes, spec):
        # The pin passes only because the example already had that size; it proves nothing about the model.
        notes = ["not verified: it pins a dim to its example size (0 or 1), and export specializes example sizes"
                 " 0 and 1 whatever the model does; keep it static only if the model really needs that size"] + notes
        status = "suggested"
    else:
        status = "verified" if not reason else "suggested"
    notes = [] if status == "verified" else notes  # what a verified spec leaves out no longer matters
    return SpecFix(
        status=status, dynamic_shapes=render_spec(spec), origin=origin,
        changes=example_changes + _changes(run.dynamic_shapes, spec), exports=exports,
        reason="; ".join(([f"{'exported, but its checks failed' if exported else 'did not export'}: {reason}"]
                          if reason else []) + notes),
        seconds=round(time.perf_counter() - start, 3), findings=found if status == "verified" else [],
        verified_by=verified_by,
    )


#: SpecFix.origin's tail when a pin torch suggested was given back its range (exportcore.diagnosis.explain.specs.unpinned).
_UNPINNED_ORIGIN = ("the dims it pins kept dynamic over their declared range (Dim.DYNAMIC): torch's solver could not"
                    " prove a guard there, yet the export keeps it and passes")


def _floor_fix(run: Run, recheck: Recheck, name: str, size: int, start: float) -> SpecFix | None:
    """The range of ``name`` from ``size + 1``, after a program failed at size 0 or 1 inside it.

    Verified by every check the failing run ran, values included: a range from 1 runs size 1 there,
    so a fix that moves the failure from 0 to 1 is not verified, and the min goes one step more; a
    re-check failing at size 0 or 1 of another dim raises that one too (at most _FLOOR_EXPORTS re-exports).
    """
    declared = dim_bounds(run.dynamic_shapes)
    bounds: dict[str, tuple[int, int | None]] = {}
    spec, reason, exported, exports, found = run.dynamic_shapes, "", False, 0, []
    failed: tuple[str, int] | None = (name, size)
    while failed is not None and exports < _FLOOR_EXPORTS:
        dim, at = failed
        low, high = bounds.get(dim) or declared.get(dim, (None, None))
        if low is None or low > at or (high is not None and at + 1 > high):
            break  # no Dim of that name (Dim.AUTO), no progress, or no range left above the size
        bounds[dim] = (at + 1, high)
        spec = replace_bounds(run.dynamic_shapes, bounds)
        exports += 1
        verdict = _verify(run, spec, recheck, run.args, run.kwargs, as_run=True)
        if verdict.status == "passed":
            reason, found = "", _finding_kinds(verdict)
            break
        reason = verdict.failure.headline() if verdict.failure else verdict.status
        exported = verdict.failure is not None and verdict.failure.stage not in ("input", "capture", "constraints")
        failed = failed_size(verdict.failure) if verdict.failure is not None else None
    if exports == 0:
        return None
    raised = ", ".join(f"{dim} static {low}" if low == high else f"{dim} from {low}"
                       for dim, (low, high) in bounds.items())
    return SpecFix(
        status="suggested" if reason else "verified", dynamic_shapes=render_spec(spec),
        origin=f"0/1 specialization: {raised}, the sizes torch traced for",
        changes=_changes(run.dynamic_shapes, spec), exports=exports,
        reason=f"{'exported, but its checks failed' if exported else 'did not export'}: {reason}" if reason else "",
        seconds=round(time.perf_counter() - start, 3), verified_by=_ALL_CHECKS, findings=found,
    )


#: Re-exports a sizes-0/1 fix may spend: two steps (0, then 1) for each of two dims.
_FLOOR_EXPORTS = 4


def _finding_kinds(verdict: Any) -> list[str]:
    """The kinds of a passing re-check's findings: what the fixed spec still warns about."""
    return sorted({f.kind for f in verdict.findings})


_EXAMPLE_ORIGIN = "0/1 specialization: an example of size 2 on the dims whose example was 0 or 1"


def _derive(run: Run, spec: Any, failure: Failure) -> tuple[Any, str, list[str]]:
    """Return (new spec or None, where it came from, notes on what could not be fixed)."""
    text = failure.detail or failure.message
    if "Suggested fixes:" in text:
        refined = _torch_suggestion(text, spec)
        if refined is not None:
            return refined, "torch's suggested fixes", []
    found = violations(text) or _runtime_guard(run, failure)
    if found:
        examples = run.spec.example_assignment() if run.spec is not None else {}
        solutions = solve(found, dim_bounds(spec), examples)
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


def _torch_suggestion(text: str, spec: Any) -> Any:
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
        return refine_dynamic_shapes_from_suggested_fixes(head + "Suggested fixes:\n" + "\n".join(lines), spec)
    except Exception:  # noqa: BLE001 - torch could not apply its own suggestion: solve the guards instead
        return None


def _verify(run: Run, spec: Any, recheck: Recheck, args: tuple, kwargs: dict, *, as_run: bool = False) -> Any:
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
    return recheck(
        run.model, args, kwargs, dynamic_shapes=spec, mode=run.mode.name, inputs=run.inputs,
        seed=run.seed, case_id=run.outcome.case_id, explain="off",
        # the re-export is a check like any other: a warm run serves its program-only steps under the same proof
        cache=run.cache, **settings,
    )


def _changes(before: Any, after: Any) -> list[str]:
    return spec_changes(before, after) or ["spec rewritten as torch suggested"]
