# Over 300 lines: the pytest hooks of one plugin, in the order pytest calls them; the work itself is in runner,
# reporting/ and distributed/.
"""pytest-export's pytest glue: marker, mode parametrization, options, records, summary.

Usage::

    @pytest.mark.exportable(dynamic_shapes={"x": {0: Dim("batch", min=1, max=64)}},
                            expect={"strict": "data-dependent branch"})
    def test_mlp():
        return MLP(), (torch.randn(4, 16),)   # or (model, args, kwargs) or an exportcore.Case

gives ``test_mlp[strict]`` (xfails while strict fails), ``test_mlp[non_strict]`` and
``test_mlp[training]``. Options: --export-modes, --export-checks, --export-examples,
--export-timeout, --export-findings (ini: export_modes, ...; see pytest_export.options).
``-k strict`` is pytest's substring match and so also selects ``non_strict``; use
``--export-modes=strict`` or ``-k "strict and not non_strict"`` for strict alone.
Fixture: ``export_check(model, args, kwargs=None, mode="non_strict", **options) -> Outcome``.
Extension hooks: pytest_export.hookspecs. xdist transport: pytest_export.distributed.xdist_workers.

Each hook hands off at once to a module named for its role. Importing this module
never imports torch: torch loads only when an exportable test runs. The engine, records,
reports and journals load only when a session has an exportable test, a record or a report
option (function-level imports below): a session without them pays for little more than this file.
"""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING, Any, Generator

import pytest

from exportcore.modes import mode_names
from pytest_export import hookspecs
from pytest_export.cache_dir import end_session, engine_session, start_session
from pytest_export.fixtures import export_check  # noqa: F401 - a plugin module's fixtures are registered
from pytest_export.marker import MARKER_HELP, MODE_PARAM, item_column, item_mode, item_spec, refused_item
from pytest_export.options import add_options, resolve
from pytest_export.parametrize import parametrize_modes
from pytest_export.reporting.options import add_options as add_report_options
from pytest_export.reporting.options import reporting_wanted
from pytest_export.session_state import ITEM_PENDING, ITEM_RECORDS, distributed, plugin_session
from pytest_export.distributed.threads import share_threads
from pytest_export.distributed.xdist_workers import XdistController, is_worker, publish_selected

if TYPE_CHECKING:
    from pytest_export.results.records import Record

__all__ = ["export_check"]

#: Zoo models as items (--export-model) and shard selection (--export-shard); neither imports torch.
pytest_plugins = ["pytest_export.zoo.plugin", "pytest_export.distributed.sharding"]


def pytest_addhooks(pluginmanager: pytest.PytestPluginManager) -> None:
    """Register pytest-export's hookspecs (see pytest_export.hookspecs)."""
    pluginmanager.add_hookspecs(hookspecs)


@pytest.hookimpl(tryfirst=True)
def pytest_load_initial_conftests(early_config: pytest.Config, parser: pytest.Parser, args: list[str]) -> None:
    """Supervise a session that writes reports; give an xdist worker its share of torch threads.

    Both before a conftest can import torch: the supervisor starts the session as its child
    (pytest_export.reporting.supervise), and torch reads its thread count once.
    """
    if getattr(early_config.known_args_namespace, "export_report", None) or early_config.getini("export_report"):
        from pytest_export.reporting.supervise import maybe_supervise

        maybe_supervise(early_config)  # returns in the process that runs the session
    count = os.environ.get("PYTEST_XDIST_WORKER_COUNT", "")
    if os.environ.get("PYTEST_XDIST_WORKER") and count.isdigit():
        share_threads(int(count))


def pytest_addoption(parser: pytest.Parser) -> None:
    """Add the --export-* options, the report and the gate options included."""
    group = parser.getgroup("export", "pytest-export (torch.export checks)")
    add_options(parser, group)
    add_report_options(parser, group)


