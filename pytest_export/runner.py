# Over 300 lines: one test's way from its return value to its record (case, export, verdict, record), read top to bottom.
"""Run one exportable test: turn its return value into a Case, export it, decide the verdict, record it.

What builds the case (the test's body, a zoo factory) runs under the case's time limit too (call_bounded).

torch and hypothesis load here only when a test actually runs an export.
"""

from __future__ import annotations

import dataclasses
import time
import traceback
import warnings
from typing import Any, Callable, TypeVar

import pytest

from exportcore.case import Case, EngineOptions
from exportcore.columns import Column
from exportcore.diagnosis.failures import case_not_checked, finding_filtered_to_error
from exportcore.outcome import Outcome
from pytest_export.rendering import failure_text as explain
from pytest_export.cache_dir import keep_hypothesis_storage
from pytest_export.finding_warnings import ExportFindingWarning, warning_for
from pytest_export.marker import ExportSpec, item_case_id
from pytest_export.options import RunOptions
from pytest_export.results.records import Expectation, Record
from pytest_export.results.sanitize import clean_text, shown_text
from pytest_export.results.verdicts import FAILING, verdict_of
from pytest_export.session_state import ITEM_PENDING, ITEM_RECORDS, plugin_session
from pytest_export.time_limits import time_limit
from pytest_export.torch_logs import torch_logs_hidden

__all__ = [
    "ExportCheckFailed", "ExportFindingWarning", "ITEM_RECORDS", "add_record", "call_bounded",
    "case_from_result", "column_options", "engine_options", "error_outcome", "judge",
    "run_engine", "run_exportable", "settle_outcome", "wants_traceback",
    "warn_findings",
]

_T = TypeVar("_T")


class ExportCheckFailed(pytest.fail.Exception):  # type: ignore[misc,name-defined]
    """An exportable test failed; the message is the whole report, shown without a Python traceback."""

    def __init__(self, text: str, headline: str = "") -> None:
        text = shown_text(text)  # no terminal escapes or NUL bytes from a model's message in CI logs
        super().__init__(text, pytrace=False)
        #: One line for pytest's short test summary (set on the report in makereport).
        self.headline = shown_text(headline) if headline else text.splitlines()[0]


class CaseError(TypeError):
    """The test returned something that is not a case."""


def case_from_result(result: Any, spec: ExportSpec) -> Case:
    """Return the Case a test returned, with the marker's settings applied; raise CaseError if it is none."""
    if isinstance(result, Case):
        case = result
    elif isinstance(result, tuple) and len(result) in (2, 3):
        model, args, kwargs = (*result, None) if len(result) == 2 else result
        if isinstance(args, list):
            args = tuple(args)
        if not isinstance(args, tuple):
            raise CaseError(f"args (item 1 of the returned tuple) must be a tuple, got {type(args).__name__}")
        if kwargs is not None and not isinstance(kwargs, dict):
            raise CaseError(f"kwargs (item 2 of the returned tuple) must be a dict, got {type(kwargs).__name__}")
        case = Case(model=model, args=args, kwargs=kwargs)
    else:
        raise CaseError(
            f"returned {_describe(result)}; an exportable test must return (model, args), "
            "(model, args, kwargs) or an exportcore.Case"
        )
    if not callable(case.model):
        raise CaseError(f"model must be a torch.nn.Module or callable, got {type(case.model).__name__}")
    changes: dict[str, Any] = {}
    for name in ("dynamic_shapes", "inputs", "rtol", "atol", "recorded_inputs"):
        value = getattr(spec, name)
        if value is None:
            continue
        if getattr(case, name) is not None:
            raise CaseError(f"{name} is given both in the marker and in the returned Case; keep one")
        changes[name] = value
    return dataclasses.replace(case, **changes) if changes else case


def engine_options(item: pytest.Item, case: Case, spec: ExportSpec | None, options: RunOptions, case_id: str,
                   **column: Any) -> EngineOptions:
    """Return the engine's options for ``case`` in one column (column_options), leaving engine defaults alone."""
    kwargs: dict[str, Any] = {"case_id": case_id, "findings_as_errors": options.findings_as_errors}
    checks = options.checks_for(spec.checks if spec else None)
    if checks is not None:
        kwargs["checks"] = checks
    examples = spec.examples if spec and spec.examples is not None else options.examples
    if examples is not None:
        kwargs["examples"] = examples
    timeout = time_limit(item, options)
    if timeout is not None:
        kwargs["timeout"] = timeout
    if options.seed is not None:
        kwargs["seed"] = options.seed
    if options.input_budget is not None:
        kwargs["input_budget"] = options.input_budget
    keep_hypothesis_storage(item.config)
    kwargs["hypothesis_settings"] = _hypothesis_settings()
    if options.explain:
        kwargs["explain"] = "full"
    if spec is not None and spec.export_config:
        kwargs["export_config"] = dict(spec.export_config)
    return EngineOptions.for_case(case, **{**kwargs, **column})


