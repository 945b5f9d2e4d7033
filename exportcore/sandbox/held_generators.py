"""Every torch.Generator a model reaches through its attributes, however held.

A generator is state as much as a buffer: eager advances it, and each program must start where eager
did. Models keep one directly (``self.gen``), in a list or dict, in a ``SimpleNamespace`` config, on
a helper object (``self.noise = Noise()`` with ``noise.gen``), in a hook's closure or a
``functools.partial``, or in a module global their class's code names (``GEN = torch.Generator()``).
torch's default generators are not among them: every side seeds those itself. A generator missed here is advanced by eager and never put back, and two
eager runs from "the same state" then differ: a correct model blamed as not reproducible.
"""

from __future__ import annotations

import functools
import itertools
import types
from typing import Any

__all__ = ["held_generators"]

#: nn.Module's own slots for what ModelState restores by other means (tensors, submodules).
_TENSOR_SLOTS = frozenset({"_parameters", "_buffers", "_modules", "_non_persistent_buffers_set"})
_SCALARS = (bool, int, float, complex, str, bytes, type(None), range, slice)
#: Objects looked into, at most: a tokenizer's vocabulary on a helper must not make a snapshot slow.
_BUDGET = 20_000
_DEPTH = 8
_ITEMS = 1_000  # of one container: a table of a million ids on a helper holds no generator past its head


def held_generators(model: Any) -> list[tuple[str, Any]]:
    """Return (path, generator) for each distinct torch.Generator ``model``'s modules reach through their
    attributes: directly, in containers, in namespaces, on plain objects, in closures and partials."""
    import torch

    from exportcore.sandbox.python_state import opaque_module

    walk = _Walk(torch)
    for owner, mod in model.named_modules(remove_duplicate=False):
        walk.seen.add(id(mod))  # reached through the tree, never through another module's attribute
    for owner, mod in model.named_modules(remove_duplicate=False):
        # the code of its class reads module globals (``torch.randn(..., generator=GEN)`` in forward)
        for klass in type(mod).__mro__:
            if not opaque_module(klass.__module__) and id(klass) not in walk.seen:
                walk.seen.add(id(klass))
                for k, v in vars(klass).items():
                    if isinstance(v, (types.FunctionType, staticmethod, classmethod)):
                        walk.visit(getattr(v, "__func__", v), f"{klass.__qualname__}.{k}", 0)
        for k, v in vars(mod).items():
            if k not in _TENSOR_SLOTS:
                walk.visit(v, f"{owner}.{k}" if owner else k, 0)
    return walk.found


class _Walk:
    def __init__(self, torch: Any) -> None:
        self.torch = torch
        self.seen: set[int] = set()
        self.found: list[tuple[str, Any]] = []
        self.left = _BUDGET
        self.keep: list[Any] = []

    def visit(self, value: Any, path: str, depth: int) -> None:
        torch = self.torch
        if isinstance(value, _SCALARS) or id(value) in self.seen or self.left <= 0 or depth > _DEPTH:
            return
        self.seen.add(id(value))
        self.keep.append(value)  # alive until the walk ends, so that no later object reuses its id
        self.left -= 1
        if isinstance(value, torch.Generator):
            # torch's default generators are seeded before every side already (execute.seed_rng)
            if value is not torch.default_generator and not any(value is g for g in torch.cuda.default_generators):
                self.found.append((path, value))
            return
        if isinstance(value, (torch.Tensor, torch.nn.Module, type, types.ModuleType)):
            return
        try:
            parts = _parts(value)
        except Exception:  # noqa: BLE001 - a descriptor or __getattr__ that raises: nothing reachable there
            return
        for name, item in parts:
            self.visit(item, f"{path}{name}", depth + 1)


def _globals(function: Any) -> list[tuple[str, Any]]:
    """The module globals ``function`` may read (a module-level ``GEN = torch.Generator()``), and what
    it may read through a module of the user's it names (``noise.GEN``)."""
    from exportcore.sandbox.python_state import opaque_module

    names = _names(function.__code__)
    scope = function.__globals__
    found = []
    for name in names:
        value = scope.get(name, _MISSING)
        if isinstance(value, types.ModuleType):
            if not opaque_module(value.__name__):
                held = vars(value)
                found += [(f"<{value.__name__}.{k}>", held[k]) for k in names if k in held]
        elif value is not _MISSING:
            found.append((f"<global {function.__module__}.{name}>", value))
    return found


def _names(code: types.CodeType) -> list[str]:
    """Every name ``code`` and the code nested in it load (globals and attributes alike: a superset)."""
    names = list(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names += _names(const)
    return list(dict.fromkeys(names))


_MISSING = object()


def _parts(value: Any) -> list[tuple[str, Any]]:
    """What ``value`` holds that may hold a generator, as (path suffix, item); nothing for opaque objects."""
    from exportcore.sandbox.python_state import closure, opaque_module

    if isinstance(value, dict):
        return [(f"[{k!r}]", v) for k, v in itertools.islice(value.items(), _ITEMS)]
    if isinstance(value, (list, tuple, set, frozenset)):
        return [(f"[{i}]", v) for i, v in enumerate(itertools.islice(value, _ITEMS))]
    if isinstance(value, functools.partial):
        return [(f".args[{i}]", v) for i, v in enumerate(value.args)] + \
               [(f".keywords[{k!r}]", v) for k, v in value.keywords.items()]
    if isinstance(value, types.MethodType):
        return [(".__self__", value.__self__)]
    if isinstance(value, types.FunctionType):
        if opaque_module(value.__module__):
            return []
        return [(f".<closure {k}>", v) for k, v in closure(value).items()] + \
               [(f".<default {i}>", v) for i, v in enumerate(value.__defaults__ or ())] + _globals(value)
    cls = type(value)
    if cls is not types.SimpleNamespace and not (cls.__module__ == "argparse" and cls.__name__ == "Namespace") \
            and opaque_module(cls.__module__):
        return []  # torch's, numpy's, the standard library's objects: a graph, a logger, a lock
    held = dict(getattr(value, "__dict__", None) or {})
    for klass in cls.__mro__:
        slots = klass.__dict__.get("__slots__", ())
        for slot in (slots,) if isinstance(slots, str) else slots:
            if slot not in ("__dict__", "__weakref__") and slot not in held and hasattr(value, slot):
                held[slot] = getattr(value, slot)
    return [(f".{k}", v) for k, v in held.items()]
