"""Code that ran only beyond the examples, named in a cache entry so a later session can find it again, live.

The result cache's identity names the code eager ran on the examples (exportcore.reuse.eager_code). The
drawn shapes and the other probes then run eager and the programs at other shapes, where a model
may call functions the examples never reach: a helper past a size threshold, a chunked method for
long inputs, a custom op's Python kernel for large sizes, a decomposition's helper. Edit such a
function, or bind its name to another, and a cold run finds at a drawn shape what a warm run would
serve as the old pass. So every such function becomes a witness in the entry, named by each path
that reached it when the walk ended, with a digest of what that path held then
(exportcore.reuse.code_reads.function_digest: the code object, its defaults, its closure and the globals
its code reads, by value):

- ``global:MODULE:NAME``: a global of its own module, under its qualified name (``long_rows``,
  ``Net.chunked``, a class attribute of a global class) or under another name (an alias, a
  decorator's wrapper that holds it);
- ``class:CLASS:NAME``: an attribute of the class of one of the model's modules, as ``self.NAME``
  finds it through the class's bases (a conftest's ``Net.chunked = other`` is what runs).

A later session is served the entry only if every path still holds what it held, resolved as the
model and its modules are now (a name bound to a second ``def`` further down the module, or to a
definition an environment variable chose at import, holds another code object), and if the source
block at the function's first line still reads the same, with the same values of what it reads:
the only check for a function no path reaches (one nested in another, whose code object is part
of its parent's digest; one a factory made and something the proof reads by value holds). For a
function of an installed library (torchvision, transformers) the library's version is part of it,
whose native kernels may change with every line of its Python the same. A witness that cannot be
found again (its module is not loaded) also means a full run, never a guess. Code of torch, its
dependencies, the standard library and this engine is named by their versions, as in
exportcore.reuse.eager_code.
"""

from __future__ import annotations

import functools
import os
import sys
import types
from dataclasses import dataclass, field
from typing import Any, Iterator

from exportcore.reuse.code_reads import described, function_digest, globals_read
from exportcore.reuse.code_origins import distribution, source_block, versioned
from exportcore.reuse.eager_code import CodeRecord
from exportcore.sandbox.python_state import Reader, closure, opaque_module

__all__ = ["Witness", "witnesses", "hold", "failing"]


@dataclass
class Witness:
    """One function run beyond the examples: the paths that reach it, what they held, and where its source is."""

    module: str  # the ``__name__`` of the module whose globals it runs in
    file: str  # its source file, relative to the folder of that module's ``__file__``
    line: int  # its first line
    digest: str  # exportcore.reuse.code_reads.described: the source block with the globals' values
    names: list[str] = field(default_factory=list)  # the globals it reads
    #: ``name==version`` of the installed library it belongs to ("" for the user's own code): its native
    #: kernels change with the version and may leave every line of its Python the same
    version: str = ""
    #: every path that reached it when the walk ended (``global:MODULE:NAME``, ``class:CLASS:NAME``) -> what
    #: the path held, by exportcore.reuse.code_reads.function_digest
    paths: dict[str, str] = field(default_factory=dict)


def witnesses(later: CodeRecord, examples: CodeRecord, model: Any) -> list[Witness] | None:
    """Return witnesses for what ``later`` ran and ``examples`` did not; None when one cannot be named.

    None (also when ``later`` is incomplete: another profile hook was in use) means the walk's
    results must not be stored: nothing would prove a later session ran the same code.
    """
    if not later.complete:
        return None
    reader = Reader(sys.modules.get("torch"))
    attributes = _class_attributes(_classes(model))
    found: dict[tuple[str, str, int], Witness] = {}
    for key, (code, globs, _) in later.seen.items():
        if key in examples.seen or versioned(code.co_filename):
            continue
        source = source_block(code.co_filename, code.co_firstlineno)
        if source is None:  # generated code (an FX graph's forward): its graph is its identity
            continue
        module, home = globs.get("__name__"), globs.get("__file__")
        if not isinstance(module, str) or not isinstance(home, str):
            return None
        names = globals_read(code)
        where = os.path.relpath(code.co_filename, os.path.dirname(os.path.abspath(home)))
        witness = found.setdefault((module, where, code.co_firstlineno), Witness(
            module=module, file=where, line=code.co_firstlineno, names=names,
            digest=described(source, names, globs, {}, reader), version=distribution(code.co_filename) or ""))
        for path, value in [*_global_paths(code, globs), *attributes.get(id(code), [])]:
            witness.paths[path] = _reached(value, reader)
    return [found[k] for k in sorted(found)]


def hold(kept: list[Witness], model: Any) -> bool:
    """Whether every witness still describes the same function, as the model, its modules and the sources are now."""
    return not kept or failing(kept, model) is None


def failing(kept: list[Witness], model: Any) -> Witness | None:
    """The first witness that no longer describes the same function (None: every one holds)."""
    homes = _homes(model)
    classes = _classes(model)
    reader = Reader(sys.modules.get("torch"))
    for witness in kept:
        globs = _globals(homes, witness.module)
        home = globs.get("__file__") if globs is not None else None
        if not isinstance(home, str):
            return witness
        filename = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(home)), witness.file))
        source = source_block(filename, witness.line)
        if source is None or described(source, witness.names, globs, {}, reader) != witness.digest:
            return witness
        if witness.version and distribution(filename) != witness.version:
            return witness
        for path, digest in witness.paths.items():
            value = _resolve(path, homes, classes)
            if value is _MISSING or _reached(value, reader) != digest:
                return witness
    return None


_MISSING = object()


