"""Code the result cache's proof must name though eager never runs it as a frame of its own.

Each case here was a stale pass (28 Nov): a cold run found the edited model broken at a drawn
shape or in its decomposed program, while a warm run served the earlier pass. A kernel only
``run_decompositions`` runs, a branch of a cond nested in a cond, functions dynamo traces instead
of running, the object a bound method reads through ``self``, a constant read through ``globals()``.
"""

from __future__ import annotations

import sys
from pathlib import Path

import torch
from torch.export import Dim

from exportcore.reuse.identity import structure
from exportcore.reuse.python_digest import state_digest
from exportcore.reuse.result_cache import ResultCache
from sessions import check, served, write_module

# An op with only a CompositeImplicitAutograd kernel stays in the captured graph; run_decompositions
# lowers it by running the kernel, which then takes the path torch.compile and export take.
_LIB = torch.library.Library("pte_lowered", "DEF")
_LIB.define("twice(Tensor x) -> Tensor")


def _twice(x: torch.Tensor) -> torch.Tensor:
    if torch.compiler.is_compiling():
        return sys.modules["pte_lowering"].lowered(x)
    return torch.mul(x, 2)


_LIB.impl("twice", _twice, "CompositeImplicitAutograd")


class Lowered(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.ops.pte_lowered.twice(x) + 1


def test_code_only_the_decomposition_runs_is_checked_again_when_edited(tmp_path: Path) -> None:
    cache = ResultCache(tmp_path / "cache")

    def lowering(body: str) -> type:
        sys.modules["pte_lowering"] = write_module(tmp_path / "pte_lowering.py", f"def lowered(x):\n    return {body}\n",
                                                   "pte_lowering")
        return Lowered

    try:
        for mode in ("strict", "training"):
            assert check(cache, lowering("x + x"), mode).status == "passed"
            assert served(check(cache, lowering("x + x"), mode))
            edited = check(cache, lowering("x * 3"), mode)
            assert not served(edited)
            assert edited.status == "failed" and "run_decompositions" in edited.failure.message, edited.failure
    finally:
        sys.modules.pop("pte_lowering", None)


def _nested(factor: float) -> type:
    def long_rows(x):
        return x * factor

    def short_rows(x):
        return x - 1

    def positive(x):
        rows = torch.ones_like(x[:, 0]).sum()  # the row count as a tensor (torch 2.6 cannot nest a size predicate)
        return torch.cond(rows > 16, long_rows, short_rows, (x,))

    class Nested(torch.nn.Module):
        def forward(self, x):
            return torch.cond(x.sum() > -1e9, positive, lambda t: -t, (x,))

    return Nested


def test_a_cond_inside_a_conds_branch_is_part_of_the_program() -> None:
    x = torch.randn(8, 3)
    spec = {"x": {0: Dim("n", min=2, max=64)}}
    twice, thrice = (torch.export.export(_nested(f)(), (x,), dynamic_shapes=spec) for f in (2.0, 3.0))
    assert structure(twice) != structure(thrice)
    assert structure(twice) == structure(torch.export.export(_nested(2.0)(), (x,), dynamic_shapes=spec))


def test_a_torch_compiled_helper_in_forward_is_never_served(tmp_path: Path) -> None:
    # dynamo inlines what the compiled function calls: no frame shows it, so no proof covers it
    @torch.compile(backend="eager", dynamic=True)
    def running_sum(x):
        return x.cumsum(0) * 1.0

    class Compiled(torch.nn.Module):
        def forward(self, x):
            return running_sum(x)

    cache = ResultCache(tmp_path / "cache")
    assert check(cache, Compiled).status == "passed"
    again = check(cache, Compiled)
    assert again.status == "passed" and not served(again)


class _Chunker(torch.nn.Module):
    def __init__(self, limit: int) -> None:
        super().__init__()
        self.limit = limit

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x[: self.limit]


class _Rows:
    LIMIT = 1000

    @classmethod
    def limit(cls) -> int:
        return cls.LIMIT


class _Holder(torch.nn.Module):
    def __init__(self, post: object) -> None:
        super().__init__()
        self.post = post  # a bound method: what it is bound to is read through self/cls, not the model


def test_a_bound_method_is_read_with_what_it_is_bound_to(monkeypatch) -> None:
    def digest(post: object) -> str | None:
        return state_digest(_Holder(post))

    assert digest(_Chunker(1000).forward) == digest(_Chunker(1000).forward)
    assert digest(_Chunker(1000).forward) != digest(_Chunker(20).forward)  # a module outside the model's tree
    assert digest({"rows": 1000}.get) != digest({"rows": 20}.get)  # a builtin method: the dict it reads
    before = digest(_Rows.limit)
    monkeypatch.setattr(_Rows, "LIMIT", 20)
    assert digest(_Rows.limit) != before  # a classmethod: its class's attributes


GLOBALS_MODEL = '''
import torch

ROWS = {rows}


class FromGlobals(torch.nn.Module):
    def forward(self, x):
        limit = globals()["ROWS"]
        if torch.compiler.is_compiling() or x.shape[0] <= limit:
            return x.cumsum(0)
        return torch.cat([x[:limit].cumsum(0), x[limit:].cumsum(0)])
'''


def test_a_constant_read_through_globals_is_part_of_the_proof(tmp_path: Path) -> None:
    cache, path = ResultCache(tmp_path / "cache"), tmp_path / "globals_model.py"

    def load(rows: int) -> type:
        return write_module(path, GLOBALS_MODEL.format(rows=rows), "pte_globals_model").FromGlobals

    assert check(cache, load(1000), "non_strict").status == "passed"
    assert served(check(cache, load(1000), "non_strict"))
    edited = check(cache, load(20), "non_strict")
    assert not served(edited) and edited.status == "failed", edited.failure


def test_a_custom_ops_kernel_under_torchs_dynamo_disable_is_recorded() -> None:
    # torch runs a CompositeImplicitAutograd kernel under a torch._dynamo.disable wrapper while it
    # decomposes: the code under it is the user's, recorded like any other
    from exportcore.reuse.eager_code import CodeRecord

    sys.modules["pte_lowering"] = type(sys)("pte_lowering")
    sys.modules["pte_lowering"].lowered = lambda x: x + x
    try:
        ep = torch.export.export(Lowered(), (torch.randn(4, 3),), strict=False)
        record = CodeRecord()
        record.run(ep.run_decompositions)
    finally:
        sys.modules.pop("pte_lowering", None)
    assert record.complete and "_twice" in {code.co_name for code, _, _ in record.seen.values()}
