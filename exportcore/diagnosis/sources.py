"""Find the user's own source line behind an exception raised inside torch.

Strict export (TorchDynamo) raises from torch internals with only the caller of
``torch.export.export`` on the Python stack; the model's line appears in the
message instead ("from user code: File ..., line N"). Non-strict export and
eager runs keep the model's frames on the stack. ``user_source`` reads both.

Importing this module does not import torch.
"""

from __future__ import annotations

import linecache
import os
import re
import sys
import sysconfig
import traceback
from pathlib import Path

from exportcore.outcome import SourceLocation

__all__ = ["user_source", "is_user_file", "stdlib_module", "location"]

_HERE = Path(__file__).resolve().parents[1]  # the exportcore package
# Our own packages wrap every call into torch; their frames never explain a failure.
_OWN = (str(_HERE) + os.sep, str(_HERE.parent / "pytest_export") + os.sep)
_FILE_LINE = re.compile(r'File "([^"]+)", line (\d+)(?:, in ([\w<>.]+))?|# File: (/[^\s:]+):(\d+) in ([\w<>.]+)')


def _library_roots() -> tuple[str, ...]:
    roots = set()
    for key in ("stdlib", "platstdlib", "purelib", "platlib"):
        path = sysconfig.get_paths().get(key)
        if path:
            roots.add(str(Path(path).resolve()) + os.sep)
    torch = sys.modules.get("torch")
    if torch is not None and getattr(torch, "__file__", None):
        # An editable/source build of torch lives outside site-packages.
        roots.add(str(Path(torch.__file__).resolve().parent) + os.sep)
    return tuple(roots)


def is_user_file(filename: str) -> bool:
    """Return True if ``filename`` is the user's code: not torch, not ours, not stdlib or site-packages."""
    if not filename or filename.startswith("<"):  # <string>, <eval_with_key>.N, <frozen ...>
        return False
    parts = Path(filename).parts
    if "site-packages" in parts or "dist-packages" in parts:
        return False
    try:
        resolved = str(Path(filename).resolve())
    except OSError:
        resolved = filename
    return not resolved.startswith(_OWN + _library_roots())


def stdlib_module(filename: str) -> str | None:
    """Return the top-level module name of a standard-library file (``.../copy.py`` -> "copy"), else None."""
    if not filename or filename.startswith("<"):
        return None
    path = Path(filename)
    if "site-packages" in path.parts or "dist-packages" in path.parts:
        return None
    for key in ("stdlib", "platstdlib"):
        root = sysconfig.get_paths().get(key)
        if root and path.is_relative_to(root):
            first = path.relative_to(root).parts[0]
            return first.removesuffix(".py")
    return None


def user_source(exc: BaseException) -> SourceLocation | None:
    """Return the deepest frame of the user's own code behind ``exc`` (stack or torch's message), or None."""
    if not isinstance(exc, BaseException):
        raise TypeError(f"exc must be an exception, got {type(exc).__name__}")
    chain = exception_chain(exc)
    for current in chain:
        frames = traceback.extract_tb(current.__traceback__)
        user = [i for i, fr in enumerate(frames) if is_user_file(fr.filename)]
        if user and user[-1] == len(frames) - 1:
            # Raised by user code itself (an eager bug, a user assert): that line is the answer.
            fr = frames[user[-1]]
            return location(fr.filename, fr.lineno or 0, fr.name, fr.line or "")
        from_message = _from_message(current)
        if from_message is not None:
            return from_message
        if user:
            fr = frames[user[-1]]
            return location(fr.filename, fr.lineno or 0, fr.name, fr.line or "")
    return None


def exception_chain(exc: BaseException) -> list[BaseException]:
    """Return ``exc`` and its causes/contexts, outermost first (at most 8, no cycles)."""
    seen: list[BaseException] = []
    current: BaseException | None = exc
    while current is not None and current not in seen and len(seen) < 8:
        seen.append(current)
        current = current.__cause__ or current.__context__
    return seen


def _from_message(exc: BaseException) -> SourceLocation | None:
    try:
        text = str(exc)
    except Exception:  # a broken __str__ must not break classification
        return None
    found = None
    for match in _FILE_LINE.finditer(text):
        file, line, func = (match.group(1), match.group(2), match.group(3)) if match.group(1) else (
            match.group(4), match.group(5), match.group(6))
        if is_user_file(file):
            found = (file, int(line), func or "")
    return location(*found, "") if found else None


def location(file: str, line: int, function: str, code: str) -> SourceLocation:
    code = (code or linecache.getline(file, line)).strip()
    try:
        rel = os.path.relpath(file)
        shown = rel if not rel.startswith("..") else file
    except ValueError:  # another drive on Windows
        shown = file
    return SourceLocation(file=shown, line=line, function=function, code=code)
