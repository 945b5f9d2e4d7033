"""Model code that runs on a thread the model starts: an edit there is checked again, never served.

The result cache's proof names the Python eager ran (exportcore.reuse.eager_code). A forward that hands
work to a thread (``threading.Thread``, a ``ThreadPoolExecutor``, whose workers start on the first
``submit`` and then serve every later call) runs that work where the calling thread's profile hook
does not look. Each model below takes its row limit from code run on such a thread: 8-row examples
never reach the limit, drawn shapes up to 64 rows do, so a cold run of the edited model fails and
a warm one must check it again. Non-strict only: dynamo does not trace threads.
"""

from __future__ import annotations

import pytest

from exportcore.reuse.result_cache import ResultCache
from sessions import check, helper_edit_rechecked, served, write_module

HELPER = '''
def rows(n):
    return {limit}
'''

THREAD_MODEL = '''
import threading

import torch

import pte_thread_helper
from test_values_eager_reads import chunked


class Threaded(torch.nn.Module):
    def forward(self, x):
        found = []
        worker = threading.Thread(target=lambda: found.append(pte_thread_helper.rows(x.shape[0])))
        worker.start()
        worker.join()
        return chunked(x, found[0])
'''

# The pool's one worker starts at the examples' call; the helper runs on it only beyond 8 rows,
# in later calls: the worker outlives the call that started it.
POOL_MODEL = '''
from concurrent.futures import ThreadPoolExecutor

import torch

import pte_thread_helper
from test_values_eager_reads import chunked

POOL = ThreadPoolExecutor(1)


def limit(n):
    return 1000 if n <= 8 else pte_thread_helper.rows(n)


class Pooled(torch.nn.Module):
    def forward(self, x):
        if torch.compiler.is_compiling():  # an int of the row count would fix it at capture
            return x.cumsum(0)
        return chunked(x, POOL.submit(limit, x.shape[0]).result())
'''

ENVIRON_MODEL = '''
import os
import threading

import torch

from test_values_eager_reads import chunked


class FromEnvironment(torch.nn.Module):
    def forward(self, x):
        found = []
        worker = threading.Thread(target=lambda: found.append(int(os.environ.get("PTE_THREAD_ROWS", "1000"))))
        worker.start()
        worker.join()
        return chunked(x, found[0])
'''


@pytest.mark.parametrize("model, name", [
    pytest.param(THREAD_MODEL, "Threaded", id="thread started in forward"),
    pytest.param(POOL_MODEL, "Pooled", id="pool worker started at the examples, used beyond them"),
])
def test_code_a_models_thread_runs_is_read(tmp_path, model, name) -> None:
    helper_edit_rechecked(tmp_path, "pte_thread_helper", HELPER, model, name, "non_strict")


def test_an_environment_variable_a_models_thread_reads_is_read(tmp_path, monkeypatch) -> None:
    cache = ResultCache(tmp_path / "cache")

    def load() -> type:
        return write_module(tmp_path / "pte_thread_model.py", ENVIRON_MODEL, "pte_thread_model").FromEnvironment

    monkeypatch.delenv("PTE_THREAD_ROWS", raising=False)
    assert check(cache, load(), "non_strict").status == "passed"
    assert served(check(cache, load(), "non_strict"))
    monkeypatch.setenv("PTE_THREAD_ROWS", "20")
    edited = check(cache, load(), "non_strict")
    assert not served(edited)
    assert edited.status == "failed" and edited.failure.stage in ("numerics", "run"), edited.failure
