"""pytest glue for reports and the baseline gate: options, validation, writing, exit status.

The controller alone (a serial run, or xdist's controller) registers ReportingPlugin.
Rendering and the gate live in pure modules (report*, gate); this one only gathers
what pytest knows and hands off. Importing it does not import torch.
"""

from __future__ import annotations

import os
import platform
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any, Generator, NoReturn

import pytest

from pytest_export import __version__
from pytest_export.gate import GateResult, Scope, compare, summary_lines, updated_baseline
from pytest_export.records import RECORDS, SELECTED, record_key
from pytest_export.report import ReportError, build_report, load_report, nodeid_file, report_format, write_report

__all__ = ["add_options", "ReportingPlugin", "environment"]


def add_options(parser: pytest.Parser, group: Any) -> None:
    """Register --export-report, --export-baseline, --export-baseline-update and their ini twins."""
    group.addoption(
        "--export-report", action="append", dest="export_report", default=[], metavar="PATH",
        help="write an export report to PATH; format from the extension: .json, .html, .md (repeatable)",
    )
    group.addoption(
        "--export-baseline", dest="export_baseline", default=None, metavar="PATH",
        help="fail the session when a (case, mode) that passed in this earlier JSON report does not pass now",
    )
    group.addoption(
        "--export-baseline-update", dest="export_baseline_update", action="store_true", default=False,
        help="write this run's results to the --export-baseline file instead of failing on regressions",
    )
    parser.addini("export_report", "export report paths (format from the extension)", type="paths", default=[])
    parser.addini("export_baseline", "baseline JSON report for the export gate", default="")


def _fail(message: str) -> NoReturn:
    raise pytest.UsageError(message)


def _check_writable(path: Path, shown: str, option: str) -> None:
    if path.is_dir():
        _fail(f"{option} {shown}: is a directory, expected a file path")
    parent = path.parent
    try:
        # Like --junitxml, create missing directories (CI writes to a fresh reports/ folder).
        parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        _fail(f"{option} {shown}: cannot create directory {_shown(parent)} ({exc.strerror or exc})")
    # os.access says yes to root, on read-only mounts and under ACLs: create the temporary
    # file the atomic write will need, so an unwritable path stops the run before any test.
    try:
        fd, probe = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".probe", dir=parent)
    except OSError as exc:
        _fail(f"{option} {shown}: directory {_shown(parent)} is not writable ({exc.strerror or exc})")
    os.close(fd)
    try:
        os.unlink(probe)
    except OSError:
        pass  # a leftover empty dot-file is harmless; the write itself may still succeed


