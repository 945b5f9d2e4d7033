"""Which environment reads a record keeps, and how: the model's own, on the recording thread, never the value."""

from __future__ import annotations

import os
import threading

import torch

from exportcore.reuse.eager_code import CodeRecord
from exportcore.reuse.environ_reads import unchanged, value_digest
from exportcore.reuse.result_cache import ResultCache
from sessions import check

SECRET = "PTE_TEST_TOKEN"


def reads_everything() -> None:
    os.getenv("PTE_TEST_A")
    _ = os.environ["PTE_TEST_B"]
    _ = "PTE_TEST_C" in os.environ
    os.environ.get("PTE_TEST_D", "default")


def test_every_way_of_reading_is_kept_by_name_with_a_digest(monkeypatch) -> None:
    monkeypatch.setenv("PTE_TEST_A", "a")
    monkeypatch.setenv("PTE_TEST_B", "b")
    monkeypatch.delenv("PTE_TEST_C", raising=False)
    monkeypatch.delenv("PTE_TEST_D", raising=False)
    record = CodeRecord()
    record.run(reads_everything)
    assert record.environ == {"PTE_TEST_A": value_digest("a"), "PTE_TEST_B": value_digest("b"),
                              "PTE_TEST_C": None, "PTE_TEST_D": None}
    assert unchanged(record.environ)
    monkeypatch.setenv("PTE_TEST_C", "")  # set, even empty, is not unset
    assert not unchanged(record.environ)


def test_the_digest_of_the_record_follows_the_values_read(monkeypatch) -> None:
    def digest() -> str | None:
        record = CodeRecord()
        record.run(lambda: os.getenv("PTE_TEST_A"))
        return record.digest()

    monkeypatch.setenv("PTE_TEST_A", "1")
    first = digest()
    assert digest() == first
    monkeypatch.setenv("PTE_TEST_A", "2")
    assert digest() != first


def test_torchs_reads_and_a_thread_the_run_did_not_start_are_left_out(monkeypatch) -> None:
    monkeypatch.setenv("PTE_TEST_A", "a")
    # code that lives in torch's folder: torch reads its settings once per process and keeps them
    torch_file = os.path.join(os.path.dirname(torch.__file__), "pte_test_settings.py")
    namespace: dict = {"os": os}
    exec(compile("def setting():\n    return os.getenv('PTE_TEST_A')\n", torch_file, "exec"), namespace)
    # a thread of the process's own (a logging handler's, a monitor's) that reads while the model runs
    go, done = threading.Event(), threading.Event()

    def elsewhere() -> None:
        go.wait()
        os.getenv("PTE_TEST_B")
        done.set()

    bystander = threading.Thread(target=elsewhere)
    bystander.start()

    def run() -> None:
        go.set()
        done.wait()
        namespace["setting"]()

    record = CodeRecord()
    record.run(run)
    bystander.join()
    assert record.environ == {}


def test_a_thread_the_run_starts_is_read(monkeypatch) -> None:
    monkeypatch.setenv("PTE_TEST_B", "b")

    def run() -> None:
        worker = threading.Thread(target=lambda: os.getenv("PTE_TEST_B"))
        worker.start()
        worker.join()

    record = CodeRecord()
    record.run(run)
    assert record.environ == {"PTE_TEST_B": value_digest("b")}


def test_a_cache_entry_never_holds_the_value(tmp_path, monkeypatch) -> None:
    class ReadsAToken(torch.nn.Module):
        def forward(self, x):
            if torch.compiler.is_compiling() or x.shape[0] <= 16:
                return x + 1
            os.environ.get(SECRET)  # only at drawn shapes: the entry's own list, not the identity
            return x + 1

    monkeypatch.setenv(SECRET, "hunter2-token-value")
    cache = ResultCache(tmp_path / "cache")
    assert check(cache, ReadsAToken, "non_strict").status == "passed"
    stored = [path.read_text() for path in (tmp_path / "cache").rglob("*") if path.is_file()]
    assert stored and any(SECRET in text for text in stored)
    assert not any("hunter2" in text for text in stored)
