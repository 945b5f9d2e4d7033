"""The explanation part of a failure: the verified fix, the failing submodule, every issue, the rewrite.

Pure text and data building over an Outcome (and ExportDB's case sources); no pytest, no torch.
Shared by the failure text, the Markdown and HTML reports (a template draws the HTML rows),
and ``python -m pytest_export explain``.
"""

from __future__ import annotations

from typing import Any

from exportcore.outcome import Outcome, SpecFix

__all__ = ["fix_status", "fix_findings", "explanation_lines", "rewrite_lines", "explanation_markdown", "explanation_rows"]

_MD_MAX = 300


def fix_status(fix: SpecFix) -> str:
    """Return the fix's one-line status: verified, or suggested with the reason it is not."""
    if fix.status == "verified":
        return f"verified (exports with this spec, and {fix.verified_by} pass)"
    return f"suggested ({fix.reason or 'not verified'})"


def fix_findings(fix: SpecFix, code: str = "") -> str:
    """Return what a verified fix still warns about, in one line ("" when nothing); ``code`` quotes the kinds."""
    if fix.status != "verified" or not fix.findings:
        return ""
    # a report read back may hold anything here: one line, and no backtick to end a code span early
    kinds = ", ".join(f"{code}{' '.join(str(kind).split()).replace('`', chr(39))}{code}" for kind in fix.findings)
    what = "a warning; it fails" if len(fix.findings) == 1 else "warnings; they fail"
    return (f"with this spec the re-check reports {kinds} ({what} the test where findings are errors:"
            f" {code}--export-findings=error{code}, {code}filterwarnings = error{code})")


def _cost(fix: SpecFix) -> str:
    exports = f"{fix.exports} re-export{'s' if fix.exports != 1 else ''}, " if fix.exports else ""
    return f"{exports}{fix.seconds:.1f} s"


def explanation_lines(outcome: Outcome, fix_into: str = "@pytest.mark.exportable(...)") -> list[str]:
    """Return the failure text's lines for the outcome's explanation (none when there is none).

    ``fix_into``: where a verified fix's ``dynamic_shapes=`` goes in the failing test.
    """
    ex = outcome.explanation
    if ex is None:
        return []
    lines: list[str] = []
    if ex.fix is not None:
        fix = ex.fix
        if fix.dynamic_shapes:
            warns = fix_findings(fix)
            lines += ["", f"fix: {fix_status(fix)} [{fix.origin}; {_cost(fix)}]"] + ([f"  {warns}"] if warns else [])
            lines += [f"  {c}" for c in fix.changes]
            lines.append(f"  paste into {fix_into}:")
            lines += [f"    {line}" for line in fix.dynamic_shapes.splitlines()]
        else:
            lines += ["", f"fix: none found ({fix.reason}) [{_cost(fix)}]"]
    lines += rescue_lines(ex)
    for sub in ex.submodules:
        more = f", {sub.instances} instances" if sub.instances > 1 else ""
        lines += ["", f"failing submodule: {sub.path} ({sub.module_type}{more}) fails on its own: "
                      f"{sub.category}: {sub.message}"]
    if ex.issues:
        took = f" [{ex.timings['draft']:.1f} s]" if "draft" in ex.timings else ""
        lines += ["", f"all issues (torch.export.draft_export; the verdict above is the real export's){took}:"]
        for i, issue in enumerate(ex.issues, 1):
            where = f" at {issue.location}" if issue.location else ""
            lines.append(f"  {i}. {issue.kind}{where}: {issue.message}")
            if issue.code:
                lines.append(f"     code: {issue.code}")
            if issue.suggestion:
                lines.append(f"     try: {issue.suggestion}")
    lines += [f"note: {n}" for n in ex.notes]
    return lines


def rescue_lines(ex: Any) -> list[str]:
    """The option rescue: which export option makes the case pass (verified), or that none does."""
    rescue = getattr(ex, "rescue", None)
    if rescue is None:
        return []
    if rescue.status == "verified":
        still = f"; still reports: {', '.join(rescue.findings)}" if rescue.findings else ""
        return (["", f"rescued by {rescue.option} (verified: the case passes every check it ran under that option"
                 f"{still}) [{rescue.seconds:.1f} s]"] + [f"  {line}" for line in rescue.code.splitlines()])
    why = "; ".join(f"{option}: {reason}" for option, reason in rescue.reasons.items())
    return ["", f"no option rescues it ({why}) [{rescue.seconds:.1f} s]"]


def rewrite_lines(case: str | None, indent: str = "    ") -> list[str]:
    """Return the before/after snippet of an ExportDB case and its rewrite, indented for the failure text."""
    snippet = _snippet(case)
    if snippet is None:
        return []
    lines = [f"{indent}before ({snippet.case}):"]
    lines += [f"{indent}  | {line}" for line in snippet.before.splitlines()]
    lines.append(f"{indent}after ({snippet.rewrite}):")
    lines += [f"{indent}  | {line}" for line in snippet.after.splitlines()]
    return lines


def _snippet(case: str | None) -> Any:
    if not case:
        return None
    from exportdb.snippets import rewrite_snippet

    try:
        return rewrite_snippet(case)
    except Exception:  # noqa: BLE001 - a broken catalog entry must not hide the failure itself
        return None


def explanation_markdown(outcome: Outcome | None) -> list[str]:
    """Return Markdown list items (two-space indented) for a record's outcome."""
    ex = outcome.explanation if outcome is not None else None
    if ex is None:
        return []
    out: list[str] = []
    if ex.fix is not None and ex.fix.dynamic_shapes:
        if ex.fix.status == "verified":
            warns = fix_findings(ex.fix, code="`")
            out.append(f"  - fix: **verified** ({fix_status(ex.fix).split('(', 1)[1]}" + (f"; {warns}" if warns else ""))
        else:
            out.append(f"  - fix: **suggested** ({_md(ex.fix.reason or 'not verified')})")
        out += ["", "    ```python"] + [f"    {line}" for line in ex.fix.dynamic_shapes.splitlines()] + ["    ```", ""]
    for sub in ex.submodules:
        out.append(f"  - failing submodule: {_md(sub.path)} ({_md(sub.module_type)}): {_md(sub.category)}")
    for issue in ex.issues:
        where = f" at {_md(issue.location)}" if issue.location else ""
        out.append(f"  - issue {_md(issue.kind)}{where}: {_md(issue.message)}")
    return out


def _md(text: str) -> str:
    # An inline code span shows torch's text as is (``*``, ``_`` and ``<`` included).
    text = " ".join(str(text).split())[:_MD_MAX].replace("`", "'")
    return f"`{text}`"


def explanation_rows(outcome: Outcome | None, case: str | None = None) -> list[tuple[str, str, Any]]:
    """Return (label, kind, data) rows for a record's outcome: rewrite, fix, submodules, issues (HTML report)."""
    rows: list[tuple[str, str, Any]] = []
    snippet = _snippet(case)
    if snippet is not None:
        rows.append(("supported rewrite", "rewrite", snippet))
    ex = outcome.explanation if outcome is not None else None
    if ex is None:
        return rows
    if ex.fix is not None:
        label = "verified fix" if ex.fix.status == "verified" else "suggested fix"
        rows.append((label, "fix", {"status": fix_status(ex.fix), "origin": ex.fix.origin, "cost": _cost(ex.fix),
                                    "dynamic_shapes": ex.fix.dynamic_shapes, "findings": fix_findings(ex.fix)}))
    if ex.submodules:
        rows.append(("failing submodule", "submodules", ex.submodules))
    if ex.issues:
        rows.append(("all issues", "issues", ex.issues))
    return rows
