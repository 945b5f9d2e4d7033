"""--export-report=PATH: JSON/HTML/Markdown from a real session, xdist parity, Ctrl-C, bad paths."""

from __future__ import annotations

import json
import os
from html.parser import HTMLParser

import pytest

from pytest_export.__main__ import main
from pytest_export.results.report import load_report, report_document

# Process, file and report machinery: the same on any torch (.ci/run's oldest-torch step leaves it out).
pytestmark = pytest.mark.machinery

REAL = """
import pytest
from models import DataDependent, lin_case
import torch

@pytest.mark.exportable(modes=["strict", "non_strict"])
def test_lin():
    return lin_case()

@pytest.mark.exportable(modes=["strict", "non_strict"], expect={"non_strict": "data-dependent branch"})
def test_branch():
    return DataDependent(), (torch.ones(2, 3),)
"""


class Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str]]] = []
        self.text: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, {k: v or "" for k, v in attrs}))

    def handle_data(self, data):
        self.text.append(data)


def parse_html(text: str) -> Tags:
    tags = Tags()
    tags.feed(text)
    return tags


def read_report(path) -> dict:
    """Return a report file validated by the loader, in its on-disk (JSON) form."""
    return report_document(load_report(path))


def content(report: dict) -> dict:
    """Return a report without what legitimately differs between runs (environment, timings)."""
    out = {k: v for k, v in report.items() if k not in ("environment", "scope")}
    out["records"] = []
    for r in report["records"]:
        outcome = dict(r["outcome"], timings={})
        if outcome.get("failure"):
            outcome["failure"] = dict(outcome["failure"], traceback="")
        out["records"].append(dict(r, duration=0.0, outcome=outcome))
    return out


def test_json_html_and_markdown_from_a_real_session(project):
    project.makepyfile(test_m=REAL)
    # out/ does not exist yet: it is created, as --junitxml does.
    result = project.runpytest("--export-report=out/r.json", "--export-report=out/r.html", "--export-report=out/r.md")
    result.assert_outcomes(passed=2, failed=1, xfailed=1)
    result.stdout.fnmatch_lines(["export report: *r.json", "export report: *r.html", "export report: *r.md"])

    report = read_report(project.path / "out" / "r.json")
    assert report["complete"] is True
    assert [(r["case"], r["mode"], r["verdict"]) for r in report["records"]] == [
        ("test_m.py::test_branch", "non_strict", "xfailed"),
        ("test_m.py::test_branch", "strict", "failed"),
        ("test_m.py::test_lin", "non_strict", "passed"),
        ("test_m.py::test_lin", "strict", "passed"),
    ]
    env = report["environment"]
    assert env["torch"].startswith("2.") and env["python"] and env["pytest_export"] and env["platform"]
    failure = report["records"][1]["outcome"]["failure"]
    assert failure["stage"] == "capture" and failure["hint"]

    html = (project.path / "out" / "r.html").read_text()
    tags = parse_html(html)
    assert not any(tag in ("script", "link") for tag, _ in tags.tags)
    ids = {attrs["id"] for _, attrs in tags.tags if "id" in attrs}
    cell_links = [attrs["href"][1:] for tag, attrs in tags.tags if tag == "a" and attrs.get("href", "").startswith("#r-")]
    assert cell_links and set(cell_links) <= ids
    text = "".join(tags.text)
    assert "test_m.py::test_branch" in text and "FAILED" in text and failure["hint"] in text
    assert "if x.sum() > 0:" in text  # the user's source line

    md = (project.path / "out" / "r.md").read_text()
    assert "**4 results** (2 cases in 2 modes): 2 passed, 1 failed, 1 xfailed" in md
    assert "| `test_m.py::test_branch` | ❌ failed · capture | ➖ xfailed · capture |" in md


def test_xdist_run_writes_the_same_report_content_as_a_serial_run(project):
    project.makepyfile(test_m=REAL)
    # Both check in full: with the result cache the second run would take the first run's results.
    project.runpytest("--export-report=serial.json", "--export-cache=off").assert_outcomes(passed=2, failed=1,
                                                                                         xfailed=1)
    result = project.runpytest("-n", "2", "--export-report=xdist.json", "--export-cache=off")
    result.assert_outcomes(passed=2, failed=1, xfailed=1)
    serial, xdist = read_report(project.path / "serial.json"), read_report(project.path / "xdist.json")
    assert content(xdist) == content(serial)
    assert xdist["environment"]["workers"] == 2
    assert xdist["scope"]["files"] == serial["scope"]["files"] == ["test_m.py"]


def test_user_text_in_ids_and_messages_is_escaped(project, canned):
    canned({"test_canned": ("failed", "data-dependent")})
    project.makepyfile(test_m="""
        import pytest
        from models import lin_case

        @pytest.mark.parametrize("tag", ["<script>alert(1)</script>"])
        @pytest.mark.exportable(modes=["strict"])
        def test_canned(tag):
            return lin_case()
    """)
    project.runpytest("--export-report=r.html").assert_outcomes(failed=1)
    html = (project.path / "r.html").read_text()
    tags = parse_html(html)
    assert not any(tag == "script" for tag, _ in tags.tags)
    assert "test_canned[<script>alert(1)</script>]" in "".join(tags.text)


def test_ctrl_c_still_writes_a_report_marked_incomplete(project, canned):
    canned({})
    project.makepyfile(test_m="""
        import pytest
        from models import lin_case

        @pytest.mark.exportable(modes=["strict"])
        def test_canned_a():
            return lin_case()

        def test_b_interrupt():
            raise KeyboardInterrupt

        @pytest.mark.exportable(modes=["strict"])
        def test_canned_c():
            return lin_case()
    """)
    result = project.runpytest("--export-report=r.json", "--export-report=r.html", no_reraise_ctrlc=True)
    assert result.ret == pytest.ExitCode.INTERRUPTED
    report = read_report(project.path / "r.json")
    assert report["complete"] is False and "interrupted" in report["stop_reason"]
    assert [r["case"] for r in report["records"]] == ["test_m.py::test_canned_a"]
    assert "Incomplete run" in (project.path / "r.html").read_text()


