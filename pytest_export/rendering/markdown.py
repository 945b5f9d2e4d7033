"""Render a report as GitHub-flavoured Markdown, sized for a CI step summary.

GitHub renders inline HTML in Markdown, so user text is escaped; long content is capped
(a step summary holds at most 1 MiB). Pure: imports neither pytest nor torch.
"""

from __future__ import annotations

import re
from typing import Any

from pytest_export.results.numerics_growth import fraction_text, worst_errors
from pytest_export.results.records import EXPORTABLE, Record, failure_of, ordered_modes, worst
from pytest_export.results.report import Report, summarize
from pytest_export.results.schema import GateDoc
from pytest_export.rendering.findings import findings_markdown, unchecked
from pytest_export.rendering.runtimes import runtime_tables, runtimes_markdown
from pytest_export.rendering.counts import columns_phrase, row_label
from pytest_export.rendering.dims import case_ledger
from pytest_export.rendering.rescue import rescue_of, rescue_phrase
from pytest_export.rendering.style import MODE_ORDER, PROBLEMS, VERDICT_MARK
from pytest_export.results.sanitize import shown_text
from pytest_export.rendering.story import explanation_markdown

__all__ = ["render_markdown"]

MAX_ROWS = 150  # matrix rows
MAX_FAILURES = 50
MAX_TEXT = 300  # characters of one message or hint
MAX_BYTES = 900_000

_MD_SPECIAL = re.compile(r"([\\`*_\[\]<>|~])")


def _one_line(value: Any, limit: int) -> str:
    s = " ".join(shown_text(value).split())
    return s if len(s) <= limit else s[: limit - 1] + "…"


def _text(value: Any, limit: int = MAX_TEXT) -> str:
    """Return ``value`` as one escaped Markdown line."""
    return _MD_SPECIAL.sub(r"\\\1", _one_line(value, limit)).replace("&", "&amp;")


def _code(value: Any, limit: int = MAX_TEXT, *, cell: bool = False) -> str:
    """Return ``value`` as an inline code span (``cell``: safe inside a table cell)."""
    s = _one_line(value, limit)
    if cell:
        s = s.replace("|", "\\|")  # GFM splits cells before it sees code spans
    if not s:
        return ""
    # The fence must be longer than any backtick run inside, or the text closes the span
    # and what follows (raw HTML, images) is rendered.
    longest = max((len(run) for run in re.findall(r"`+", s)), default=0)
    fence = "`" * (longest + 1)
    return f"{fence} {s} {fence}" if longest else f"`{s}`"


def _summary_line(report: Report) -> str:
    s = summarize(report.records)
    verdicts = s.get("verdicts") or {}
    counts = ", ".join(f"{n} {v}" for v, n in verdicts.items()) or "no exportable tests"
    ran = sum(n for v, n in verdicts.items() if v != "skipped")
    rate = f"**{100 * verdicts.get('passed', 0) / ran:.0f}% pass** ({verdicts.get('passed', 0)} of {ran} run; " \
        "skips not counted) · " if ran else ""
    line = f"{rate}**{s.get('total', 0)} results** ({columns_phrase(s.get('cases', 0), s.get('modes', []))}): {counts}"
    if not report.complete:
        line += f"  \n⚠️ **Incomplete run**: {_text(report.stop_reason or 'the session was interrupted')}"
    return line


def _gate(gate: GateDoc | None) -> list[str]:
    if gate is None:
        return []
    status = "❌ **failed**" if gate.failed else "✅ passed"
    shown = ("regressions", "missing", "changed", "improvements", "vanished", "deselected")
    counts = ", ".join(f"{len(getattr(gate, b))} {b.replace('_', ' ')}" for b in shown
                       if b not in ("missing", "changed") or getattr(gate, b))
    out = [f"**Gate** {status} vs {_code(gate.baseline or 'baseline')}: {counts}", ""]
    for bucket, label in (("regressions", "Regression"), ("missing", "Missing"), ("changed", "Changed"),
                          ("improvements", "Improvement"), ("vanished", "Vanished")):
        entries = getattr(gate, bucket)
        for e in entries[:MAX_FAILURES]:
            change = f"{e.before} → {e.after}" if e.after else str(e.before)
            # a changed known failure: what it was recorded as and what it is now says more than the headline
            # (a known numerics failure now passing: how close it is)
            text = e.why if bucket in ("changed", "improvements") and e.why else e.headline
            note = f": {_text(text)}" if text else ""
            out.append(f"- **{label}** {_code(e.case)} [{_text(e.mode)}] {_text(change)}{note}")
        if len(entries) > MAX_FAILURES:
            out.append(f"- … {len(entries) - MAX_FAILURES} more {label.lower()}s")
    out.append("")
    return out


