"""What supervising a reporting session costs: ``--export-report`` sessions three ways, back to back.

A command line run with ``--export-report`` runs its session in a supervised child
(pytest_export.reporting.supervise). On Linux the child is a fork of the supervisor; with a
thread already running (or off Linux) it is the command line started again. This prints, for a
small suite of plain tests (so start-up is all there is to see):

- ``not supervised``: the same session through ``pytest.main()`` in a script (never supervised);
- ``fork``: ``python -m pytest`` as a user runs it;
- ``command line``: ``python -m pytest -p thread_plugin``, a plugin that starts a thread on import,
  which makes the supervisor start the command line again.

Each round runs the three in a rotating order; the ratios are the medians of the rounds' own.
Usage: ``python benchmarks/supervise_cost.py [--tests 20] [--rounds 9]``.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from pathlib import Path

from measure import bench_env, machine, plain_tests, summary, timed

THREAD_PLUGIN = "import threading, time\nthreading.Thread(target=time.sleep, args=(600,), daemon=True).start()\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tests", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=9)
    opts = parser.parse_args()
    print(f"machine: {machine()}")
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "test_plain.py").write_text(plain_tests(0, opts.tests))
        (root / "thread_plugin.py").write_text(THREAD_PLUGIN)
        args = ["-q", "-p", "no:cacheprovider", "-p", "no:randomly", str(root), f"--export-report={root / 'r.json'}"]
        env = bench_env(PYTHONPATH=str(root))
        sessions = {
            "not supervised": [sys.executable, "-c", f"import sys, pytest; sys.exit(pytest.main({args!r}))"],
            "fork": [sys.executable, "-m", "pytest", *args],
            "command line": [sys.executable, "-m", "pytest", "-p", "thread_plugin", *args],
        }
        samples: dict[str, list[float]] = {name: [] for name in sessions}
        for cmd in sessions.values():
            timed(cmd, cwd=root, env=env)  # .pyc files and the file system cache first
        names = list(sessions)
        for round_ in range(opts.rounds):
            for name in names[round_ % 3:] + names[:round_ % 3]:
                samples[name].append(timed(sessions[name], cwd=root, env=env))
    for name, values in samples.items():
        print(summary(f"{opts.tests} plain tests with --export-report, {name}", values))
    for name in ("fork", "command line"):
        paired = [s - b for s, b in zip(samples[name], samples["not supervised"])]
        ratio = statistics.median(s / b for s, b in zip(samples[name], samples["not supervised"]))
        print(f"{name} / not supervised: {ratio:.2f}x ({statistics.median(paired) * 1000:+.0f} ms, median of the "
              "rounds' own)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
