"""Command-line and ini options of pytest-export, resolved once per session into RunOptions.

Precedence: the command line beats the ini file; a marker's own ``examples`` beats both,
and a hypothesis profile's ``max_examples`` counts only where none of them sets a count;
``--export-modes`` and ``--export-checks`` narrow a marker's ``modes`` / ``checks``.

Time limits, and what works where:

- ``--export-timeout S`` (ini ``export_timeout``): the engine's own deadline (SIGALRM in the
  main thread). A hang in Python code (``forward``, tracing) becomes outcome ``timeout`` with
  the stage it was in, and the session goes on; what builds the case (a marker test's body, a
  zoo factory) gets the same limit of its own first (runner.call_bounded). Works serially and
  under xdist (workers run tests in their main thread); not enforced off the main thread or
  where SIGALRM is missing.
- pytest-timeout (``--timeout N`` / ``@pytest.mark.timeout(N)``), when installed and
  ``--export-timeout`` is not given: the export gets 90% of N, so it stops first and
  records its stage. If pytest-timeout fires anyway (a hang in C code, torch's first
  import), ``timeout_method=signal`` leaves the test recorded as ``timeout`` (stage
  unknown); ``timeout_method=thread`` kills the process: serially the session ends, under
  xdist the worker is replaced and the test is recorded as ``crashed``.
"""

from __future__ import annotations

import re
import zlib
from dataclasses import dataclass
from typing import Any

import pytest

from exportcore.case import CHECKS, DEFAULT_CHECKS, DEFAULT_EXAMPLES
from exportcore.devices import DEVICES
from exportcore.modes import mode_names, target_mode_problem
from exportcore.columns import Column
from exportcore.targets import TARGETS

__all__ = ["RunOptions", "add_options", "resolve"]

FINDINGS = ("warning", "error")
#: exportcore.reuse.result_cache.CACHE_MODES, spelled here too: importing the engine here would load it in every session.
CACHE_MODES = ("off", "read", "write", "on")
#: The smallest --export-timeout accepted. Exporting and checking a one-op function takes ~30 ms
#: on a warm 2-core machine; a limit below 0.1 s can only turn every case into a timeout (a typo,
#: or milliseconds meant), so it is refused rather than run.
MIN_TIMEOUT_S = 0.1


@dataclass(frozen=True)
class RunOptions:
    """The run's export settings; None means "the engine's default". Kept on the PluginSession (session_state)."""

    known_modes: tuple[str, ...]
    modes: tuple[str, ...] | None = None  # --export-modes: run only these
    checks: tuple[str, ...] | None = None  # --export-checks: run only these
    examples: int | None = None
    timeout: float | None = None
    findings_as_errors: bool = False
    seed: int | None = None  # from --hypothesis-seed
    input_budget: int | None = None  # --export-input-budget, bytes
    targets: tuple[str, ...] = ()  # --export-targets: added to every exportable test
    devices: tuple[str, ...] | None = None  # --export-devices (None: cpu)
    target_mode: str | None = None  # --export-target-mode: the export a target starts from

    def columns_for(self, modes: tuple[str, ...] | None, targets: tuple[str, ...] | None,
                    devices: tuple[str, ...] | None) -> list[Column]:
        """Return a test's columns: its modes and targets on each of its devices (cpu ids unchanged)."""
        names = [*self.modes_for(modes), *dict.fromkeys([*(targets or ()), *self.targets])]
        chosen = devices if devices is not None else self.devices or ("cpu",)
        return [Column(n, d) for d in chosen for n in names]

    def known_columns(self) -> tuple[Column, ...]:
        """Return every column this run can produce (for node ids of crashed workers, the matrix's order)."""
        names = [*self.known_modes, *TARGETS]
        return tuple(Column(n, d) for d in DEVICES for n in names)
    explain: bool = False  # --export-explain: submodule search and draft_export on failing cases
    reuse: bool = True  # --export-no-reuse turns off sharing runs between modes with the same program
    slowest: int = 0  # --export-slowest: list the N slowest exports in the terminal summary
    cache: str = "on"  # --export-cache: the result cache under pytest's cache dir (pytest_export.cache_dir)
    cache_audit: float = 0.0  # --export-cache-audit: the share of served results checked again in full
    repeat: int = 1  # --export-repeat: run each (case, column)'s checks this many times; a changing verdict is unstable

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


