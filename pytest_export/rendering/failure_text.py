"""Failure text of an exportable test: the headline a reader needs first, then the detail.

Pure string building over an Outcome; no pytest, no torch.
"""

from __future__ import annotations

import os
from pathlib import Path

from exportcore.outcome import Outcome
from pytest_export.rendering import story

__all__ = ["DOCS_ENV", "DOCS_DIR", "exportdb_docs", "exportdb_page", "failure_text", "xpass_text", "drift_text",
           "unstable_text"]

#: Where ``python -m exportdb docs -o build/exportdb`` (README) puts the reference, under the rootdir.
DOCS_DIR = "build/exportdb"
#: Set to the URL (or folder) of a published ExportDB reference to link failures there instead.
DOCS_ENV = "PYTEST_EXPORT_EXPORTDB_DOCS"

_DETAIL_LINES = 40  # torch messages can run to hundreds of lines; the head says what matters


def exportdb_docs(rootdir: str | os.PathLike[str]) -> str | None:
    """Return where the built ExportDB reference is (``$PYTEST_EXPORT_EXPORTDB_DOCS`` or rootdir/build/exportdb), or None."""
    given = os.environ.get(DOCS_ENV, "").strip()
    if given:
        return given
    folder = Path(rootdir) / DOCS_DIR
    return str(folder.resolve()) if (folder / "index.html").is_file() else None


def exportdb_page(name: str, docs: str | None) -> str | None:
    """Return the link to ExportDB case ``name``'s entry in the reference at ``docs`` (None if unknown)."""
    if not docs:
        return None
    try:
        from exportdb.registry import get

        category = get(name).category
    except Exception:  # noqa: BLE001 - an unknown or renamed case just gets no link
        return None
    base = docs if "://" in docs else Path(docs).resolve().as_uri()
    return f"{base.rstrip('/')}/{category}.html#{name}"


def failure_text(outcome: Outcome, *, show_traceback: bool = False, lead: str = "", docs: str | None = None,
                 fix_into: str = "@pytest.mark.exportable(...)", under_pytest: bool = True) -> str:
    """Return the report for a non-passing outcome: headline block, detail, torch traceback on request.

    ``fix_into``: where the test takes a verified fix's ``dynamic_shapes=`` (the marker, or the call
    that checked it: ``self.assertExportable(...)``). ``under_pytest``: False under plain unittest,
    where pytest's ``-vv`` and ``--tb=long`` mean nothing: the text says to run the test under pytest.
    """
    more = "-vv shows all" if under_pytest else "run the test under pytest with -vv to show all"
    hidden = "use --tb=long or -vv to show it" if under_pytest else "run the test under pytest with --tb=long to show it"
    failure = outcome.failure
    lines = [lead] if lead else []
    if failure is None:
        lines.append(f"export {outcome.status} in {outcome.mode} (no failure details recorded)")
        lines.extend(_notes(outcome))
        return "\n".join(lines)
    what = {"failed": "failed", "error": "error", "timeout": "timed out", "crashed": "crashed"}
    lines.append(
        f"export {what.get(outcome.status, outcome.status)} in {outcome.mode}: "
        f"stage {failure.stage}, category {failure.category}"
    )
    lines.append(f"  {failure.exc_type}: {failure.message}")
    if failure.source is not None:
        src = failure.source
        where = f"{src.file}:{src.line}" + (f" in {src.function}" if src.function else "")
        lines.append(f"  at {where}" + (f": {src.code.strip()}" if src.code else ""))
    if failure.hint:
        lines.append(f"  hint: {failure.hint}")
    if failure.exportdb_case:
        page = exportdb_page(failure.exportdb_case, docs)
        lines.append(f"  see ExportDB case: {failure.exportdb_case}" + (f" ({page})" if page else ""))
        lines.extend(story.rewrite_lines(failure.exportdb_case))
    lines.extend(story.explanation_lines(outcome, fix_into))
    detail = failure.detail.strip()
    if detail and detail != failure.message.strip():
        lines.append("")
        lines.append("detail:")
        body = detail.splitlines()
        shown = body if show_traceback else body[:_DETAIL_LINES]
        lines.extend(f"  {line}" for line in shown)
        if len(shown) < len(body):
            lines.append(f"  ... ({len(body) - len(shown)} more lines; {more})")
    lines.extend(_counterexample(outcome))
    lines.extend(_findings(outcome))
    lines.extend(_constraints(outcome))
    lines.extend(_notes(outcome))
    if failure.traceback:
        if show_traceback:
            lines.append("")
            lines.append("torch traceback:")
            lines.extend(f"  {line}" for line in failure.traceback.rstrip().splitlines())
        else:
            lines.append("")
            lines.append(f"(torch's internal traceback hidden: {hidden})")
    return "\n".join(lines)


