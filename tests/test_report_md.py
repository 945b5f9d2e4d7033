"""Markdown report: summary line, matrix, failures with hints; escaped and capped for a CI step summary."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from report_factory import make_record, sample_records

from exportcore.outcome import Failure

from pytest_export.results.report import build_report
from pytest_export.rendering.markdown import MAX_BYTES, MAX_FAILURES, MAX_ROWS, render_markdown


def test_summary_matrix_and_failures():
    md = render_markdown(build_report(sample_records()))
    lines = md.splitlines()
    assert lines[0] == "## pytest-export"
    assert "**7 results** (3 cases in 3 modes): 4 passed, 1 failed, 1 xfailed, 1 error" in md
    assert "| case | strict | non\\_strict | training |" in lines
    assert "| `tests/test_a.py::test_branch` | ❌ failed · capture | ➖ xfailed · capture | — |" in lines
    assert "| `tests/test_a.py::test_mlp` | ✅ passed | ✅ passed | ✅ passed |" in lines
    assert "### Failures (2)" in lines
    failure = next(i for i, line in enumerate(lines) if line.startswith("- ❌ `tests/test_a.py::test_branch`"))
    assert "[capture] data-dependent: torch._dynamo.exc.UserError: Could not guard" in lines[failure]
    assert lines[failure + 1] == "  - at `tests/test_a.py:12`: `if x.sum() > 0:`"
    assert lines[failure + 2].startswith("  - hint: use torch.cond")
    assert "`cond_predicate`" in lines[failure + 3]
    assert "1 expected failures (xfailed) not listed." in md


def test_html_and_table_breaking_text_is_escaped():
    record = make_record("tests/t.py::test_x[a|b]", "strict", "failed", message="<script>x</script> | `tick`")
    record.outcome.failure.hint = "use <b>this</b>"
    md = render_markdown(build_report([record]))
    # Code spans show HTML literally; everywhere else a raw tag would be rendered by GitHub.
    outside_code = re.sub(r"(`+).*?\1", "", md)
    assert "<script>" in md and not re.search(r"(?<!\\)<", outside_code)
    row = next(line for line in md.splitlines() if line.startswith("| ``") or line.startswith("| `tests"))
    assert "a\\|b" in row  # a bare | would split the table cell
    assert "``" in md  # code span holding a backtick uses a longer fence


def test_gate_and_incomplete_run_are_stated():
    gate = {"baseline": "base.json", "failed": True, "regressions": [
        {"case": "tests/test_a.py::test_mlp", "mode": "strict", "test": "t", "before": "passed", "after": "failed",
         "headline": "[capture] boom", "why": ""}], "improvements": [], "vanished": [], "deselected": []}
    md = render_markdown(build_report(sample_records(), gate=gate, complete=False, stop_reason="interrupted"))
    assert "**Gate** ❌ **failed** vs `base.json`: 1 regressions" in md
    assert "- **Regression** `tests/test_a.py::test_mlp` [strict] passed → failed: \\[capture\\] boom" in md
    assert "**Incomplete run**: interrupted" in md


def test_long_runs_are_capped():
    records = [make_record(f"tests/t.py::test_{i:04d}", "strict", "failed", message="m" * 5000) for i in range(400)]
    md = render_markdown(build_report(records))
    assert len(md.encode()) <= MAX_BYTES + 200
    assert f"… {400 - MAX_ROWS} more cases" in md
    assert f"… {400 - MAX_FAILURES} more failures" in md
    assert "m" * 400 not in md


def test_no_records():
    md = render_markdown(build_report([]))
    assert "**0 results**" in md and "No unexpected failures." in md


def _outside_code_spans(line: str) -> str:
    """Return the text of ``line`` that CommonMark does not put inside a code span."""
    out, i = [], 0
    while i < len(line):
        if line[i] == "\\":
            out.append(line[i:i + 2])
            i += 2
        elif line[i] == "`":
            n = len(re.match(r"`+", line[i:]).group())
            # A run of n backticks closes only at the next run of exactly n.
            close = re.compile(rf"(?<!`)`{{{n}}}(?!`)").search(line, i + n)
            if close is None:
                out.append(line[i:i + n])
                i += n
            else:
                i = close.end()
        else:
            out.append(line[i])
            i += 1
    return "".join(out)


INJECT = "a `` </code><img src=x onerror=alert(1)> `` b ` <i>c</i> ``` d"


def test_backticks_in_a_message_cannot_close_its_code_span_and_inject_html():
    record = make_record("tests/t.py::test_x", "strict", "failed", message=INJECT)
    record.outcome.failure.source.code = INJECT
    md = render_markdown(build_report([record]))
    assert "<img src=x" in md  # shown, as code
    for line in md.splitlines():
        assert not re.search(r"(?<!\\)<", _outside_code_spans(line)), line


def test_control_characters_and_lone_surrogates_never_reach_markdown():
    message = "open caf\udce9.bin: \x1b[31mred\x1b[0m \x00\x07 done"
    record = make_record("tests/t.py::test_x", "strict", "failed", message=message)
    record.outcome.failure.hint = "bell \x07 here"
    md = render_markdown(build_report([record]))
    md.encode("utf-8")  # writable
    assert not re.search(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]", md)
    assert "open caf\\udce9.bin: red \\x00\\x07 done" in md
    assert "bell \\\\x07 here" in md  # outside code the backslash itself is escaped


@given(st.text(max_size=60))
@settings(max_examples=200, deadline=None)
def test_no_message_escapes_its_code_span_or_carries_controls(message):
    record = make_record("tests/t.py::test_x", "strict", "failed", message=message)
    md = render_markdown(build_report([record]))
    md.encode("utf-8")
    assert not re.search(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]", md)
    for line in md.splitlines():
        assert not re.search(r"(?<!\\)<", _outside_code_spans(line)), line


def test_findings_are_listed_with_their_case():
    records = sample_records()
    md = render_markdown(build_report(records))
    assert "### Findings (3)" in md
    assert ("- `tests/test_a.py::test_branch` [strict] **specialized** args\\[0\\]: batch specialized to 4"
            in md.splitlines())


def test_leads_with_the_pass_rate_skips_apart():
    records = [make_record("tests/t.py::test_a", m, "passed") for m in ("strict", "non_strict", "training")]
    records.append(make_record("tests/t.py::test_b", "strict", "failed"))
    md = render_markdown(build_report(records))
    assert md.splitlines()[2].startswith("**75% pass** (3 of 4 run; skips not counted) · **4 results**")


def test_one_failure_per_case_lists_the_modes_that_share_it_and_empty_cells_are_explained():
    records = [make_record("tests/t.py::test_b", m, "failed") for m in ("strict", "non_strict")]
    records.append(make_record("tests/t.py::test_c", "strict", "passed"))
    md = render_markdown(build_report(records))
    failures = [line for line in md.splitlines() if line.startswith("- ❌")]
    assert len(failures) == 1 and failures[0].startswith("- ❌ `tests/t.py::test_b` [strict, non\\_strict] — ")
    assert "_— : not run; the test does not ask for that mode or target" in md


def test_skip_reasons_are_listed_once_each_with_a_count():
    records = [make_record(f"tests/t.py::test_{c}", "onnx", "skipped") for c in "ab"]
    for r in records:
        r.outcome.failure = Failure(stage="lower", category="target.unavailable", exc_type="TargetUnavailable",
                                    message="onnx: onnxruntime not installed (pip install onnxruntime, or ...)")
    md = render_markdown(build_report(records))
    assert "### Skipped (2)" in md
    assert "- onnx: onnxruntime not installed (pip install onnxruntime, or ...) (2)" in md
