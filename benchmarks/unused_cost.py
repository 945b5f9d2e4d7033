"""Cost of pytest-export when a suite has no exportable tests: with the plugin vs ``-p no:export``.

Target: <= 1.05x, and torch never imported. Usage: ``python benchmarks/unused_cost.py [--tests 200] [--rounds 7]``.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from pathlib import Path

from measure import bench_env, machine, plain_tests, summary, timed

CONFTEST = '''
import sys

def pytest_sessionfinish(session):
    # Written at the very end, after every plugin hook that could have imported torch.
    with open(__import__("os").environ["TORCH_PROBE"], "w") as f:
        f.write("imported" if "torch" in sys.modules else "not imported")
'''


def write_suite(root: Path, tests: int) -> None:
    """Write ``tests`` trivial tests over ten files, plus a conftest that records whether torch loaded."""
    (root / "conftest.py").write_text(CONFTEST)
    per_file = max(1, tests // 10)
    for f in range(0, tests, per_file):
        (root / f"test_plain_{f // per_file}.py").write_text(plain_tests(f, min(f + per_file, tests)))


def main() -> int:
    """Time both variants in alternation and print the ratio."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tests", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=7)
    opts = parser.parse_args()
    print(f"machine: {machine()}")
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        write_suite(root, opts.tests)
        probe = root / "torch_probe.txt"
        env = bench_env(TORCH_PROBE=str(probe))
        base = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:randomly", str(root)]
        samples: dict[str, list[float]] = {"with plugin": [], "-p no:export": []}
        imported = []
        timed(base, cwd=root, env=env)  # warm the file system cache and .pyc files first
        for _ in range(opts.rounds):
            samples["with plugin"].append(timed(base, cwd=root, env=env))
            imported.append(probe.read_text())
            samples["-p no:export"].append(timed(base + ["-p", "no:export"], cwd=root, env=env))
    for name, values in samples.items():
        print(summary(f"{opts.tests} plain tests, {name}", values))
    ratio = min(samples["with plugin"]) / min(samples["-p no:export"])
    median = statistics.median(samples["with plugin"]) / statistics.median(samples["-p no:export"])
    extra_ms = (min(samples["with plugin"]) - min(samples["-p no:export"])) * 1000
    print(f"ratio with/without plugin (min over rounds): {ratio:.3f}x ({extra_ms:+.0f} ms), median {median:.3f}x")
    # Each round runs both sessions back to back: the median of the rounds' own ratios cancels the
    # machine's drift, which the minima of half-second subprocesses on shared cores do not.
    paired = statistics.median(w / wo for w, wo in zip(samples["with plugin"], samples["-p no:export"]))
    paired_ms = statistics.median(w - wo for w, wo in zip(samples["with plugin"], samples["-p no:export"])) * 1000
    verdict = "meets" if paired <= 1.05 else "MISSES"
    print(f"ratio with/without plugin (median of the rounds' paired ratios): {paired:.3f}x ({paired_ms:+.0f} ms) "
          f"-> {verdict} the <= 1.05x target")
    torch_state = "not imported" if set(imported) == {"not imported"} else "IMPORTED"
    print(f"torch in the session with the plugin: {torch_state}")
    return 0 if torch_state == "not imported" else 1


if __name__ == "__main__":
    sys.exit(main())