def xpass_text(outcome: Outcome, reason: str) -> str:
    """Return the report for an expected failure that now passes."""
    return (
        f"now exportable in {outcome.mode}: remove the expectation\n"
        f"  expected failure was: {reason}"
    )


def drift_text(outcome: Outcome, expected: str, *, show_traceback: bool = False, docs: str | None = None) -> str:
    """Return the report for an expected failure that now fails in another category."""
    got = outcome.failure.category if outcome.failure else "no category"
    lead = f"drift: {outcome.mode} now fails with {got}, expected {expected}: update the expectation\n"
    return failure_text(outcome, show_traceback=show_traceback, lead=lead, docs=docs)


def unstable_text(outcome: Outcome, *, show_traceback: bool = False, docs: str | None = None) -> str:
    """Return the report for runs of --export-repeat whose verdicts differ: each run's, then the first failing one."""
    runs = ", ".join(f"run {i} {status}" for i, status in enumerate(outcome.repeats, 1))
    lead = (f"unstable in {outcome.mode}: the verdict changed between the {len(outcome.repeats)} runs of "
            f"--export-repeat ({runs}): one run's pass is not a verdict\n"
            "the first run that did not pass (every run's seed and verdict are in the notes below):")
    return failure_text(outcome, show_traceback=show_traceback, lead=lead, docs=docs)


def _counterexample(outcome: Outcome) -> list[str]:
    ce = outcome.counterexample
    if ce is None:
        return []
    shapes = ", ".join(f"{k}={tuple(v)}" for k, v in ce.shapes.items())
    lines = ["", f"counterexample: {shapes}"]
    if ce.message:
        lines.append(f"  {ce.message}")
    if ce.reproduce:
        lines.append("  reproduce:")
        lines.extend(f"    {line}" for line in ce.reproduce.splitlines())
    return lines


def _findings(outcome: Outcome) -> list[str]:
    if not outcome.findings:
        return []
    lines = ["", "findings:"]
    for f in outcome.findings:
        where = f" {f.input}" if f.input else ""
        lines.append(f"  [{f.severity}] {f.kind}{where}: {f.message}")
    return lines


def _constraints(outcome: Outcome) -> list[str]:
    if not (outcome.declared or outcome.range_constraints):
        return []
    lines = ["", "dynamic shapes:"]
    if outcome.declared:
        lines.append("  declared: " + ", ".join(f"{k} {v}" for k, v in sorted(outcome.declared.items())))
    if outcome.range_constraints:
        lines.append("  exported: " + ", ".join(f"{k} {v}" for k, v in sorted(outcome.range_constraints.items())))
    lines.extend(dim_lines(outcome))
    return lines


def dim_lines(outcome: Outcome) -> list[str]:
    """The dynamism ledger, one line per declared dim: what the program made of it and what ran."""
    out = []
    for dim in outcome.dims:
        said = "; ".join(part for part in (dim.failed, dim.checked) if part)
        out.append(f"  {dim.short()}  ({dim.kind}{': ' + said if said else ''})")
    return out


def _notes(outcome: Outcome) -> list[str]:
    return [f"note: {n}" for n in outcome.notes]
