"""Peak RSS after exporting 200 cases in one process vs after 20 (``exportcore.check`` in a loop).

Each count runs in a fresh subprocess on fresh small models (so nothing is shared between the
two measurements) and reports ``resource.getrusage(RUSAGE_SELF).ru_maxrss``. If the engine
frees what each case leaves behind (dynamo caches, shape environments, fake tensors,
exported programs), the peak stops growing after the first few cases.
Target: <= 1.5x. Usage: ``python benchmarks/memory.py [--small 20] [--large 200] [--examples 2]``.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time

from measure import ROOT, machine

from exportcore.modes import MODES


def build(i: int):  # noqa: ANN201 - returns (model, args, dynamic_shapes); torch loads in the child only
    """Return the i-th fresh small case: the architecture and width vary with i."""
    import torch
    from torch import nn
    from torch.export import Dim

    width = 8 + (i % 5) * 4
    kind = i % 3
    if kind == 0:
        model = nn.Sequential(nn.Linear(16, width), nn.ReLU(), nn.Linear(width, 4))
        args = (torch.randn(4, 16),)
    elif kind == 1:
        model = nn.Sequential(nn.Conv2d(3, width, 3, padding=1), nn.BatchNorm2d(width), nn.ReLU(),
                              nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(width, 2))
        args = (torch.randn(4, 3, 8, 8),)
    else:
        model = nn.Sequential(nn.Embedding(50, width), nn.LayerNorm(width), nn.Linear(width, 3))
        args = (torch.randint(0, 50, (4, 6)),)
    return model, args, ({0: Dim("batch", min=2, max=16)},)


def child(count: int, examples: int) -> None:
    """Export ``count`` cases, cycling through the modes, and print peak RSS as JSON."""
    import exportcore

    session = exportcore.EngineSession()  # one session for the loop, as the plugin's checks share one
    start = time.perf_counter()
    statuses: dict[str, int] = {}
    for i in range(count):
        model, args, shapes = build(i)
        outcome = exportcore.check(model, args, dynamic_shapes=shapes, mode=MODES[i % 3], examples=examples,
                                   case_id=f"case{i}", session=session)
        statuses[outcome.status] = statuses.get(outcome.status, 0) + 1
        del model, args, outcome
    peak_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux
    print(json.dumps({"count": count, "peak_mib": peak_kib / 1024, "seconds": time.perf_counter() - start,
                      "statuses": statuses}))


def measure(count: int, examples: int) -> dict:
    """Run one child and return what it printed."""
    proc = subprocess.run(
        [sys.executable, __file__, "--child", str(count), "--examples", str(examples)],
        cwd=ROOT, capture_output=True, text=True, check=False,
    )
    if proc.returncode != 0:
        raise RuntimeError(f"child for {count} cases exited {proc.returncode}:\n{proc.stderr[-4000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main() -> int:
    """Measure both counts and print the ratio of their peaks."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--small", type=int, default=20)
    parser.add_argument("--large", type=int, default=200)
    parser.add_argument("--examples", type=int, default=2)
    parser.add_argument("--child", type=int, help=argparse.SUPPRESS)
    opts = parser.parse_args()
    if opts.child is not None:
        child(opts.child, opts.examples)
        return 0
    print(f"machine: {machine()}")
    small, large = measure(opts.small, opts.examples), measure(opts.large, opts.examples)
    for r in (small, large):
        print(f"{r['count']:4d} cases: peak RSS {r['peak_mib']:.0f} MiB in {r['seconds']:.0f}s, outcomes {r['statuses']}")
    ratio = large["peak_mib"] / small["peak_mib"]
    verdict = "meets" if ratio <= 1.5 else "MISSES"
    print(f"peak RSS ratio {opts.large} / {opts.small} cases: {ratio:.2f}x -> {verdict} the <= 1.5x target")
    return 0


if __name__ == "__main__":
    sys.exit(main())
