"""ExportDB as a test suite: every case, in every mode it declares, checked through the plugin.

Run with ``pytest --pyargs exportdb -n 2`` (or ``pytest exportdb/``). Each case becomes one
test ``test_<case>[<mode>]`` marked ``@pytest.mark.exportable`` with the case's recorded
expectations: an expected failure xfails when torch still fails with the recorded category;
a case whose behaviour changed fails as drift naming the expectation to update
(see exportdb/conftest.py).
"""

from __future__ import annotations

from typing import Any, Callable

import pytest

from exportdb.registry import ExportCase, all_cases


def _make_test(case: ExportCase) -> Callable[[], Any]:
    skipped = case.skipped_modes()
    modes = [m for m in case.modes if m not in skipped] or list(case.modes)

    @pytest.mark.exportable(modes=modes, expect=case.marker_expect(), examples=case.examples)
    def test() -> Any:
        if len(skipped) == len(case.modes):  # nothing can run on this torch; say why per case
            pytest.skip(next(iter(skipped.values())))
        return case.instantiate()

    test.__name__ = test.__qualname__ = f"test_{case.name}"
    test.__doc__ = case.description.splitlines()[0]
    test.exportdb_case = case  # type: ignore[attr-defined]  # read by exportdb/conftest.py
    return test


for _case in all_cases():
    globals()[f"test_{_case.name}"] = _make_test(_case)
del _case