class ReportingPlugin:
    """Controller-side hooks: validate options, gather scope, gate the session, write reports."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.report_paths = self._report_paths()
        self.update: bool = bool(config.getoption("export_baseline_update", default=False))
        self.baseline_path = self._baseline_path()
        self.baseline = self._load_baseline()
        self.gate: GateResult | None = None
        self.files: set[str] = set()
        self.deselected: set[str] = set()
        self.started = time.time()
        self.written: list[str] = []
        self.problems: list[str] = []
        self.write_failed = False

    def _report_paths(self) -> list[Path]:
        cli = self.config.getoption("export_report", default=None) or []
        given = [str(p) for p in cli] or [str(p) for p in self.config.getini("export_report")]
        paths = []
        for name in given:
            path = Path(os.path.abspath(Path(self.config.invocation_params.dir) / name))
            _check_writable(path, name, "--export-report")
            try:
                report_format(name)
            except ValueError as exc:
                _fail(f"--export-report: {exc}")
            paths.append(path)
        return paths

    def _load_baseline(self) -> dict[str, Any] | None:
        path = self.baseline_path
        if path is None:
            if self.update:
                _fail("--export-baseline-update needs --export-baseline=PATH (or ini export_baseline)")
            return None
        if self.update:
            _check_writable(path, _shown(path), "--export-baseline")
            if not path.exists():
                return None  # the first --export-baseline-update creates it
        elif not path.exists():
            _fail(f"--export-baseline: {_shown(path)}: file does not exist; create it with --export-baseline-update")
        try:
            return load_report(path, _shown(path))
        except ReportError as exc:
            _fail(f"--export-baseline: {exc}")

    def _baseline_path(self) -> Path | None:
        cli = self.config.getoption("export_baseline", default=None)
        if cli:
            return Path(os.path.abspath(Path(self.config.invocation_params.dir) / cli))
        ini = self.config.getini("export_baseline")
        if ini:
            base = self.config.inipath.parent if self.config.inipath else self.config.rootpath
            return Path(os.path.abspath(base / ini))
        return None

    @property
    def active(self) -> bool:
        """Return whether this plugin has anything to do in this session."""
        return bool(self.report_paths or self.baseline_path) and not self.config.option.collectonly

    def pytest_deselected(self, items: list[pytest.Item]) -> None:
        """Remember -k/-m deselections (serial runs; xdist workers keep theirs)."""
        self.deselected.update(item.nodeid for item in items)
        self.files.update(nodeid_file(item.nodeid) for item in items)

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        """Remember which test files this run collected."""
        self.files.update(nodeid_file(item.nodeid) for item in session.items)

    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_node_collection_finished(self, node: Any, ids: list[str]) -> None:
        """Remember which test files the xdist workers collected."""
        self.files.update(nodeid_file(i) for i in ids)

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

    def _records(self) -> list[dict[str, Any]]:
        return list(self.config.stash.get(RECORDS, []))

    def _scope(self) -> Scope:
        records = self._records()
        distributed = self.config.pluginmanager.getplugin("dsession") is not None
        selected = set(self.config.stash.get(SELECTED, set()))
        option = self.config.option
        return Scope(
            files=self.files | {nodeid_file(r["test"]) for r in records},
            modes=_run_modes(self.config, records),
            # Under xdist deselection happens on the workers and is not reported back.
            deselected=None if distributed else set(self.deselected),
            not_run=selected - {record_key(r) for r in records},
            filtered=bool(getattr(option, "keyword", "") or getattr(option, "markexpr", "")),
        )

    def _compare(self) -> GateResult:
        assert self.baseline is not None
        return compare(self.baseline, self._records(), self._scope(), name=_shown(self.baseline_path))

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
            scope=self._scope().to_dict(),
            complete=not stop,
            stop_reason=stop,
            gate=self.gate.to_dict() if self.gate else None,
        )
        for path in self.report_paths:
            self._write(report, path)
        if self.update and self.baseline_path is not None:
            if stop:
                self.problems.append(
                    f"baseline {_shown(self.baseline_path)} NOT updated: the run is incomplete ({stop})"
                )
            else:
                self._write(updated_baseline(self.baseline, report, self.gate), self.baseline_path, "baseline")
        if self.write_failed and session.exitstatus == pytest.ExitCode.OK:
            # A CI job must not go green while the report it uploads (or the baseline) is missing.
            session.exitstatus = pytest.ExitCode.INTERNAL_ERROR

    def _write(self, report: dict[str, Any], path: Path, what: str = "report") -> None:
        try:
            write_report(report, path)
        except OSError as exc:
            self.write_failed = True
            option = "--export-baseline-update" if what == "baseline" else "--export-report"
            self.problems.append(f"{option}: export {what} NOT written to {_shown(path)}: {exc}")
        else:
            self.written.append(f"export {what}{' updated' if what == 'baseline' else ''}: {_shown(path)}")

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
                terminalreporter.write_line(line, red=line.lstrip().startswith("REGRESSION"))
            if self.gate.failed and self.update:
                terminalreporter.write_line(
                    "  (not failing: --export-baseline-update records these as the new baseline)"
                )
        for line in self.written:
            terminalreporter.write_line(line)
        for line in self.problems:
            terminalreporter.write_line(line, red=True, bold=True)


def _shown(path: Path | None) -> str:
    if path is None:
        return "baseline"
    try:
        rel = os.path.relpath(path)
    except ValueError:  # another drive on Windows
        return str(path)
    return str(path) if rel.startswith("..") else rel


def _stop_reason(session: pytest.Session, exitstatus: int) -> str:
    if exitstatus == pytest.ExitCode.INTERRUPTED:
        return "interrupted (KeyboardInterrupt or a fatal error); remaining tests did not run"
    if exitstatus == pytest.ExitCode.INTERNAL_ERROR:
        return "pytest internal error"
    for flag in (session.shouldstop, session.shouldfail):
        if flag:
            return f"stopped early: {flag}" if isinstance(flag, str) else "stopped early"
    return ""


def _options(config: pytest.Config) -> Any:
    try:
        from pytest_export.options import OPTIONS
    except ImportError:
        return None
    return config.stash.get(OPTIONS, None)


def _run_modes(config: pytest.Config, records: list[dict[str, Any]]) -> set[str] | None:
    options = _options(config)
    if options is not None:
        return set(options.modes or options.known_modes) | set(options.targets) | {r["mode"] for r in records}
    return None


def environment(config: pytest.Config, records: list[dict[str, Any]], duration: float) -> dict[str, Any]:
    """Return the environment block of a report (never imports torch just for this)."""
    torch_versions = Counter((r.get("outcome") or {}).get("torch_version") for r in records)
    torch_versions.pop(None, None)
    torch_versions.pop("", None)
    if torch_versions:
        torch_version = str(torch_versions.most_common(1)[0][0])
    elif "torch" in sys.modules:
        torch_version = str(getattr(sys.modules["torch"], "__version__", "unknown"))
    else:
        torch_version = "not loaded"
    options = _options(config)
    profile = config.getoption("hypothesis_profile", default=None)
    if profile is None and "hypothesis" in sys.modules:
        profile = getattr(sys.modules["hypothesis"].settings, "_current_profile", None)
    seed = getattr(options, "seed", None)
    if seed is None:
        seed = config.getoption("hypothesis_seed", default=None)
    return {
        "torch": torch_version,
        "python": platform.python_version(),
        "platform": platform.platform(),
        "pytest": pytest.__version__,
        "pytest_export": __version__,
        "modes": sorted(_run_modes(config, records) or {r["mode"] for r in records}),
        "seed": seed,
        "hypothesis_profile": profile or "default",
        "workers": config.getoption("numprocesses", default=None),
        "started": time.strftime("%Y-%m-%dT%H:%M:%S%z", time.localtime(time.time() - duration)),
        "duration_s": round(duration, 2),
    }
