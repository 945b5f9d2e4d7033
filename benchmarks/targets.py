"""Cost of each target on the examples' small model: lowering time, load time, per-example run time.

For each target available in this Python (aoti needs a C++ compiler; onnx and executorch their
extras), in one fresh subprocess per target: export the model of examples/test_targets.py
(non-strict, dynamic batch 2..64), lower it ``--repeat`` times (each into a fresh directory;
the median is reported, the first lowering of the process included as ``first``), load it,
and time the runtime on the example input (min and median of ``--runs`` calls after 3 warm-ups),
next to eager and ``ep.module()`` on the same input.

Usage: ``python benchmarks/targets.py [--targets aoti,onnx,executorch] [--repeat 2] [--runs 50]``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time

from measure import ROOT, bench_env, machine

CHILD = r"""
import json, statistics, sys, tempfile, time
sys.path.insert(0, {root!r})
import torch
from torch.export import Dim
from examples.test_targets import Classifier
from exportcore.targets import get_target, unavailable

name, repeat, runs = {name!r}, {repeat}, {runs}
reason = unavailable(name)
if reason:
    print(json.dumps({{"target": name, "skipped": reason}})); sys.exit(0)
torch.manual_seed(0)
model = Classifier().eval()
x = torch.randn(8, 4, 16)
ep = torch.export.export(model, (x,), dynamic_shapes={{"x": {{0: Dim("batch", min=2, max=64)}}}}, strict=False)
target = get_target(name)

def per_call(fn):
    for _ in range(3):
        fn()
    times = []
    for _ in range(runs):
        start = time.perf_counter(); fn(); times.append(time.perf_counter() - start)
    return [1e3 * min(times), 1e3 * statistics.median(times)]

lowers = []
for _ in range(repeat):
    workdir = tempfile.mkdtemp()
    start = time.perf_counter()
    lowered = target.lower(ep, (x,), {{}}, workdir, {{}})
    lowers.append(time.perf_counter() - start)
start = time.perf_counter()
runner = target.load(lowered, ep, {{"check_inputs": True}}, "cpu")
load = time.perf_counter() - start
module = ep.module()
with torch.no_grad():
    result = {{
        "target": name, "lower_first_s": lowers[0], "lower_median_s": statistics.median(lowers),
        "load_s": load, "run_ms": per_call(lambda: runner((x,), {{}})),
        "eager_ms": per_call(lambda: model(x)), "module_ms": per_call(lambda: module(x)),
    }}
print(json.dumps(result))
"""


def measure(name: str, repeat: int, runs: int) -> dict:
    """Return one target's measurements from a fresh subprocess (or why it was skipped)."""
    code = CHILD.format(root=str(ROOT), name=name, repeat=repeat, runs=runs)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=bench_env(),
                          cwd=ROOT, check=False)
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    if done.returncode != 0 or not lines:
        raise SystemExit(f"{name}: the measurement failed:\n{done.stderr[-3000:]}")
    return json.loads(lines[-1])


def main() -> None:
    """Measure every asked-for target and print a table (and --json)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--targets", default="aoti,onnx,executorch")
    parser.add_argument("--repeat", type=int, default=2, help="lowerings per target (median reported)")
    parser.add_argument("--runs", type=int, default=50, help="timed calls per runtime (median reported)")
    parser.add_argument("--json", action="store_true", help="print the results as JSON too")
    ns = parser.parse_args()
    print(f"machine: {machine()}")
    print(f"python: {sys.executable}; started {time.strftime('%Y-%m-%d %H:%M:%S %Z')}")
    results = [measure(name, ns.repeat, ns.runs) for name in ns.targets.split(",") if name]
    print("per-call times in ms, min / median over the timed calls")
    print(f"{'target':<11} {'lower (first)':>13} {'lower (median)':>14} {'load':>7} {'run/example':>17} "
          f"{'eager':>17} {'.module()':>17}")
    for r in results:
        if "skipped" in r:
            print(f"{r['target']:<11} skipped: {r['skipped']}")
            continue
        cells = " ".join(f"{r[k][0]:>7.3f} / {r[k][1]:>7.3f}" for k in ("run_ms", "eager_ms", "module_ms"))
        print(f"{r['target']:<11} {r['lower_first_s']:>12.2f}s {r['lower_median_s']:>13.2f}s {r['load_s']:>6.2f}s {cells}")
    print(f"load average at end: {', '.join(f'{x:.1f}' for x in __import__('os').getloadavg())}")
    if ns.json:
        print(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
