"""The ledger (issue 55, items 2 and 3): built from plugin reports, dates kept, pages and drift rendered from it.

The committed pages must be what the committed ledger renders, byte for byte; a build never overwrites
a report it reads; a user's own suite's two reports give a drift page with each group's rows and repro.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from exportcore.outcome import ProgramError
from pytest_export.results.report import atomic_write, build_report, report_document
from tests.report_factory import make_record

pytestmark = pytest.mark.machinery

ROOT = Path(__file__).resolve().parents[1]
ZOO = ROOT / "docs" / "zoo"
LEDGER = ZOO / "ledger"


def _cli(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pytest_export", "ledger", *map(str, args)], capture_output=True,
                          text=True, cwd=ROOT)


def _rows(path: Path) -> dict[tuple[str, str], dict]:
    lines = path.read_text(encoding="utf-8").splitlines()[1:]
    return {(r["case"], r["mode"]): r for r in map(json.loads, lines)}


def test_the_committed_pages_are_the_committed_ledger_rendered(tmp_path: Path) -> None:
    done = _cli("build", "--out", LEDGER, "--pages", tmp_path)
    assert done.returncode == 0, done.stderr
    rendered = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*.md"))
    assert {str(p) for p in rendered} >= {"zoo.md", "zoo/timm.md", "zoo/drift-2.6.0-2.15.0.md"}
    differ = [str(p) for p in rendered if (tmp_path / p).read_bytes() != (ROOT / "docs" / p).read_bytes()]
    assert differ == [], "committed pages differ from the ledger's: rebuild with the command in docs/ci.md"
    assert _cli("build", "--out", LEDGER, "--pages", ROOT / "docs", "--check").returncode == 0


def test_check_finds_a_stale_page_and_writes_nothing(tmp_path: Path) -> None:
    assert _cli("build", "--out", LEDGER, "--pages", tmp_path).returncode == 0
    page = tmp_path / "zoo" / "timm.md"
    page.write_text(page.read_text(encoding="utf-8").replace("✅", "❌", 1), encoding="utf-8")
    stale = page.read_text(encoding="utf-8")
    done = _cli("build", "--out", LEDGER, "--pages", tmp_path, "--check")
    assert done.returncode == 1 and str(page) in done.stderr
    assert page.read_text(encoding="utf-8") == stale


def test_a_rerun_replaces_a_result_and_the_dates_say_when_it_changed(tmp_path: Path) -> None:
    # shard-1.json (2026-11-25) passed timm/test_vit non_strict; rerun-2026-11-29.json failed it at guards
    out = tmp_path / "ledger"
    assert _cli("build", ZOO / "shard-1.json", "--torch", "2.15.0", "--out", out).returncode == 0
    first = _rows(out / "torch-2.15.0.jsonl")[("zoo/timm/test_vit", "non_strict")]
    assert (first["verdict"], first["first_seen"], first["last_changed"]) == ("passed", "2026-11-25", "2026-11-25")
    assert first["repro"] == "pytest --export-model=timm:test_vit --export-modes=non_strict"
    # the previous ledger is the file the build replaces: read whole first, its dates kept
    done = _cli("build", ZOO / "rerun-2026-11-29.json", "--torch", "2.15.0", "--out", out)
    assert done.returncode == 0, done.stderr
    rows = _rows(out / "torch-2.15.0.jsonl")
    vit = rows[("zoo/timm/test_vit", "non_strict")]
    assert (vit["verdict"], vit["stage"], vit["first_seen"], vit["last_changed"]) == (
        "failed", "guards", "2026-11-25", "2026-11-29")
    strict = rows[("zoo/timm/test_vit", "strict")]  # failed at constraints in both runs: not changed
    assert (strict["first_seen"], strict["last_changed"]) == ("2026-11-25", "2026-11-25")
    assert ("zoo/timm/test_convnext3", "strict") not in rows  # the ledger is the reports' results


def test_bad_input_is_refused_by_name_and_nothing_is_overwritten(tmp_path: Path) -> None:
    out = tmp_path / "ledger"
    wrong = _cli("build", ZOO / "torchvision-2.6-1.json", "--torch", "2.15.0", "--out", out)
    assert wrong.returncode == 2 and "torchvision-2.6-1.json ran on torch 2.6.0+cu124, not 2.15.0" in wrong.stderr
    assert not out.exists()
    report = tmp_path / "torch-2.15.0.jsonl"  # a report that is named as the ledger file would be
    report.write_bytes((ZOO / "rerun-2026-11-29.json").read_bytes())
    clash = _cli("build", report, "--torch", "2.15.0", "--out", tmp_path)
    assert clash.returncode == 2 and "would destroy an input" in clash.stderr
    assert report.read_bytes() == (ZOO / "rerun-2026-11-29.json").read_bytes()
    bad = tmp_path / "bad" / "torch-2.15.0.jsonl"
    bad.parent.mkdir()
    bad.write_text('{"ledger": 1, "torch": "2.15.0"}\n{"case": "zoo/timm/x", "mode": "strict", "verdict": ""}\n')
    done = _cli("build", "--out", bad.parent, "--pages", tmp_path / "docs")
    assert done.returncode == 2 and f"{bad}:2: field 'verdict' must be a non-empty string" in done.stderr


def _report(path: Path, started: str, results: dict[str, tuple[str, float, float]]) -> Path:
    """A user's suite report: test -> (verdict, measured error, export seconds)."""
    records = []
    for test, (verdict, error, seconds) in results.items():
        record = make_record(f"tests/test_m.py::{test}", "strict", verdict, category=f"cat-{test}")
        record.outcome.numerics = [ProgramError("exported", worst_fraction=error)]
        record.outcome.timings["capture"] = seconds
        records.append(record)
    report = build_report(records, environment={"torch": "2.14.1", "started": started})
    atomic_write(path, json.dumps(report_document(report)))
    return path


