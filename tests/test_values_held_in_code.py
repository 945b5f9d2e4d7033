"""Values a model's code holds where its source does not show them: an edit there is checked again, never served.

The second round of the stale-pass review (tests/test_values_eager_reads.py holds the first):
each limit below lives in a place the proof once named without reading, an enum member's value,
a dataclass's class variable or an attribute set after ``__init__``, a class used as a config, a
method's default or the closure its decorator made, a standard-library object (a config parser,
a slice), an attribute whose name ends in "hash", a function only ``eval`` reaches, a module two
attributes down, a module forward imports into a local or the model holds. 8-row examples never show the limit, drawn shapes up to 64 rows do: a cold run
of the edited model fails, and so must the warm one.
"""

from __future__ import annotations

import configparser
import dataclasses
import enum
import functools
import sys
import types
from pathlib import Path

import pytest
import torch

from exportcore.reuse.result_cache import ResultCache
from sessions import check, edit_rechecked, helper_edit_rechecked, served, write_module
from test_values_eager_reads import chunked


class EnumLimit(torch.nn.Module):
    def __init__(self, limit: int) -> None:
        super().__init__()
        self.rows = enum.Enum("Rows", {"LIMIT": limit}, module=__name__).LIMIT

    def forward(self, x):
        return chunked(x, self.rows.value)


@dataclasses.dataclass
class Settings:
    width: int = 3


class DataclassClassVar(torch.nn.Module):
    def __init__(self, limit: int) -> None:
        super().__init__()
        cls = dataclasses.make_dataclass("Settings", [("width", int, 3)], namespace={"LIMIT": limit})
        cls.__module__ = __name__
        self.cfg = cls()

    def forward(self, x):
        return chunked(x, self.cfg.LIMIT)


class DataclassExtra(torch.nn.Module):
    def __init__(self, limit: int) -> None:
        super().__init__()
        self.cfg = Settings()
        self.cfg.limit = limit  # not a field

    def forward(self, x):
        return chunked(x, self.cfg.limit)


class ClassAsConfig(torch.nn.Module):
    def __init__(self, limit: int) -> None:
        super().__init__()
        self.cfg = type("Cfg", (), {"LIMIT": limit, "__module__": __name__})

    def forward(self, x):
        return chunked(x, self.cfg.LIMIT)


def default_limit(limit: int) -> torch.nn.Module:
    class DefaultLimit(torch.nn.Module):
        def forward(self, x, rows=limit):  # a default: evaluated once, held by the function
            return chunked(x, rows)

    return DefaultLimit()


def with_limit(limit: int):
    def decorate(fn):
        @functools.wraps(fn)
        def wrapper(self, x):
            return chunked(fn(self, x), limit)

        return wrapper

    return decorate


def decorated_limit(limit: int) -> torch.nn.Module:
    class DecoratedLimit(torch.nn.Module):
        @with_limit(limit)
        def long(self, x):
            return x

        def forward(self, x):
            if torch.compiler.is_compiling() or x.shape[0] <= 16:
                return x.cumsum(0)
            return self.long(x)  # only past the examples: the record of eager never runs the wrapper

    return DecoratedLimit()


class ParserLimit(torch.nn.Module):
    def __init__(self, limit: int) -> None:
        super().__init__()
        self.cfg = configparser.ConfigParser()
        self.cfg.read_string(f"[model]\nlimit = {limit}\n")

    def forward(self, x):
        return chunked(x, self.cfg.getint("model", "limit"))


class SliceLimit(torch.nn.Module):
    def __init__(self, limit: int) -> None:
        super().__init__()
        self.rows = slice(0, limit)

    def forward(self, x):
        return chunked(x, self.rows.stop)


class HashNamedLimit(torch.nn.Module):
    def __init__(self, limit: int) -> None:
        super().__init__()
        self.rows_before_hash = limit

    def forward(self, x):
        return chunked(x, self.rows_before_hash)


EVAL_ROWS = types.SimpleNamespace(limit=1000)


def eval_long(x: torch.Tensor) -> torch.Tensor:
    return chunked(x, EVAL_ROWS.limit)