def pytest_configure(config: pytest.Config) -> None:
    """Register the marker, resolve options, set up controller-side state."""
    config.addinivalue_line("markers", MARKER_HELP)
    session = plugin_session(config)  # the zoo's pytest_configure, called first, made it already
    session.resolved = resolve(config, _known_modes(config))
    start_session(config)  # one engine session for the process: every engine call passes it
    from pytest_export.case_seed import CaseSeed

    config.pluginmanager.register(CaseSeed(), "export-case-seed")
    if is_worker(config):
        from exportcore.sandbox.caches import use_worker_cache_dirs

        # Workers must not race on one compile cache (torch writes one for compiling modes).
        use_worker_cache_dirs(config.workerinput["workerid"])  # type: ignore[attr-defined]
        from pytest_export.reporting.journal import WorkerNotes

        config.pluginmanager.register(WorkerNotes(config), "export-worker-notes")
        share_threads(config.workerinput["workercount"])  # type: ignore[attr-defined]
        return
    config.pluginmanager.register(Controller(config), "export-controller")
    if getattr(config.option, "xmlpath", None):
        from pytest_export.reporting.junit import ErrorsAsErrors, SuiteProperties

        config.pluginmanager.register(SuiteProperties(config), "export-junit")
        config.pluginmanager.register(ErrorsAsErrors(config), "export-junit-errors")
    if config.pluginmanager.hasplugin("xdist"):
        config.pluginmanager.register(XdistController(config, session.options.known_columns()), "export-xdist")
        from pytest_export.distributed.scheduling import CaseScheduler

        config.pluginmanager.register(CaseScheduler(session.options.known_columns()), "export-scheduling")
        if distributed(config):
            from pytest_export.reporting.journal import InflightDir

            config.pluginmanager.register(InflightDir(), "export-inflight")
    if reporting_wanted(config):
        from pytest_export.reporting.plugin import ReportingPlugin

        config.pluginmanager.register(ReportingPlugin(config), "export-reporting")


def pytest_unconfigure(config: pytest.Config) -> None:
    """Drop the inference exports kept for targets: they hold model weights."""
    end_session(config)


def pytest_report_header(config: pytest.Config) -> str | None:
    """Show the run's export settings when they are not the defaults, or with -v."""
    options = plugin_session(config).options
    changed = any(v is not None for v in (options.modes, options.checks, options.examples, options.timeout,
                                          options.devices, options.target_mode)) or bool(options.targets)
    if not (changed or options.findings_as_errors or config.get_verbosity() > 0):
        return None
    return "export: " + "; ".join([
        f"modes {', '.join(options.modes or options.known_modes)}",
        f"checks {', '.join(options.checks) if options.checks else 'default'}",
        f"examples {options.examples if options.examples is not None else 'default'}",
        f"timeout {f'{options.timeout:g}s' if options.timeout else 'none'}",
        f"findings {'error' if options.findings_as_errors else 'warning'}",
        *([f"targets {', '.join(options.targets)} (from {options.target_mode or 'non_strict'})"]
          if options.targets else []),
        *([f"devices {', '.join(options.devices)}"] if options.devices else []),
    ])


@pytest.hookimpl(trylast=True)  # after the user's parametrize, so ids read test_x[4-strict]
def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """Parametrize every exportable test over its export modes (per parameter, where pytest.param carries the marker)."""
    parametrize_modes(metafunc, plugin_session(metafunc.config).options)


@pytest.hookimpl(tryfirst=True)
def pytest_pyfunc_call(pyfuncitem: pytest.Function) -> bool | None:
    """Call an exportable test, take the case it returns, and export it in the item's mode."""
    column = item_column(pyfuncitem)
    if column is None:
        return None
    options = plugin_session(pyfuncitem.config).options
    spec = item_spec(pyfuncitem, options.known_modes)
    funcargs = pyfuncitem.funcargs
    testargs = {arg: funcargs[arg] for arg in pyfuncitem._fixtureinfo.argnames}
    from pytest_export.dim_errors import InvalidDim, explain_dim_error
    from pytest_export.runner import call_bounded, run_exportable

    problem = None
    try:
        result = call_bounded(pyfuncitem, column, spec, options, "the test's body", lambda: pyfuncitem.obj(**testargs))
    except AssertionError as exc:  # torch refusing a Dim the test builds: one clear line, not its traceback
        problem = explain_dim_error(exc)
        if problem is None:
            raise
    if problem is not None:
        raise InvalidDim(problem)
    run_exportable(pyfuncitem, result, column, spec, options)
    return True


