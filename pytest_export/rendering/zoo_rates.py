"""Zoo-scale summary: pass rates per zoo family and column (mode or target), then failure causes ranked.

Read by the terminal summary, the Markdown and the HTML report ahead of their matrix, for records of zoo
cases (``zoo/<family>/<model>``). Skips are counted apart: a rate is passed / checked, where checked is
every result that is not a skip. Pure: no pytest, no torch.
"""

from __future__ import annotations

import html
from collections import Counter
from dataclasses import dataclass, field
from typing import Iterable, Sequence

from pytest_export.results.records import Record, failure_of, ordered_modes

__all__ = ["Cause", "Rates", "causes", "family_of", "rate_html", "rate_lines", "rate_markdown", "rates"]

PREFIX = "zoo/"
ALL = "all families"
_EXAMPLES = 3


def family_of(case: str) -> str | None:
    """Return the zoo family of a case id (``zoo/timm/test_vit`` -> ``timm``), or None for a test's case."""
    if not case.startswith(PREFIX) or case.count("/") < 2:
        return None
    return case.split("/", 2)[1]


@dataclass
class Cell:
    passed: int = 0
    checked: int = 0  # every verdict but skipped
    skipped: int = 0

    def add(self, verdict: str) -> None:
        if verdict == "skipped":
            self.skipped += 1
            return
        self.checked += 1
        self.passed += verdict == "passed"

    def text(self) -> str:
        rate = f"{self.passed}/{self.checked} {100 * self.passed / self.checked:.0f}%" if self.checked else "–"
        return rate + (f" (+{self.skipped} skipped)" if self.skipped else "")


@dataclass
class Rates:
    columns: list[str]
    #: family -> (models, column -> Cell); ALL last
    rows: dict[str, tuple[int, dict[str, Cell]]] = field(default_factory=dict)
    #: family -> the dynamism ledger's kinds over its results' declared dims ("results not recorded": a
    #: result that declared dims but holds no ledger, counted once); empty where no zoo result declared a dim
    dims: dict[str, Counter[str]] = field(default_factory=dict)

    def dims_text(self, family: str) -> str:
        """``40 dynamic · 3 specialized · 2 narrowed`` for the family's results (most common first)."""
        counts = self.dims.get(family) or Counter()
        return " · ".join(f"{n} {kind}" for kind, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))


@dataclass
class Cause:
    category: str
    count: int
    exportdb_case: str
    examples: list[str]


def rates(records: Iterable[Record], order: Sequence[str] = ()) -> Rates | None:
    """Return the pass rates of the zoo records among ``records`` (None when there are none)."""
    zoo = [r for r in records if family_of(r.case)]
    if not zoo:
        return None
    columns = ordered_modes((r.mode for r in zoo), order)
    out = Rates(columns)
    models: dict[str, set[str]] = {}
    for r in zoo:
        for family in (family_of(r.case) or "", ALL):
            models.setdefault(family, set()).add(r.case)
            cells = out.rows.setdefault(family, (0, {c: Cell() for c in columns}))[1]
            cells[r.mode].add(r.verdict)
            _count_dims(out.dims.setdefault(family, Counter()), r)
    ordered = sorted(f for f in out.rows if f != ALL) + [ALL]
    out.rows = {f: (len(models[f]), out.rows[f][1]) for f in ordered}
    if not any(out.dims.values()):
        out.dims = {}
    return out


def _count_dims(counts: Counter[str], record: Record) -> None:
    if record.verdict == "skipped" or record.outcome is None:
        return  # a skip checked nothing: its dims are no finding
    for dim in record.outcome.dims:
        counts[dim.kind] += 1
    if record.outcome.declared and not record.outcome.dims:
        counts["results not recorded"] += 1


def causes(records: Iterable[Record]) -> list[Cause]:
    """Return the failure causes of zoo records, most common first: category, count, ExportDB case, example models."""
    counts: Counter[str] = Counter()
    cases: dict[str, Counter[str]] = {}
    examples: dict[str, list[str]] = {}
    for r in records:
        failure = failure_of(r)
        if not family_of(r.case) or r.verdict in ("passed", "skipped", "xpassed") or failure is None:
            continue
        counts[failure.category] += 1
        if failure.exportdb_case:
            cases.setdefault(failure.category, Counter())[failure.exportdb_case] += 1
        seen = examples.setdefault(failure.category, [])
        model = r.case[len(PREFIX):]
        if model not in seen:
            seen.append(model)
    ranked = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    return [Cause(cat, n, (cases.get(cat) or Counter()).most_common(1)[0][0] if cases.get(cat) else "",
                  examples[cat][:_EXAMPLES]) for cat, n in ranked]