class EvalLimit(torch.nn.Module):
    def forward(self, x):
        if torch.compiler.is_compiling() or x.shape[0] <= 16:
            return x.cumsum(0)
        return eval("eval_long(x)")  # the string's code is the model's, not an import


@pytest.mark.parametrize("make, mode", [
    pytest.param(EnumLimit, "non_strict", id="enum member's value"),
    pytest.param(DataclassClassVar, "strict", id="dataclass class variable"),
    pytest.param(DataclassExtra, "strict", id="dataclass attribute that is no field"),
    pytest.param(ClassAsConfig, "strict", id="class as a config"),
    pytest.param(default_limit, "strict", id="method default"),
    pytest.param(decorated_limit, "strict", id="closure of a method's decorator"),
    pytest.param(ParserLimit, "non_strict", id="configparser"),
    pytest.param(SliceLimit, "strict", id="slice"),
    pytest.param(HashNamedLimit, "strict", id="attribute named ..._hash"),
])
def test_a_limit_the_source_does_not_show_is_read(tmp_path, make, mode) -> None:
    edit_rechecked(ResultCache(tmp_path / "cache"), lambda: functools.partial(make, 1000),
                   lambda: functools.partial(make, 20), mode)


def test_a_function_only_eval_reaches_is_a_witness(tmp_path, monkeypatch) -> None:
    cache = ResultCache(tmp_path / "cache")
    assert check(cache, EvalLimit).status == "passed"
    assert served(check(cache, EvalLimit))
    monkeypatch.setattr(EVAL_ROWS, "limit", 20)
    edited = check(cache, EvalLimit)
    assert not served(edited)
    assert edited.status == "failed" and edited.failure.stage in ("numerics", "run"), edited.failure


MODEL = '''
import torch

import pte_configs


class Chunked(torch.nn.Module):
    def forward(self, x):
        rows = x.shape[0]
        if torch.compiler.is_compiling() or rows <= pte_configs.model.ROWS:
            return x.cumsum(0)
        return torch.cat([x[:16].cumsum(0), x[16:].cumsum(0)])
'''


def load(tmp_path: Path, rows: int) -> type:
    """A model reading ``pte_configs.model.ROWS``: a package's submodule, as a user edits it."""
    configs = write_module(tmp_path / "pte_configs.py", "", "pte_configs")
    configs.model = write_module(tmp_path / "pte_configs_model.py", f"ROWS = {rows}\n", "pte_configs.model")
    sys.modules["pte_configs"] = configs  # what the model's ``import pte_configs`` finds
    try:
        return write_module(tmp_path / "pte_chunked_model.py", MODEL, "pte_chunked_model").Chunked
    finally:
        del sys.modules["pte_configs"]


def test_a_value_two_attributes_down_a_global_is_read(tmp_path) -> None:
    edit_rechecked(ResultCache(tmp_path / "cache"), lambda: load(tmp_path, 1000), lambda: load(tmp_path, 16))


GETATTR_MODEL = '''
import torch

import pte_configs


class Chunked(torch.nn.Module):
    def forward(self, x):
        if torch.compiler.is_compiling() or x.shape[0] <= getattr(pte_configs, "ROWS"):
            return x.cumsum(0)
        return torch.cat([x[:16].cumsum(0), x[16:].cumsum(0)])
'''


def test_a_value_getattr_reads_by_a_constant_name_is_read(tmp_path) -> None:
    def load(rows: int) -> type:
        sys.modules["pte_configs"] = write_module(tmp_path / "pte_configs.py", f"ROWS = {rows}\n", "pte_configs")
        try:
            return write_module(tmp_path / "pte_getattr_model.py", GETATTR_MODEL, "pte_getattr_model").Chunked
        finally:
            del sys.modules["pte_configs"]

    edit_rechecked(ResultCache(tmp_path / "cache"), lambda: load(1000), lambda: load(16))


HELPER = '''
import torch


def make_long(limit):
    def long(x):
        return torch.cat([x[:limit].cumsum(0), x[limit:].cumsum(0)])

    return long


long = make_long({limit})
'''

