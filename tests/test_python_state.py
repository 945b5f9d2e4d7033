"""The result cache names the model's Python state: an attribute only eager's code reads cannot go stale."""

from __future__ import annotations

import dataclasses
import importlib.util
import os
from pathlib import Path

import pytest
import torch
from torch.export import Dim

import exportcore
from exportcore.reuse.python_digest import state_digest
from exportcore.sandbox.python_state import Reader, Unreadable
from exportcore.reuse.result_cache import ResultCache
from exportcore.reuse.session import EngineSession
from processes import last_lines

SPEC = {"x": {0: Dim("n", min=2, max=64)}}
X = torch.randn(8, 3, generator=torch.Generator().manual_seed(0))


@dataclasses.dataclass
class Config:
    chunk: int = 1000


class Chunked(torch.nn.Module):
    """Eager sums long inputs in chunks and forgets the carry: wrong past ``limit`` rows, which export never sees."""

    def __init__(self, limit: int = 1000, config: Config | None = None) -> None:
        super().__init__()
        self.limit = limit
        self.config = config or Config()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if torch.compiler.is_compiling():  # strict export traces with dynamo; non-strict too
            return x.cumsum(0)
        limit = min(self.limit, self.config.chunk)
        if x.shape[0] <= limit:
            return x.cumsum(0)
        return torch.cat([x[:limit].cumsum(0), x[limit:].cumsum(0)])


def check(cache: ResultCache, model: torch.nn.Module, mode: str = "strict"):
    # each check() stands for a new session
    outcome = exportcore.check(model, (X,), dynamic_shapes=SPEC, mode=mode, case_id="case",
                               session=EngineSession(cache))
    return outcome


def served(outcome) -> bool:
    return (outcome.reused_from or "").startswith("cache:")


@pytest.mark.parametrize("mode", ["strict", "non_strict"])
@pytest.mark.parametrize("edit", [
    pytest.param(lambda: Chunked(limit=16), id="attribute"),
    pytest.param(lambda: Chunked(config=Config(chunk=16)), id="config-object"),
])
def test_an_attribute_only_eager_reads_is_part_of_the_identity(tmp_path, mode, edit) -> None:
    # 8 rows never reach the chunked path, and export takes the other branch: neither the graph nor
    # eager's answer on the examples changes. Only drawn shapes past 16 rows show the edit.
    cache = ResultCache(tmp_path / "cache")
    assert check(cache, Chunked(), mode).status == "passed"
    assert served(check(cache, Chunked(), mode))  # unchanged: served
    edited = check(cache, edit(), mode)
    assert not served(edited)
    assert edited.status == "failed" and edited.failure.stage in ("numerics", "run"), edited.failure


MODEL = '''
import torch

LIMITS = {limits}


class Chunked(torch.nn.Module):
    def forward(self, x):
        if torch.compiler.is_compiling():
            return x.cumsum(0)
        limit = LIMITS["rows"]
        if x.shape[0] <= limit:
            return x.cumsum(0)
        return torch.cat([x[:limit].cumsum(0), x[limit:].cumsum(0)])
'''


def load(path: Path, limits: dict) -> type:
    """Write the model's module with ``LIMITS`` as a user edits it, import it afresh and return its class."""
    stamp = path.stat().st_mtime_ns + 10**9 if path.exists() else None
    path.write_text(MODEL.format(limits=limits))
    if stamp is not None:
        os.utime(path, ns=(stamp, stamp))
    spec = importlib.util.spec_from_file_location("pte_limits_model", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.Chunked


def test_a_module_constant_that_is_a_container_is_read_by_value(tmp_path) -> None:
    cache, path = ResultCache(tmp_path / "cache"), tmp_path / "limits_model.py"
    assert check(cache, load(path, {"rows": 1000})()).status == "passed"
    assert served(check(cache, load(path, {"rows": 1000})()))
    edited = check(cache, load(path, {"rows": 16})())
    assert not served(edited) and edited.status == "failed"


def test_process_specific_values_are_not_the_models_state() -> None:
    # hook handles' ids, a set's order, an object's own hash (transformers' GenerationConfig keeps
    # hash(self)) differ between processes for the same model; what they stand for does not.
    def build(seed: int, names: list[str]) -> torch.nn.Module:
        torch.manual_seed(seed)
        model = torch.nn.Sequential(torch.nn.Linear(3, 3))
        for _ in range(seed):  # other handle ids before the one that counts
            torch.nn.Linear(1, 1).register_forward_hook(lambda *a: None).remove()
        model.register_forward_hook(_hook)
        model.tags = set(names)
        model._original_object_hash = hash(tuple(names)) + seed
        return model

    first, second = build(0, ["a", "b", "c"]), build(3, ["c", "a", "b"])
    with torch.no_grad():
        second[0].weight.copy_(first[0].weight)
        second[0].bias.copy_(first[0].bias)
    assert state_digest(first) == state_digest(second)
    second.tags.add("d")
    assert state_digest(first) != state_digest(second)


def _hook(module, args, output):
    return output


def test_what_a_digest_cannot_read_is_never_guessed() -> None:
    model = Chunked()
    digest = state_digest(model)
    model.training_steps = 3  # an attribute added later is state too
    assert state_digest(model) not in (None, digest)
    model.cached = torch.empty(2, 2, device="meta")  # no value to read: nothing is proven
    assert state_digest(model) is None
    with pytest.raises(Unreadable):
        Reader(torch)(torch.empty(2, device="meta"))


class Touchy:
    """An object that refuses to be read (a proxy, a lazy handle): its ``__dict__`` raises."""

    @property
    def __dict__(self):  # type: ignore[override]
        raise RuntimeError("not now")


def test_an_attribute_that_raises_when_read_means_no_cache_never_a_failure(tmp_path) -> None:
    model = Chunked()
    model.handle = Touchy()
    assert state_digest(model) is None
    cache = ResultCache(tmp_path / "cache")
    assert check(cache, model).status == "passed"
    again = check(cache, model)
    assert again.status == "passed" and not served(again)


def test_a_shared_object_is_read_once_and_a_cycle_ends() -> None:
    class Node:
        def __init__(self) -> None:
            self.next = self
            self.value = 1

    node, reader = Node(), Reader(torch)
    assert reader([node, node]) == reader([node, node])
    other = Node()
    other.value = 2
    assert Reader(torch)(node) != Reader(torch)(other)


SESSION = '''
import sys
import torch
import exportcore
from torch.export import Dim
from exportcore.reuse.result_cache import ResultCache
from exportcore.reuse.session import EngineSession


class Settings:
    def __init__(self):
        self.names = {"alpha", "beta", "gamma", "delta"}
        self._original_object_hash = hash("alpha")  # differs in every process


class Scaled(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(3, 3)
        self.settings = Settings()

    def forward(self, x):
        return self.lin(x)


torch.manual_seed(0)
x = torch.randn(8, 3, generator=torch.Generator().manual_seed(0))
outcome = exportcore.check(Scaled(), (x,), dynamic_shapes={"x": {0: Dim("n", min=2, max=64)}}, mode="strict",
                           case_id="case", session=EngineSession(ResultCache(sys.argv[1])))
print(outcome.status, outcome.reused_from)
'''


def test_the_same_model_is_served_in_a_new_process(tmp_path) -> None:
    lines = last_lines(SESSION, tmp_path, random_hashes=True)
    assert lines[0] == "passed None", lines[0]
    assert lines[1].startswith("passed cache: strict, "), lines[1]