@pytest.hookimpl(wrapper=True, tryfirst=True)  # outermost: sees the report after xfail handling
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Generator[None, Any, Any]:
    """Attach the item's records to its report, so they reach the controller (also under xdist)."""
    report = yield
    runner = sys.modules.get("pytest_export.runner")  # not imported: no export ran, nothing of ours failed
    if call.excinfo is not None and runner is not None and isinstance(call.excinfo.value, runner.ExportCheckFailed):
        crash = getattr(report.longrepr, "reprcrash", None)
        if crash is not None:
            crash.message = call.excinfo.value.headline  # the short summary line
    records = item.stash.get(ITEM_RECORDS, None) or []  # export_check's and the mixin's: final as made
    pending = item.stash.get(ITEM_PENDING, None)
    if pending:
        from pytest_export.settle import settle

        records = records + [settle(p, report, call.excinfo) for p in pending]  # pytest's xfail, warnings, ...
    if records:
        item.stash[ITEM_RECORDS] = []
        item.stash[ITEM_PENDING] = []
    else:
        mode = item_mode(item)
        if mode is None or call.when not in ("setup", "call") or report.passed:
            return report
        # The test never produced a case (fixture error, exception, skip): record that, not nothing.
        records = [_unrun_record(item, mode, call, report)]
    from pytest_export.reporting.transport import attach
    from pytest_export.reporting.junit import set_properties

    set_properties(item, report, records)  # the verdicts are final here
    attach(report, records)
    return report


@pytest.hookimpl(tryfirst=True)
def pytest_report_teststatus(report: pytest.TestReport, config: pytest.Config) -> tuple[str, str, str] | None:
    """An export that could not be checked (verdict error) is pytest's ERROR, as a setup error is."""
    from pytest_export.reporting.transport import carried

    if not carried(report):  # not an exportable test's report: nothing of ours to import
        return None
    from pytest_export.reporting.junit import is_error_report

    return ("error", "E", "ERROR") if is_error_report(report) else None


@pytest.hookimpl(wrapper=True)
def pytest_make_collect_report(collector: pytest.Collector) -> Generator[None, Any, Any]:
    """Make a collection error of exportable tests that could not be checked truthfully (see refused_item)."""
    report = yield
    if report.passed and report.result:
        known = plugin_session(collector.config).options.known_modes
        problems = [p for p in (refused_item(node, item_mode(node), known) for node in report.result) if p]
        if problems:
            report.outcome = "failed"
            report.longrepr = "\n".join(problems)
            report.result = []
    return report


@pytest.hookimpl(wrapper=True, tryfirst=True)  # outermost: before pytest-timeout starts the test's timer
def pytest_runtest_protocol(item: pytest.Item) -> Generator[None, Any, Any]:
    """Pay the process's one-time export warm-up before an exportable test's own time limit starts."""
    if item_mode(item) is not None or "export_check" in getattr(item, "fixturenames", ()):
        from pytest_export.time_limits import pytest_timeout_share

        if plugin_session(item.config).options.timeout is not None or pytest_timeout_share(item) is not None:
            from exportcore.sandbox.deadline import warm_up

            # Charged to a test, torch's first lazy imports (seconds) would exceed a healthy case's
            # pytest-timeout limit, and an alarm inside an import leaves a module half-initialized.
            # Without a limit the first case simply pays them: warming up would only add the
            # decompose and save/load a warm run (result cache) never does.
            with engine_session(item.config).activated():  # warm once per engine session
                warm_up()
    return (yield)


