"""Harness overhead: pytest-export over 6 small models x 3 modes vs a hand-written loop doing the same work.

Every side runs in a fresh subprocess and does the same exports and the same number of eager
and ``.module()`` calls: per (case, mode) one ``torch.export.export``; ``.module()`` of the
program, of ``run_decompositions()`` and of a ``save``/``load`` round trip; each of the three
programs and the eager model run on the example inputs and on as many drawn batch sizes as
the plugin's report says it tried; outputs (and in training mode buffers and gradients) are
compared. The hand-written work runs twice: as plain pytest tests (``-p no:export``; the
ratio to this one is the harness overhead and has the target) and as a plain script (which
also saves pytest's own start-up). The plugin runs with ``--export-checks=numerics,decompose,serialize`` so that it does
nothing the loop does not (no guard probes, no dtype/state findings), and with ``--export-no-reuse``
so that it does not skip runs the loop does (sharing identical programs between modes is measured
by benchmarks/default_cost.py). Target: <= 1.15x.
Usage: ``python benchmarks/overhead.py [--rounds 2] [--examples 2]``.
"""

from __future__ import annotations

import argparse
import io
import json
import random
import sys
import tempfile
from pathlib import Path
from typing import Any

from measure import machine, summary, timed
from overhead_models import CASES, MAX_BATCH, MIN_BATCH, build, dynamic_shapes

from exportcore.modes import MODES
CHECKS = "numerics,decompose,serialize"

#: The same hand-written work as plain pytest tests (run with -p no:export): pytest's own cost is on both sides.
LOOP_TEST_FILE = '''
import json
import random
import sys
sys.path.insert(0, {bench!r})

import pytest
from overhead import MODES, run_case
from overhead_models import CASES

COUNTS = json.load(open({counts!r}))
RNG = random.Random(0)
DONE = {{"exports": 0, "eager": 0, "program": 0}}


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", CASES)
def test_case(name, mode):
    run_case(name, mode, COUNTS[name + "|" + mode], RNG, DONE)
'''

TEST_FILE = '''
import sys
sys.path.insert(0, {bench!r})

import pytest
import exportcore
from overhead_models import CASES, build, dynamic_shapes


@pytest.mark.parametrize("name", CASES)
@pytest.mark.exportable()
def test_case(name):
    model, args = build(name)
    return exportcore.Case(model=model, args=args, dynamic_shapes=dynamic_shapes())
'''


def _side(fn: Any, state: dict, args: tuple, training: bool, backward: bool) -> tuple[Any, dict | None, dict | None]:
    """One run of eager or exported code from the saved state: outputs (and buffers, grads when training)."""
    import torch

    with torch.no_grad():
        for name, t in list(fn.named_parameters()) + list(fn.named_buffers()):
            if name in state:
                t.copy_(state[name])
    args = tuple(a.clone() for a in args)
    torch.manual_seed(0)
    if not training:
        with torch.no_grad():
            return fn(*args).detach(), None, None
    for p in fn.parameters():
        p.grad = None
    out = fn(*args)
    if backward:
        weights = torch.rand(out.shape, generator=torch.Generator().manual_seed(0))
        (out * weights).sum().backward()
    grads = {n: p.grad.clone() for n, p in fn.named_parameters() if p.grad is not None} if backward else None
    return out.detach(), grads, {n: b.clone() for n, b in fn.named_buffers()}


def _compare(expected: tuple, actual: tuple) -> None:
    import torch

    torch.testing.assert_close(actual[0], expected[0])
    for got, want in zip(actual[1:], expected[1:]):
        if got is not None and want is not None:
            for k in got.keys() & want.keys():
                torch.testing.assert_close(got[k], want[k])


def run_case(name: str, mode: str, draws: int, rng: random.Random, done: dict[str, int]) -> None:
    """Do by hand what the plugin does for one (case, mode); count the calls in ``done``."""
    import torch

    model, args = build(name)
    training = mode == "training"
    model.train(training)
    state = {k: v.detach().clone() for k, v in model.state_dict().items()}
    ep = torch.export.export(model, args, dynamic_shapes=dynamic_shapes(), strict=mode == "strict")
    buffer = io.BytesIO()
    torch.export.save(ep, buffer)
    buffer.seek(0)
    programs = [(ep.module(), True), (ep.run_decompositions().module(), False),
                (torch.export.load(buffer).module(), True)]
    done["exports"] += 1
    for batch in [args[0].shape[0]] + [rng.randint(MIN_BATCH, MAX_BATCH) for _ in range(draws)]:
        x = (torch.randn(batch, *args[0].shape[1:]) if args[0].is_floating_point()
             else torch.randint(0, 50, (batch, *args[0].shape[1:])))
        reference = _side(model, state, (x,), training, backward=True)
        done["eager"] += 1
        for program, backward in programs:
            got = _side(program, state, (x,), training, backward)
            _compare(reference if backward else reference[:1] + (None, reference[2]), got)
            done["program"] += 1


