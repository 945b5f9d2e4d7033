"""Fixtures every test directory shares."""

from __future__ import annotations

import sys
from typing import Callable, Iterator

import pytest


@pytest.fixture(scope="session", autouse=True)
def keep_libraries_loaded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Make in-process pytester runs drop only the modules they wrote, not torch.

    pytester restores sys.modules after each in-process run; torch (or any lazily
    imported part of it) loaded inside a run would be dropped and re-imported by the
    next one, which crashes the interpreter. Modules from the runs' own files still go.
    """
    from _pytest import pytester as pytester_module

    base = str(tmp_path_factory.getbasetemp())

    def written_by_a_test(name: str) -> bool:
        return str(getattr(sys.modules.get(name), "__file__", None) or "").startswith(base)

    class KeepLibraries(pytester_module.SysModulesSnapshot):
        def __init__(self, preserve: Callable[[str], bool] | None = None) -> None:
            super().__init__(preserve=lambda name: not written_by_a_test(name) or bool(preserve and preserve(name)))

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(pytester_module, "SysModulesSnapshot", KeepLibraries)
        yield


@pytest.fixture(autouse=True)
def inner_sessions_are_not_xdist_workers(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """Keep an outer xdist worker's identity out of the pytest sessions a test starts.

    Inherited, PYTEST_XDIST_WORKER would make a serial inner session take itself for a worker
    (its thread share, its Ctrl-C target) and the outer worker for its controller.
    """
    if "pytester" in request.fixturenames:  # also reached through fixtures built on it (project, spy)
        for name in ("PYTEST_XDIST_WORKER", "PYTEST_XDIST_WORKER_COUNT", "PYTEST_XDIST_TESTRUNUID"):
            monkeypatch.delenv(name, raising=False)