def _globals(homes: dict[str, dict[str, Any]], module: str) -> dict[str, Any] | None:
    globs = homes.get(module)
    if globs is None:
        loaded = sys.modules.get(module)
        globs = vars(loaded) if loaded is not None else None
    return globs


def _resolve(path: str, homes: dict[str, dict[str, Any]], classes: dict[str, type]) -> Any:
    """What ``path`` holds now: a module global (through classes by qualified name), or a model class's attribute."""
    kind, rest = path.split(":", 1)
    where, name = rest.rsplit(":", 1)
    if kind == "class":
        cls = classes.get(where)
        return _lookup(cls, name) if cls is not None else _MISSING
    globs = _globals(homes, where)
    if globs is None:
        return _MISSING
    first, *attrs = name.split(".")
    value = globs.get(first, _MISSING)
    for attr in attrs:
        if isinstance(value, types.ModuleType):
            value = vars(value).get(attr, _MISSING)
        elif isinstance(value, type):
            value = _lookup(value, attr)
        else:
            return _MISSING
    return value


def _lookup(cls: type, name: str) -> Any:
    """``cls.name`` as the class's bases give it, unbound (a staticmethod, a property as they are held)."""
    for base in cls.__mro__:
        if name in vars(base):
            return vars(base)[name]
    return _MISSING


def _global_paths(code: types.CodeType, globs: dict[str, Any]) -> Iterator[tuple[str, Any]]:
    """The globals of the code's own module that hold it: by its qualified name, and any other name."""
    module = globs["__name__"]
    qualified = getattr(code, "co_qualname", code.co_name)
    if "<locals>" not in qualified:
        value = _resolve(f"global:{module}:{qualified}", {module: globs}, {})
        if value is not _MISSING and _holds(value, code):
            yield f"global:{module}:{qualified}", value
    for name, value in list(globs.items()):
        if name != qualified and not name.startswith("__") and callable(value) \
                and not isinstance(value, (type, types.ModuleType)) and _holds(value, code):
            yield f"global:{module}:{name}", value


def _classes(model: Any) -> dict[str, type]:
    """The classes of the model's modules, by module and qualified name: what ``self.NAME`` is looked up in."""
    parts = list(model.modules()) if callable(getattr(model, "modules", None)) else [model]
    return {f"{cls.__module__}.{cls.__qualname__}": cls for cls in map(type, parts)}


def _class_attributes(classes: dict[str, type]) -> dict[int, list[tuple[str, Any]]]:
    """By code object id: the paths ``class:CLASS:NAME`` whose attribute (as the class's bases give it) runs that code."""
    held: dict[int, list[tuple[str, Any]]] = {}
    for key, cls in classes.items():
        named: set[str] = set()
        for base in cls.__mro__:
            for name, value in vars(base).items():
                if name in named:
                    continue  # a base's attribute the class (or a nearer base) overrides: not what runs
                named.add(name)
                if opaque_module(base.__module__):
                    continue
                for function in _functions(value):
                    held.setdefault(id(function.__code__), []).append((f"class:{key}:{name}", value))
    return held


def _functions(value: Any, depth: int = 3) -> list[types.FunctionType]:
    """The functions a held value runs: itself, a static or class method's, a property's, a wrapper's inner ones."""
    if isinstance(value, (staticmethod, classmethod, types.MethodType)):
        value = value.__func__
    if isinstance(value, property):
        return [f for part in (value.fget, value.fset, value.fdel) if part is not None for f in _functions(part, depth)]
    if isinstance(value, functools.partial):
        return _functions(value.func, depth)
    found = [value] if isinstance(value, types.FunctionType) else []
    if depth > 0 and (found or callable(value)):
        # a decorator's wrapper: what it calls is in its closure, or named by ``functools.wraps``
        inner = [*(closure(value).values() if found else ()), getattr(value, "__dict__", {}).get("__wrapped__")]
        for held in inner:
            if callable(held) and not isinstance(held, type):
                found += [f for f in _functions(held, depth - 1) if f not in found]
    return found


def _holds(value: Any, code: types.CodeType) -> bool:
    return any(function.__code__ is code for function in _functions(value))


def _reached(value: Any, reader: Reader) -> str:
    """What a path holds, as the proof compares it: each function it runs by its code, closure and what it reads."""
    parts = [type(value).__name__]
    for function in _functions(value):
        if versioned(function.__code__.co_filename):  # torch's decorator around it: named by torch's version
            parts.append(f"{function.__module__}.{function.__qualname__}")
        else:
            parts.append(function_digest(function, reader))
    return ";".join(parts)


def _homes(model: Any) -> dict[str, dict[str, Any]]:
    """The module globals the model's own classes' functions run in, by module name.

    Before sys.modules: a model module loaded from a file (importlib's spec_from_file_location, a
    notebook's exec) may not be there, or a stale module of the same name may.
    """
    homes: dict[str, dict[str, Any]] = {}
    parts = list(model.modules()) if callable(getattr(model, "modules", None)) else [model]
    for part in parts:
        held = list(getattr(part, "__dict__", {}).values())  # a plain function check() wrapped, a stored hook
        for cls in type(part).__mro__:
            held += vars(cls).values()
        for value in [part, *held]:
            function = getattr(value, "__func__", value)
            # and what a forward's closure holds: the plain function check() wrapped in a module
            for found in (function, *closure(function).values()):
                globs = getattr(found, "__globals__", None)
                if isinstance(globs, dict) and isinstance(globs.get("__name__"), str):
                    homes.setdefault(globs["__name__"], globs)
    return homes

