"""Parallel scaling: the ExportDB run (``pytest exportdb/``) with ``-n 2`` vs serial.

Both runs are the same command apart from ``-n``; the ratio is serial time / parallel time.
Target: >= 1.6x on 2 cores. It also counts, from each run's JSON report, the non-strict results that
took strict's walk of the same program in-process (exportcore.reuse.stores): ``-n`` keeps a case's modes on
one worker, so the parallel run must count as many as the serial one, i.e. it repeats no
strict/non_strict work the serial run shared. Usage: ``python benchmarks/scaling.py [--workers 2] [-- extra pytest args]``
(e.g. ``-- -k control_flow`` to time a subset; docs/performance.md says which selection it shows).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from measure import ROOT, bench_env, machine


def run(cmd: list[str]) -> tuple[float, float, str]:
    """Run a pytest command; return its wall seconds and a line with its summary, CPU use and load."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, check=False, env=bench_env())
    elapsed = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    lines = [ln for ln in proc.stdout.splitlines() if re.search(r"\d+ (passed|failed|xfailed|error)", ln)]
    if proc.returncode not in (0, 1) or not lines:
        raise RuntimeError(f"{' '.join(cmd)} exited {proc.returncode}:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
    # CPU seconds per wall second: ~1 for a serial run, ~2 for -n 2 on an otherwise idle 2-core machine.
    # Much less under -n 2 means other processes competed for the cores during the run.
    load = os.getloadavg()[0]
    return elapsed, cpu, f"{lines[-1].strip('= ')}; {cpu:.0f} CPU-s, {cpu / elapsed:.2f} cores busy, load {load:.1f} after"


def shared(report: Path) -> tuple[int, int]:
    """Return (non-strict results that took strict's walk in-process, cases run in both modes)."""
    records = json.loads(report.read_text())["records"]
    modes: dict[str, dict[str, dict]] = {}
    for record in records:
        modes.setdefault(record["case"], {})[record["mode"]] = record
    both = [by_mode for by_mode in modes.values() if {"strict", "non_strict"} <= set(by_mode)]
    took = sum(1 for by_mode in both if ((by_mode["non_strict"].get("outcome") or {}).get("reused_from") == "strict"))
    return took, len(both)


def main() -> int:
    """Time the serial and the parallel run and print the speed-up."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("extra", nargs="*", help="extra pytest arguments (after --)")
    opts = parser.parse_args()
    print(f"machine: {machine()}")
    base = [sys.executable, "-m", "pytest", "exportdb/", "-q", "-p", "no:cacheprovider", *opts.extra]
    run(base + ["-k", "if_on_static_shape"])  # warm-up: fills the bytecode cache
    reports = Path(tempfile.mkdtemp(prefix="pte-scaling-"))
    serial, serial_cpu, serial_summary = run(base + [f"--export-report={reports / 'serial.json'}"])
    parallel, parallel_cpu, parallel_summary = run(base + ["-n", str(opts.workers),
                                                           f"--export-report={reports / 'parallel.json'}"])
    print(f"serial: {serial:7.1f}s  ({serial_summary})")
    print(f"-n {opts.workers}:   {parallel:7.1f}s  ({parallel_summary})")
    (serial_took, cases), (parallel_took, _) = shared(reports / "serial.json"), shared(reports / "parallel.json")
    same = "no strict/non_strict work repeated" if parallel_took >= serial_took else "REPEATED work"
    print(f"non-strict results that took strict's walk, of {cases} cases run in both: serial {serial_took}, "
          f"-n {opts.workers} {parallel_took} -> {same}")
    speedup = serial / parallel
    verdict = "meets" if speedup >= 1.6 else "MISSES"
    print(f"speed-up serial / -n {opts.workers}: {speedup:.2f}x -> {verdict} the >= 1.6x target")
    # What the same CPU work would give on free cores: the workers' extra start-up is the only loss.
    bound = opts.workers * serial_cpu / parallel_cpu
    print(f"CPU work -n {opts.workers} / serial: {parallel_cpu / serial_cpu:.2f}x -> speed-up on {opts.workers} free cores "
          f"at most {bound:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
