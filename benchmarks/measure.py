"""What every benchmark shares: describing the machine and timing a command in a subprocess."""

from __future__ import annotations

import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Sequence

__all__ = ["ROOT", "bench_env", "machine", "timed", "summary"]

ROOT = Path(__file__).resolve().parent.parent
#: Where the benchmarks' subprocesses keep bytecode (outside the source tree).
PYCACHE = Path(tempfile.gettempdir()) / "pytest-export-bench-pycache"


def bench_env(**extra: str) -> dict[str, str]:
    """Return the environment for timed subprocesses: bytecode caching on, as in a normal install.

    Some environments set PYTHONDONTWRITEBYTECODE=1; then every pytest session recompiles and
    assertion-rewrites every plugin module it imports (hypothesis alone is ~80 modules), a
    cost users with a normal install do not pay. The cache goes to a prefix outside the tree.
    """
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPYCACHEPREFIX"] = str(PYCACHE)
    env.update(extra)
    return env


def machine() -> str:
    """Return one line naming the machine: CPU model, cores, GPU, load, Python and torch versions."""
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg()) if hasattr(os, "getloadavg") else "n/a"
    torch_version = subprocess.run(
        [sys.executable, "-c", "import torch; print(torch.__version__, torch.cuda.is_available())"],
        capture_output=True, text=True, check=False, env=bench_env(),
    ).stdout.split()
    gpu = "GPU" if torch_version[-1:] == ["True"] else "no GPU"
    return (
        f"{cpu}, {os.cpu_count()} cores, {gpu}, load average {load} at start; "
        f"Python {platform.python_version()}, torch {torch_version[0] if torch_version else '?'}; "
        f"bytecode cached in {PYCACHE}"
    )


def timed(cmd: Sequence[str], *, cwd: Path = ROOT, env: dict[str, str] | None = None, check: bool = True) -> float:
    """Run ``cmd`` and return its wall-clock seconds; raise with its output if it fails and ``check``."""
    start = time.perf_counter()
    env = env if env is not None else bench_env()
    proc = subprocess.run(list(cmd), cwd=cwd, env=env, capture_output=True, text=True, check=False)
    elapsed = time.perf_counter() - start
    if check and proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} exited {proc.returncode}:\n{proc.stdout[-4000:]}\n{proc.stderr[-4000:]}")
    return elapsed


def summary(name: str, samples: list[float]) -> str:
    """Return ``name: min / median over n runs`` for a list of seconds."""
    return f"{name}: min {min(samples):.2f}s, median {statistics.median(samples):.2f}s over {len(samples)} run(s)"


def plain_tests(first: int, stop: int) -> str:
    """Return the source of trivial tests ``test_first`` .. ``test_{stop - 1}`` (start-up is all there is to time)."""
    return "\n".join(f"def test_{i}():\n    assert {i} + 1 == {i + 1}\n" for i in range(first, stop))