@pytest.mark.parametrize(
    ("path", "message"),
    [
        ("r.txt", "--export-report: report path 'r.txt': unknown format '.txt'; use one of .json, .html, .md"),
        ("afile/r.json", "--export-report afile/r.json: cannot create directory afile (*)"),
        ("adir.json", "--export-report adir.json: is a directory, expected a file path"),
        ("fifo.json", "--export-report fifo.json: is not a regular file (a FIFO, a device, ...); expected a file path"),
        ("/dev/null", "--export-report /dev/null: is not a regular file (a FIFO, a device, ...); expected a file path"),
        ("r" * 300 + ".json", f"--export-report {'r' * 300}.json: cannot be used as a file path (File name too long)"),
    ],
)
def test_bad_report_path_is_a_usage_error(project, path, message):
    (project.path / "adir.json").mkdir()
    (project.path / "afile").write_text("a file, not a directory")
    os.mkfifo(project.path / "fifo.json")
    result = project.runpytest(f"--export-report={path}")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"ERROR: {message}"])


def test_a_report_name_at_the_file_system_limit_is_written(project, canned):
    canned({})
    project.makepyfile(test_m="""
        import pytest
        from exportcore import Case

        @pytest.mark.exportable(modes=["non_strict"])
        def test_canned():
            return Case(model=lambda x: x, args=(1,))
    """)
    name = "r" * 250 + ".json"  # 255 bytes: valid, though its temporary twin's name must be shorter
    result = project.runpytest(f"--export-report={name}")
    assert result.ret == pytest.ExitCode.OK
    assert read_report(project.path / name)["records"]


def test_ini_report_paths_and_collect_only_writes_nothing(project, canned):
    canned({})
    project.makeini("[pytest]\nexport_examples = 2\nexport_report = reports/r.json\n")
    (project.path / "reports").mkdir()
    project.makepyfile(test_m="""
        import pytest
        from models import lin_case

        @pytest.mark.exportable(modes=["strict"])
        def test_canned():
            return lin_case()
    """)
    project.runpytest("--collect-only")
    assert not (project.path / "reports" / "r.json").exists()
    project.runpytest().assert_outcomes(passed=1)
    data = json.loads((project.path / "reports" / "r.json").read_text())
    assert [r["verdict"] for r in data["records"]] == ["passed"]


def test_merging_two_shard_reports_equals_the_unsharded_report(project, canned):
    canned({"test_canned_b": ("failed", "torch.operator")})
    body = """
        import pytest
        from models import lin_case

        @pytest.mark.exportable(modes=["strict", "non_strict"])
        def test_canned_{name}():
            return lin_case()
    """
    project.makepyfile(test_a=body.format(name="a"), test_b=body.format(name="b"))
    project.runpytest("--export-report=whole.json").assert_outcomes(passed=2, failed=2)
    project.runpytest("test_a.py", "--export-report=a.json").assert_outcomes(passed=2)
    project.runpytest("test_b.py", "--export-report=b.json").assert_outcomes(failed=2)
    assert main(["merge", "a.json", "b.json", "-o", "merged.json", "--baseline", "whole.json"]) == 0
    whole, merged = read_report(project.path / "whole.json"), read_report(project.path / "merged.json")
    assert content(merged) == dict(content(whole), gate=merged["gate"])
    assert merged["scope"] == whole["scope"]
    assert not merged["gate"]["regressions"] and not merged["gate"]["vanished"]


def test_a_shard_that_never_wrote_its_report_fails_the_merged_gate(project, canned):
    canned({})
    body = """
        import pytest
        from models import lin_case

        @pytest.mark.exportable(modes=["strict"])
        def test_canned_{name}():
            return lin_case()
    """
    project.makepyfile(test_a=body.format(name="a"), test_b=body.format(name="b"))
    project.runpytest("--export-report=whole.json").assert_outcomes(passed=2)
    project.runpytest("--export-report=a.json", "--export-shard=1/2").assert_outcomes(passed=1)
    assert read_report(project.path / "a.json")["scope"]["shard"] == [1, 2]
    # Shard 2 of 2 was killed before writing b.json: an error, unless asked to merge what there is.
    assert main(["merge", "a.json", "-o", "merged.json", "--baseline", "whole.json"]) == 2
    assert not (project.path / "merged.json").exists()
    assert main(["merge", "a.json", "-o", "merged.json", "--baseline", "whole.json", "--allow-missing-shards"]) == 1
    gate = read_report(project.path / "merged.json")["gate"]
    assert [(e["case"], e["why"]) for e in gate["missing"]] == [
        ("test_b.py::test_canned_b", "in no shard report; shard 2 of 2 is missing")]
    project.runpytest("--export-report=b.json", "--export-shard=2/2").assert_outcomes(passed=1)
    assert main(["merge", "a.json", "b.json", "-o", "merged.json", "--baseline", "whole.json"]) == 0


@pytest.mark.parametrize("value", ["3/2", "0/2", "two", "1"])
def test_a_bad_export_shard_is_a_usage_error(project, value):
    result = project.runpytest(f"--export-shard={value}", "--export-report=r.json")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert (f"ERROR: --export-shard must be I/N with 1 <= I <= N (this run is shard I of N), got {value!r}"
            in result.stderr.str())
