"""The default check's cost: every check, default drawn examples, vs a bare export loop, on heavy models.

Per (case, mode) the bare side does only what any export pipeline does: ``torch.export.export``,
``run_decompositions()``, ``.module()`` and one call of it on the example. The checked side
runs ``exportcore.check()`` with its defaults (eager reference, capture, decompose, save/load,
numerics on the examples and on drawn shapes, guard accept/reject, size 0/1, dtype, state).
Both sides run in fresh subprocesses, alternating, and time only their loop (torch's import and
model construction excluded on both). Models: torchvision's resnet18 with three dynamic_shapes
specs, the examples' tiny transformer encoder (BERT-like) and a tiny Llama-style decoder; modes
strict, non_strict, training. Target: <= 1.15x.

Each round also prints the full garbage collections during each side's loop (count, seconds):
with torch imported every one traverses some 340 thousand objects, and check() keeps them out of
its own (exportcore.sandbox.heap), which the bare loop does not; the line shows how much of the gap that is.

Usage: ``python benchmarks/default_cost.py [--rounds 2] [--no-reuse]`` (``--no-reuse``: every mode
does its own runs, to see what sharing identical programs saves).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from typing import Any, Callable

from measure import ROOT, bench_env, machine

from exportcore.modes import MODES
CASES = ("resnet18_batch", "resnet18_static", "resnet18_batch_hw", "tiny_bert", "tiny_llama")


def build(name: str) -> tuple[Callable[[], Any], tuple, Any]:
    """Return (model factory with fixed weights, example args, dynamic_shapes) for one case."""
    import torch
    from torch.export import Dim

    if name.startswith("resnet18"):
        import torchvision

        def resnet() -> Any:
            torch.manual_seed(0)
            return torchvision.models.resnet18(weights=None, num_classes=10)

        args = (torch.randn(2, 3, 64, 64),)
        specs = {
            "resnet18_batch": {"x": {0: Dim("batch", min=1, max=8)}},
            "resnet18_static": None,
            "resnet18_batch_hw": {"x": {0: Dim("batch", min=1, max=4), 2: Dim("h", min=48, max=96),
                                        3: Dim("w", min=48, max=96)}},
        }
        return resnet, args, specs[name]
    if name == "tiny_bert":
        sys.path.insert(0, str(ROOT / "examples"))
        from test_transformer import BATCH, SEQ, VOCAB, TinyEncoder

        def bert() -> Any:
            torch.manual_seed(0)
            return TinyEncoder()

        return bert, (torch.randint(0, VOCAB, (2, 10)),), {"input_ids": {0: BATCH, 1: SEQ}}
    if name == "tiny_llama":
        from tiny_llama import TinyLlama

        def llama() -> Any:
            torch.manual_seed(0)
            return TinyLlama()

        return llama, (torch.randint(0, 128, (2, 12)),), {"ids": {0: Dim("batch", min=1, max=8),
                                                                    1: Dim("seq", min=2, max=64)}}
    raise ValueError(name)


def full_collections() -> list[float]:
    """Start timing CPython's full garbage collections in this process; return the list their seconds go to."""
    import gc

    spent: list[float] = []
    started = [0.0]

    def timed(phase: str, info: dict[str, int]) -> None:
        if info["generation"] != 2:
            return
        if phase == "start":
            started[0] = time.perf_counter()
        else:
            spent.append(time.perf_counter() - started[0])

    gc.callbacks.append(timed)
    return spent