LAZY_MODEL = '''
import torch


class Chunked(torch.nn.Module):
    def forward(self, x):
        if torch.compiler.is_compiling() or x.shape[0] <= 16:
            return x.cumsum(0)
        import pte_lazy_helper  # a local import: no global of the model's code names the helper

        return pte_lazy_helper.long(x)
'''


def test_the_closure_of_a_function_a_helper_module_holds_is_read(tmp_path) -> None:
    helper_edit_rechecked(tmp_path, "pte_lazy_helper", HELPER, LAZY_MODEL, "Chunked")


LOCAL_IMPORT_MODELS = {
    "import": '''
import torch


class Chunked(torch.nn.Module):
    def forward(self, x):
        import pte_local_configs  # a local: no global of the model's code names the module

        if torch.compiler.is_compiling() or x.shape[0] <= pte_local_configs.ROWS:
            return x.cumsum(0)
        return torch.cat([x[:16].cumsum(0), x[16:].cumsum(0)])
''',
    "from-import": '''
import torch


class Chunked(torch.nn.Module):
    def forward(self, x):
        from pte_local_configs import ROWS

        if torch.compiler.is_compiling() or x.shape[0] <= ROWS:
            return x.cumsum(0)
        return torch.cat([x[:16].cumsum(0), x[16:].cumsum(0)])
''',
    "only beyond the examples": '''
import torch


class Chunked(torch.nn.Module):
    def forward(self, x):
        if torch.compiler.is_compiling() or x.shape[0] <= 8:
            return x.cumsum(0)
        return self.long(x)

    def long(self, x):
        import pte_local_configs as configs

        if x.shape[0] <= configs.ROWS:
            return x.cumsum(0)
        return torch.cat([x[:16].cumsum(0), x[16:].cumsum(0)])
''',
}


@pytest.mark.parametrize("form", sorted(LOCAL_IMPORT_MODELS))
def test_a_value_of_a_module_forward_imports_itself_is_read(tmp_path, form) -> None:
    helper_edit_rechecked(tmp_path, "pte_local_configs", "ROWS = {limit}\n", LOCAL_IMPORT_MODELS[form], "Chunked")


MODULE_ATTRIBUTE_MODEL = '''
import torch

import pte_attr_configs


class Chunked(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.cfg = pte_attr_configs  # a config module held by the model, read through ``self``

    def forward(self, x):
        if torch.compiler.is_compiling() or x.shape[0] <= self.cfg.ROWS:
            return x.cumsum(0)
        return torch.cat([x[:16].cumsum(0), x[16:].cumsum(0)])
'''


def test_a_value_of_a_module_the_model_holds_is_read(tmp_path) -> None:
    helper_edit_rechecked(tmp_path, "pte_attr_configs", "ROWS = {limit}\n", MODULE_ATTRIBUTE_MODEL, "Chunked")


COMPUTED_NAME_MODELS = {
    "global": '''
import torch

import pte_named_configs


class Chunked(torch.nn.Module):
    key = "ROWS"

    def forward(self, x):
        if torch.compiler.is_compiling() or x.shape[0] <= getattr(pte_named_configs, self.key):
            return x.cumsum(0)
        return torch.cat([x[:16].cumsum(0), x[16:].cumsum(0)])
''',
    "local import": '''
import torch


class Chunked(torch.nn.Module):
    def forward(self, x):
        import pte_named_configs as configs

        name = "ROWS"
        if torch.compiler.is_compiling() or x.shape[0] <= vars(configs)[name]:
            return x.cumsum(0)
        return torch.cat([x[:16].cumsum(0), x[16:].cumsum(0)])
''',
}


@pytest.mark.parametrize("form", sorted(COMPUTED_NAME_MODELS))
def test_a_value_read_from_a_module_by_a_name_the_code_computes_is_read(tmp_path, form) -> None:
    # The module itself is handed to code (getattr with a name held elsewhere, vars()): no attribute
    # chain names what is read, so the module's values are.
    helper_edit_rechecked(tmp_path, "pte_named_configs", "ROWS = {limit}\n", COMPUTED_NAME_MODELS[form], "Chunked")