def rate_lines(records: Sequence[Record], order: Sequence[str] = ()) -> list[str]:
    """Return the terminal lines (empty without zoo records)."""
    table = rates(records, order)
    if table is None:
        return []
    head = ["family", "models", *table.columns] + (["dynamic dims"] if table.dims else [])
    body = [[f, str(n), *(cells[c].text() for c in table.columns)] + ([table.dims_text(f)] if table.dims else [])
            for f, (n, cells) in table.rows.items()]
    widths = [max(len(row[i]) for row in [head, *body]) for i in range(len(head))]
    lines = ["zoo pass rates (passed/checked; skips counted apart):"]
    lines += ["  " + "  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip() for row in [head, *body]]
    ranked = causes(records)
    if ranked:
        lines.append("zoo failure causes:")
        lines += [f"  {c.category} {c.count}" + (f" (ExportDB {c.exportdb_case})" if c.exportdb_case else "")
                  + f": {', '.join(c.examples)}" for c in ranked[:10]]
    return lines


def rate_markdown(records: Sequence[Record], order: Sequence[str] = ()) -> list[str]:
    """Return the Markdown section (empty without zoo records)."""
    table = rates(records, order)
    if table is None:
        return []
    dims = bool(table.dims)
    lines = ["", "### Zoo pass rates", "", "passed/checked per family and mode; skips counted apart"
             + ("; dynamic dims: what each declared dim became, over the checked results" if dims else "") + ".", "",
             "| family | models | " + " | ".join(table.columns) + (" | dynamic dims" if dims else "") + " |",
             "|---|---:|" + "---|" * (len(table.columns) + dims)]
    lines += [f"| {f} | {n} | " + " | ".join(cells[c].text() for c in table.columns)
              + (f" | {table.dims_text(f)}" if dims else "") + " |" for f, (n, cells) in table.rows.items()]
    ranked = causes(records)
    if ranked:
        lines += ["", "### Zoo failure causes", "", "| category | count | ExportDB case | example models |",
                  "|---|---:|---|---|"]
        lines += [f"| `{c.category}` | {c.count} | {f'`{c.exportdb_case}`' if c.exportdb_case else ''} | "
                  + ", ".join(f"`{e}`" for e in c.examples) + " |" for c in ranked]
    return [*lines, ""]  # a table right after would otherwise continue this one


def rate_html(records: Sequence[Record], order: Sequence[str] = ()) -> str:
    """Return the HTML section (empty without zoo records), escaped."""
    table = rates(records, order)
    if table is None:
        return ""
    e = html.escape
    dims = ["dynamic dims"] if table.dims else []
    head = "".join(f"<th>{e(c)}</th>" for c in ["family", "models", *table.columns, *dims])
    rows = "".join("<tr>" + f"<th>{e(f)}</th><td>{n}</td>" + "".join(f"<td>{e(cells[c].text())}</td>"
                                                                    for c in table.columns)
                   + (f"<td>{e(table.dims_text(f))}</td>" if dims else "") + "</tr>"
                   for f, (n, cells) in table.rows.items())
    out = (f'<h2 id="zoo">Zoo pass rates</h2><p class="muted">passed/checked per family and mode; skips counted '
           f'apart.</p><table class="index"><tr>{head}</tr>{rows}</table>')
    ranked = causes(records)
    if ranked:
        out += ('<h2 id="zoo-causes">Zoo failure causes</h2><table class="index"><tr><th>category</th><th>count</th>'
                "<th>ExportDB case</th><th>example models</th></tr>")
        out += "".join(f"<tr><td><code>{e(c.category)}</code></td><td>{c.count}</td><td>{e(c.exportdb_case)}</td>"
                       f"<td>{e(', '.join(c.examples))}</td></tr>" for c in ranked)
        out += "</table>"
    return out + "\n"
