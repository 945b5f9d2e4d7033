"""Short before/after snippets of an ExportDB case and its supported rewrite, for failure reports.

Torch-free: snippets are read from the builders' source, nothing is built.
"""

from __future__ import annotations

import ast
import textwrap
from typing import NamedTuple

__all__ = ["Snippet", "rewrite_snippet"]

_MAX_LINES = 10


class Snippet(NamedTuple):
    case: str
    rewrite: str
    before: str
    after: str


def rewrite_snippet(name: str) -> Snippet | None:
    """Return the forward (or, when only the spec differs, the return line) of a case and of its rewrite."""
    from exportdb.registry import get

    try:
        case = get(name)
        if not case.rewrite:
            return None
        target = get(case.rewrite)
        before, after = _forward(case.source()), _forward(target.source())
        if before == after:
            before, after = _returns(case.source()), _returns(target.source())
    except (KeyError, OSError, SyntaxError, TypeError):
        return None
    if not before or not after:
        return None
    return Snippet(case.name, target.name, _clip(before), _clip(after))


def _forward(source: str) -> str:
    tree = ast.parse(source)
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef) and node.name == "forward":
            return _lines(source, node)
    return ""


def _lines(source: str, node: ast.AST) -> str:
    # Whole lines, so the first keeps its indentation and dedent lines them up.
    lines = source.splitlines()[node.lineno - 1 : node.end_lineno]  # type: ignore[attr-defined]
    return textwrap.dedent("\n".join(lines))


def _returns(source: str) -> str:
    tree = ast.parse(source)
    outer = tree.body[0] if tree.body and isinstance(tree.body[0], ast.FunctionDef) else None
    if outer is None:
        return ""
    return "\n".join(_lines(source, n) for n in outer.body if isinstance(n, ast.Return))


def _clip(text: str) -> str:
    lines = text.strip().splitlines()
    return "\n".join(lines[:_MAX_LINES] + (["..."] if len(lines) > _MAX_LINES else []))
