"""The result cache's proof reads what a model would call now, by the path it reaches it through.

Each test is a cold session that passes, an unchanged one that is served, and an edited one that
must be checked again and fail at a drawn shape (as a cold run of it does). In every case the
edit leaves the source text at the old function's line as it was: a proof that found its
witnesses by file and line, or named a function by its name and a stdlib object by its type,
served the old pass.
"""

from __future__ import annotations

import sys

import pytest
import torch
from torch._decomp import global_decomposition_table

from exportcore.reuse.result_cache import ResultCache
from processes import last_lines
from sessions import check, edit_rechecked, helper_edit_rechecked, served, write_module

aten = torch.ops.aten

# Past 16 rows eager takes a path the 8-row examples never reach (``is_compiling``: export takes the
# first branch): only a drawn shape past 16 rows shows what that path computes.
CHUNKED = '''
import torch


class Net(torch.nn.Module):
    def forward(self, x):
        if torch.compiler.is_compiling() or x.shape[0] <= 16:
            return x.sin()
        return self.chunked(x)

    def chunked(self, x):
        return torch.cat([part.sin() for part in x.split(8)])
'''


def off_by_half(self, x):
    return x.sin() + 0.5


def test_a_method_replaced_on_the_models_class_is_checked_again(tmp_path) -> None:
    # what a conftest's ``monkeypatch.setattr(Net, "chunked", other)`` does: the class's source is unchanged
    def patched() -> type:
        cls = write_module(tmp_path / "pte_chunked_model.py", CHUNKED, "pte_chunked_model").Net
        cls.chunked = off_by_half
        return cls

    edit_rechecked(ResultCache(tmp_path / "cache"),
                   lambda: write_module(tmp_path / "pte_chunked_model.py", CHUNKED, "pte_chunked_model").Net, patched)


def test_a_method_a_conftest_no_longer_replaces_is_checked_again(tmp_path) -> None:
    # the other way round: the pass was the patched method's; without the patch, the class's own runs
    wrong = CHUNKED.replace("for part in x.split(8)])", "for part in x.split(8)]) + 0.5")

    def patched() -> type:
        cls = write_module(tmp_path / "pte_unpatched_model.py", wrong, "pte_unpatched_model").Net
        cls.chunked = lambda self, x: x.sin()
        return cls

    edit_rechecked(ResultCache(tmp_path / "cache"), patched,
                   lambda: write_module(tmp_path / "pte_unpatched_model.py", wrong, "pte_unpatched_model").Net)


HELPER = '''
import torch


def long_rows(x):
    return x.sin()


class Gated(torch.nn.Module):
    def forward(self, x):
        if torch.compiler.is_compiling() or x.shape[0] <= 16:
            return x.sin()
        return long_rows(x)
'''


def test_a_helper_redefined_further_down_its_module_is_checked_again(tmp_path) -> None:
    # The first definition keeps its line and its text; the name now holds the second.
    redefined = HELPER + "\n\ndef long_rows(x):\n    return x.sin() + 0.5\n"
    path = tmp_path / "pte_redefined_model.py"
    edit_rechecked(ResultCache(tmp_path / "cache"), lambda: write_module(path, HELPER, "pte_redefined_model").Gated,
                   lambda: write_module(path, redefined, "pte_redefined_model").Gated)


FAST_KERNEL = '''
import os

import torch

if os.environ.get("PTE_FAST_KERNEL"):
    def big_path(x):
        return x.sin() + 0.5
else:
    def big_path(x):
        return x.sin()


class Gated(torch.nn.Module):
    def forward(self, x):
        if torch.compiler.is_compiling() or x.shape[0] <= 16:
            return x.sin()
        return big_path(x)
'''


def test_an_implementation_chosen_at_import_by_the_environment_is_checked_again(tmp_path, monkeypatch) -> None:
    # The variable is read while the module is imported, not while the model runs: no record of the
    # model's reads sees it. What the name holds when the model would call it does.
    path = tmp_path / "pte_fast_kernel_model.py"
    monkeypatch.delenv("PTE_FAST_KERNEL", raising=False)

    def fast() -> type:
        monkeypatch.setenv("PTE_FAST_KERNEL", "1")
        return write_module(path, FAST_KERNEL, "pte_fast_kernel_model").Gated

    edit_rechecked(ResultCache(tmp_path / "cache"), lambda: write_module(path, FAST_KERNEL, "pte_fast_kernel_model").Gated,
                   fast)


DECOMPOSITION = '''
import torch


def gate(x):
    return torch.sigmoid(x){edit}


def silu(x):
    return x * gate(x)
'''


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


