"""Warm runs: the examples and the ExportDB catalog cold, warm (result cache kept), warm with one model edited.

Each suite runs as the user runs it, ``python -m pytest SUITE`` in a fresh subprocess, four ways,
side by side in one run:

- ``bare``: the same tests, each (case, mode) only exported, decomposed and called once
  (benchmarks/bare_export_plugin.py claims every mode): the loop any export pipeline pays;
- ``cold``: the default check with an empty result cache (``-o cache_dir=`` a fresh folder);
- ``warm``: the same again with the cache kept;
- ``edited`` (examples only): one model's code changed (test_mlp.py's activation), cache kept:
  that model must be re-checked in full, the rest served.

It also prints the warm run's floor: what no cache can save, because the issue's proof needs
it or the session pays it before any check runs. That is a ``--collect-only`` session over the
same suite (Python and pytest start-up, the test modules' own imports of torch and friends, and
torch's slow interpreter shutdown) plus the warm run's capture and eager seconds (from its
report's stage timings), which always run: a capture is what a code change or a torch upgrade
breaks, and eager's answer is part of the proof.

It prints each session's seconds, the ratios warm/cold and warm/bare (targets: <= 0.4x and <= 0.5x),
and checks that every (case, mode) has the same verdict cold and warm and that no record of the edited
model came from the cache. The examples are copied to a temporary folder first; the repository is never
edited. Targets' columns are deselected (``-k``) on every side: the bare side has no runtime to lower to.

Usage: ``python benchmarks/warm_cost.py [--suite examples|exportdb|both] [-n N] [--files F ...]``
(``--files``: only these files of examples/, which must include the edited one).
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from measure import ROOT, bench_env, machine

NOT_TARGETS = "not aoti and not onnx and not executorch"
EDITED_FILE = "test_mlp.py"


def collect_only(suite: Path, work: Path, extra: list[str]) -> float:
    """Time a session that only collects ``suite``: the fixed cost every session pays before and after checks."""
    cmd = [sys.executable, "-m", "pytest", str(suite), "-q", "--collect-only", "-p", "no:randomly", "-k", NOT_TARGETS,
           "-o", f"cache_dir={work / 'collect-cache'}", *extra]
    start = time.perf_counter()
    proc = subprocess.run(cmd, cwd=suite.parent, env=bench_env(), capture_output=True, text=True, check=False)
    seconds = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} exited {proc.returncode}:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
    return seconds


def always_run(report: Path) -> float:
    """Return the seconds a report's records spent in the stages every run pays (capture, eager)."""
    data = json.loads(report.read_text())
    return sum((r["outcome"] or {}).get("timings", {}).get(stage, 0.0)
               for r in data["records"] for stage in ("capture", "eager") if r["outcome"])