def loop(counts: dict[str, int]) -> dict[str, int]:
    """The hand-written equivalent of the plugin run as a script; return how many calls of each kind it made."""
    done = {"exports": 0, "eager": 0, "program": 0}
    rng = random.Random(0)
    for name in CASES:
        for mode in MODES:
            run_case(name, mode, counts[f"{name}|{mode}"], rng, done)
    return done


def plugin_counts(report: dict) -> tuple[dict[str, int], dict[str, int]]:
    """Return drawn examples tried per "case|mode" and the totals the plugin did, from its JSON report."""
    counts, done = {}, {"exports": 0, "eager": 0, "program": 0}
    for record in report["records"]:
        if record["verdict"] != "passed":
            raise RuntimeError(f"{record['test']} did not pass: {record['outcome'].get('failure')}")
        name = record["case"].split("[")[-1].rstrip("]")
        stats = record["outcome"].get("examples") or {}
        tried = int(stats.get("accepted", 0))
        counts[f"{name}|{record['mode']}"] = tried
        done["exports"] += 1
        done["eager"] += 1 + int(stats.get("tried", 0))  # discarded shapes still ran eager
        done["program"] += 3 * (1 + tried)
    return counts, done


def main() -> int:
    """Run the plugin and the loop alternately and print both times and their ratio."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--examples", type=int, default=2)
    parser.add_argument("--loop", metavar="COUNTS_JSON", help=argparse.SUPPRESS)
    opts = parser.parse_args()
    if opts.loop:
        done = loop(json.loads(Path(opts.loop).read_text()))
        Path(opts.loop).with_suffix(".done.json").write_text(json.dumps(done))
        return 0
    print(f"machine: {machine()}")
    bench = str(Path(__file__).resolve().parent)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "test_overhead.py").write_text(TEST_FILE.format(bench=bench))
        report_path = root / "report.json"
        pytest_cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(root / "test_overhead.py"),
                      f"--export-checks={CHECKS}", "--export-no-reuse", f"--export-examples={opts.examples}", f"--export-report={report_path}"]
        counts_path = root / "counts.json"
        (root / "loop").mkdir()
        (root / "loop" / "test_loop.py").write_text(LOOP_TEST_FILE.format(bench=bench, counts=str(counts_path)))
        samples: dict[str, list[float]] = {"pytest-export": [], "plain pytest, hand-written": [],
                                           "script, hand-written": []}
        commands = {
            "pytest-export": (pytest_cmd, root),
            "plain pytest, hand-written": ([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                                            "-p", "no:export", str(root / "loop" / "test_loop.py")], root / "loop"),
            "script, hand-written": ([sys.executable, __file__, "--loop", str(counts_path)], root),
        }
        # Warm-up: fills the bytecode cache for every side, so none pays compilation when timed.
        timed(pytest_cmd, cwd=root)
        counts, plugin_done = plugin_counts(json.loads(report_path.read_text()))
        counts_path.write_text(json.dumps(counts))
        for cmd, cwd in list(commands.values())[1:]:
            timed(cmd, cwd=cwd)
        for _ in range(opts.rounds):
            for name, (cmd, cwd) in commands.items():
                samples[name].append(timed(cmd, cwd=cwd))
            if plugin_counts(json.loads(report_path.read_text()))[0] != counts:
                raise RuntimeError("the plugin drew a different number of examples between runs")
        loop_done = json.loads((root / "counts.done.json").read_text())
    print(f"work per run: plugin {plugin_done}, loop {loop_done} "
          f"({len(CASES)} cases x {len(MODES)} modes, checks {CHECKS}, {opts.examples} drawn examples each)")
    for name, values in samples.items():
        print(summary(name, values))
    plugin = min(samples["pytest-export"])
    ratio = plugin / min(samples["plain pytest, hand-written"])
    verdict = "meets" if ratio <= 1.15 else "MISSES"
    print(f"ratio pytest-export / plain pytest doing the same work (min over rounds): {ratio:.2f}x "
          f"-> {verdict} the <= 1.15x target")
    print(f"ratio pytest-export / plain script doing the same work (min over rounds): "
          f"{plugin / min(samples['script, hand-written']):.2f}x (includes pytest's own start-up and collection)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
