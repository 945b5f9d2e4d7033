"""torch's warnings during an export: never errors, and kept on the result rather than in the user's face.

Under ``-W error`` or ``filterwarnings = error`` a warning torch emits while it traces (strict
export of a model that calls ``time.perf_counter``, a deprecation inside a decomposition) would
become an exception inside torch and change what torch does: a model that exports would fail
at capture. The user's filters are meant for their code and for the plugin's own findings,
which are warned after the engine returns.

A warning raised from torch's own files (dynamo's "does not know how to trace the builtin ...
please file an issue" for a failure the user pinned with ``expect=``) is torch talking to torch's
developers: it is kept as a note on the result (the report, ``-v``) instead of reaching pytest's
warnings summary, where a newcomer reads it as a broken setup. A warning attributed to the user's
own code (a deprecated torch API their forward calls, their own ``warnings.warn``) is theirs and
is warned again, unchanged, when the block ends. Torch-free.
"""

from __future__ import annotations

import contextlib
import os
import sys
import warnings
from typing import Iterator

__all__ = ["torch_warnings"]


@contextlib.contextmanager
def torch_warnings(kept: list[str] | None = None) -> Iterator[None]:
    """Run the block with the current filters, every "error" action turned into "default".

    "ignore" and "always" filters stay as the user wrote them (an ignored torch warning stays
    ignored); the previous filters come back when the block ends. With ``kept``, torch's own
    warnings are appended to it as text and the others are warned again after the block, under
    the same filters (a warning the block let through is not an error after it either).
    """
    caught: list[warnings.WarningMessage] = []
    try:
        with warnings.catch_warnings(record=kept is not None) as recorded:
            _no_errors()
            try:
                yield
            finally:
                caught = list(recorded or [])
    finally:
        if kept is not None:
            _route(caught, kept)


def _no_errors() -> None:
    current = list(warnings.filters)
    if any(action == "error" for action, *_ in current):
        warnings.resetwarnings()
        for action, message, category, module, lineno in current:
            warnings.filterwarnings(
                "default" if action == "error" else action,
                message=getattr(message, "pattern", message) or "",
                category=category,
                module=getattr(module, "pattern", module) or "",
                lineno=lineno,
                append=True,
            )


def _route(caught: list[warnings.WarningMessage], kept: list[str]) -> None:
    root = _torch_root()
    with warnings.catch_warnings():
        _no_errors()
        for w in caught:
            if root and os.path.abspath(w.filename).startswith(root):
                text = f"torch warned ({w.category.__name__}): {str(w.message).strip().splitlines()[0]}"
                if text not in kept:
                    kept.append(text)
            else:
                warnings.warn_explicit(w.message, w.category, w.filename, w.lineno, source=w.source)


def _torch_root() -> str:
    torch = sys.modules.get("torch")
    where = getattr(torch, "__file__", None)
    return os.path.join(os.path.dirname(os.path.abspath(where)), "") if where else ""