def test_a_helper_a_decomposition_in_torchs_table_calls_is_checked_again(tmp_path, silu_table, monkeypatch) -> None:
    # The table's entry keeps its text; the helper it calls is edited. Only the decomposed program runs
    # it (no custom op in the program), and it is wrong at every shape.
    def load(edit: str = "") -> type:
        module = write_module(tmp_path / "pte_project_decompositions.py", DECOMPOSITION.format(edit=edit),
                              "pte_project_decompositions")
        monkeypatch.setitem(sys.modules, "pte_project_decompositions", module)  # as a conftest is
        silu_table[aten.silu.default] = module.silu
        return Silu

    cache = ResultCache(tmp_path / "cache")
    assert check(cache, load()).status == "passed"
    assert served(check(cache, load()))
    edited = check(cache, load(" * 1.5"))
    assert not served(edited)
    assert edited.status == "failed" and edited.failure.stage == "numerics", edited.failure


ARRAY_LIMIT = '''
import array

import torch


class Gated(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.limit = array.array("i", [{limit}])

    def forward(self, x):
        if torch.compiler.is_compiling() or x.shape[0] <= self.limit[0]:
            return x.sin()
        return x.sin() + 0.5
'''


def test_a_threshold_in_a_standard_library_container_is_read_by_value(tmp_path) -> None:
    path = tmp_path / "pte_array_model.py"

    def load(limit: int) -> type:
        return write_module(path, ARRAY_LIMIT.format(limit=limit), "pte_array_model").Gated

    edit_rechecked(ResultCache(tmp_path / "cache"), lambda: load(1000), lambda: load(16))


IMPORTED_BY_NAME = '''
import importlib
from importlib import import_module

import torch


class Chunked(torch.nn.Module):
    def forward(self, x):
        if torch.compiler.is_compiling() or x.shape[0] <= {read}.LIMIT:
            return x.sin()
        return x.sin() + 0.5
'''


@pytest.mark.parametrize("read", ['importlib.import_module("pte_literal_cfg")', 'import_module("pte_literal_cfg")',
                                  '__import__("pte_literal_cfg")'])
def test_a_config_read_through_import_module_with_a_literal_name_is_read(tmp_path, read) -> None:
    model = IMPORTED_BY_NAME.replace("{read}", read)
    helper_edit_rechecked(tmp_path, "pte_literal_cfg", "LIMIT = {limit}\n", model, "Chunked")


ENVIRONB = '''
import os

import torch


class Chunked(torch.nn.Module):
    def forward(self, x):
        if torch.compiler.is_compiling() or x.shape[0] <= int({read}):
            return x.sin()
        return x.sin() + 0.5
'''


@pytest.mark.parametrize("read", ['os.environb.get(b"PTE_ENVIRONB_LIMIT", b"1000")',
                                  'os.getenvb(b"PTE_ENVIRONB_LIMIT", b"1000")'])
def test_an_environment_variable_read_through_environb_is_part_of_the_proof(tmp_path, monkeypatch, read) -> None:
    monkeypatch.delenv("PTE_ENVIRONB_LIMIT", raising=False)
    path = tmp_path / "pte_environb_model.py"
    model = ENVIRONB.replace("{read}", read)

    def limited() -> type:
        monkeypatch.setenv("PTE_ENVIRONB_LIMIT", "16")
        return write_module(path, model, "pte_environb_model").Chunked

    edit_rechecked(ResultCache(tmp_path / "cache"), lambda: write_module(path, model, "pte_environb_model").Chunked,
                   limited)


IN_NEW_PROCESSES = '''
import array
import functools


def wrapped(fn):
    @functools.wraps(fn)
    def call(*args):
        return fn(*args)
    return call


@wrapped
def long_rows(x, names=frozenset({"a", "b", "c"})):
    return x.sin() if "a" in names else x


class Gated(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.limit = array.array("i", [16])

    def forward(self, x):
        if torch.compiler.is_compiling() or x.shape[0] <= self.limit[0]:
            return x.sin()
        return self.chunked(x)

    def chunked(self, x):
        return torch.cat([long_rows(part) for part in x.split(8)])
'''


SESSION = """
import sys

import torch
from torch.export import Dim

import exportcore
from exportcore.reuse.result_cache import ResultCache
from exportcore.reuse.session import EngineSession
{model}

x = torch.randn(8, 3, generator=torch.Generator().manual_seed(0))
outcome = exportcore.check(Gated(), (x,), dynamic_shapes={{"x": {{0: Dim("n", min=2, max=64)}}}}, mode="strict",
                           case_id="case", session=EngineSession(ResultCache(sys.argv[1])))
print(outcome.status, outcome.reused_from)
"""


def test_unchanged_code_reached_through_its_paths_is_served_in_a_new_process(tmp_path) -> None:
    # Each path's digest is the same in every process (str hashes differ: a frozenset constant's order does).
    lines = last_lines(SESSION.format(model=IN_NEW_PROCESSES), tmp_path, random_hashes=True)
    assert lines[0] == "passed None", lines[0]
    assert lines[1].startswith("passed cache: strict, "), lines[1]
