"""Room on the stack for the engine's own walks of deeply nested inputs, and only for them.

The engine walks the inputs and the spec recursively (parsing the spec, copying the inputs for
eager), a few frames per level, from deeper in the stack than a bare ``torch.export.export`` call
(pytest's frames, the plugin's, the engine's). At a nesting torch still handles, or fails on in
its own way (a 500-deep pytree: capture raises RecursionError), those walks hit the recursion
limit first, and the case was reported as broken input or as a model that fails in eager, where
the truth is what capture does. torch's own calls (capture, decomposition, the programs) keep the
user's limit, so their verdicts stay bare export's.
"""

from __future__ import annotations

import contextlib
import sys
from typing import Any, Iterable, Iterator

__all__ = ["room_to_walk", "nesting"]

_FRAMES_PER_LEVEL = 4  # the engine's walks take two or three frames a level; torch's pytree code as many
_MARGIN = 200


@contextlib.contextmanager
def room_to_walk(*trees: Any) -> Iterator[None]:
    """Raise the recursion limit, within the block, as far as walking ``trees`` from here needs (never lower it)."""
    limit = sys.getrecursionlimit()
    need = _frames() + _FRAMES_PER_LEVEL * nesting(trees) + _MARGIN
    if need <= limit:
        yield
        return
    sys.setrecursionlimit(need)
    try:
        yield
    finally:
        sys.setrecursionlimit(limit)


def nesting(tree: Any) -> int:
    """How deep lists, tuples, dicts and plain objects (a dataclass, a pytree node) nest in ``tree``, counted
    without recursion."""
    deepest, todo, seen = 0, [(tree, 0)], set()
    while todo:
        value, depth = todo.pop()
        deepest = max(deepest, depth)
        if id(value) in seen:
            continue
        children: Iterable[Any]
        if isinstance(value, (list, tuple)):
            children = value
        elif isinstance(value, dict):
            children = value.values()
        elif hasattr(value, "__dict__") and not isinstance(value, type) \
                and type(value).__module__.partition(".")[0] != "torch":
            children = vars(value).values()
        else:
            continue
        seen.add(id(value))
        todo.extend((child, depth + 1) for child in children)
    return deepest


def _frames() -> int:
    """How many frames the stack holds now."""
    frame, count = sys._getframe(), 0
    while frame is not None:
        frame, count = frame.f_back, count + 1
    return count
