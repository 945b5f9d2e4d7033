"""Every place a value eager reads can live is part of the identity: an edit there is checked again, never served.

Each model leaves the traced path past a row limit (export takes the first branch) and goes wrong
past it only when the limit is small: 8-row examples never show it, drawn shapes up to 64 rows do.
The limit lives somewhere else in each: a class attribute, a config namespace, a closure a factory
made, an object a bound method belongs to (stored, or registered as a hook), a global function
alias, a class or module a global names, an environment variable. A cold run of the edited model
fails; a warm run must too.
"""

from __future__ import annotations

import functools
import os
import types
from pathlib import Path

import pytest
import torch

from exportcore.reuse.result_cache import ResultCache
from sessions import check, edit_rechecked, served, write_module


def chunked(x: torch.Tensor, limit: int) -> torch.Tensor:
    """Sum rows in chunks of ``limit`` and forget the carry: right only up to ``limit`` rows."""
    if torch.compiler.is_compiling() or x.shape[0] <= limit:
        return x.cumsum(0)
    return torch.cat([x[:limit].cumsum(0), x[limit:].cumsum(0)])


class ClassLimitBase(torch.nn.Module):
    LIMIT = 1000

    def forward(self, x):
        return chunked(x, self.LIMIT)


def class_limit(limit: int) -> type:
    return type("ClassLimit", (ClassLimitBase,), {"LIMIT": limit, "__module__": __name__})


class NamespaceLimit(torch.nn.Module):
    def __init__(self, limit: int) -> None:
        super().__init__()
        self.config = types.SimpleNamespace(rows=limit)

    def forward(self, x):
        return chunked(x, self.config.rows)


def make_long(limit: int):
    def long(x: torch.Tensor) -> torch.Tensor:
        return chunked(x, limit)

    return long


class ClosureLimit(torch.nn.Module):
    """The closure runs only past 16 rows: the examples' record of eager never holds its cells."""

    def __init__(self, limit: int) -> None:
        super().__init__()
        self.long = make_long(limit)

    def forward(self, x):
        if torch.compiler.is_compiling() or x.shape[0] <= 16:
            return x.cumsum(0)
        return self.long(x)


class Gate:
    def __init__(self, limit: int) -> None:
        self.limit = limit

    def rows(self) -> int:
        return self.limit

    def hook(self, module, args, output):
        return chunked(args[0], self.limit)


class MethodLimit(torch.nn.Module):
    def __init__(self, limit: int) -> None:
        super().__init__()
        self.rows = Gate(limit).rows

    def forward(self, x):
        return chunked(x, self.rows())


class HookLimit(torch.nn.Module):
    def __init__(self, limit: int) -> None:
        super().__init__()
        self.register_forward_hook(Gate(limit).hook)

    def forward(self, x):
        return x.cumsum(0)


@pytest.mark.parametrize("make, mode", [
    pytest.param(lambda limit: class_limit(limit)(), "strict", id="class attribute"),
    pytest.param(NamespaceLimit, "strict", id="SimpleNamespace config"),
    pytest.param(ClosureLimit, "strict", id="closure of a factory"),
    pytest.param(MethodLimit, "strict", id="object of a bound method"),
    # non-strict: torch 2.6's dynamo cannot capture this hook (torch 2.15's can)
    pytest.param(HookLimit, "non_strict", id="object of a hook method"),
])
def test_a_limit_held_anywhere_in_the_models_state_is_read(tmp_path, make, mode) -> None:
    edit_rechecked(ResultCache(tmp_path / "cache"), lambda: functools.partial(make, 1000),
                   lambda: functools.partial(make, 20), mode)


MODEL = '''
import torch

FIX = {fix}


class Limits:
    ROWS = {rows}


def long_rows(x):
    # right with FIX = torch.clone
    return torch.cat([x[:16].cumsum(0), FIX(x[16:].cumsum(0) + x[:16].sum(0))])


class Chunked(torch.nn.Module):
    def forward(self, x):
        if torch.compiler.is_compiling() or x.shape[0] <= min(Limits.ROWS, cfg.ROWS):
            return x.cumsum(0)
        return long_rows(x)
'''


def load(tmp_path: Path, fix: str, rows: int, cfg_rows: int) -> type:
    """The model's module and the config module it reads (``cfg``), as a user edits them, imported afresh."""
    module = write_module(tmp_path / "pte_rows_model.py", MODEL.format(fix=fix, rows=rows), "pte_rows_model")
    module.cfg = write_module(tmp_path / "pte_rows_cfg.py", f"ROWS = {cfg_rows}\n", "pte_rows_cfg")  # import ... as cfg
    return module.Chunked


@pytest.mark.parametrize("before, after", [
    pytest.param({"fix": "torch.clone", "rows": 16}, {"fix": "torch.neg"}, id="a global function alias"),
    pytest.param({"fix": "torch.neg", "rows": 1000}, {"rows": 16}, id="a class attribute read through a global"),
    pytest.param({"fix": "torch.neg", "cfg_rows": 1000}, {"cfg_rows": 16}, id="an attribute of a module a global names"),
])
def test_a_value_eager_reads_through_a_global_is_read(tmp_path, before, after) -> None:
    base = {"fix": "torch.clone", "rows": 1000, "cfg_rows": 1000, **before}
    edit_rechecked(ResultCache(tmp_path / "cache"), lambda: load(tmp_path, **base),
                   lambda: load(tmp_path, **{**base, **after}))


ROWS_VARIABLE = "PTE_TEST_CHUNK_ROWS"


class EnvLimit(torch.nn.Module):
    """Reads its limit from the environment on every call: at the examples' 8 rows too, where it changes nothing."""

    def forward(self, x):
        return chunked(x, int(os.environ.get(ROWS_VARIABLE, "1000")))


class EnvLimitBeyond(torch.nn.Module):
    """Reads its limit only past 16 rows: the examples' record of eager never sees the read."""

    def forward(self, x):
        if torch.compiler.is_compiling() or x.shape[0] <= 16:
            return x.cumsum(0)
        return chunked(x, int(os.getenv(ROWS_VARIABLE, "1000")))


# non-strict: dynamo would have to trace the read in EnvLimit (it never reaches EnvLimitBeyond's)
@pytest.mark.parametrize("model", [EnvLimit, EnvLimitBeyond], ids=["read at the examples", "read beyond them"])
def test_an_environment_variable_forward_reads_is_read(tmp_path, monkeypatch, model) -> None:
    cache = ResultCache(tmp_path / "cache")
    monkeypatch.delenv(ROWS_VARIABLE, raising=False)
    assert check(cache, model, "non_strict").status == "passed"
    monkeypatch.setenv(ROWS_VARIABLE, "1000")  # unset and set to its default: the same walk, but not provably
    first = check(cache, model, "non_strict")
    assert first.status == "passed"
    assert served(check(cache, model, "non_strict"))  # unchanged since: served
    monkeypatch.setenv(ROWS_VARIABLE, "20")
    edited = check(cache, model, "non_strict")
    assert not served(edited)
    assert edited.status == "failed" and edited.failure.stage in ("numerics", "run"), edited.failure
    monkeypatch.setenv(ROWS_VARIABLE, "1000")
    assert served(check(cache, model, "non_strict"))  # back as it was: the first entry serves again
