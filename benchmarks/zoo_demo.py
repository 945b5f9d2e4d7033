"""Time the README's zero-code zoo command, as written, cold: the figure the README quotes.

    python benchmarks/zoo_demo.py [--runs N]

Reads the command from README.md's "Zero code: a model zoo" block (the part after the install and the
``cd``), runs it in a fresh empty directory per run (no .pytest_cache: the result cache starts cold, as a
reader's first run does) and prints the machine, its load before and after, the wall time, the exit
status and the summary lines the terminal leads with. Needs ``pip install -e ".[zoo]"``.
"""

from __future__ import annotations

import argparse
import os
import platform
import re
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"


def readme_command() -> tuple[dict[str, str], list[str]]:
    """Return (environment, pytest arguments) of the README's zoo command."""
    text = README.read_text(encoding="utf-8")
    section = text[text.index("## Zero code: a model zoo"):]
    block = re.search(r"```bash\n(.*?)```", section, re.S)
    if block is None:
        raise SystemExit("README.md: no bash block in the zoo section")
    step = next(part for part in block.group(1).replace("\\\n", " ").split("&&") if "python -m pytest" in part)
    words = shlex.split(step)
    env = dict(w.split("=", 1) for w in words[:words.index("python")])
    return env, words[words.index("pytest") + 1:]


def machine() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        names = [line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                 if line.startswith("model name")]
        cpu = names[0] if names else cpu
    except OSError:
        pass
    return f"{platform.platform()}; {os.cpu_count()} CPU cores ({cpu})"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=1)
    args = parser.parse_args(argv)
    env, pytest_args = readme_command()
    print(f"machine: {machine()}")
    print(f"command: {' '.join(f'{k}={v}' for k, v in env.items())} python -m pytest {shlex.join(pytest_args)}")
    for run in range(args.runs):
        with tempfile.TemporaryDirectory(prefix="zoo-demo-") as folder:
            load = os.getloadavg()
            start = time.perf_counter()
            done = subprocess.run([sys.executable, "-m", "pytest", *pytest_args], cwd=folder, text=True,
                                  capture_output=True, env={**os.environ, **env})
            wall = time.perf_counter() - start
            after = os.getloadavg()
        lines = done.stdout.splitlines()
        first = next((i for i, line in enumerate(lines) if line.startswith("zoo pass rates")), None)
        failures = next((i for i, line in enumerate(lines) if " FAILURES " in line), None)
        print(f"run {run + 1}: {wall:.0f} s wall, exit {done.returncode}; load average (1, 5, 15 min) before "
              f"{load[0]:.1f} {load[1]:.1f} {load[2]:.1f}, after {after[0]:.1f} {after[1]:.1f} {after[2]:.1f}")
        print(f"  pass rates at line {first} of {len(lines)}; FAILURES at line {failures}")
        summary = lines[first:] if first is not None else lines[-20:]
        for line in summary[:20]:
            print(f"  | {line}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
