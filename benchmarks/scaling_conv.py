"""-n scaling on small conv models, with and without each worker's fair share of torch threads.

Writes a throwaway project of small conv models (exportable tests, one mode, a few drawn batch
sizes each so that the exported programs' runs are real compute), then times, in one run:

- serial (torch's own thread count: one per core);
- ``-n W`` with pytest-export's fair share (``cores // W`` threads per worker, the default);
- ``-n W`` without it (``OMP_NUM_THREADS=<cores>``: every worker uses every core, as before).

Prints the speed-ups side by side. Usage: ``python benchmarks/scaling_conv.py [--workers 2 4]
[--models 12] [--rounds 2]`` (each configuration runs ``rounds`` times, the minimum counts).
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from measure import ROOT, bench_env, machine

MODELS = '''
import pytest
import torch
from torch.export import Dim


class ConvNet(torch.nn.Module):
    def __init__(self, width):
        super().__init__()
        self.body = torch.nn.Sequential(
            torch.nn.Conv2d(3, width, 3, padding=1), torch.nn.BatchNorm2d(width), torch.nn.ReLU(),
            torch.nn.Conv2d(width, 2 * width, 3, padding=1, stride=2), torch.nn.ReLU(),
            torch.nn.Conv2d(2 * width, 2 * width, 3, padding=1), torch.nn.ReLU(),
            torch.nn.AdaptiveAvgPool2d(1), torch.nn.Flatten(), torch.nn.Linear(2 * width, 10),
        )

    def forward(self, x):
        return self.body(x)


@pytest.mark.parametrize("width", {widths})
@pytest.mark.exportable(modes=["non_strict"], examples=4, checks=["numerics", "decompose"],
                        dynamic_shapes={{"x": {{0: Dim("batch", min=2, max=32)}}}})
def test_conv(width):
    torch.manual_seed(width)
    return ConvNet(width).eval(), (torch.randn(16, 3, 96, 96),)
'''


def run(cmd: list[str], cwd: Path, env: dict[str, str]) -> tuple[float, float, str]:
    """Run a pytest command; return wall seconds, CPU seconds and its summary line."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, check=False, env=env)
    elapsed = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    lines = [ln for ln in proc.stdout.splitlines() if re.search(r"\d+ (passed|failed)", ln)]
    if proc.returncode != 0 or not lines:
        raise RuntimeError(f"{' '.join(cmd)} exited {proc.returncode}:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
    header = next((ln for ln in proc.stdout.splitlines() if ln.startswith("pytest-export:")), "")
    return elapsed, cpu, f"{lines[-1].strip('= ')}; {header}"


def main() -> int:
    """Time serial, -n W with the fair share and -n W without it; print the ratios."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, nargs="+", default=[2])
    parser.add_argument("--models", type=int, default=12)
    parser.add_argument("--rounds", type=int, default=2)
    opts = parser.parse_args()
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    print(f"machine: {machine()}")
    widths = [8 + 4 * i for i in range(opts.models)]
    with tempfile.TemporaryDirectory(prefix="scaling-conv-") as tmp:
        project = Path(tmp)
        (project / "test_conv.py").write_text(MODELS.format(widths=widths))
        (project / "pytest.ini").write_text("[pytest]\n")
        base = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "no:randomly"]
        plain = {k: v for k, v in bench_env().items() if k not in ("OMP_NUM_THREADS", "MKL_NUM_THREADS")}
        plain["PYTHONPATH"] = os.pathsep.join([str(ROOT), plain.get("PYTHONPATH", "")])
        configs: list[tuple[str, list[str], dict[str, str]]] = [("serial", [], plain)]
        for w in opts.workers:
            configs.append((f"-n {w} fair share", ["-n", str(w)], plain))
            configs.append((f"-n {w} all cores each", ["-n", str(w)], {**plain, "OMP_NUM_THREADS": str(cores)}))
        run(base + ["-k", "test_conv and 8"], project, plain)  # warm-up: bytecode cache, first imports
        best: dict[str, tuple[float, float, str]] = {}
        for _ in range(opts.rounds):  # alternate the configurations so load changes hit all of them
            for name, extra, env in configs:
                result = run(base + extra, project, env)
                if name not in best or result[0] < best[name][0]:
                    best[name] = result
        serial = best["serial"][0]
        for name, _, _ in configs:
            wall, cpu, summary = best[name]
            print(f"{name:>24}: {wall:7.1f} s  {serial / wall:5.2f}x serial  {cpu / wall:4.2f} cores busy  ({summary})")
        for w in opts.workers:
            fair, every = best[f"-n {w} fair share"][0], best[f"-n {w} all cores each"][0]
            print(f"-n {w}: speed-up {serial / fair:.2f}x with the fair share vs {serial / every:.2f}x without "
                  f"({every / fair:.2f}x faster with it)")
        print(f"load average after: {', '.join(f'{x:.1f}' for x in os.getloadavg())}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