#: pytest's typed ini kinds (pytest >= 8.4); older pytest reads them as strings, converted below.
_TYPED_NUMBERS = tuple(getattr(pytest, "version_tuple", (0,))[:2]) >= (8, 4)
_INT = "int" if _TYPED_NUMBERS else "string"
_FLOAT = "float" if _TYPED_NUMBERS else "string"


def add_options(parser: pytest.Parser, group: Any) -> None:
    """Register the --export-* options and their ini twins."""
    default_checks = "all" if set(DEFAULT_CHECKS) == set(CHECKS) else ", ".join(c for c in CHECKS if c in DEFAULT_CHECKS)
    group.addoption("--export-modes", dest="export_modes", default=None, metavar="MODES",
                    help=f"comma-separated export modes to run, of {', '.join(mode_names())} and any a plugin "
                    "adds (default: all; ini export_modes)")
    group.addoption("--export-checks", dest="export_checks", default=None, metavar="CHECKS",
                    help=f"comma-separated checks to run, of {', '.join(CHECKS)} (default: {default_checks}; "
                    "ini export_checks)")
    group.addoption("--export-examples", dest="export_examples", default=None, metavar="N",
                    help=f"hypothesis-drawn input shapes per case and mode (default: {DEFAULT_EXAMPLES}; "
                    "ini export_examples)")
    group.addoption("--export-timeout", dest="export_timeout", default=None, metavar="SECONDS",
                    help="stop a case after SECONDS and record it as timeout (ini export_timeout)")
    group.addoption("--export-findings", dest="export_findings", default=None, choices=FINDINGS,
                    help="treat findings (specialized dims, ...) as warnings (default) or errors")
    group.addoption("--export-input-budget", dest="export_input_budget", default=None, metavar="BYTES",
                    help="most bytes one drawn input set may take, e.g. 256MiB (default: max(64MiB, 16x the "
                    "example inputs); ini export_input_budget)")
    parser.addini("export_input_budget", "most bytes one drawn input set may take, e.g. 256MiB", default="")
    group.addoption("--export-targets", dest="export_targets", default=None, metavar="TARGETS",
                    help=f"also check every case in these runtimes, of {', '.join(TARGETS)} (ini export_targets)")
    group.addoption("--export-devices", dest="export_devices", default=None, metavar="DEVICES",
                    help=f"run each mode and target on these devices, of {', '.join(DEVICES)} (default cpu; "
                    "ini export_devices)")
    group.addoption("--export-target-mode", dest="export_target_mode", default=None, metavar="MODE",
                    help="the inference export targets start from: non_strict (default) or strict "
                    "(ini export_target_mode)")
    parser.addini("export_targets", "runtimes to check every case in (one per line, or comma-separated)",
                  type="linelist", default=[])
    parser.addini("export_devices", "devices to run on (one per line, or comma-separated; default cpu)",
                  type="linelist", default=[])
    parser.addini("export_target_mode", "the export mode targets start from", default="")
    group.addoption("--export-explain", dest="export_explain", action="store_true", default=None,
                    help="on failing cases also find the failing submodule and list every issue "
                    "(draft_export); costs extra exports per failure only (ini export_explain)")
    parser.addini("export_explain", "explain failing cases in full (see --export-explain)", type="bool",
                  default=False)
    group.addoption("--export-no-reuse", dest="export_reuse", action="store_false", default=None,
                    help="run every mode's checks itself, even where its captured program is proven the same "
                    "as another mode's (by default the later mode reuses those runs; ini export_reuse)")
    parser.addini("export_reuse", "share runs between modes that capture the same program (default true)",
                  type="bool", default=True)
    group.addoption("--export-slowest", dest="export_slowest", default=None, metavar="N",
                    help="list the N slowest exports after the export matrix, as --durations does for tests "
                    "(default 0: none; ini export_slowest)")
    parser.addini("export_slowest", "how many slowest exports the terminal summary lists (default 0)",
                  type=_INT, default=None)
    group.addoption("--export-cache", dest="export_cache", default=None, choices=CACHE_MODES,
                    help="reuse the results of an earlier run whose captured program, model state, inputs, eager "
                    "answer, options, torch and pytest-export are proven the same: on (default), read, write or "
                    "off; kept under pytest's cache dir, so --cache-clear empties it (ini export_cache)")
    parser.addini("export_cache", "the result cache: on, read, write or off (default on)", default="on")
    group.addoption("--export-cache-audit", dest="export_cache_audit", default=None, metavar="FRACTION",
                    help="check this share (0 to 1) of the results the result cache served again in full, and fail "
                    "a result whose served and recomputed outcomes differ, naming both (default 0; chosen by the "
                    "result's key, so shards agree; ini export_cache_audit)")
    parser.addini("export_cache_audit", "share of served results checked again in full (default 0)", type=_FLOAT,
                  default=None)
    group.addoption("--export-repeat", dest="export_repeat", default=None, metavar="K",
                    help="run each (case, mode)'s checks K times from fresh seeds, without the result cache or "
                    "reuse; a verdict that changes between runs is 'unstable' and fails its test (default 1; "
                    "ini export_repeat)")
    parser.addini("export_repeat", "runs of each (case, mode)'s checks (default 1)", type=_INT, default=None)
    parser.addini("export_modes", "export modes to run (one per line, or comma-separated)", type="linelist",
                  default=[])
    parser.addini("export_checks", "checks to run (one per line, or comma-separated)", type="linelist", default=[])
    parser.addini("export_examples", "hypothesis-drawn input shapes per case and mode", type=_INT, default=None)
    parser.addini("export_timeout", "per-case time limit in seconds", type=_FLOAT, default=None)
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
    if timeout is not None and timeout < MIN_TIMEOUT_S:
        raise pytest.UsageError(
            f"--export-timeout must be at least {MIN_TIMEOUT_S:g} s: no export finishes sooner, so every case "
            f"would time out (it is in seconds), got {timeout:g}"
        )
    findings = _raw(config, "export_findings") or "warning"
    if findings not in FINDINGS:
        raise pytest.UsageError(f"export_findings must be one of {', '.join(FINDINGS)}, got {findings!r}")
    explain = config.getoption("export_explain")
    explain = bool(config.getini("export_explain")) if explain is None else explain
    reuse = config.getoption("export_reuse")
    reuse = bool(config.getini("export_reuse")) if reuse is None else reuse
    slowest = _number(config, "export_slowest", int) or 0
    cache = _raw(config, "export_cache") or "on"
    if cache not in CACHE_MODES:
        raise pytest.UsageError(f"export_cache must be one of {', '.join(CACHE_MODES)}, got {cache!r}")
    if getattr(config, "cache", None) is None:  # -p no:cacheprovider: nowhere to keep it
        cache = "off"
    audit = _number(config, "export_cache_audit", float)
    if audit is not None and not 0 <= audit <= 1:  # also refuses nan
        raise pytest.UsageError(f"--export-cache-audit must be a share between 0 and 1, got {audit}")
    repeat = _number(config, "export_repeat", int)
    if repeat is not None and repeat < 1:
        raise pytest.UsageError(f"--export-repeat must be at least 1 (runs of each case), got {repeat}")
    targets = _names(config, "export_targets", TARGETS, "target") or ()
    devices = _names(config, "export_devices", DEVICES, "device")
    if devices == ():
        raise pytest.UsageError("--export-devices: name at least one device")
    target_mode = _raw(config, "export_target_mode") or None
    if target_mode is not None and target_mode_problem(target_mode):
        raise pytest.UsageError(f"--export-target-mode {target_mode_problem(target_mode)}")
    return RunOptions(known_modes, modes, checks, examples, timeout, findings == "error", _seed(config),
                      input_budget=_input_budget(config), targets=targets, devices=devices,
                      target_mode=target_mode, explain=explain, reuse=reuse, cache=cache, slowest=slowest,
                      cache_audit=audit or 0.0, repeat=repeat or 1)


def _input_budget(config: pytest.Config) -> int | None:
    from exportcore.input_budget import parse_bytes  # no torch, no hypothesis

    raw = _raw(config, "export_input_budget")
    if not raw:
        return None
    try:
        return parse_bytes(raw)
    except ValueError as exc:
        raise pytest.UsageError(f"--export-input-budget: {exc}") from None


def _raw(config: pytest.Config, name: str) -> str:
    value = config.getoption(name)
    if value is None:
        try:
            value = config.getini(name)
        except (TypeError, ValueError, pytest.UsageError) as exc:  # a typed ini value pytest could not convert
            raise pytest.UsageError(f"ini {name}: {exc}") from None
    if isinstance(value, list):  # a linelist: one per line, and each line may still hold a comma list
        value = ",".join(value)
    return "" if value is None else str(value).strip()


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
        what = "an integer" if kind is int else "a number"
        raise pytest.UsageError(f"--{name.replace('_', '-')} must be {what}, got {raw!r}") from None
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
