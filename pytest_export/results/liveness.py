"""Whether a process still runs, by its pid, its start time and its state: a pid alone outlives its process.

It does so twice over: as a zombie until its parent reaps it (kill(pid, 0) still succeeds; a script
run by a harness that reads the report before it waits for the script), and as a number the kernel
hands to a later process. On Linux ``/proc/<pid>/stat`` tells both apart: state Z (zombie) or X (dead)
is a process that ended, and another start time is another process. Elsewhere only kill(pid, 0) is
there, which takes a zombie or a reused pid for a running process; a journal's lock
(results.journal.session_alive) is then what tells.

Pure: imports neither pytest nor torch.
"""

from __future__ import annotations

import os
import sys

__all__ = ["running", "start_time"]


def start_time(pid: int) -> int | None:
    """Return when process ``pid`` started (clock ticks after boot), or None where that is unknown."""
    stat = _stat(pid)
    return None if stat is None else stat[1]


def running(pid: int, started: int | None = None) -> bool:
    """Return whether process ``pid`` runs (is neither gone nor a zombie) and, if given, started at ``started``."""
    if _proc():
        try:
            stat = _stat(pid, quiet=False)
        except FileNotFoundError:
            return False
        except OSError:
            stat = None  # /proc mounted hidepid: ask the kernel as elsewhere
        if stat is not None:
            state, since = stat
            if started is not None and since != started:
                return False  # the pid was reused
            if state in "ZX":
                # A thread group's leader that ended before its other threads reads Z too: the
                # process runs until the last of them ends (they still hold its files).
                return state == "Z" and _threads(pid) > 1
            return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True  # someone else's process
    return True


def _proc() -> bool:
    return sys.platform.startswith("linux") and os.path.isdir("/proc/self")


def _stat(pid: int, quiet: bool = True) -> tuple[str, int] | None:
    """Return (state, start time) from /proc/<pid>/stat; None where there is none (or it cannot be read)."""
    if not _proc() or pid <= 0:
        return None
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            text = stat.read()
    except OSError:
        if quiet:
            return None
        raise
    # The command name (field 2) is in parentheses and may hold spaces and ")": split after the last one.
    fields = text[text.rindex(b")") + 2:].split()
    return fields[0].decode("ascii", "replace"), int(fields[19])  # fields 3 (state) and 22 (starttime)


def _threads(pid: int) -> int:
    try:
        return len(os.listdir(f"/proc/{pid}/task"))
    except OSError:
        return 0