def session(suite: Path, cache: Path, report: Path, extra: list[str], *, bare: bool = False) -> float:
    """Run one pytest session over ``suite``; return its wall-clock seconds."""
    cmd = [sys.executable, "-m", "pytest", str(suite), "-q", "-p", "no:randomly", "-k", NOT_TARGETS,
           "-o", f"cache_dir={cache}", f"--export-report={report}", *extra]
    env = bench_env()
    if bare:
        cmd += ["-p", "bare_export_plugin", "--export-cache=off"]
        env["PYTHONPATH"] = f"{ROOT / 'benchmarks'}:{env.get('PYTHONPATH', '')}"
    start = time.perf_counter()
    proc = subprocess.run(cmd, cwd=suite.parent, env=env, capture_output=True, text=True, check=False)
    seconds = time.perf_counter() - start
    if proc.returncode not in (0, 1) or not report.exists():
        raise SystemExit(f"{' '.join(cmd)} exited {proc.returncode}:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
    return seconds


def records(report: Path) -> dict[tuple[str, str], tuple[str, str | None, str]]:
    """Return (verdict, reused_from, test node id) per (case, mode)."""
    data = json.loads(report.read_text())
    return {(r["case"], r["mode"]): (r["verdict"], r["outcome"]["reused_from"] if r["outcome"] else None, r["test"])
            for r in data["records"]}


def served(got: dict) -> set[tuple[str, str]]:
    return {key for key, (_, source, _) in got.items() if (source or "").startswith("cache:")}


def run_suite(name: str, suite: Path, work: Path, extra: list[str]) -> bool:
    """Time one suite's sides; print the figures; return whether every invariant held."""
    cache = work / f"{name}-cache"
    seconds: dict[str, float] = {}
    reports = {side: work / f"{name}-{side}.json" for side in ("bare", "cold", "warm", "edited")}
    seconds["bare"] = session(suite, work / f"{name}-bare-cache", reports["bare"], extra, bare=True)
    print(f"{name} bare export loop: {seconds['bare']:.1f}s", flush=True)
    seconds["cold"] = session(suite, cache, reports["cold"], extra)
    print(f"{name} cold (empty cache): {seconds['cold']:.1f}s", flush=True)
    seconds["warm"] = session(suite, cache, reports["warm"], extra)
    print(f"{name} warm (cache kept): {seconds['warm']:.1f}s", flush=True)
    cold, warm = records(reports["cold"]), records(reports["warm"])
    ok = True
    changed = sorted(k for k in cold if cold[k][0] != warm.get(k, ("missing",))[0])
    print(f"{name} (case, mode) pairs: {len(cold)}; served from the cache when warm: {len(served(warm))}; "
          f"verdicts changed cold -> warm: {len(changed)} {changed[:5]}")
    ok &= not changed and set(cold) == set(warm)
    if name == "examples":
        edited = suite / EDITED_FILE
        edited.write_text(edited.read_text().replace("nn.ReLU()", "nn.Tanh()", 1))
        seconds["edited"] = session(suite, cache, reports["edited"], extra)
        after = records(reports["edited"])
        mlp = {k for k, (_, _, test) in after.items() if test.split("::")[0].endswith(EDITED_FILE)}
        print(f"{name} warm, {EDITED_FILE} edited: {seconds['edited']:.1f}s; its {len(mlp)} (case, mode) pairs "
              f"served from the cache: {len(mlp & served(after))} (must be 0)", flush=True)
        ok &= bool(mlp) and not mlp & served(after)
    fixed = collect_only(suite, work, extra)
    floor = fixed + always_run(reports["warm"])
    print(f"{name} warm floor: collect-only session {fixed:.1f}s + the warm run's capture and eager "
          f"{floor - fixed:.1f}s = {floor:.1f}s ({floor / seconds['cold']:.2f}x cold); the rest of the warm run (pairs "
          f"not served, the plugin's bookkeeping, the session's end): {seconds['warm'] - floor:.1f}s", flush=True)
    print(f"{name} ratio warm / cold: {seconds['warm'] / seconds['cold']:.2f}x (target <= 0.4x); "
          f"warm / bare loop: {seconds['warm'] / seconds['bare']:.2f}x (target <= 0.5x); "
          f"cold / bare loop: {seconds['cold'] / seconds['bare']:.2f}x", flush=True)
    return ok


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--suite", choices=("examples", "exportdb", "both"), default="both")
    parser.add_argument("-n", dest="workers", default="0", help="pytest-xdist workers per session (default 0)")
    parser.add_argument("--files", nargs="+", metavar="FILE",
                        help=f"only these files of examples/ (must include {EDITED_FILE})")
    args = parser.parse_args()
    extra = ["-n", args.workers] if args.workers != "0" else ["-p", "no:xdist"]
    print(f"machine: {machine()}")
    ok = True
    with tempfile.TemporaryDirectory(prefix="warm-cost-") as tmp:
        work = Path(tmp)
        if args.suite in ("examples", "both"):
            suite = work / "examples"
            shutil.copytree(ROOT / "examples", suite, ignore=shutil.ignore_patterns("__pycache__"))
            if args.files:
                if EDITED_FILE not in args.files:
                    raise SystemExit(f"--files must include {EDITED_FILE} (the model the run edits)")
                for test_file in suite.glob("test_*.py"):
                    if test_file.name not in args.files:
                        test_file.unlink()
                print(f"examples/ files: {', '.join(sorted(args.files))}")
            if not (suite / EDITED_FILE).read_text().count("nn.ReLU()"):
                raise SystemExit(f"examples/{EDITED_FILE} has no nn.ReLU() to edit")
            ok &= run_suite("examples", suite, work, extra)
        if args.suite in ("exportdb", "both"):
            ok &= run_suite("exportdb", ROOT / "exportdb", work, extra)
    print("invariants (same verdicts cold and warm; the edited model re-checked):", "hold" if ok else "BROKEN")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
