"""Each exportable test runs from a torch RNG seeded by its case: the same weights in every mode and every run.

A test that builds ``MLP()`` and ``torch.randn(...)`` unseeded would hand each mode a different
model, so no mode could reuse another's runs, no warm run could reuse the last one, and a
failure found on one run might not be there on the next. Seeding from the case id (not the
mode) makes them one model; the user's own ``torch.manual_seed`` inside the test still wins.
The global generator is restored afterwards, so tests without the plugin see the RNG stream
they would have seen.
"""

from __future__ import annotations

import zlib
from typing import Generator

import pytest

__all__ = ["CaseSeed", "case_seed"]


def case_seed(case: str, seed: int | None = None) -> int:
    """Return the torch seed for ``case`` (``seed``: --hypothesis-seed, which moves every case's)."""
    return (zlib.crc32(case.encode("utf-8", "surrogatepass")) ^ (seed or 0)) & 0x7FFFFFFF


class CaseSeed:
    """Wraps the call of exportable tests, ``export_check`` users and unittest mixin tests."""

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_call(self, item: pytest.Item) -> Generator[None, None, None]:
        case = _case_of(item)
        if case is None:  # not ours: nothing to seed, and torch stays unimported
            return (yield)
        # An exportable test imports torch anyway; one whose module does not (ExportDB builds each
        # case inside the test) was left unseeded when it ran first in its session, so its first
        # mode got other weights and inputs than its other modes and than the next session.
        try:
            import torch
        except ImportError:  # the test says so itself, as without the seed
            return (yield)
        from pytest_export.session_state import plugin_session

        state = torch.get_rng_state()
        torch.manual_seed(case_seed(case, plugin_session(item.config).options.seed))
        try:
            return (yield)
        finally:
            torch.set_rng_state(state)


def _case_of(item: pytest.Item) -> str | None:
    names = getattr(item, "fixturenames", ())
    if "export_check" in names or "_pytest_export_bind" in names:
        return item.nodeid
    from pytest_export.marker import MARKER, item_mode

    if item.get_closest_marker(MARKER) is None:
        return None  # a plain test: loads nothing more (a session without exports stays light)
    mode = item_mode(item)
    if mode is None:
        return None
    from pytest_export.marker import item_case_id

    return item_case_id(item, mode)
