"""The published pages, rendered from the ledger alone: ``zoo.md`` and one ``zoo/<family>.md`` per family.

zoo.md: the runs each torch version's ledger was built from, pass rates per family x torch x mode,
the failure causes ranked with their ExportDB case, then the newest torch's rows per family. A
family page: its rates and causes, then one row per (model, torch version) with the dynamism
ledger, the measured error, the export time, the dates and the repro command. The same ledger gives
the same bytes: rebuilding the pages is how a test proves the committed pages are the ledger's.
"""

from __future__ import annotations

from typing import Sequence

from pytest_export.ledger.drift import drift
from pytest_export.ledger.drift_page import render_drift
from pytest_export.ledger.page_parts import (
    cause_table, cell, dims_of, family, inputs_of, model_name, modes_of, rate_table, skip_table,
)
from pytest_export.ledger.rows import LedgerRow
from pytest_export.ledger.store import Ledger, VersionLedger

__all__ = ["BUILD_COMMAND", "drift_name", "render_pages"]

#: how the committed pages are made (docs/ci.md and the workflow run the same)
BUILD_COMMAND = "python -m pytest_export ledger build --out docs/zoo/ledger --pages docs"

_DIMS = ("Dynamic dims are inferred from each model's metadata (see each row): the batch is dynamic 2..8 for every"
         " model; timm image H/W where `fixed_input_size` is false (from half the default size, never under two"
         " strides of the last feature map) or `dynamic_img_size` is set (multiples of the patch size, from two"
         " patches); HF token length 2..64 within `max_position_embeddings`. A failure is a true verdict under"
         " that spec. The dynamism column is what the program took of each declared dim (`batch 2..8 ✓` as"
         " declared, `seq 2..64 → 2..32` narrowed, `H 112..224 → 224` specialized; `not recorded` for a run made"
         " before the engine recorded it); a failing cell adds the option rescue where its run tried one"
         " (`rescued by backed_size_oblivious (verified)`, `no option rescues`).")

_COLUMNS = ("dims: each declared dynamic dim, as the program took it (recorded since issue 52: empty for a run"
            " before it); error: the worst measured error of any program, as a fraction of the tolerance (1 fails;"
            " recorded since issue 54); export s: torch.export's seconds, the most of the modes; since: first seen /"
            " last changed.")


def render_pages(ledger: Ledger) -> dict[str, str]:
    """Return each page's path (relative to the docs folder) and text."""
    families = sorted({family(r) for v in ledger.values() for r in v.rows})
    pages = {"zoo.md": _index(ledger, families)}
    for name in families:
        pages[f"zoo/{name}.md"] = _family_page(ledger, name)
    newest, *older = ledger.values()
    for version in older:
        pages[f"zoo/{drift_name(version.torch, newest.torch)}"] = _drift_page(version, newest)
    return pages


def drift_name(old: str, new: str) -> str:
    """The file name of the drift page from torch ``old`` to ``new``."""
    return f"drift-{old}-{new}.md"


def _drift_page(old: VersionLedger, new: VersionLedger) -> str:
    """The newest torch against an older one, over the families both ledgers hold (a partial run says so)."""
    before, after = {family(r) for r in old.rows}, {family(r) for r in new.rows}
    shared = sorted(before & after)
    only = [] if before == after else [f"zoo/{f}/*" for f in shared]
    covers = (f"Rendered by `{BUILD_COMMAND}` from the ledgers of torch {old.torch} and {new.torch} in "
              "`docs/zoo/ledger/`, over the families both hold: " + ", ".join(f"{f}" for f in shared) + "."
              + ("" if before == after else " The families only one ledger holds are not compared: "
                 + ", ".join(sorted((before | after) - set(shared))) + "."))
    covers += " Both runs (settings, machine, reruns) are described in [the zoo table](../zoo.md#runs)."
    if old.header.get("notes"):  # the older run's own caveats read with its rows
        covers += f"\n\nAbout the torch {old.torch} run:\n\n" + "\n".join(f"- {n}" for n in old.header["notes"])
    return render_drift(drift(old, new, f"torch {old.torch}", f"torch {new.torch}", only), covers) + "\n"


def _runs(version: VersionLedger) -> list[str]:
    h = version.header
    reports = h.get("reports", [])
    started = sorted(str(r.get("started", "")) for r in reports if r.get("started"))
    lines = [f"### torch {version.torch}", "",
             f"- **torch {h.get('torch_build', version.torch)}**, Python {h.get('python', '?')}, pytest-export "
             f"{h.get('pytest_export', '?')}; run {started[0][:10] if started else '?'} on {h.get('platform', '?')}; "
             f"{len(reports)} reports: " + ", ".join(f"`{r['name']}`" for r in reports)]
    for r in reports:
        if r.get("replaced"):
            count = f"{r.get('results', '?')} result{'' if r.get('results') == 1 else 's'}"
            lines.append(f"- rerun {str(r.get('started', '?'))[:10]} (`{r['name']}`, torch {r.get('torch', '?')}): "
                         + ", ".join(f"`{model_name(c)}`" for c in r["replaced"])
                         + f" ({count}); their rows are from that run")
    known = [(r["name"], r["zoo_packages"]) for r in reports if r.get("zoo_packages")]
    unknown = [r["name"] for r in reports if not r.get("zoo_packages")]
    if known:
        line = "- zoo libraries that built the models: " + "; ".join(
            f"`{n}`: " + ", ".join(f"{k} {v}" for k, v in versions.items()) for n, versions in known)
        missing = ", ".join(f"`{n}`" for n in unknown)
        lines.append(line + (f"; not recorded by {missing} (run before reports recorded them)" if unknown else ""))
    lines += [f"- {n}" for n in h.get("notes", [])]
    cases = {r.case for r in version.rows}
    checked = {r.case for r in version.rows if r.verdict != "skipped"}
    lines.append(f"- **{len(checked)} distinct models checked** (of {len(cases)} reached; the rest skipped)")
    if h.get("unfinished"):
        lines.append("- not finished (the case a stopped run was in; its last records kept, not re-checked): "
                     + ", ".join(f"`{model_name(c)}`" for c in h["unfinished"]))
    return [*lines, ""]