def column_options(column: Column, spec: ExportSpec | None, options: RunOptions) -> dict[str, Any]:
    """Return the engine mode and the target/device options of a column (a target starts from an export mode)."""
    extra = column.keywords()
    if not column.is_target:
        return {"mode": column.name, **extra}
    target_options = (spec.target_options if spec else {}).get(column.name)
    if target_options:
        extra["target_options"] = dict(target_options)
    return {"mode": (spec.target_mode if spec else None) or options.target_mode or "non_strict", **extra}


def run_engine(item: pytest.Item, case: Case, column: Column, options: EngineOptions, *,
               raise_bad_arguments: bool = False) -> Outcome:
    """Return the Outcome of one (case, column) from a plugin's pytest_export_run or the engine.

    ``column`` is a mode, or a target (``options.mode`` then names the export mode it starts from), on a device.
    """
    run = plugin_session(item.config).resolved
    with torch_logs_hidden(not wants_traceback(item.config)):
        if run is None or run.repeat <= 1:
            return _run_engine(item, case, column, options, raise_bad_arguments)
        from pytest_export.repeat import repeated  # each run fresh: no result cache, no reuse between runs

        return repeated(options, run.repeat, lambda o: _run_engine(item, case, column, o, raise_bad_arguments, True))


def _run_engine(item: pytest.Item, case: Case, column: Column, options: EngineOptions,
                raise_bad_arguments: bool, fresh: bool = False) -> Outcome:
    from exportcore.reuse.session import EngineSession
    from pytest_export.cache_dir import engine_session

    run = plugin_session(item.config).resolved
    session = EngineSession(reuse=False) if fresh else engine_session(item.config, run.cache if run else "off")
    outcome = item.ihook.pytest_export_run(item=item, case=case, column=column, engine_options=options,
                                           engine_session=session, mode=column.label,
                                           options=_hook_options(column, options, session))
    if outcome is not None:
        return outcome
    from exportcore.check import run_check

    try:
        outcome = run_check(case, options, session)
        if run is not None and run.cache_audit:  # the served results' share checked again in full
            from pytest_export.cache_audit import audited

            outcome = audited(outcome, run.cache_audit, lambda: run_check(case, options, EngineSession(reuse=False)))
        return outcome
    except (TypeError, ValueError) as exc:
        # The engine rejects bad arguments (e.g. a malformed dynamic_shapes) by raising.
        if raise_bad_arguments:
            raise
        return error_outcome(options.case_id, options.mode, type(exc).__name__, str(exc))
    except Exception as exc:  # noqa: BLE001 - an engine bug must not lose the record
        return error_outcome(options.case_id, options.mode, type(exc).__name__, f"internal error: {exc}",
                             category="internal", tb=traceback.format_exc())


def _hook_options(column: Column, options: EngineOptions, session: Any) -> dict[str, Any]:
    """The hook's older, untyped ``options``: check_case's keyword arguments, and for a target the mode it exports in."""
    hooked = {"findings_as_errors": options.findings_as_errors, **options.keywords(), "session": session}
    if options.mode != column.label:
        hooked["export_mode"] = options.mode
    if options.export_config:
        hooked["export_config"] = dict(options.export_config)
    return hooked


def error_outcome(case_id: str, mode: str, exc_type: str, message: str, *, category: str = "input",
                  tb: str = "") -> Outcome:
    """Return an "error" Outcome for a case that could not be checked at all."""
    failure = case_not_checked(exc_type, message, category=category, traceback=tb)
    return Outcome(case_id=case_id, mode=mode, status="error", failure=failure)


