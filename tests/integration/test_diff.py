"""``python -m pytest_export diff OLD.json NEW.json``: two real sessions, one with changed models.

The second session stands in for a torch upgrade: the same test ids, where one model now
specializes its batch (a regression), one no longer branches on data (a fix), one declares
a narrower range and one starts specializing under Dim.AUTO (a new finding).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from pytest_export.__main__ import main
from pytest_export.results.diff import diff_reports
from pytest_export.results.report import load_report

# Process, file and report machinery: the same on any torch (.ci/run's oldest-torch step leaves it out).
pytestmark = pytest.mark.machinery

MODELS = '''
import pytest
import torch
from torch.export import Dim


class Flatten(torch.nn.Module):
    def forward(self, x):
        return x.reshape({flatten}, -1) * 2


class Branch(torch.nn.Module):
    def forward(self, x):
        {branch}


class Double(torch.nn.Module):
    def forward(self, x):
        return x * 2


@pytest.mark.exportable(dynamic_shapes={{"x": {{0: Dim("batch", max=64)}}}}, modes=["non_strict"], examples=1)
def test_flatten():
    return Flatten(), (torch.randn(4, 3, 2),)


@pytest.mark.exportable(modes=["non_strict"], examples=0)
def test_branch():
    return Branch(), (torch.randn(4, 3),)


@pytest.mark.exportable(dynamic_shapes={{"x": {{0: Dim("n", max={n_max})}}}}, modes=["non_strict"], examples=1)
def test_range():
    return Double(), (torch.randn(4, 3),)


# no accept check: the specialization stays a finding (reject reports it) instead of failing the case
@pytest.mark.exportable(dynamic_shapes={{"x": {{0: Dim.AUTO}}}}, modes=["non_strict"], checks=["numerics", "reject"], examples=1)
def test_auto():
    return Flatten(), (torch.randn(4, 3, 2),)


@pytest.mark.exportable(modes=["non_strict"], examples=0)
def test_same():
    return Double(), (torch.randn(2, 3),)
'''

BEFORE = {"flatten": "x.shape[0]", "branch": "return x + 1 if x.sum() > 0 else x - 1", "n_max": 64}
AFTER = {"flatten": "4", "branch": "return torch.where(x.sum() > 0, x + 1, x - 1)", "n_max": 32}


def _session(pytester: pytest.Pytester, name: str, values: dict) -> Path:
    pytester.makepyfile(test_models=MODELS.format(**values))
    report = pytester.path / f"{name}.json"
    pytester.runpytest("-p", "no:cacheprovider", f"--export-report={report}")
    assert report.exists(), f"the {name} session wrote no report"
    return report


_MADE: dict[str, str] = {}  # the two sessions run once per module; later tests get copies


@pytest.fixture
def reports(pytester: pytest.Pytester) -> tuple[Path, Path]:
    if not _MADE:
        for name, values in (("old", BEFORE), ("new", AFTER)):
            _MADE[name] = _session(pytester, name, values).read_text()
    paths = []
    for name in ("old", "new"):
        path = pytester.path / f"{name}.json"
        path.write_text(_MADE[name])
        paths.append(path)
    return paths[0], paths[1]


def _groups(old: Path, new: Path) -> dict[str, list[str]]:
    result = diff_reports(load_report(old), load_report(new))
    return {g: sorted(e.case.rsplit("::", 1)[1] for e in result.group(g)) for g in result.counts()}


def test_groups_name_each_change(reports: tuple[Path, Path]) -> None:
    groups = _groups(*reports)
    assert groups["regressions"] == ["test_flatten"]
    assert groups["fixes"] == ["test_branch"]
    assert groups["findings"] == ["test_auto"]
    assert groups["ranges"] == ["test_range"]
    assert groups["new"] == groups["gone"] == []


def test_entries_say_what_changed(reports: tuple[Path, Path]) -> None:
    result = diff_reports(load_report(reports[0]), load_report(reports[1]))
    by_case = {e.case.rsplit("::", 1)[1]: e for e in result.entries}
    flatten = by_case["test_flatten"]
    assert flatten.before == "passed" and flatten.after.startswith("failed: [constraints] torch.dynamic-shape")
    assert "verdict: passed -> failed" in flatten.changes
    assert any(c.startswith("finding added: specialized") for c in by_case["test_auto"].changes)
    assert any(c.startswith("range ") and c.endswith("[0, 64] -> [0, 32]") for c in by_case["test_range"].changes)
    assert result.old["torch"] == result.new["torch"] != "unknown"


def test_cli_exit_status_and_outputs(reports: tuple[Path, Path], tmp_path: Path,
                                     capsys: pytest.CaptureFixture[str]) -> None:
    old, new = reports
    html, md = tmp_path / "out" / "diff.html", tmp_path / "diff.md"
    assert main(["diff", str(old), str(new), "-o", str(html), "-o", str(md)]) == 1
    out = capsys.readouterr().out
    assert out.startswith("export diff: torch ") and f"({old}) -> torch " in out.splitlines()[0]
    assert "Regressions (exportable before, not now): 1" in out and "result: REGRESSED" in out
    assert "Regressions" in html.read_text() and "test\\_flatten" in md.read_text()  # Markdown-escaped
    # Swapped, the regression is a fix and the fix a regression: still exit 1.
    assert main(["diff", str(new), str(old)]) == 1
    # The same report twice: nothing changed, exit 0.
    assert main(["diff", str(old), str(old)]) == 0
    assert "no differences" in capsys.readouterr().out


def test_cli_without_regression_exits_0_and_bad_input_exits_2(reports: tuple[Path, Path], tmp_path: Path) -> None:
    old, _ = reports
    data = json.loads(old.read_text())
    data["records"] = [r for r in data["records"] if not r["case"].endswith("test_flatten")]
    fewer = tmp_path / "fewer.json"
    fewer.write_text(json.dumps(data))
    assert main(["diff", str(old), str(fewer)]) == 0  # a vanished key is "gone", not a regression
    broken = tmp_path / "broken.json"
    broken.write_text("{not json")
    assert main(["diff", str(old), str(broken)]) == 2
    assert main(["diff", str(old), str(tmp_path / "missing.json")]) == 2
    assert main(["diff", str(old), str(old), "-o", str(tmp_path / "diff.txt")]) == 2


def test_an_output_that_names_an_input_is_refused_and_the_input_kept(reports: tuple[Path, Path], tmp_path: Path,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    old, new = reports
    (tmp_path / "link.json").symlink_to(new)
    before = (old.read_bytes(), new.read_bytes())
    for output, message in ((new, "is the NEW report"), (old, "is the OLD report"),
                            (tmp_path / "link.json", f"(the same file as {new}) is the NEW report")):
        assert main(["diff", str(old), str(new), "-o", str(output)]) == 2
        assert message in capsys.readouterr().err
    assert (old.read_bytes(), new.read_bytes()) == before


def test_module_entry_point(reports: tuple[Path, Path]) -> None:
    proc = subprocess.run([sys.executable, "-m", "pytest_export", "diff", *map(str, reports)],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1, proc.stderr
    assert "test_flatten [non_strict]" in proc.stdout


def test_an_incomplete_report_says_why_it_is_incomplete(reports: tuple[Path, Path], tmp_path: Path,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    # a merge with a shard missing is incomplete without any session having been interrupted
    old, _ = reports
    data = json.loads(old.read_text())
    data.update(complete=False, stop_reason="shard 2 of 2 is missing: merged without it (--allow-missing-shards)")
    merged = tmp_path / "merged.json"
    merged.write_text(json.dumps(data))
    main(["diff", str(old), str(merged)])
    err = capsys.readouterr().err
    assert "warning: NEW report is incomplete (shard 2 of 2 is missing" in err and "interrupted" not in err
    data.update(stop_reason="")
    merged.write_text(json.dumps(data))
    main(["diff", str(old), str(merged)])
    assert "NEW report is incomplete (its session was interrupted)" in capsys.readouterr().err
