"""A fair share of CPU threads for each xdist worker, so ``-n N`` does not oversubscribe the cores.

torch starts one intra-op thread per physical core in every process: N workers on C cores
run N x C busy threads and spend their time descheduling each other (a 16-worker run of
conv models made no progress in minutes). Each worker therefore gets ``cores // workers``
threads (at least 1), unless the user chose: ``OMP_NUM_THREADS`` / ``MKL_NUM_THREADS`` in
the environment, or ``torch.set_num_threads`` in a conftest. Serial runs are left alone.

How, without importing torch: a worker sets ``OMP_NUM_THREADS`` before its first conftest
loads (pytest_load_initial_conftests; torch and its OpenMP runtime read it when they load),
so a ``torch.set_num_threads`` in the user's conftest or tests still wins. If another plugin
imported torch even earlier, the share is applied with ``torch.set_num_threads`` only while
torch still has its default thread count (one per physical core).
"""

from __future__ import annotations

import os
import sys
from typing import Mapping, MutableMapping

__all__ = ["USER_VARIABLES", "available_cores", "fair_share", "header_line", "share_threads", "user_setting"]

#: Environment variables that mean "the user chose the thread count".
USER_VARIABLES = ("OMP_NUM_THREADS", "MKL_NUM_THREADS")
#: Set on a worker whose OMP_NUM_THREADS is our share, not the user's (nested sessions must tell).
_OURS = "PYTEST_EXPORT_FAIR_THREADS"


def available_cores() -> int:
    """Return the CPU cores this process may run on (its affinity mask where the OS has one)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def fair_share(cores: int, workers: int) -> int:
    """Return the threads each of ``workers`` processes gets on ``cores`` cores (at least 1)."""
    return max(1, cores // max(1, workers))


def user_setting(env: Mapping[str, str]) -> str:
    """Return the user's thread variable as ``NAME=value`` ("" if the user set none)."""
    if env.get(_OURS):
        return ""
    for name in USER_VARIABLES:
        if env.get(name, "").strip():
            return f"{name}={env[name].strip()}"
    return ""


def header_line(workers: int, env: Mapping[str, str] | None = None, cores: int | None = None) -> str:
    """Return the session header line about worker threads."""
    env = os.environ if env is None else env
    chosen = user_setting(env)
    if chosen:
        return f"pytest-export: {workers} workers, torch threads as set by {chosen}"
    cores = available_cores() if cores is None else cores
    share = fair_share(cores, workers)
    return (f"pytest-export: {workers} workers x {share} torch thread{'s' if share > 1 else ''} "
            f"(fair share of {cores} cores; set OMP_NUM_THREADS or call torch.set_num_threads to choose)")


def share_threads(workers: int, env: MutableMapping[str, str] | None = None, cores: int | None = None) -> int | None:
    """Give this worker its share of threads unless the user chose; return the count applied (None: untouched)."""
    env = os.environ if env is None else env
    if user_setting(env) or env.get(_OURS):  # the user chose, or this process has its share already
        return None
    share = fair_share(available_cores() if cores is None else cores, workers)
    torch = sys.modules.get("torch")
    if torch is None:
        env["OMP_NUM_THREADS"] = str(share)
        env[_OURS] = "1"
        return share
    # A conftest imported torch already: apply the share only if nobody changed torch's default.
    if torch.get_num_threads() != _torch_default_threads():
        return None
    torch.set_num_threads(share)
    return share


def _torch_default_threads() -> int:
    """Return the intra-op thread count torch starts with: the machine's physical cores."""
    cores: set[tuple[str, str]] = set()
    try:
        with open("/proc/cpuinfo", encoding="ascii", errors="replace") as fh:
            physical = core = ""
            for line in fh:
                key, _, value = line.partition(":")
                key, value = key.strip(), value.strip()
                if key == "physical id":
                    physical = value
                elif key == "core id":
                    core = value
                elif not key and (physical or core):
                    cores.add((physical, core))
                    physical = core = ""
            if physical or core:
                cores.add((physical, core))
    except OSError:
        pass
    return len(cores) or os.cpu_count() or 1
