"""One failure, shown once: a mode failing exactly as an earlier mode of the same case refers to it.

A data-dependent branch fails the same way in non_strict and training (and often strict):
the same message, hint, ExportDB rewrite and torch detail, dozens of lines each time. The
first mode's report shows it in full; a later mode whose report would read the same (but for
the mode in its first line) shows its headline and "same failure as [mode]". -vv and
--tb=long show every mode in full (each with its own torch traceback). Per process: under
xdist a case's modes run on one worker (pytest_export.scheduling), so they meet here too.
"""

from __future__ import annotations

import pytest

__all__ = ["refer_to_earlier"]

#: (case id, failure text without its first line) -> the mode whose report showed it in full.
_SHOWN = pytest.StashKey[dict]()


def refer_to_earlier(item: pytest.Item, case_id: str, mode: str, exc: BaseException | None,
                     full: bool) -> BaseException | None:
    """Return the exception the test raises: ``exc``, or a short one naming the mode that showed the same failure.

    Only a failure report (runner.ExportCheckFailed: its text and its summary ``headline``) is shortened.
    """
    if full or exc is None or not hasattr(exc, "headline"):
        return exc
    head, _, body = exc.msg.partition("\n")
    shown = item.config.stash.setdefault(_SHOWN, {})
    first = shown.setdefault((case_id, body), mode)
    if first == mode:
        return exc
    lines = body.splitlines()
    kept = [head, *lines[:1], *[line for line in lines[1:2] if line.startswith("  at ")]]
    kept.append(f"  same failure as [{first}]: its report above shows it in full (-vv shows every mode in full)")
    return type(exc)("\n".join(kept), exc.headline)
