"""Sessions of the result cache within one process: a model module as a user edits it, and one check() per session."""

from __future__ import annotations

import contextlib
import importlib.metadata
import importlib.util
import os
import sys
from pathlib import Path
from types import ModuleType
from typing import Any, Callable, Iterator

import pytest
import torch
from torch.export import Dim

import exportcore
from exportcore.reuse import code_origins
from exportcore.reuse.result_cache import ResultCache
from exportcore.reuse.session import EngineSession

SPEC = {"x": {0: Dim("n", min=2, max=64)}}


def write_module(path: Path, text: str, name: str) -> ModuleType:
    """Write ``text`` to ``path`` (a new mtime, however fast the edit came) and import it afresh as ``name``."""
    stamp = path.stat().st_mtime_ns + 10**9 if path.exists() else None
    path.write_text(text)
    if stamp is not None:
        os.utime(path, ns=(stamp, stamp))
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def check(cache: ResultCache, cls: Any, mode: str = "strict") -> Any:
    """One session: check ``cls()`` on 8 rows of 3, rows dynamic in 2..64; in a session of its own."""
    args = (torch.randn(8, 3, generator=torch.Generator().manual_seed(0)),)
    outcome = exportcore.check(cls(), args, dynamic_shapes=SPEC, mode=mode, case_id="case",
                               session=EngineSession(cache))
    return outcome


def served(outcome: Any) -> bool:
    """Whether ``outcome`` was taken from the result cache (an earlier session's entry)."""
    return (outcome.reused_from or "").startswith("cache:")


def edit_rechecked(cache: ResultCache, before: Callable[[], Any], after: Callable[[], Any], mode: str = "strict") -> None:
    """A cold session of ``before()`` passes, an unchanged one is served, and one of the edited ``after()``
    is checked in full and fails at a drawn shape, as a cold run of it does.

    ``before`` and ``after`` give check()'s ``cls`` anew for every session (a module imported again).
    """
    assert check(cache, before(), mode).status == "passed"
    assert served(check(cache, before(), mode))  # unchanged: served
    edited = check(cache, after(), mode)
    assert not served(edited)
    assert edited.status == "failed" and edited.failure.stage in ("numerics", "run"), edited.failure


def helper_edit_rechecked(tmp_path: Path, helper: str, helper_text: str, model_text: str, cls: str,
                          mode: str = "strict") -> None:
    """edit_rechecked() for a model (class ``cls`` of ``model_text``) whose limit lives in module ``helper``.

    ``helper_text`` is formatted with ``limit``: 1000, which drawn shapes never reach, then 20; the
    helper is in sys.modules (what the model's ``import`` finds) while the sessions run.
    """
    def load(limit: int) -> type:
        sys.modules[helper] = write_module(tmp_path / f"{helper}.py", helper_text.format(limit=limit), helper)
        return getattr(write_module(tmp_path / f"{helper}_model.py", model_text, f"{helper}_model"), cls)

    try:
        edit_rechecked(ResultCache(tmp_path / "cache"), lambda: load(1000), lambda: load(20), mode)
    finally:
        sys.modules.pop(helper, None)


def warmed(tmp_path: Path, load: Callable[[Path], type]) -> tuple[ResultCache, Path]:
    """A cache holding the pass of the class ``load(path)`` writes and imports, served again unchanged."""
    cache, path = ResultCache(tmp_path / "cache"), tmp_path / "edited_model.py"
    assert check(cache, load(path)).status == "passed"
    assert served(check(cache, load(path)))  # unchanged: served
    return cache, path


@contextlib.contextmanager
def reported_version(distribution: str, version: str) -> Iterator[None]:
    """Inside the block the installed ``distribution`` reports ``version``: a rebuilt library, same Python."""
    real = importlib.metadata.version
    importlib.metadata.version = lambda name: version if name == distribution else real(name)
    code_origins._top_level_version.cache_clear()  # the versions a process looked up are kept
    try:
        yield
    finally:
        importlib.metadata.version = real
        code_origins._top_level_version.cache_clear()


def native_libraries(count: int) -> list[str]:
    """Files of ``count`` different small native libraries (the stdlib's extension modules) to load by ctypes."""
    import importlib
    from importlib.machinery import EXTENSION_SUFFIXES

    found = []
    for name in ("_bisect", "_heapq", "_json", "_random", "_struct", "array", "_csv", "_contextvars"):
        try:
            path = getattr(importlib.import_module(name), "__file__", None) or ""
        except ImportError:
            continue
        if path.endswith(tuple(EXTENSION_SUFFIXES)):
            found.append(path)
    if len(found) < count:
        pytest.skip("this Python has its small extension modules built in: no native library to copy")
    return found[:count]
