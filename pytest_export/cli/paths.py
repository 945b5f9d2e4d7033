"""Paths the command-line tools are given: an output never names an input or another output.

Pure: imports neither pytest nor torch (``python -m pytest_export`` runs without a pytest session).
"""

from __future__ import annotations

import os
from typing import Iterable, Sequence

__all__ = ["clashing_paths", "repeated_inputs", "same_path"]


def same_path(a: str | os.PathLike[str], b: str | os.PathLike[str]) -> bool:
    """Return whether two paths name one file: a link or another spelling included, also before it exists."""
    try:
        return os.path.samefile(a, b)
    except OSError:  # one does not exist yet: compare the names with links resolved
        return os.path.realpath(a) == os.path.realpath(b)


def clashing_paths(outputs: Sequence[str], inputs: Iterable[tuple[str, str]]) -> str | None:
    """Return why the outputs cannot be written (one names an input or another output), or None.

    ``inputs`` are (what it is, path) pairs, e.g. ("baseline", "base.json"): the message names both.
    """
    inputs = list(inputs)
    for i, out in enumerate(outputs):
        for what, path in inputs:
            if same_path(out, path):
                shown = out if out == path else f"{out} (the same file as {path})"
                return f"output {shown} is the {what}: writing it would destroy an input; choose another -o path"
        for other in outputs[:i]:
            if same_path(out, other):
                return f"output {out} is given twice (also as {other}); each -o must name its own file"
    return None


def repeated_inputs(paths: Sequence[str]) -> str | None:
    """Return why a list of input files names one file twice, or None."""
    for i, path in enumerate(paths):
        for earlier in paths[:i]:
            if same_path(path, earlier):
                shown = path if path == earlier else f"{path} and {earlier} (one file)"
                return f"report {shown} given twice: each shard's report must be given once"
    return None