def run_side(side: str, reuse: bool) -> tuple[float, dict[str, float], list[float]]:
    """Run one side over every (case, mode) in this process; return the loop's seconds, the checked side's
    per-stage sums and the seconds of each full garbage collection during the loop."""
    import torch

    cases = {name: build(name) for name in CASES}
    stages: dict[str, float] = {}
    collections = full_collections()
    from exportcore import EngineSession

    session = EngineSession(reuse=reuse)  # the loop's checks share one engine session, as the plugin's do
    start = time.perf_counter()
    for name, (factory, args, spec) in cases.items():
        for mode in MODES:
            model = factory()
            if side == "bare":
                model.train(mode == "training")
                ep = torch.export.export(model, args, dynamic_shapes=spec, strict=mode == "strict")
                ep.run_decompositions().module()(*args)
            else:
                import exportcore

                outcome = exportcore.check(model, args, dynamic_shapes=spec, mode=mode, case_id=name, session=session)
                if outcome.status != "passed":
                    raise SystemExit(f"{name} [{mode}] did not pass: {outcome.failure}")
                for stage, seconds in (outcome.timings or {}).items():
                    key = f"{stage} ({mode})" if stage == "run" else stage
                    stages[key] = stages.get(key, 0.0) + seconds
    return time.perf_counter() - start, stages, list(collections)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--no-reuse", action="store_true", help="every mode runs its own checks")
    parser.add_argument("--side", choices=("bare", "checked"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.side:
        seconds, stages, collections = run_side(args.side, not args.no_reuse)
        print(json.dumps({"seconds": seconds, "stages": stages, "collections": collections}))
        return 0
    print(f"machine: {machine()}")
    print(f"cases: {', '.join(CASES)}; modes: {', '.join(MODES)}; reuse between modes: {not args.no_reuse}")
    samples: dict[str, list[float]] = {"bare": [], "checked": []}
    torch_work: list[float] = []
    for round_ in range(args.rounds):
        order = ("bare", "checked") if round_ % 2 == 0 else ("checked", "bare")
        for side in order:
            cmd = [sys.executable, __file__, "--side", side] + (["--no-reuse"] if args.no_reuse else [])
            proc = subprocess.run(cmd, cwd=ROOT, env=bench_env(), capture_output=True, text=True, check=False)
            if proc.returncode != 0:
                raise SystemExit(f"{side} failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
            result = json.loads(proc.stdout.strip().splitlines()[-1])
            samples[side].append(result["seconds"])
            collections = result["collections"]
            print(f"round {round_ + 1} {side}: {samples[side][-1]:.1f}s (full garbage collections: {len(collections)}, "
                  f"{sum(collections):.1f}s)", flush=True)
            if result["stages"]:  # where the checked side's time went (the outcomes' own stage timings)
                torch_work.append(sum(v for k, v in result["stages"].items()
                                      if k.split(" ")[0] in ("capture", "decompose", "serialize", "run")))
                parts = sorted(result["stages"].items(), key=lambda kv: -kv[1])
                print("  by stage: " + ", ".join(f"{k} {v:.1f}s" for k, v in parts), flush=True)
    bare, checked = statistics.median(samples["bare"]), statistics.median(samples["checked"])
    if torch_work:
        # The floor no engine change moves: torch's own capture, decompositions and save/load of
        # every distinct program, plus the stage that runs eager and the programs on the drawn shapes.
        work = statistics.median(torch_work)
        print(f"checked side's stages (capture, decompose, save/load, the drawn-shape runs): median {work:.1f}s = "
              f"{work / bare:.2f}x the bare loop; outside the stages (the engine's bookkeeping): "
              f"{checked - work:.1f}s")
    print(f"bare export loop (export + run_decompositions + .module() and one call): median {bare:.1f}s")
    print(f"default check (every check, default examples): median {checked:.1f}s")
    print(f"ratio default check / bare loop: {checked / bare:.2f}x (target <= 1.15x)")
    # Each round runs both sides back to back: its own ratio cancels what a slow stretch of a shared
    # machine does to both (the verdict statistic of unused_cost.py); printed beside, not instead.
    paired = [c / b for b, c in zip(samples["bare"], samples["checked"])]
    print(f"the rounds' own ratios: {', '.join(f'{r:.2f}x' for r in paired)}; median {statistics.median(paired):.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
