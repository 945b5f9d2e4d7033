"""torch.export.load of default_cost.py's programs, as torch alone loads them vs with the serialize stage's memo.

The serialize stage loads under ``exportcore.programs.serde_memo.memoized_parsing()``: a repeat of the
same ``typing.get_type_hints`` or ``sympy.sympify`` call in torch's deserializer takes the first
call's answer. This times exactly that: each case's non_strict and training capture (the programs
the stage round-trips; strict captures the same programs) is saved once, then every program is
loaded plain and memoized, in alternating order for ``--rounds`` passes, in one process.
It also checks that both loads give the same graph and the same symbolic sizes.

Usage: ``python benchmarks/load_cost.py [--rounds 5]``
"""

from __future__ import annotations

import argparse
import io
import statistics
import sys
import time

from default_cost import CASES, build
from measure import machine


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    import torch

    from exportcore.programs.serde_memo import memoized_parsing

    print(f"machine: {machine()}")
    saved: list[tuple[str, bytes]] = []
    for name in CASES:
        factory, example, spec = build(name)
        for mode in ("non_strict", "training"):
            model = factory().train(mode == "training")
            buffer = io.BytesIO()
            torch.export.save(torch.export.export(model, example, dynamic_shapes=spec, strict=False), buffer)
            saved.append((f"{name} [{mode}]", buffer.getvalue()))

    def load(data: bytes, memo: bool) -> tuple[float, object]:
        start = time.perf_counter()
        if memo:
            with memoized_parsing():
                ep = torch.export.load(io.BytesIO(data))
        else:
            ep = torch.export.load(io.BytesIO(data))
        return time.perf_counter() - start, ep

    def described(ep: object) -> list:
        return [(n.name, str(getattr(n.meta.get("val"), "shape", n.meta.get("val")))) for n in ep.graph.nodes]

    for label, data in saved:  # warm up torch's lazy imports; and the two loads must agree
        if described(load(data, False)[1]) != described(load(data, True)[1]):
            raise SystemExit(f"{label}: the memoized load differs from torch's own")
    seconds: dict[bool, list[float]] = {False: [], True: []}
    for round_ in range(args.rounds):
        for memo in ((False, True) if round_ % 2 == 0 else (True, False)):
            seconds[memo].append(sum(load(data, memo)[0] for _, data in saved))
        print(f"round {round_ + 1}: torch alone {seconds[False][-1]:.2f}s, memoized {seconds[True][-1]:.2f}s", flush=True)
    plain, memo = statistics.median(seconds[False]), statistics.median(seconds[True])
    print(f"{len(saved)} programs, every load agreeing with torch's own; medians: torch alone {plain:.2f}s, "
          f"memoized {memo:.2f}s: {memo / plain:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
