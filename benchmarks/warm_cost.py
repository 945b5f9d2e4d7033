"""Warm runs: the examples and the ExportDB catalog cold, warm (result cache kept), warm with one model edited.

Each suite runs as the user runs it, ``python -m pytest SUITE`` in a fresh subprocess, five ways,
side by side in one run:

- ``bare``: the same tests, each (case, mode) only exported, decomposed and called once
  (benchmarks/bare_export_plugin.py claims every mode): the loop any export pipeline pays;
- ``cold``: the default check with an empty result cache (``-o cache_dir=`` a fresh folder);
- ``warm``: the same again with the cache kept;
- ``capture-only``: the floor as a whole session (below);
- ``export-only``: the bare loop's sessions again, each (case, mode) only ``torch.export.export``-ed,
  nothing else: the capture no proof can skip, with none of the engine around it;
- ``edited`` (examples only): one model's code changed (test_mlp.py's activation), cache kept:
  that model must be re-checked in full, the rest served (exactly its pairs re-checked).

A warm session serves a passing non-strict or training pair whole (exportcore.reuse.whole: neither
eager nor the capture runs) and the rest after capture; each round prints how many of each.

It also prints the warm run's floor: what no cache can save, because the issue's proof needs
it or the session pays it before any check runs, measured two ways. First, a ``--collect-only``
session over the same suite (Python and pytest start-up, the test modules' own imports of torch
and friends, and torch's interpreter shutdown) plus the warm run's capture and eager seconds
(from its report's stage timings), which always run: a capture is what a code change or a torch
upgrade breaks, and eager's answer is part of the proof. Second, a whole session that checks
nothing a cache could serve (``--export-checks=state --export-cache=off``: eager, capture,
``ep.module()`` and the state check, the steps a warm run also runs): it pays what the first
floor leaves out, the teardown of a process that has exported (torch's tracing state) and pytest's
own end-of-session collection. A warm run near that session is at its floor; the ``export-only``
session is the same floor without the engine (and without eager and the state check).

It prints each session's seconds, the ratios warm/cold and warm/bare (targets: <= 0.4x and <= 0.5x),
and checks that every (case, mode) has the same verdict cold and warm and that no record of the edited
model came from the cache. The examples are copied to a temporary folder first; the repository is never
edited. Targets' columns are deselected (``-k``) on every side: the bare side has no runtime to lower to.

With ``--rounds R`` the bare, cold, warm, capture-only and export-only sessions run R times (alternating their
order; each round's cold run starts from an empty cache) and the ratios are of the medians: on a
shared machine one session's noise is larger than the gap between warm and its floor.

``--suite zoo`` runs the same sides over zoo models named on the command line (``--export-model``,
no test code; ``--models`` picks them, default ZOO_MODELS: built from code with random weights,
nothing downloaded), the scale the cache is for. Which of them pass is torch's verdict, not the
benchmark's: a model that fails its capture is never cached and costs the same cold and warm.

Usage: ``python benchmarks/warm_cost.py [--suite examples|exportdb|zoo|both] [-n N] [--rounds R]
[--files F ...] [--models SPEC ...]`` (``--files``: only these files of examples/, which must include
the edited one; ``both``: examples and exportdb).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from measure import ROOT, bench_env, machine

NOT_TARGETS = "not aoti and not onnx and not executorch"
EDITED_FILE = "test_mlp.py"
SIDES = ("bare", "cold", "warm", "capture-only", "export-only")
#: Ten small models of each zoo kind, some failing a mode (never cached); `pip install -e ".[zoo]"` installs
#: their packages.
ZOO_MODELS = ("torchvision:squeezenet1_0", "torchvision:mobilenet_v3_small", "torchvision:resnet18",
              "torchvision:shufflenet_v2_x0_5", "torchvision:mnasnet0_5", "timm:test_vit", "timm:test_resnet",
              "timm:test_efficientnet", "timm:test_convnext", "hf:bert")


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


def session(suite: Path, cache: Path, report: Path, extra: list[str], *, bare: bool = False,
            export_only: bool = False) -> float:
    """Run one pytest session over ``suite``; return its wall-clock seconds."""
    cmd = [sys.executable, "-m", "pytest", str(suite), "-q", "-p", "no:randomly", "-k", NOT_TARGETS,
           "-o", f"cache_dir={cache}", f"--export-report={report}", *extra]
    env = bench_env()
    if bare:
        cmd += ["-p", "bare_export_plugin", "--export-cache=off"]
        env["PYTHONPATH"] = f"{ROOT / 'benchmarks'}:{env.get('PYTHONPATH', '')}"
        if export_only:
            env["BARE_EXPORT_ONLY"] = "1"
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


def served_whole(got: dict) -> set[tuple[str, str]]:
    """The pairs served before eager: neither eager nor the capture ran (exportcore.reuse.whole)."""
    return {key for key, (_, source, _) in got.items() if (source or "").startswith("cache: whole,")}


def run_suite(name: str, suite: Path, work: Path, extra: list[str], rounds: int) -> bool:
    """Time one suite's sides ``rounds`` times; print each session and the medians.

    Return whether every invariant held.
    """
    samples: dict[str, list[float]] = {side: [] for side in SIDES}
    ok = True
    warm_report = work / f"{name}-warm.json"
    for round_ in range(rounds):
        cache = work / f"{name}-cache-{round_}"  # each round's cold run starts empty
        reports = {side: work / f"{name}-{side}-{round_}.json" for side in SIDES if side != "warm"}
        reports["warm"] = warm_report
        times = {
            "bare": lambda: session(suite, work / f"{name}-bare-cache", reports["bare"], extra, bare=True),
            "cold": lambda: session(suite, cache, reports["cold"], extra),
            "warm": lambda: session(suite, cache, reports["warm"], extra),
            # nothing a cache could serve: eager, capture, .module() and the state check, as a warm run
            "capture-only": lambda: session(suite, work / f"{name}-capture-cache", reports["capture-only"],
                                            [*extra, "--export-checks=state", "--export-cache=off"]),
            "export-only": lambda: session(suite, work / f"{name}-bare-cache", reports["export-only"], extra,
                                           bare=True, export_only=True),
        }
        order = SIDES
        if round_ % 2:
            order = ("export-only", "capture-only", "cold", "warm", "bare")
        for side in order:
            samples[side].append(times[side]())
        timed_now = ", ".join(f"{side} {samples[side][-1]:.1f}s" for side in order)
        print(f"{name} round {round_ + 1}: {timed_now}", flush=True)
        cold, warm = records(reports["cold"]), records(reports["warm"])
        changed = sorted(k for k in cold if cold[k][0] != warm.get(k, ("missing",))[0])
        print(f"{name} round {round_ + 1} (case, mode) pairs: {len(cold)}; served from the cache when warm: "
              f"{len(served(warm))} ({len(served_whole(warm))} whole, {len(served(warm) - served_whole(warm))} after "
              f"capture); verdicts changed cold -> warm: {len(changed)} {changed[:5]}")
        ok &= not changed and set(cold) == set(warm)
    seconds = {side: statistics.median(values) for side, values in samples.items()}
    if name == "examples":
        edited = suite / EDITED_FILE
        edited.write_text(edited.read_text().replace("nn.ReLU()", "nn.Tanh()", 1))
        edited_seconds = session(suite, work / f"{name}-cache-0", work / f"{name}-edited.json", extra)
        after = records(work / f"{name}-edited.json")
        mlp = {k for k, (_, _, test) in after.items() if test.split("::")[0].endswith(EDITED_FILE)}
        warm = records(warm_report)
        others = served(warm) - mlp  # every pair the warm run served, but the edited model's
        print(f"{name} warm, {EDITED_FILE} edited: {edited_seconds:.1f}s ({edited_seconds / seconds['cold']:.2f}x "
              f"cold); its {len(mlp)} (case, mode) pairs served from the cache: {len(mlp & served(after))} (must be "
              f"0); the other pairs the warm run served, served again: {len(others & served(after))} of {len(others)} "
              f"({len(others & served_whole(after))} whole)", flush=True)
        ok &= bool(mlp) and not mlp & served(after) and others <= served(after)
        edited.write_text(edited.read_text().replace("nn.Tanh()", "nn.ReLU()", 1))
    fixed = collect_only(suite, work, extra)
    floor = fixed + always_run(warm_report)
    print(f"{name} medians over {rounds} round(s): " + ", ".join(f"{side} {v:.1f}s" for side, v in seconds.items()))
    print(f"{name} warm floor: collect-only session {fixed:.1f}s + the last warm run's capture and eager "
          f"{floor - fixed:.1f}s = {floor:.1f}s ({floor / seconds['cold']:.2f}x cold); the capture-only session "
          f"{seconds['capture-only']:.1f}s ({seconds['capture-only'] / seconds['cold']:.2f}x cold); "
          f"warm / capture-only: "
          f"{seconds['warm'] / seconds['capture-only']:.2f}x; the export-only session {seconds['export-only']:.1f}s "
          f"({seconds['export-only'] / seconds['cold']:.2f}x cold; warm / export-only: "
          f"{seconds['warm'] / seconds['export-only']:.2f}x)", flush=True)
    print(f"{name} ratio warm / cold: {seconds['warm'] / seconds['cold']:.2f}x (target <= 0.4x); "
          f"warm / bare loop: {seconds['warm'] / seconds['bare']:.2f}x (target <= 0.5x); "
          f"cold / bare loop: {seconds['cold'] / seconds['bare']:.2f}x", flush=True)
    return ok


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--suite", choices=("examples", "exportdb", "zoo", "both"), default="both")
    parser.add_argument("-n", dest="workers", default="0", help="pytest-xdist workers per session (default 0)")
    parser.add_argument("--rounds", type=int, default=1,
                        help="sessions of each kind per suite (medians; each round's cold run starts empty)")
    parser.add_argument("--files", nargs="+", metavar="FILE",
                        help=f"only these files of examples/ (must include {EDITED_FILE})")
    parser.add_argument("--models", nargs="+", metavar="SPEC", default=list(ZOO_MODELS),
                        help="zoo specs for --suite zoo (default: %(default)s)")
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
            ok &= run_suite("examples", suite, work, extra, args.rounds)
        if args.suite in ("exportdb", "both"):
            ok &= run_suite("exportdb", ROOT / "exportdb", work, extra, args.rounds)
        if args.suite == "zoo":
            os.environ.setdefault("HF_HUB_OFFLINE", "1")  # the zoo builds from code; never ask the hub
            suite = work / "zoo"  # an empty folder: the session's items are the zoo's alone
            suite.mkdir()
            print(f"zoo models: {', '.join(args.models)}")
            ok &= run_suite("zoo", suite, work, [*extra, *(f"--export-model={spec}" for spec in args.models)],
                            args.rounds)
    print("invariants (same verdicts cold and warm; the edited model re-checked):", "hold" if ok else "BROKEN")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