@pytest.hookimpl(tryfirst=True)
def pytest_export_run(item: pytest.Item) -> None:
    """Keep a test-wide alarm (pytest-timeout's signal method) out of imports while the case runs."""
    from exportcore.sandbox.deadline import guard_outer_alarm

    # An alarm raised inside an import leaves the module half-initialized for every later test.
    guard_outer_alarm()


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Deselect exportable tests left with no mode (e.g. modes=["strict"] under --export-modes=training)."""
    unrun = [item for item in items if _has_no_mode(item)]
    if unrun:
        config.hook.pytest_deselected(items=unrun)
        items[:] = [item for item in items if not _has_no_mode(item)]


@pytest.hookimpl(trylast=True)
def pytest_collection_finish(session: pytest.Session) -> None:
    """Publish the (case, mode) keys selected for this run (after -k / -m deselection)."""
    keys = set()
    for item in session.items:
        mode = item_mode(item)
        if mode is not None:
            from pytest_export.marker import item_case_id

            keys.add((item_case_id(item, mode), mode))
    if is_worker(session.config):
        publish_selected(session.config, keys)
    else:
        plugin_session(session.config).selected.update(keys)


class Controller:
    """Hooks that only the controller (or a serial run) implements: aggregation and summary."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.session = plugin_session(config)
        self.owners: Any = None  # unique_keys.KeyOwners, made with the first record
        self.zoo_first = False  # the matrix was printed ahead of pytest's FAILURES (a zoo run)

    @pytest.hookimpl(tryfirst=True)  # a duplicate key fails the report before the terminal, junit and journal see it
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        """Collect the records a report carries; a key another test already recorded is an error."""
        from pytest_export.reporting.transport import attach, carried, decode

        if not carried(report):
            return
        from pytest_export.results.records import record_key
        from pytest_export.results.unique_keys import KeyOwners, fail_report

        if self.owners is None:
            self.owners = KeyOwners()
        records = decode(report)
        admitted = [self.owners.admit(record) for record in records]
        for record in admitted:
            self.session.records.append(record)
            self.session.selected.add(record_key(record))
        problems = [new.outcome.failure.message for old, new in zip(records, admitted) if new is not old]
        if problems:
            attach(report, admitted)  # the journal and junit read the report after us
            fail_report(report, problems)

    @pytest.hookimpl(wrapper=True, tryfirst=True, specname="pytest_terminal_summary")
    def pytest_terminal_summary_zoo_first(self, terminalreporter: Any) -> Generator[None, None, None]:
        """A zoo run leads with its pass rates, ranked causes and matrix: before pytest's FAILURES section.

        pytest's own summary is a wrapper that prints FAILURES before any plain implementation runs; an
        outer (tryfirst) wrapper prints first. A session without zoo cases keeps the matrix below.
        """
        from pytest_export.rendering.zoo_rates import family_of

        self.zoo_first = any(family_of(r.case) for r in self.session.records)
        if self.zoo_first:
            self._matrix(terminalreporter, "export zoo: pass rates, failure causes, matrix")
        return (yield)

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        """Print the cases x modes matrix (a zoo run printed it first)."""
        if not self.zoo_first:
            self._matrix(terminalreporter, "export matrix")

    def _matrix(self, terminalreporter: Any, title: str) -> None:
        if self.config.get_verbosity() < -1 or not self.session.records:
            return
        from pytest_export.rendering.summary import MAX_ROWS, summary_lines

        full = self.config.get_verbosity() > 0
        options = self.session.options
        lines = summary_lines(self.session.records, [c.label for c in options.known_columns()],
                              max_rows=None if full else MAX_ROWS, slowest=options.slowest, verbose=full)
        if lines:
            terminalreporter.write_sep("=", title)
            for line in lines:
                terminalreporter.write_line(line)


def _has_no_mode(item: pytest.Item) -> bool:
    # An empty parametrization leaves a NOTSET placeholder instead of a mode.
    callspec = getattr(item, "callspec", None)
    return callspec is not None and MODE_PARAM in callspec.params and item_mode(item) is None


def _unrun_record(item: pytest.Item, mode: str, call: pytest.CallInfo[None], report: pytest.TestReport) -> Record:
    from exportcore.diagnosis.failures import harness_timeout
    from exportcore.outcome import Outcome
    from pytest_export.marker import item_case_id
    from pytest_export.results.records import Record
    from pytest_export.results.verdicts import after_pytest, verdict_of
    from pytest_export.runner import error_outcome

    case_id = item_case_id(item, mode)
    message = str(call.excinfo.value) if call.excinfo else str(report.longrepr)
    if report.skipped:
        reason = getattr(report, "wasxfail", "") or (call.excinfo.exconly() if call.excinfo else "")
        outcome = Outcome(case_id=case_id, mode=mode, status="skipped", notes=[reason] if reason else [])
    elif "from pytest-timeout" in message:
        # pytest-timeout stopped the test (its limit, not --export-timeout): still a timeout.
        outcome = Outcome(case_id=case_id, mode=mode, status="timeout", failure=harness_timeout(message))
    else:
        exc_type = call.excinfo.typename if call.excinfo else "Error"
        where = "in setup" if call.when == "setup" else "before returning a case"
        outcome = error_outcome(case_id, mode, exc_type, f"{item.nodeid} raised {where}: {message}")
        if "dynamic_spec" in message and outcome.failure is not None:  # ShapesSpec on torch < 2.14
            from exportcore.shapes.shapes_spec import unavailable_hint

            outcome.failure.hint = unavailable_hint(message)
    verdict = verdict_of(outcome)
    if report.skipped:
        verdict = after_pytest(verdict, skipped=True, passed=False, xfail=hasattr(report, "wasxfail"))
    return Record.make(item.nodeid, case_id, mode, verdict, outcome, duration=report.duration)


def _known_modes(config: pytest.Config) -> tuple[str, ...]:
    extra: list[str] = []
    for names in config.hook.pytest_export_modes(config=config):
        for name in names or ():
            if not isinstance(name, str) or not name.isidentifier():
                raise pytest.UsageError(f"pytest_export_modes returned an invalid mode name {name!r}")
            extra.append(name)
    # Engine modes first (built-ins, then any exportcore.register_mode() from a conftest).
    return tuple(dict.fromkeys([*mode_names(), *extra]))

