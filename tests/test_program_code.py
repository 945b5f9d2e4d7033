"""Code only the steps after capture run is part of the identity: a project's decomposition, a pytree node's functions.

Neither shows in the captured graph nor in anything eager runs: only the decomposed program, the
outputs ``.module()`` builds and what save/load reads back. Edit one and a cold run fails; a warm
run must not serve the old pass.
"""

from __future__ import annotations

import itertools

import pytest
import torch
from torch._decomp import global_decomposition_table

from exportcore.reuse.result_cache import ResultCache
from sessions import check, served, write_module

aten = torch.ops.aten


def silu_right(x: torch.Tensor) -> torch.Tensor:
    return x * torch.sigmoid(x)


def silu_wrong(x: torch.Tensor) -> torch.Tensor:
    return x * torch.sigmoid(x) * 1.5


class Silu(torch.nn.Module):
    def forward(self, x):
        return torch.nn.functional.silu(x)


@pytest.fixture
def silu_table():
    """torch's decomposition table, its silu entry the test's to set (as a project's conftest does), restored after."""
    table = global_decomposition_table["post_autograd"]
    saved = table.get(aten.silu.default)
    yield table
    if saved is None:
        table.pop(aten.silu.default, None)
    else:
        table[aten.silu.default] = saved


def test_an_edited_decomposition_in_torchs_table_is_not_served_the_old_pass(tmp_path, silu_table) -> None:
    cache = ResultCache(tmp_path / "cache")
    silu_table[aten.silu.default] = silu_right
    assert check(cache, Silu).status == "passed"
    assert served(check(cache, Silu))
    silu_table[aten.silu.default] = silu_wrong
    edited = check(cache, Silu)
    assert not served(edited)
    assert edited.status == "failed" and edited.failure.stage == "numerics", edited.failure


PAIR = '''
import json

import torch
import torch.utils._pytree as pytree


class Pair:
    def __init__(self, mean, peak):
        self.mean, self.peak = mean, peak


def _flatten(pair):
    return [pair.mean, pair.peak], ["mean", "peak"]


def _unflatten(values, context):
    return Pair(**dict(zip({unflatten}, values)))


def _to_dumpable(context):
    return json.dumps(context)


def _from_dumpable(text):
    return {from_dumpable}


pytree.register_pytree_node(Pair, _flatten, _unflatten, serialized_type_name="pte_pair_{serial}",
                            to_dumpable_context=_to_dumpable, from_dumpable_context=_from_dumpable)


class Stats(torch.nn.Module):
    def forward(self, x):
        y = x.sin()
        return Pair(y.mean(0), y.amax(0))
'''


_SERIALS = itertools.count()  # torch refuses a serialized type name registered before, in any test


@pytest.mark.parametrize("edit, stage", [
    pytest.param({"unflatten": "reversed(context)"}, "numerics", id="unflatten_fn (.module() builds outputs)"),
    pytest.param({"from_dumpable": "list(reversed(json.loads(text)))"}, "numerics", id="from_dumpable_context (load)"),
])
def test_an_edited_pytree_node_of_the_outputs_is_not_served_the_old_pass(tmp_path, edit, stage) -> None:
    def load(**changes: str) -> type:
        text = PAIR.format(**{"unflatten": "context", "from_dumpable": "json.loads(text)", "serial": next(_SERIALS), **changes})
        return write_module(tmp_path / "pte_pair_model.py", text, "pte_pair_model").Stats

    cache = ResultCache(tmp_path / "cache")
    assert check(cache, load()).status == "passed"
    assert served(check(cache, load()))
    edited = check(cache, load(**edit))
    assert not served(edited)
    assert edited.status == "failed" and edited.failure.stage == stage, edited.failure