def judge(outcome: Outcome, expect: Expectation | None, show_traceback: bool,
          docs: str | None = None, known: str | None = None) -> tuple[str, BaseException | None]:
    """Return results.verdicts.verdict_of's verdict and what the test raises; ``known``: the baseline's xfail text."""
    verdict = verdict_of(outcome, expect, known=known is not None)
    if verdict == "passed":
        return verdict, None
    if verdict == "xpassed":
        assert expect is not None
        return verdict, ExportCheckFailed(explain.xpass_text(outcome, expect.reason))
    if verdict == "unstable":
        return verdict, ExportCheckFailed(explain.unstable_text(outcome, show_traceback=show_traceback, docs=docs))
    if verdict == "skipped":
        reason = outcome.failure.message if outcome.failure else "skipped by the engine"
        return verdict, pytest.skip.Exception(reason)
    if verdict == "xfailed":
        return verdict, expected_failure(f"{outcome.mode}: {expect.reason}" if expect is not None else str(known))
    if expect is not None and outcome.status == "failed":  # failed, but not as expected
        return verdict, ExportCheckFailed(explain.drift_text(outcome, expect.category, show_traceback=show_traceback,
                                                             docs=docs))
    headline = f"{outcome.mode} {outcome.status}: {outcome.failure.headline()}" if outcome.failure else ""
    return verdict, ExportCheckFailed(explain.failure_text(outcome, show_traceback=show_traceback, docs=docs), headline)


def expected_failure(reason: str) -> BaseException:
    """The exception an expected failure raises: pytest reports it as XFAIL with ``reason``.

    Without a Python traceback (``pytrace=False``): pytest formats the longrepr of every xfail,
    and a traceback through the plugin costs ~20 ms a test (a tenth of a small case's check)
    and shows nothing about the export; the failure itself is in the reports.
    """
    return pytest.xfail.Exception(reason, pytrace=False)


def settle_outcome(item: pytest.Item, case: Case | None, outcome: Outcome) -> Outcome:
    """Return the outcome to record: after the plugins' pytest_export_outcome, findings warned.

    Its texts are made encodable once, by the codec, when the record is made (Record.make); what
    is shown before that (a warning, the failure report) is cleaned where it is shown.
    """
    item.ihook.pytest_export_outcome(item=item, case=case, outcome=outcome)
    warn_findings(item, outcome)
    return outcome


def add_record(item: pytest.Item, record: Record) -> None:
    """Keep a record for the item's report (its verdict is settled, and its junit properties set, in makereport)."""
    item.stash.setdefault(ITEM_RECORDS, []).append(record)


def run_exportable(item: pytest.Item, result: Any, column: Column, spec: ExportSpec, options: RunOptions) -> None:
    """Export what the test returned in ``column``, record it, and raise unless it passes (or xfails)."""
    start = time.perf_counter()
    mode = column.label
    case_id = item_case_id(item, mode)
    expectations = _expectations(item, spec)
    expect = expectations.get(mode) or expectations.get(column.name)
    case: Case | None = None
    try:
        case = case_from_result(result, spec)
    except CaseError as exc:
        outcome = error_outcome(case_id, mode, "TypeError", f"{item.nodeid}: {exc}")
    else:
        case = item.ihook.pytest_export_case(item=item, case=case, mode=mode) or case
        engine = column_options(column, spec, options)
        if expect is not None and not options.explain:
            engine["explain"] = "off"  # a declared expected failure is known: no fix to compute
        outcome = run_engine(item, case, column, engine_options(item, case, spec, options, case_id, **engine))
        if expect is None and column.is_target and _before_lowering(outcome):
            # The target's own export failed: the failure its export mode is expected to have.
            expect = expectations.get(engine["mode"])
    exc = _conclude(item, case, case_id, mode, outcome, expect, start)
    if exc is not None:
        raise exc


def call_bounded(item: pytest.Item, column: Column, spec: ExportSpec, options: RunOptions, what: str,
                 body: Callable[[], _T]) -> _T:
    """Return ``body()``, what builds the case (a marker test's body, a zoo factory), stopped at the time limit.

    The engine's deadline bounds the export; what builds the case runs before it, and a hang there
    (a loop, a download that never answers) would hang the session. It gets a limit of its own, the
    same one (--export-timeout, or pytest-timeout's share), so building a large model never eats into
    its export's time. Past it the test's record is a timeout at stage input, the test fails naming
    it and where it stood, and the session goes on.
    """
    from exportcore.sandbox.deadline import CaseTimeout, deadline

    start = time.perf_counter()
    limit = time_limit(item, options)
    try:
        with deadline(limit):
            return body()
    except CaseTimeout as stopped:
        if limit is None:
            raise  # not this deadline's: none was armed
        timeout = stopped
    from exportcore.diagnosis.failures import case_timeout
    from exportcore.diagnosis.sources import user_source

    seconds = timeout.limit if timeout.limit is not None else limit
    failure = case_timeout("input", f"{item.nodeid}: {what} ran past the time limit of {seconds:g} s before "
                                    "returning its case")
    option = "--export-timeout" if options.timeout is not None else "pytest-timeout's limit"
    failure.hint = f"{what} hung or is too slow; raise {option} if it is only slow"
    failure.source = user_source(timeout)
    mode = column.label
    case_id = item_case_id(item, mode)
    expectations = _expectations(item, spec)
    expect = expectations.get(mode) or expectations.get(column.name)
    outcome = Outcome(case_id=case_id, mode=mode, status="timeout", failure=failure)
    exc = _conclude(item, None, case_id, mode, outcome, expect, start)
    # (a pytest_export_outcome hook may have passed it; the case still does not exist)
    raise exc if exc is not None else ExportCheckFailed(failure.message)


