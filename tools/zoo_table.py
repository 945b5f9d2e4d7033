"""Print docs/zoo.md for some shard reports: the ledger's renderer, without writing a ledger.

    python tools/zoo_table.py docs/zoo/shard-*.json docs/zoo/rerun-*.json > /tmp/zoo.md

Superseded by ``python -m pytest_export ledger build REPORTS --torch X --out docs/zoo/ledger --pages docs``
(docs/ci.md, "The zoo ledger"): the committed pages are rendered from the committed ledger, and a test
holds them equal. This script builds each torch version's ledger from the reports in memory and prints
the zoo.md that ledger renders (pytest_export.ledger.pages, the one renderer), with docs/zoo/notes.txt
next to the reports as its notes. A later run's result of a (model, mode) replaces an earlier one.

``--slim-to DIR`` first writes each report to DIR without the exported graphs' code (40 KB a result; the
op counts stay), which is how the committed shard reports were made from the runs' own.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from pytest_export.ledger.build import build_version, release_of, report_torch  # noqa: E402
from pytest_export.ledger.pages import render_pages  # noqa: E402
from pytest_export.ledger.store import version_key  # noqa: E402
from pytest_export.results.report import load_report  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("reports", nargs="+", type=Path, help="the shard JSON reports")
    parser.add_argument("--slim-to", type=Path, metavar="DIR", help="write the reports there without graph code")
    args = parser.parse_args(argv)
    if args.slim_to is not None:
        args.reports = [_slim(path, args.slim_to) for path in args.reports]
    by_torch: dict[str, list] = {}
    for path in sorted(args.reports):
        report = load_report(path)
        by_torch.setdefault(release_of(report_torch(report)), []).append((path.name, report))
    notes_file = args.reports[0].parent / "notes.txt"
    notes = notes_file.read_text(encoding="utf-8").splitlines() if notes_file.exists() else []
    notes = [n.removeprefix("- ") for n in notes if n.strip()]
    ledger = {torch: build_version(reports, torch, None, notes)
              for torch, reports in sorted(by_torch.items(), key=lambda kv: version_key(kv[0]), reverse=True)}
    print(render_pages(ledger)["zoo.md"], end="")
    return 0


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


if __name__ == "__main__":
    raise SystemExit(main())
