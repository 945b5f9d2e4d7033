"""Generate docs/zoo.md, the published exportability table, from the committed shard reports.

    python tools/zoo_table.py docs/zoo/shard-*.json docs/zoo/extra-*.json docs/zoo/rerun-*.json > docs/zoo.md

``--slim-to DIR`` first writes each report to DIR without the exported graphs' code (40 KB a result; the
op counts stay), which is how the committed shard reports were made from the runs' own.

A later run's record of a (model, mode) replaces an earlier one (reports ordered by their start): a rerun
after a fix is committed as its own report (docs/zoo/rerun-DATE.json) and named in the header, with the
zoo library versions each report recorded. docs/zoo/notes.txt holds header lines a report cannot say (why
a rerun was made), one bullet per line.

The shard reports come from the recipe in docs/zoo/zoo.ini (one pytest run per shard). A shard stopped
at a deadline (SIGTERM: its report is written from the journal, marked incomplete) records the case it
was in as crashed "killed by SIGTERM": that is the run's end, not the model's, so it is listed as not
finished and left out of the rates.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from pytest_export.results.records import Record, failure_of  # noqa: E402
from pytest_export.results.report import load_report  # noqa: E402
from pytest_export.rendering.dims import case_ledger, declared_unrecorded  # noqa: E402
from pytest_export.rendering.rescue import rescue_of, rescue_phrase  # noqa: E402
from pytest_export.rendering.zoo_rates import family_of, rate_markdown, rates  # noqa: E402

MODES = ("strict", "non_strict", "training")
MARK = {"passed": "✅", "failed": "❌", "error": "⚠️ error", "timeout": "⏱ timeout", "crashed": "💥 crashed",
        "skipped": "⏭ skipped", "xfailed": "❌ (known)", "xpassed": "✅ (was known failing)"}


def _stopped(record: Record, stop_reason: str) -> bool:
    """Return whether ``record`` is the case a stopped shard was in (not the model's crash)."""
    failure = failure_of(record)
    if record.verdict != "crashed" or failure is None:
        return False
    return f"running {record.test}" in stop_reason or "SIGTERM" in f"{failure.message} {failure.detail}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("reports", nargs="+", type=Path, help="the shard JSON reports")
    parser.add_argument("--slim-to", type=Path, metavar="DIR", help="write the reports there without graph code")
    args = parser.parse_args(argv)
    if args.slim_to is not None:
        args.reports = [_slim(path, args.slim_to) for path in args.reports]
    records: dict[tuple[str, str], Record] = {}
    source: dict[tuple[str, str], str] = {}  # (case, mode) -> the report its row comes from
    envs, incomplete, stops = [], [], set()
    loaded = [(path, load_report(path)) for path in sorted(args.reports)]
    started = {path.name: str((report.get("environment") or {}).get("started", "")) for path, report in loaded}
    for path, report in loaded:
        for record in report["records"]:
            key = (record.case, record.mode)
            if _stopped(record, str(report.get("stop_reason") or "")):
                stops.add(record.case)
            elif key not in records or started[path.name] > started[source[key]]:
                # a later run of the same (model, mode), a rerun after a fix, is the row (in the first's place)
                records[key] = record
                source[key] = path.name
    for path, report in loaded:
        env = dict(report.get("environment") or {})
        if not str(env.get("torch", "")).startswith(tuple("0123456789")):  # a report recovered from its journal
            env["torch"] = next((r.outcome.torch_version for r in report["records"]
                                 if r.outcome is not None and r.outcome.torch_version), "?")
        env["report"] = path.name
        envs.append(env)
        if not report.get("complete", True):
            incomplete.append(path.name)
    stopped = sorted(stops)
    kept = [r for r in records.values() if r.case not in stops and family_of(r.case)]
    # The oldest torch's run of one family, compared by `python -m pytest_export diff`, sits next to the reports.
    older = sorted(args.reports[0].parent.glob("*-diff.md"))
    notes_file = args.reports[0].parent / "notes.txt"
    notes = notes_file.read_text(encoding="utf-8").splitlines() if notes_file.exists() else []
    header = _reruns(loaded, source, envs) + _libraries(envs) + [n for n in notes if n.strip()]
    print(_page(kept, envs, stopped, incomplete, [p.name for p, _ in loaded if p.name.startswith(("shard-", "extra-"))],
                older, header))
    return 0


def _reruns(loaded: list, source: dict[tuple[str, str], str], envs: list[dict]) -> list[str]:
    """A header line per report whose records replaced an earlier run's: which models, when, on which torch."""
    lines = []
    for (path, report), env in zip(loaded, envs):
        cases = sorted({r.case for r in report["records"] if source.get((r.case, r.mode)) == path.name})
        if not path.name.startswith("rerun-") or not cases:
            continue
        modes = len({(r.case, r.mode) for r in report["records"]})
        lines.append(f"- rerun {str(env.get('started', '?'))[:10]} (`docs/zoo/{path.name}`, same settings, torch "
                     f"{env.get('torch', '?')}): " + ", ".join(f"`{c[4:]}`" for c in cases)
                     + f" ({modes} results); their rows are from that run")
    return lines


def _libraries(envs: list[dict]) -> list[str]:
    """The zoo library versions each report recorded; the reports made before they were recorded, named."""
    known = [(e["report"], e["zoo_packages"]) for e in envs if e.get("zoo_packages")]
    unknown = [e["report"] for e in envs if not e.get("zoo_packages")]
    if not known and not unknown:
        return []
    said = "; ".join(f"`{name}`: " + ", ".join(f"{k} {v}" for k, v in sorted(versions.items()))
                     for name, versions in known)
    line = f"- zoo libraries that built the models: {said or 'not recorded'}"
    if unknown and known:
        line += f"; not recorded by {', '.join(f'`{n}`' for n in unknown)} (run before reports recorded them)"
    return [line]


def _slim(path: Path, folder: Path) -> Path:
    data = json.loads(path.read_text())
    for record in data.get("records", []):
        graph = (record.get("outcome") or {}).get("graph")
        if isinstance(graph, dict):
            graph["code"] = ""
    folder.mkdir(parents=True, exist_ok=True)
    out = folder / path.name
    out.write_text(json.dumps(data, indent=None, sort_keys=True) + "\n")
    return out


def _page(records: list[Record], envs: list[dict], stopped: list[str], incomplete: list[str],
          names: list[str], older: list[Path] = (), header: list[str] = ()) -> str:
    env = envs[0] if envs else {}
    started = sorted(e.get("started", "") for e in envs if e.get("started"))
    cases = sorted({r.case for r in records})
    checked = sorted({r.case for r in records if r.verdict != "skipped"})
    table = rates(records, MODES)
    lines = [
        "# The zoo table: which models export, in which mode, on this torch",
        "",
        "Generated by `python tools/zoo_table.py docs/zoo/shard-*.json docs/zoo/extra-*.json docs/zoo/rerun-*.json >",
        "docs/zoo.md` from the shard reports in `docs/zoo/`, produced by the recipes in `docs/zoo/zoo.ini` "
        "(3 shards) and",
        "`docs/zoo/zoo-extra.ini` (2 shards: models added after the first list reached 119 within the budget); no",
        "test code: the models are `--export-model` specs.",
        "",
        f"- **torch {env.get('torch', '?')}**, Python {env.get('python', '?')}, pytest-export {env.get('pytest_export', '?')}",
        f"- run {started[0][:10] if started else '?'} on {env.get('platform', '?')}: 2 CPU cores (AMD EPYC), 24 GiB,"
        f" shared with other jobs; {len(names)} shard reports, the shards of a recipe run at once, each serial with"
        " one torch thread",
        "- settings: `--export-examples=1` (the bounds of every dynamic dim plus one drawn shape per case and mode),"
        " `--export-timeout=300`, `--export-model-max-params=30M` (larger models are skipped, counted apart)",
        *header,
        *_recorded(records),
        f"- **{len(checked)} distinct models checked** (of {len(cases)} reached; the rest skipped, reasons below)",
    ]
    for diff in older:  # e.g. docs/zoo/torchvision-2.6-diff.md: its first line is its title
        title = diff.read_text(encoding="utf-8").splitlines()[0].lstrip("# ").strip()
        lines.append(f"- {title}: [{diff.name}](zoo/{diff.name})")
    if incomplete:
        lines.append(f"- the shard runs were stopped at a deadline ({', '.join(incomplete)} incomplete): "
                     f"{len(stopped)} model(s) in progress then are not counted; the models after them in the "
                     "list were not reached")
    lines += ["", "Dynamic dims are inferred from each model's metadata (see each row): the batch is dynamic 2..8"
              " for every model; timm image H/W where `fixed_input_size` is false (from half the default size, never"
              " under two strides of the last feature map) or `dynamic_img_size` is set (multiples of the patch"
              " size, from two patches);"
              " HF token length 2..64 within `max_position_embeddings`. A failure is a true verdict under that spec.",
              "The dynamism column is the ledger of what each mode's exported program took of every declared dim"
              " (`batch 2..8 ✓` as declared, `seq 2..64 → 2..32` narrowed, `H 112..224 → 224` specialized; a mode"
              " that differs is named); a failing cell adds the option rescue where its report holds one"
              " (`rescued by backed_size_oblivious (verified)`, `no option rescues`).",
              ""]
    if table is not None:
        lines += ["## Pass rates", *rate_markdown(records, MODES)[2:]]
    lines += ["## Models", ""]
    by_family: dict[str, list[str]] = {}
    for case in cases:
        by_family.setdefault(family_of(case) or "", []).append(case)
    cells = {(r.case, r.mode): r for r in records}
    for family, members in sorted(by_family.items()):
        lines += [f"<details><summary><b>{family}</b>: {len(members)} models</summary>", "",
                  "| model | " + " | ".join(MODES) + " | dynamism (what the program took) | inputs and dynamic dims"
                  " (inferred) |", "|---|" + "---|" * (len(MODES) + 2)]
        for case in members:
            row = [MARK.get(cells[(case, m)].verdict, cells[(case, m)].verdict) + _why(cells[(case, m)])
                   if (case, m) in cells else "–" for m in MODES]
            ledger = case_ledger([cells[(case, m)] for m in MODES if (case, m) in cells], missing="not recorded")
            lines.append(f"| `{case[4:]}` | " + " | ".join(row) + f" | {_cell(ledger)} | {_note(cells, case)} |")
        lines += ["", "</details>", ""]
    skips: dict[str, int] = {}
    for r in records:
        if r.verdict == "skipped":
            failure = failure_of(r)
            reason = (failure.message if failure else "skipped").split(": ", 1)[-1]
            skips[reason] = skips.get(reason, 0) + 1
    if skips:
        lines += ["## Skipped (counted apart)", "", "| why | results |", "|---|---:|"]
        lines += [f"| {reason} | {n} |" for reason, n in sorted(skips.items(), key=lambda kv: -kv[1])]
    if stopped:
        lines += ["", "## Not finished (in progress when the run was stopped)", "", ", ".join(f"`{c[4:]}`" for c in stopped)]
    return "\n".join(lines) + "\n" + RECIPE


RECIPE = """
## Reproduce it, or run your own zoo in CI

One job per shard (a case's modes stay on one shard; `--export-durations` balances the shards by an earlier
report's timings, else they get equal numbers of cases):

```bash
pip install -e ".[zoo]"           # from the checkout's root, as every command here
mkdir -p zoo-run && cd zoo-run    # an empty directory: the specs need no test files
HF_HUB_OFFLINE=1 python -m pytest -c ../docs/zoo/zoo.ini --rootdir=. -p no:cacheprovider \\
    --export-shard=1/3 --export-report=../shard-1.json        # and 2/3, 3/3
HF_HUB_OFFLINE=1 python -m pytest -c ../docs/zoo/zoo-extra.ini --rootdir=. -p no:cacheprovider \\
    --export-shard=1/2 --export-report=../extra-1.json        # and 2/2
cd .. && python tools/zoo_table.py --slim-to docs/zoo shard-*.json extra-*.json > docs/zoo.md
```

GitHub Actions: a matrix of torch version x shard, `-n auto` inside each job, one JSON report per job,
and a fan-in job that merges them and gates:

```yaml
jobs:
  zoo:
    strategy:
      matrix: {torch: ["2.6.*", "2.15.*"], shard: [1, 2, 3]}
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
      - run: pip install "torch==${{ matrix.torch }}" -e ".[zoo]" pytest-xdist
      - run: >
          mkdir zoo-run && cd zoo-run && python -m pytest -n auto --rootdir=.
          --export-model='timm:test_*' --export-model='torchvision:classification/*'
          --export-shard=${{ matrix.shard }}/3 --export-durations=../zoo-baseline.json
          --export-report=../zoo-${{ matrix.torch }}-${{ matrix.shard }}.json
        env: {HF_HUB_OFFLINE: "1"}
      - uses: actions/upload-artifact@v4
        with: {name: "zoo-${{ matrix.torch }}-${{ matrix.shard }}", path: "zoo-*.json"}
  gate:
    needs: zoo
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
      - uses: actions/download-artifact@v4
        with: {merge-multiple: true}
      - run: pip install -e .
      - run: python -m pytest_export merge zoo-2.15.*-*.json -o zoo.json --baseline zoo-baseline.json
```
"""


def _why(record: Record) -> str:
    failure = failure_of(record)
    if record.verdict in ("passed", "skipped") or failure is None:
        return ""
    rescue = rescue_of(record.outcome)
    return f" `{failure.stage}` `{failure.category}`" + (f"; {rescue_phrase(rescue, tried=False)}" if rescue else "")


def _recorded(records: list[Record]) -> list[str]:
    """Header lines saying how much of the dynamism ledger and the option rescue the reports hold."""
    declared = [r for r in records if r.verdict != "skipped" and r.outcome is not None and r.outcome.declared]
    unrecorded = sum(declared_unrecorded(r) for r in declared)
    failing = [r for r in records if r.verdict not in ("passed", "skipped", "xpassed") and failure_of(r)]
    rescued = [r for r in failing if rescue_of(r.outcome) is not None]
    lines = []
    if unrecorded:
        lines.append(f"- dynamism column: {unrecorded} of {len(declared)} results with declared dynamic dims hold no"
                     " ledger (\"not recorded\": a report made before the ledger was recorded holds none)")
    if failing:
        lines.append(f"- option rescue (each failing result re-checked under `backed_size_oblivious` and "
                     f"`prefer_deferred_runtime_asserts_over_guards`): recorded for {len(rescued)} of {len(failing)}"
                     " failing results" + ("; the others' reports predate it or it was not tried (not a dynamic-shape"
                                           " failure)" if len(rescued) < len(failing) else ""))
    return lines


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def _note(cells: dict[tuple[str, str], Record], case: str) -> str:
    for mode in MODES:
        record = cells.get((case, mode))
        notes = record.outcome.notes if record is not None and record.outcome is not None else []
        for note in notes:
            if note.startswith("zoo "):
                return note.split(": ", 1)[-1].replace("|", "\\|")
    return ""


if __name__ == "__main__":
    raise SystemExit(main())
