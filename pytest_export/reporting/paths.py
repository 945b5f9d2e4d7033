"""Report and baseline paths given on the command line: checked before any test runs, shown relative.

Imports pytest (for UsageError) but not torch.
"""

from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path
from typing import NoReturn

import pytest

from pytest_export.results.report import temp_prefix

__all__ = ["check_writable", "fail", "parse_shard", "same_file", "shown"]


def fail(message: str) -> NoReturn:
    """Stop the session with a usage error (exit status 4) saying ``message``."""
    raise pytest.UsageError(message)


def check_writable(path: Path, name: str, option: str) -> None:
    """Fail (usage error) unless ``path`` can be written as a report; create missing directories."""
    try:
        info = path.stat()
    except (FileNotFoundError, NotADirectoryError):  # a missing directory is made (or refused) below
        info = None
    except OSError as exc:  # a name too long, a loop of links, ...
        fail(f"{option} {name}: cannot be used as a file path ({exc.strerror or exc})")
    if info is not None and stat.S_ISDIR(info.st_mode):
        fail(f"{option} {name}: is a directory, expected a file path")
    if info is not None and not stat.S_ISREG(info.st_mode):
        fail(f"{option} {name}: is not a regular file (a FIFO, a device, ...); expected a file path")
    parent = path.parent
    try:
        # Like --junitxml, create missing directories (CI writes to a fresh reports/ folder).
        parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        fail(f"{option} {name}: cannot create directory {shown(parent)} ({exc.strerror or exc})")
    # os.access says yes to root, on read-only mounts and under ACLs: create the temporary
    # file the atomic write will need, so an unwritable path stops the run before any test.
    try:
        fd, probe = tempfile.mkstemp(prefix=temp_prefix(path), suffix=".probe", dir=parent)
    except OSError as exc:
        fail(f"{option} {name}: directory {shown(parent)} is not writable ({exc.strerror or exc})")
    os.close(fd)
    try:
        os.unlink(probe)
    except OSError:
        pass  # a leftover empty dot-file is harmless; the write itself may still succeed


def parse_shard(config: pytest.Config) -> tuple[int, int] | None:
    """Return (I, N) when this run is shard I of N (--export-shard, or pytest-split's --group/--splits)."""
    raw = config.getoption("export_shard", default=None)
    if raw is None:
        # pytest-split: --splits N --group I (1-based, like ours).
        splits, group = config.getoption("splits", default=None), config.getoption("group", default=None)
        if isinstance(splits, int) and isinstance(group, int) and 1 <= group <= splits:
            return (group, splits)
        return None
    index, sep, count = str(raw).partition("/")
    try:
        shard = (int(index), int(count))
    except ValueError:
        shard = (0, 0)
    if not sep or not 1 <= shard[0] <= shard[1]:
        fail(f"--export-shard must be I/N with 1 <= I <= N (this run is shard I of N), got {raw!r}")
    return shard


def same_file(a: Path, b: Path) -> bool:
    """Return whether two paths name one file (also when neither exists yet)."""
    from pytest_export.cli.paths import same_path

    return same_path(a, b)


def shown(path: Path | None) -> str:
    """Return ``path`` as the user would type it: relative to the current directory when below it."""
    if path is None:
        return "baseline"
    try:
        rel = os.path.relpath(path)
    except ValueError:  # another drive on Windows
        return str(path)
    return str(path) if rel.startswith("..") else rel