def _index(ledger: Ledger, families: Sequence[str]) -> str:
    lines = ["# The zoo table: which models export, in which mode, on which torch", "",
             f"Rendered by `{BUILD_COMMAND}` from the ledger in `docs/zoo/ledger/` (one record per model, mode and",
             "torch version), itself built from the shard reports in `docs/zoo/` (see [CI](ci.md) for the recipe);",
             "no test code: the models are `--export-model` specs. Each family's page has every torch version's",
             "rows with their dynamic dims, measured error, export time, dates and repro command.", "",
             "## Runs", ""]
    for version in ledger.values():
        lines += _runs(version)
    newest, *older = ledger.values()
    if older:
        lines += ["What moved between torch versions:", ""]
        lines += [f"- from torch {v.torch} to {newest.torch}: [{drift_name(v.torch, newest.torch)}]"
                  f"(zoo/{drift_name(v.torch, newest.torch)})" for v in older] + [""]
    lines += [_DIMS, "", "## Pass rates", "", "passed/checked per family, torch version and mode; skips counted apart.",
              "", *rate_table(ledger, families, link=True), ""]
    causes = cause_table(ledger)
    if causes:
        lines += ["## Failure causes", "", "failed results per category and torch version, most common first.", "",
                  *causes, ""]
    if newest is not None:
        lines += ["## Models", "", f"On torch {newest.torch}; the other torch versions are on each family's page.", ""]
        lines += _newest_rows(newest)
    skips = skip_table(ledger)
    if skips:
        lines += ["## Skipped (counted apart)", "", *skips, ""]
    return "\n".join(lines)


def _newest_rows(version: VersionLedger) -> list[str]:
    modes = modes_of(version.rows)
    by_case: dict[str, list[LedgerRow]] = {}
    for r in version.rows:
        by_case.setdefault(r.case, []).append(r)
    lines: list[str] = []
    for name in sorted({family(r) for r in version.rows}):
        members = sorted(c for c, rows in by_case.items() if family(rows[0]) == name)
        lines += [f"<details><summary><b>{name}</b>: {len(members)} models</summary>", "",
                  "| model | " + " | ".join(modes) + " | dynamism (what the program took) | inputs and dynamic dims"
                  " (inferred) |", "|---|" + "---|" * (len(modes) + 2)]
        for case in members:
            cells = {r.mode: r for r in by_case[case]}
            ordered = _in_order(by_case[case], modes)
            lines.append(f"| `{model_name(case)}` | " + " | ".join(cell(cells.get(m)) for m in modes)
                         + f" | {dims_of(ordered)} | {inputs_of(ordered)} |")
        lines += ["", "</details>", ""]
    return lines


def _in_order(rows: Sequence[LedgerRow], modes: Sequence[str]) -> list[LedgerRow]:
    return sorted(rows, key=lambda r: modes.index(r.mode) if r.mode in modes else len(modes))


def _family_page(ledger: Ledger, name: str) -> str:
    mine: Ledger = {t: VersionLedger(t, v.header, [r for r in v.rows if family(r) == name]) for t, v in ledger.items()}
    mine = {t: v for t, v in mine.items() if v.rows}
    modes = modes_of(r for v in mine.values() for r in v.rows)
    lines = [f"# Zoo: {name}", "", f"Rendered by `{BUILD_COMMAND}` from the ledger in `docs/zoo/ledger/`; every",
             "family: [the zoo table](../zoo.md).", "", "## Pass rates", "", *rate_table(mine, [name]), ""]
    causes = cause_table(mine)
    if causes:
        lines += ["## Failure causes", "", *causes, ""]
    lines += ["## Models", "", _COLUMNS, "",
              "| model | torch | " + " | ".join(modes) + " | dims | error | export s | since | repro |",
              "|---|---|" + "---|" * len(modes) + "---|---:|---:|---|---|"]
    cases = sorted({r.case for v in mine.values() for r in v.rows})
    for case in cases:
        for torch, version in mine.items():
            rows = _in_order([r for r in version.rows if r.case == case], modes)
            if rows:
                lines.append(_model_row(case, torch, rows, modes))
    return "\n".join(lines) + "\n"


def _model_row(case: str, torch: str, rows: Sequence[LedgerRow], modes: Sequence[str]) -> str:
    cells = {r.mode: r for r in rows}
    dims = next((r.dims for r in rows if r.dims), [])
    errors = [r.error for r in rows if r.error is not None]
    times = [r.export_s for r in rows if r.export_s is not None]
    since = f"{min(r.first_seen for r in rows)} / {max(r.last_changed for r in rows)}"
    repro = rows[0].repro.rsplit(" --export-modes=", 1)[0] if rows[0].repro else ""
    return (f"| `{model_name(case)}` | {torch} | " + " | ".join(cell(cells.get(m)) for m in modes)
            + f" | {', '.join(dims).replace('|', chr(92) + '|')} | {f'{max(errors):.3g}' if errors else ''}"
            f" | {f'{max(times):.1f}' if times else ''} | {since} | `{repro}` |")