def _expectations(item: pytest.Item, spec: ExportSpec) -> dict[str, Expectation]:
    # --runxfail: report expected failures as if they were not marked (pytest's meaning for its own xfail)
    return {} if _runxfail(item) else spec.expect


def _runxfail(item: pytest.Item) -> bool:
    return bool(getattr(item.config.option, "runxfail", False))


def _conclude(item: pytest.Item, case: Case | None, case_id: str, mode: str, outcome: Outcome,
              expect: Expectation | None, start: float) -> BaseException | None:
    """Settle ``outcome``, decide its verdict, leave its record for makereport; return what the test raises."""
    outcome = settle_outcome(item, case, outcome)
    known = None
    if (expect is None and not _runxfail(item) and verdict_of(outcome) in FAILING
            and item.get_closest_marker("xfail") is None):
        # (pytest's own xfail marker, where the user put one, decides that test as pytest does)
        from pytest_export.reporting.known_failures import known_failure

        reason = known_failure(item, case_id, mode, outcome)  # known at its stage and category
        known = f"{mode}: {reason}" if reason is not None else None  # the gate decides; pytest sees an xfail
    verdict, exc = judge(outcome, expect, show_traceback=wants_traceback(item.config),
                         docs=explain.exportdb_docs(item.config.rootpath), known=known)
    if expect is None:
        from pytest_export.settle import refer_to_earlier

        exc = refer_to_earlier(item, case_id, mode, exc, full=wants_traceback(item.config))
    from pytest_export.settle import Pending

    # The record is made once pytest has had its last word (pytest_runtest_makereport: settle.settle).
    item.stash.setdefault(ITEM_PENDING, []).append(
        Pending(item.nodeid, case_id, mode, verdict, outcome, expect, time.perf_counter() - start))
    return exc


def _before_lowering(outcome: Outcome) -> bool:
    return outcome.status == "failed" and outcome.failure is not None and outcome.failure.stage in (
        "eager", "capture", "constraints")


def warn_findings(item: pytest.Item, outcome: Outcome) -> None:
    """Surface warning-level findings in pytest's warnings summary, located at the user's test.

    Without ``-v`` only the first finding of each kind reaches the summary, so a green run's
    output is its matrix, not pages of one warning repeated per test.

    Where a warnings filter turns ExportFindingWarning into an error (``filterwarnings = error``),
    the outcome fails on that finding, as with ``--export-findings=error``, so the record and
    pytest agree.
    """
    shown = plugin_session(item.config).shown_kinds
    every = item.config.get_verbosity() > 0
    for f in outcome.findings:
        if f.severity != "warning":
            continue
        where = f" ({f.input})" if f.input else ""
        # no mode in the text: pytest groups one finding of several modes (their items share a location)
        warning = warning_for(f.kind)(clean_text(f"{f.kind}{where}: {f.message}"))
        try:
            if every or f.kind not in shown:
                shown.add(f.kind)
                item.warn(warning)
            else:
                # The summary shows the first of each kind (the matrix counts them all, the reports list
                # each); the user's filters still judge every one: an "error" filter raises here.
                with warnings.catch_warnings(record=True):
                    item.warn(warning)
        except Warning as exc:
            if outcome.status == "passed":
                outcome.status = "failed"
                outcome.failure = finding_filtered_to_error(f.kind, type(exc).__name__, str(exc))
            return


def wants_traceback(config: pytest.Config) -> bool:
    """Return whether torch's internal traceback belongs in failure reports (--tb=long or -vv)."""
    return config.getoption("tbstyle", "auto") == "long" or config.get_verbosity() >= 2


def _hypothesis_settings() -> Any:
    # settings() is the current profile, i.e. what --hypothesis-profile loaded.
    from hypothesis import settings

    return settings()


def _describe(value: Any) -> str:
    if value is None:
        return "None (did you forget `return`?)"
    text = repr(value)
    if len(text) > 80:
        text = text[:77] + "..."
    return f"{type(value).__name__} {text}"