def test_diff_of_a_users_two_reports_groups_the_moves_with_their_repro(tmp_path: Path) -> None:
    old = _report(tmp_path / "old.json", "2026-11-01T10:00:00+0000", {
        "test_a": ("passed", 0.01, 1.0), "test_b": ("failed", 0.0, 1.0), "test_c": ("passed", 0.01, 1.0),
        "test_gone": ("passed", 0.0, 1.0)})
    new = _report(tmp_path / "new.json", "2026-11-02T10:00:00+0000", {
        "test_a": ("failed", 0.01, 1.0), "test_b": ("passed", 0.0, 1.0), "test_c": ("passed", 0.25, 3.0),
        "test_new": ("passed", 0.0, 1.0)})
    page = tmp_path / "drift.md"
    done = _cli("diff", old, new, "-o", page)
    assert done.returncode == 1, done.stderr  # test_a started failing, test_gone is missing
    text = page.read_text(encoding="utf-8")
    sections = {s.split("\n", 1)[0]: s for s in text.split("\n## ")[1:]}
    assert "`tests/test_m.py::test_a` | strict | ✅ | ❌" in sections["Started failing (1)"]
    assert "`pytest 'tests/test_m.py::test_a[strict]'`" in sections["Started failing (1)"]
    assert "`tests/test_m.py::test_b`" in sections["Started passing (1)"]
    assert "`tests/test_m.py::test_c` | strict | 0.01 | 0.25 | 25.00" in sections["Measured error moved ≥10× (1)"]
    assert "`tests/test_m.py::test_c` | strict | 1 | 3 | 3.00" in sections["Export time ≥2× slower (1)"]
    assert "`tests/test_m.py::test_new`" in sections["New models (1)"]
    assert "`tests/test_m.py::test_gone`" in sections["Missing models (1)"]
    assert "`tests/test_m.py::test_a`" in sections["New failure category `cat-test_a` (1)"]
    assert "Measured error moved ≥1.5×" not in sections  # test_a/test_b kept their error: no move listed
    same = _cli("diff", old, new, "-o", old)
    assert same.returncode == 2 and "would destroy an input" in same.stderr


def test_a_case_a_stopped_run_was_in_keeps_its_last_records(tmp_path: Path) -> None:
    # A shard stopped at a deadline records the case it was in as crashed "killed by SIGTERM": the run's end.
    out = tmp_path / "ledger"
    first = _report(tmp_path / "first.json", "2026-11-01T10:00:00+0000", {"test_a": ("passed", 0.0, 1.0)})
    assert _cli("build", first, "--torch", "2.14.1", "--out", out).returncode == 0
    stopped = make_record("tests/test_m.py::test_a", "strict", "crashed", message="killed by SIGTERM",
                          category="crash")
    report = build_report([stopped, make_record("tests/test_m.py::test_b", "strict", "passed")],
                          environment={"torch": "2.14.1", "started": "2026-11-02T10:00:00+0000"}, complete=False,
                          stop_reason="SIGTERM while running tests/test_m.py::test_a[strict]")
    atomic_write(tmp_path / "second.json", json.dumps(report_document(report)))
    assert _cli("build", tmp_path / "second.json", "--torch", "2.14.1", "--out", out).returncode == 0
    rows = _rows(out / "torch-2.14.1.jsonl")
    assert rows[("tests/test_m.py::test_a", "strict")]["verdict"] == "passed"  # not the run's crash
    assert rows[("tests/test_m.py::test_b", "strict")]["first_seen"] == "2026-11-02"
    header = json.loads((out / "torch-2.14.1.jsonl").read_text(encoding="utf-8").splitlines()[0])
    assert header["unfinished"] == ["tests/test_m.py::test_a"]
    assert header["reports"][0]["incomplete"].startswith("SIGTERM")


def test_a_failing_row_says_when_no_size_option_applies_and_is_silent_only_where_a_rescue_was_not_recorded() -> None:
    from pytest_export.ledger.rows import NOT_A_SIZE_FAILURE, row_of

    decompose = make_record("zoo/hf/gpt2", "strict", "failed", stage="decompose", category="decomposition")
    assert row_of(decompose, "2026-11-29").rescue == NOT_A_SIZE_FAILURE
    # a size failure whose run recorded no rescue (a report from before the rescue): nothing invented
    constraints = make_record("zoo/timm/test_resnet", "strict", "failed", stage="constraints",
                              category="torch.dynamic-shape")
    assert row_of(constraints, "2026-11-29").rescue == ""
    assert row_of(make_record("zoo/timm/test_vit3", "strict", "passed"), "2026-11-29").rescue == ""
