"""pytest glue for reports and the baseline gate: validation, writing, exit status (options: reporting.options).

The controller alone (a serial run, or xdist's controller) registers ReportingPlugin.
Rendering and the gate live in pure modules (report*, gate); this one only gathers
what pytest knows and hands off. Importing it does not import torch.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any, Generator

import pytest

from exportcore.codec import encode
from pytest_export.results.gate import GateResult, Scope, compare, summary_lines, updated_baseline
from pytest_export.reporting.known_failures import baseline_path, read_baseline_records
from pytest_export.marker import item_mode
from pytest_export.results.records import Record, record_key
from pytest_export.rendering.formats import report_format, write_report
from pytest_export.results.report import Report, ReportError, build_report, nodeid_file
from pytest_export.reporting.environment import environment, run_modes
from pytest_export.reporting.paths import check_writable, fail, parse_shard, same_file, shown
from pytest_export.session_state import plugin_session

__all__ = ["ReportingPlugin", "environment"]


class ReportingPlugin:
    """Controller-side hooks: validate options, gather scope, gate the session, write reports."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.report_paths = self._report_paths()
        self.update: bool = bool(config.getoption("export_baseline_update"))
        self.baseline_path = self._baseline_path()
        self._refuse_report_over_baseline()
        self.baseline = self._load_baseline()
        self.gate: GateResult | None = None
        self.files: set[str] = set()
        self.deselected: set[str] = set()
        self.tests: set[str] | None = None  # collected node ids (after deselection)
        self.ran: set[str] = set()  # node ids whose run ended (a crash report does not count)
        self.started = time.time()
        self.written: list[str] = []
        self.problems: list[str] = []
        self.write_failed = False
        self.shard = parse_shard(config)
        self.journal = self._start_journal()

    def _report_paths(self) -> list[Path]:
        cli = self.config.getoption("export_report") or []
        given = [str(p) for p in cli] or [str(p) for p in self.config.getini("export_report")]
        paths = []
        for name in given:
            path = Path(os.path.abspath(Path(self.config.invocation_params.dir) / name))
            check_writable(path, name, "--export-report")
            try:
                report_format(name)
            except ValueError as exc:
                fail(f"--export-report: {exc}")
            paths.append(path)
        return paths

    def _start_journal(self) -> Any:
        if not (self.active and self.report_paths):
            return None
        from pytest_export.reporting.journal import JournalPlugin

        header = {
            "environment": environment(self.config, [], 0.0),
            "baseline": str(self.baseline_path) if self.baseline_path and not self.update else None,
            "baseline_shown": shown(self.baseline_path) if self.baseline_path else None,
        }
        plugin = JournalPlugin(self.config, [(p, shown(p)) for p in self.report_paths], header,
                               self._journal_scope, item_mode)
        self.config.pluginmanager.register(plugin, "export-journal")
        return plugin

    def _scope_doc(self) -> Scope:
        scope = self._scope()
        scope.shard = None if self.shard is None else list(self.shard)
        return scope

    def _journal_scope(self) -> dict[str, Any]:
        scope = encode(self._scope_doc(), "scope")
        return {**scope, "selected": sorted(map(list, plugin_session(self.config).selected))}

    def _refuse_report_over_baseline(self) -> None:
        # A report written over the baseline replaces the committed reference with one run's
        # (perhaps partial) results: only --export-baseline-update may do that.
        if self.baseline_path is None or self.update:
            return
        for path in self.report_paths:
            if same_file(path, self.baseline_path):
                fail(
                    f"--export-report {shown(path)} is the --export-baseline file: writing the report would "
                    "overwrite the baseline; write the report elsewhere, or pass --export-baseline-update "
                    "to replace the baseline"
                )

    def _load_baseline(self) -> Report | None:
        path = self.baseline_path
        if path is None:
            given = [name for name, value in (
                ("--export-baseline-update", self.update),
                ("--export-baseline-strict", self.config.getoption("export_baseline_strict", False)),
                ("--export-baseline-numerics-growth",
                 self.config.getoption("export_baseline_numerics_growth", None) is not None)) if value]
            if given:
                fail(f"{given[0]} needs --export-baseline=PATH (or ini export_baseline)")
            return None
        try:
            exists = path.exists()
        except OSError as exc:  # a name too long, a loop of links, ...
            fail(f"--export-baseline: {shown(path)}: cannot be used as a file path ({exc.strerror or exc})")
        if self.update:
            check_writable(path, shown(path), "--export-baseline")
            if not exists:
                return None  # the first --export-baseline-update creates it
        elif not exists:
            fail(f"--export-baseline: {shown(path)}: file does not exist; create it with --export-baseline-update")
        try:
            return read_baseline_records(path, shown(path))
        except ReportError as exc:
            fail(f"--export-baseline: {exc}")

    def _baseline_path(self) -> Path | None:
        return baseline_path(self.config)

    @property
    def active(self) -> bool:
        """Return whether this plugin has anything to do in this session."""
        return bool(self.report_paths or self.baseline_path) and not self.config.option.collectonly

    def pytest_deselected(self, items: list[pytest.Item]) -> None:
        """Remember -k/-m deselections (serial runs; xdist workers keep theirs)."""
        self.deselected.update(item.nodeid for item in items)
        self.files.update(nodeid_file(item.nodeid) for item in items)

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        """Remember which test files and tests this run collected."""
        self.files.update(nodeid_file(item.nodeid) for item in session.items)
        if not session.config.pluginmanager.getplugin("dsession"):
            self.tests = {item.nodeid for item in session.items}

    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_node_collection_finished(self, node: Any, ids: list[str]) -> None:
        """Remember which test files and tests the xdist workers collected (each collects them all)."""
        self.files.update(nodeid_file(i) for i in ids)
        self.tests = (self.tests or set()) | set(ids)

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        """Remember which tests ran to the end (xdist's report for a dead worker's test is when="???")."""
        if report.when == "call" or (report.when == "setup" and not report.passed):
            self.ran.add(report.nodeid)

    @pytest.hookimpl(wrapper=True)
    def pytest_runtestloop(self, session: pytest.Session) -> Generator[None, Any, Any]:
        """Gate the run once every test has reported; a regression fails the session."""
        result = yield
        if self.active and self.baseline is not None:
            self.gate = self._compare()
            if self.gate.failed and not self.update:
                # Like pytest-cov's --cov-fail-under: exit status 1 even if every test xfailed.
                session.testsfailed += 1
        return result

    def _records(self) -> list[Record]:
        return list(plugin_session(self.config).records)

    def _scope(self) -> Scope:
        records = self._records()
        distributed = self.config.pluginmanager.getplugin("dsession") is not None
        selected = set(plugin_session(self.config).selected)
        option = self.config.option
        return Scope(
            files=self.files | {nodeid_file(r.test) for r in records},
            modes=run_modes(self.config, records),
            # Under xdist deselection happens on the workers and is not reported back.
            deselected=None if distributed else set(self.deselected),
            not_run=selected - {record_key(r) for r in records},
            filtered=bool(getattr(option, "keyword", "") or getattr(option, "markexpr", "")),
            tests=None if self.tests is None else set(self.tests),
            ran=set(self.ran),
        )

    def _compare(self) -> GateResult:
        assert self.baseline is not None
        result = compare(self.baseline, self._records(), self._scope(), name=shown(self.baseline_path))
        result.strict = bool(self.config.getoption("export_baseline_strict", False))
        result.growth_threshold = self.config.getoption("export_baseline_numerics_growth", None)
        return result

    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        """Write the reports (also after Ctrl-C, marked incomplete) and update the baseline."""
        if not self.active:
            return
        stop = _stop_reason(session, exitstatus)
        if self.gate is None and self.baseline is not None:
            self.gate = self._compare()
        report = build_report(
            self._records(),
            environment=environment(self.config, self._records(), time.time() - self.started),
            scope=self._scope_doc(),
            complete=not stop,
            stop_reason=stop,
            gate=self.gate.to_doc() if self.gate else None,
        )
        for path in self.report_paths:
            self._write(report, path)
        if self.update and self.baseline_path is not None:
            if stop:
                self.problems.append(
                    f"baseline {shown(self.baseline_path)} NOT updated: the run is incomplete ({stop})"
                )
            else:
                self._write_baseline(updated_baseline(self.baseline, report, self.gate))
        if self.journal is not None:
            self.journal.finish()
        if self.write_failed and session.exitstatus == pytest.ExitCode.OK:
            # A CI job must not go green while the report it uploads (or the baseline) is missing; the
            # run failed at what it was asked to do, which is pytest's 1 (3 is pytest's own crash).
            session.exitstatus = pytest.ExitCode.TESTS_FAILED

    def _write_baseline(self, report: Report) -> None:
        from pytest_export.results.baseline import baseline_entries, dump_baseline

        path = self.baseline_path
        assert path is not None
        text = dump_baseline(baseline_entries(report.records))
        tmp = path.with_name(f".{path.name}.tmp")
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp.write_text(text, encoding="utf-8")
            os.replace(tmp, path)  # atomic: a killed update never leaves half a baseline
        except OSError as exc:
            self.write_failed = True
            self.problems.append(f"--export-baseline-update: export baseline NOT written to {shown(path)}: {exc}")
        else:
            self.written.append(f"export baseline updated: {shown(path)}")

    def _write(self, report: Report, path: Path, what: str = "report") -> None:
        try:
            write_report(report, path)
        except OSError as exc:
            self.write_failed = True
            option = "--export-baseline-update" if what == "baseline" else "--export-report"
            self.problems.append(f"{option}: export {what} NOT written to {shown(path)}: {exc}")
        else:
            self.written.append(f"export {what}{' updated' if what == 'baseline' else ''}: {shown(path)}")

    @pytest.hookimpl(trylast=True)  # the gate decision reads last, right above pytest's own verdict
    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        """Print the gate decision and where the reports went."""
        if not self.active:
            return
        if self.gate is not None:
            verbose = self.config.get_verbosity() > 0
            failed = self.gate.failed and not self.update
            terminalreporter.write_sep("=", "export gate", red=failed, green=not self.gate.failed, bold=True)
            for line in summary_lines(self.gate, verbose=verbose):
                terminalreporter.write_line(line, red=line.lstrip().startswith(("REGRESSION", "CHANGED", "NUMERICS")))
            if self.gate.failed and self.update:
                terminalreporter.write_line(
                    "  (not failing: --export-baseline-update records these as the new baseline)"
                )
        for line in self.written:
            terminalreporter.write_line(line)
        for line in self.problems:
            terminalreporter.write_line(line, red=True, bold=True)


def _stop_reason(session: pytest.Session, exitstatus: int) -> str:
    if exitstatus == pytest.ExitCode.INTERRUPTED:
        return "interrupted (KeyboardInterrupt or a fatal error); remaining tests did not run"
    if exitstatus == pytest.ExitCode.INTERNAL_ERROR:
        return "pytest internal error"
    for flag in (session.shouldstop, session.shouldfail):
        if flag:
            return f"stopped early: {flag}" if isinstance(flag, str) else "stopped early"
    return ""
