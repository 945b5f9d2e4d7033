"""A save/load round trip without parsing the same text twice: torch's deserializer, memoized for one round trip.

torch's deserializer (``torch._export.serde.serialize``, torch 2.6 through 2.15) turns every node's
schema back into dataclasses with a ``typing.get_type_hints`` call per dataclass, and every symbolic
size and stride of every node's tensor metadata back into sympy with a ``sympy.sympify`` call of its
text. A resnet18 with three dynamic dimensions makes 4,807 and 3,512 of them per load, nearly all
repeats: 0.1 s and 0.2 s of a 0.77 s load, and the serialize stage is a tenth of a default check
(pytorch/pytorch#196452). Within one round trip both are functions of their arguments alone, so
:func:`memoized_parsing` answers a repeat from the first answer:

- ``get_type_hints(cls, globalns, ...)``: the schema's dataclasses and module never change while a
  load runs; each call gets its own copy of the answer, as it would from ``typing``.
- ``sympify(text, locals=names)``: the parse of a text depends on the text and on what each name in
  it is bound to in ``names`` (the deserializer's symbols, which it only ever adds to, and sympy's
  functions); every other name resolves in sympy's own namespace, which a load does not change. The
  key is the text and, for each name in it and each name sympy's parser writes into it
  (``Integer``, ``Symbol``, ...), the identity of its binding (or its absence), and the memo holds
  those bindings, so no identity is reused while it lives. The deserializer's own
  bookkeeping (its symbol table, the shape environment's hints and ranges) still runs on every
  call: only the parse is skipped.

Any other call (a non-text argument, other keywords) goes to sympy or typing unchanged. The memo
lives for one ``with`` block (one round trip) and is swapped in as the serializer module's
``typing`` and ``sympy`` names only: nothing else in the process sees it. A torch whose serializer
does not name them that way is left alone (the round trip runs unmemoized).
"""

from __future__ import annotations

import contextlib
import re
import threading
import types
from typing import Any, Iterator

__all__ = ["memoized_parsing"]

_NAME = re.compile(r"[^\W\d]\w*")  # an identifier, Unicode ones included
# Names sympy's parser writes into the text it evaluates (Integer(2), Symbol('x')): looked up in
# ``locals`` too, so their bindings are part of the key even though the text never spells them.
_PARSER_NAMES = ("Integer", "Float", "Rational", "Symbol", "Function")
_lock = threading.Lock()  # one swap at a time: a nested or concurrent round trip runs unmemoized


class _Proxy(types.ModuleType):
    """A module standing in for ``real``: its own memo, and every attribute it does not define is real's."""

    def __init__(self, real: types.ModuleType) -> None:
        super().__init__(real.__name__)
        self._real = real
        self._memo: dict[tuple, Any] = {}

    def __getattr__(self, name: str) -> Any:
        return getattr(self._real, name)


class _Typing(_Proxy):
    """``typing`` with a memoized ``get_type_hints``; every other attribute is typing's own."""

    def get_type_hints(self, obj: Any, globalns: Any = None, localns: Any = None, include_extras: bool = False) -> dict:
        try:
            key = (obj, id(globalns), id(localns), include_extras)
            hit = self._memo.get(key)
        except TypeError:  # an unhashable obj: not memoized
            return self._real.get_type_hints(obj, globalns, localns, include_extras)
        if hit is None:
            hints = self._real.get_type_hints(obj, globalns, localns, include_extras)
            hit = self._memo[key] = (hints, globalns, localns)  # holds the namespaces: their ids stay theirs
        return dict(hit[0])


class _Sympy(_Proxy):
    """``sympy`` with ``sympify(text, locals=...)`` memoized by the text and its names' bindings."""

    def sympify(self, a: Any, *args: Any, **kwargs: Any) -> Any:
        names = kwargs.get("locals")
        if args or len(kwargs) != 1 or type(a) is not str or type(names) is not dict:
            return self._real.sympify(a, *args, **kwargs)
        bound = tuple(names.get(name) for name in (*_NAME.findall(a), *_PARSER_NAMES))
        key = (a, tuple(id(obj) for obj in bound))
        hit = self._memo.get(key)
        if hit is None:
            hit = self._memo[key] = (self._real.sympify(a, locals=names), bound)
        return hit[0]


@contextlib.contextmanager
def memoized_parsing() -> Iterator[None]:
    """Run the block with torch's serializer parsing each repeated schema type and size text once."""
    try:
        from torch._export.serde import serialize
    except ImportError:
        yield
        return
    real_typing, real_sympy = getattr(serialize, "typing", None), getattr(serialize, "sympy", None)
    usable = (isinstance(real_typing, types.ModuleType) and real_typing.__name__ == "typing"
              and isinstance(real_sympy, types.ModuleType) and real_sympy.__name__ == "sympy")
    acquired = False
    try:
        # acquired inside the try: a timeout's signal between the two would otherwise keep the lock
        acquired = usable and _lock.acquire(blocking=False)
        if acquired:
            serialize.typing, serialize.sympy = _Typing(real_typing), _Sympy(real_sympy)
        yield
    finally:
        if acquired:
            serialize.typing, serialize.sympy = real_typing, real_sympy
            _lock.release()
