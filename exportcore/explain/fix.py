"""A corrected ``dynamic_shapes`` for a failing case, re-exported to verify it before it is shown."""

from __future__ import annotations

import re
import time
from typing import TYPE_CHECKING, Any

from exportcore.explain.bounds import solve, violations
from exportcore.explain.specs import dim_bounds, render_spec, replace_bounds
from exportcore.outcome import Failure, SpecFix

if TYPE_CHECKING:
    from exportcore.check import Run

__all__ = ["wants_fix", "corrected_spec"]

#: Re-exports one fix may spend: torch reports one layer of violations per export.
_MAX_EXPORTS = 3
_NARROWED = re.compile(r"\((?P<name>\w+)\) declared \[.*?\] but exported as \[(?P<lo>-?\d+), (?P<hi>\S+?)\]")
_FIXES_LINE = re.compile(r"^\s*\w+ = \S")


def wants_fix(run: Run) -> bool:
    """Return whether the failure is one a corrected dynamic_shapes can fix."""
    failure = run.outcome.failure
    if failure is None or run.outcome.status != "failed" or run.dynamic_shapes is None:
        return False
    if failure.stage in ("constraints", "capture") and failure.category == "torch.dynamic-shape":
        return True
    return failure.stage == "guards" and any(f.kind == "narrowed" for f in run.outcome.findings)


def corrected_spec(run: Run) -> SpecFix | None:
    """Derive a corrected spec, re-export with it, and return it verified or merely suggested."""
    start = time.perf_counter()
    failure = run.outcome.failure
    assert failure is not None
    spec, origin, notes = _derive(run, run.dynamic_shapes, failure)
    if spec is None:
        return None if not notes else SpecFix(
            status="suggested", dynamic_shapes="", origin=origin, reason="; ".join(notes),
            seconds=round(time.perf_counter() - start, 3),
        )
    exports, reason = 0, ""
    while True:
        exports += 1
        verdict = _verify(run, spec)
        if verdict.status == "passed":
            break
        reason = verdict.failure.headline() if verdict.failure else verdict.status
        again = None
        if exports < _MAX_EXPORTS and verdict.failure is not None and verdict.failure.stage == "constraints":
            again, _, more = _derive(run, spec, verdict.failure)
            notes += more
        if again is None:
            break
        spec, reason = again, ""
    status = "verified" if not reason else "suggested"
    return SpecFix(
        status=status, dynamic_shapes=render_spec(spec), origin=origin,
        changes=_changes(run.dynamic_shapes, spec), exports=exports,
        reason="; ".join(([f"did not export: {reason}"] if reason else []) + notes),
        seconds=round(time.perf_counter() - start, 3),
    )


def _derive(run: Run, spec: Any, failure: Failure) -> tuple[Any, str, list[str]]:
    """Return (new spec or None, where it came from, notes on what could not be fixed)."""
    text = failure.detail or failure.message
    if "Suggested fixes:" in text:
        refined = _torch_suggestion(text, spec)
        if refined is not None:
            return refined, "torch's suggested fixes", []
    found = violations(text)
    if found:
        examples = run.spec.example_assignment() if run.spec is not None else {}
        solutions = solve(found, dim_bounds(spec), examples)
        bounds = {s.name: s.bounds for s in solutions if s.bounds is not None}
        notes = [f"{s.name}: {s.note} (guard: {' and '.join(s.guards)})" for s in solutions if s.note]
        if bounds:
            return replace_bounds(spec, bounds), "solved from the violated guard", notes
        return None, "solved from the violated guard", notes
    narrowed = {m["name"]: (int(m["lo"]), None if "oo" in m["hi"] else int(m["hi"]))
                for f in run.outcome.findings if f.kind == "narrowed" for m in [_NARROWED.search(f.message)] if m}
    if narrowed and failure.stage == "guards":
        return replace_bounds(spec, narrowed), "the exported range_constraints", []
    return None, "", []


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


def _verify(run: Run, spec: Any) -> Any:
    from exportcore.check import check

    return check(
        run.model, run.args, run.kwargs, dynamic_shapes=spec, mode=run.mode.name,
        checks=("accept", "reject"), examples=max(2, min(run.examples, 5)), inputs=run.inputs,
        seed=run.seed, case_id=run.outcome.case_id, explain="off",
    )


def _changes(before: Any, after: Any) -> list[str]:
    from exportcore.explain.specs import render_spec as _render

    old, new = dim_bounds(before), dim_bounds(after)
    out = []
    for name, bounds in new.items():
        if old.get(name) != bounds:
            out.append(f"{name}: {_range(old.get(name))} -> {_range(bounds)}")
    for name in old:
        if name not in new:
            out.append(f"{name}: {_range(old[name])} -> static (the model fixes its size)")
    return out or ([] if _render(before) == _render(after) else ["spec rewritten as torch suggested"])


def _range(bounds: tuple[int, int | None] | None) -> str:
    if bounds is None:
        return "?"
    return f"[{bounds[0]}, {'int_oo' if bounds[1] is None else bounds[1]}]"
