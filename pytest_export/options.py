"""Command-line and ini options of pytest-export, resolved once per session into RunOptions.

Precedence: the command line beats the ini file; a marker's own ``examples`` beats both;
``--export-modes`` and ``--export-checks`` narrow a marker's ``modes`` / ``checks``.

Time limits, and what works where:

- ``--export-timeout S`` (ini ``export_timeout``): the engine's own deadline (SIGALRM in the
  main thread). A hang in Python code (``forward``, tracing) becomes outcome ``timeout`` with
  the stage it was in, and the session goes on. Works serially and under xdist (workers run
  tests in their main thread); not enforced off the main thread or where SIGALRM is missing.
- pytest-timeout (``--timeout N`` / ``@pytest.mark.timeout(N)``), when installed and
  ``--export-timeout`` is not given: the export gets 90% of N, so it stops first and
  records its stage. If pytest-timeout fires anyway (a hang in C code, torch's first
  import), ``timeout_method=signal`` leaves the test recorded as ``timeout`` (stage
  unknown); ``timeout_method=thread`` kills the process: serially the session ends, under
  xdist the worker is replaced and the test is recorded as ``crashed``.
"""

from __future__ import annotations

import inspect
import re
import zlib
from dataclasses import dataclass
from typing import Any

import pytest

from exportcore.case import CHECKS, DEFAULT_CHECKS
from exportcore.check import check as _engine_check
from exportcore.modes import mode_names

__all__ = ["RunOptions", "OPTIONS", "add_options", "resolve"]

#: The session's resolved options (set in pytest_configure).
OPTIONS = pytest.StashKey["RunOptions"]()

FINDINGS = ("warning", "error")


@dataclass(frozen=True)
class RunOptions:
    """The run's export settings; None means "the engine's default"."""

    known_modes: tuple[str, ...]
    modes: tuple[str, ...] | None = None  # --export-modes: run only these
    checks: tuple[str, ...] | None = None  # --export-checks: run only these
    examples: int | None = None
    timeout: float | None = None
    findings_as_errors: bool = False
    seed: int | None = None  # from --hypothesis-seed

    def modes_for(self, wanted: tuple[str, ...] | None) -> list[str]:
        """Return the modes a test runs: its own (or all known) narrowed by --export-modes."""
        base = wanted if wanted is not None else self.known_modes
        return [m for m in base if self.modes is None or m in self.modes]

    def checks_for(self, wanted: tuple[str, ...] | None) -> tuple[str, ...] | None:
        """Return a test's checks: its own narrowed by --export-checks, or None for the default."""
        if wanted is None:
            return self.checks
        if self.checks is None:
            return wanted
        return tuple(c for c in wanted if c in self.checks)


def add_options(parser: pytest.Parser, group: Any) -> None:
    """Register the --export-* options and their ini twins."""
    examples = inspect.signature(_engine_check).parameters["examples"].default
    default_checks = "all" if set(DEFAULT_CHECKS) == set(CHECKS) else ", ".join(c for c in CHECKS if c in DEFAULT_CHECKS)
    group.addoption("--export-modes", dest="export_modes", default=None, metavar="MODES",
                    help=f"comma-separated export modes to run, of {', '.join(mode_names())} and any a plugin "
                    "adds (default: all; ini export_modes)")
    group.addoption("--export-checks", dest="export_checks", default=None, metavar="CHECKS",
                    help=f"comma-separated checks to run, of {', '.join(CHECKS)} (default: {default_checks}; "
                    "ini export_checks)")
    group.addoption("--export-examples", dest="export_examples", default=None, metavar="N",
                    help=f"hypothesis-drawn input shapes per case and mode (default: {examples}; "
                    "ini export_examples)")
    group.addoption("--export-timeout", dest="export_timeout", default=None, metavar="SECONDS",
                    help="stop a case after SECONDS and record it as timeout (ini export_timeout)")
    group.addoption("--export-findings", dest="export_findings", default=None, choices=FINDINGS,
                    help="treat findings (specialized dims, ...) as warnings (default) or errors")
    parser.addini("export_modes", "export modes to run, comma-separated", default="")
    parser.addini("export_checks", "checks to run, comma-separated", default="")
    parser.addini("export_examples", "hypothesis-drawn input shapes per case and mode", default="")
    parser.addini("export_timeout", "per-case time limit in seconds", default="")
    parser.addini("export_findings", "findings are a 'warning' or an 'error'", default="")


def resolve(config: pytest.Config, known_modes: tuple[str, ...]) -> RunOptions:
    """Return the session's RunOptions; raise pytest.UsageError naming a bad option."""
    modes = _names(config, "export_modes", known_modes, "mode")
    if modes == ():
        raise pytest.UsageError("--export-modes: name at least one mode")
    checks = _names(config, "export_checks", CHECKS, "check")
    examples = _number(config, "export_examples", int)
    timeout = _number(config, "export_timeout", float)
    if timeout is not None and not timeout > 0:  # also refuses nan
        raise pytest.UsageError(f"--export-timeout must be positive (seconds), got {timeout}")
    findings = _raw(config, "export_findings") or "warning"
    if findings not in FINDINGS:
        raise pytest.UsageError(f"export_findings must be one of {', '.join(FINDINGS)}, got {findings!r}")
    return RunOptions(known_modes, modes, checks, examples, timeout, findings == "error", _seed(config))


def _raw(config: pytest.Config, name: str) -> str:
    value = config.getoption(name)
    if value is None:
        value = config.getini(name)
    return str(value or "").strip()


def _names(config: pytest.Config, name: str, known: tuple[str, ...], what: str) -> tuple[str, ...] | None:
    raw = _raw(config, name)
    if not raw:
        return None
    names = tuple(dict.fromkeys(p for p in re.split(r"[,\s]+", raw) if p))
    for n in names:
        if n not in known:
            raise pytest.UsageError(f"--{name.replace('_', '-')}: unknown {what} {n!r}; known: {', '.join(known)}")
    return names


def _number(config: pytest.Config, name: str, kind: type) -> Any:
    raw = _raw(config, name)
    if not raw:
        return None
    try:
        value = kind(raw)
    except ValueError:
        raise pytest.UsageError(f"--{name.replace('_', '-')} must be a {kind.__name__}, got {raw!r}") from None
    if value < 0:
        raise pytest.UsageError(f"--{name.replace('_', '-')} must not be negative, got {raw!r}")
    return value


def _seed(config: pytest.Config) -> int | None:
    try:
        raw = config.getoption("--hypothesis-seed")
    except ValueError:  # hypothesis' pytest plugin not loaded
        return None
    if raw is None:
        return None
    try:
        return int(raw)
    except ValueError:
        # hypothesis accepts any string seed; keep the mapping stable across processes.
        return zlib.crc32(str(raw).encode())
