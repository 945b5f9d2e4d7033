"""The export matrix's ``reused:`` line: how many results took their after-capture checks from earlier work."""

from __future__ import annotations

from report_factory import make_record

from pytest_export.rendering.summary import summary_lines


def reused(case: str, mode: str, source: str | None, verdict: str = "passed"):
    record = make_record(case, mode, verdict)
    record.outcome.reused_from = source
    return record


def reuse_lines(records, verbose: bool = False) -> list[str]:
    return [line for line in summary_lines(records, verbose=verbose) if line.startswith("reused:")]


def test_cache_and_between_mode_reuse_are_counted_apart_over_the_results_that_ran() -> None:
    records = [
        reused("t.py::a", "strict", "cache: strict, 2026-11-27T10:00:00Z pid 7"),
        reused("t.py::a", "non_strict", "cache: strict, 2026-11-27T10:00:00Z pid 7"),
        reused("t.py::b", "strict", None),
        reused("t.py::b", "non_strict", "strict"),
        reused("t.py::c", "strict", None, verdict="failed"),
        reused("t.py::d", "strict", None, verdict="skipped"),  # nothing ran: not a result to count
    ]
    assert reuse_lines(records) == [
        "reused: 2 from the result cache and 1 from another mode's identical program, of 5 results: "
        "those captured and ran eager, and took the checks after capture instead of running them "
        "(--export-no-reuse runs them all)"
    ]


def test_no_line_when_nothing_was_reused() -> None:
    assert reuse_lines([reused("t.py::a", "strict", None), reused("t.py::a", "non_strict", None)]) == []


def test_sharing_between_modes_alone_is_named_only_with_verbose() -> None:
    # routine in a cold run (strict and non-strict capture one program): a default run keeps quiet
    records = [reused("t.py::a", "strict", None), reused("t.py::a", "non_strict", "strict")]
    assert reuse_lines(records) == []
    assert reuse_lines(records, verbose=True) == [
        "reused: 1 from another mode's identical program, of 2 results: it captured and ran eager, and took "
        "the checks after capture instead of running them (--export-no-reuse runs them all)"
    ]