def _matrix(records: list[Record]) -> list[str]:
    modes = ordered_modes((r.mode for r in records), MODE_ORDER)
    grid: dict[str, dict[str, list[Record]]] = {}
    for r in records:
        grid.setdefault(row_label(r.case, r.test, r.source), {}).setdefault(r.mode, []).append(r)
    cases = sorted(grid, key=lambda c: (all(worst(v).verdict == "passed" for v in grid[c].values()), c))
    ledgers = {c: case_ledger([worst(v) for v in grid[c].values()]) for c in cases}
    dims = any(ledgers.values())  # the dynamism column only where some case declared a dynamic dim
    out = ["| case | " + " | ".join(_text(m) for m in modes) + (" | dynamic dims" if dims else "") + " |",
           "|---|" + "---|" * (len(modes) + dims)]
    for case in cases[:MAX_ROWS]:
        cells = []
        for m in modes:
            if m not in grid[case]:
                cells.append("—")
                continue
            r = worst(grid[case][m])
            failure = failure_of(r)
            stage = f" · {_text(failure.stage)}" if failure and r.verdict not in EXPORTABLE else ""
            if r.verdict == "passed" and unchecked(r):
                stage = " · no drawn shape checked"
            cells.append(f"{VERDICT_MARK.get(r.verdict, '')} {r.verdict}{stage}{_headroom(r)}")
        if dims:
            cells.append(_text(ledgers[case]))
        out.append(f"| {_code(case, 120, cell=True)} | " + " | ".join(cells) + " |")
    if len(cases) > MAX_ROWS:
        out.append(f"\n_… {len(cases) - MAX_ROWS} more cases; see the HTML/JSON report._")
    if any(m not in grid[c] for c in cases for m in modes):
        out.append("\n_— : not run; the test does not ask for that mode or target (its `modes=`, `targets=`, "
                   "or `--export-modes`)._")
    return out


def _headroom(record: Record) -> str:
    # compact: the worst program's share of its tolerance; the HTML names the program and the output
    errors = worst_errors(record.outcome)
    if not errors:
        return ""
    return f" · {fraction_text(max(e.worst_fraction for e in errors.values()))} tol"


def _skipped(records: list[Record]) -> list[str]:
    reasons: dict[str, list[Record]] = {}
    for r in records:
        if r.verdict == "skipped":
            failure = failure_of(r)
            reasons.setdefault(failure.message if failure else "skipped", []).append(r)
    if not reasons:
        return []
    out = ["", f"### Skipped ({sum(len(v) for v in reasons.values())})", ""]
    for reason, rs in sorted(reasons.items(), key=lambda kv: -len(kv[1]))[:MAX_FAILURES]:
        out.append(f"- {_text(reason)} ({len(rs)})")
    return out


def _failures(records: list[Record]) -> list[str]:
    bad = [r for r in records if r.verdict in PROBLEMS]
    xfailed = sum(1 for r in records if r.verdict == "xfailed")
    if not bad:
        return ["", "No unexpected failures." + (f" ({xfailed} expected failures.)" if xfailed else "")]
    out = ["", f"### Failures ({len(bad)})", ""]
    # One entry per case and failure: the modes that fail the same way share it.
    shared: dict[tuple[str, str, str], list[Record]] = {}
    for r in bad:
        f = failure_of(r)
        shared.setdefault((r.case, r.verdict, f.headline(at=False) if f else ""), []).append(r)
    for rs in list(shared.values())[:MAX_FAILURES]:
        r = rs[0]
        f = failure_of(r)
        mark = VERDICT_MARK.get(r.verdict, "")
        modes = ", ".join(_text(m) for m in ordered_modes([x.mode for x in rs], MODE_ORDER))
        if not f:
            out.append(f"- {mark} **{r.verdict}** {_code(r.case)} [{modes}]")
            continue
        head = f.headline(at=False)  # the source has a line of its own
        out.append(f"- {mark} {_code(r.case)} [{modes}] — {_code(head)}")
        src = f.source
        if src:
            out.append(f"  - at {_code(f'{src.file}:{src.line}')}" + (f": {_code(src.code)}" if src.code else ""))
        if f.hint:
            out.append(f"  - hint: {_text(f.hint)}")
        if f.exportdb_case:
            out.append(f"  - ExportDB: {_code(f.exportdb_case)}")
        out += explanation_markdown(r.outcome)
        rescue = rescue_of(r.outcome)
        if rescue is not None:
            out.append(f"  - option rescue: {_code(rescue_phrase(rescue))}")
            if rescue.code:
                out += ["", "    ```python"] + [f"    {line}" for line in rescue.code.splitlines()] + ["    ```", ""]
        ce = r.outcome.counterexample if r.outcome is not None else None
        if ce and ce.shapes:
            shapes = ", ".join(f"{k}={list(v)}" for k, v in ce.shapes.items())
            out.append(f"  - counterexample: {_code(shapes)}")
    if len(shared) > MAX_FAILURES:
        out.append(f"- … {len(shared) - MAX_FAILURES} more failures; see the HTML/JSON report.")
    if xfailed:
        out += ["", f"{xfailed} expected failures (xfailed) not listed."]
    return out


def _categories(report: Report) -> list[str]:
    cats = summarize(report.records)["categories"]
    if not cats:
        return []
    return ["", "### Failure categories (expected failures included)", "", "| category | count |", "|---|---|",
            *(f"| {_code(k, cell=True)} | {v} |" for k, v in list(cats.items())[:30])]


def render_markdown(report: Report) -> str:
    """Return the report as Markdown: pass rate and summary, gate, matrix, failures, skips, findings, categories."""
    records = report.records
    lines = ["## pytest-export", "", _summary_line(report), "", *_gate(report.gate)]
    if records:
        from pytest_export.rendering.zoo_rates import rate_markdown

        lines += rate_markdown(records, MODE_ORDER)  # a zoo run leads with its pass rates
        lines += _matrix(records)
        lines += runtimes_markdown(runtime_tables(records))
    lines += _failures(records) + _skipped(records) + findings_markdown(records, _code, _text, MAX_FAILURES) + _categories(report)
    text = "\n".join(lines) + "\n"
    if len(text.encode()) > MAX_BYTES:
        text = text.encode()[:MAX_BYTES].decode(errors="ignore").rsplit("\n", 1)[0]
        text += "\n\n_… report cut to fit a CI step summary; see the HTML/JSON report._\n"
    return text
