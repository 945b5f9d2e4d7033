"""What a function's code reads besides its source: the globals, attribute chains and imports it names, by value.

A function is named in the result cache's proof by its source block and by the values of what it
reads there (exportcore.reuse.eager_code for what eager ran, exportcore.reuse.code_witnesses for what ran
beyond the examples, exportcore.reuse.program_code for what only the steps after capture run): the
module constants (``LIMIT = 16``), values read through a module or class global
(``configs.model.ROWS``), through a module it imports itself (``from configs import ROWS`` in a
forward), and its closure's cells. Values are described as exportcore.sandbox.python_state describes the
model's attributes; code (modules, torch's and the standard library's objects) is named elsewhere.
"""

from __future__ import annotations

import dis
import hashlib
import importlib.util
import sys
import types
from typing import Any

from exportcore.sandbox.python_state import Reader, closure, code_digest, opaque_module

__all__ = ["described", "globals_read", "function_digest", "code_digest"]


def described(source: str, names: list[str], found: dict[str, Any], cells: dict[str, Any], reader: Reader) -> str:
    """The digest of a function's source with the values of the globals ``names`` in ``found`` and its cells."""
    constants = sorted(f"{name}={text}" for name in names
                       for value in [_global(found, name)] if value is not _MISSING
                       for text in [_constant(value, reader, whole=name.startswith(WHOLE))] if text is not None)
    # a tensor or a module in a closure is an activation or the model's own: eager's answer and the
    # model's digests hold them
    constants += sorted(f"closure {name}={text}" for name, value in cells.items()
                        if not _tensor_or_module(value) for text in [_constant(value, reader)] if text is not None)
    return hashlib.blake2b(f"{source}\n{';'.join(constants)}".encode("utf-8", "surrogatepass"),
                           digest_size=16).hexdigest()


def function_digest(function: types.FunctionType, reader: Reader) -> str:
    """A live function as it would run now: its code object, defaults, closure and the globals its code reads, by value.

    Not its source at a line: a name rebound to another function (a monkeypatch, a second ``def``
    further down, a definition chosen at import) leaves that text as it was.
    """
    code = function.__code__
    cells = {**closure(function), "__defaults__": function.__defaults__, "__kwdefaults__": function.__kwdefaults__}
    return described(f"code {code_digest(code)}", globals_read(code), function.__globals__, cells, reader)


def globals_read(code: types.CodeType) -> list[str]:
    """The global names the code loads, and ``name.attr`` (``name.a.b``) where it reads attributes of one right away.

    (``co_names`` also holds attribute names: ``self.model`` is not the test module's global
    ``model``, which would be read, and hashed, for nothing.) ``name.attr``: a module global is
    code, but ``config.LIMIT``, ``Net.THRESHOLD`` or ``configs.model.LIMIT`` read through it is a value.
    A module the code imports itself (``import configs`` or ``from .configs import LIMIT`` in a
    forward) binds a local, not a global: what it reads through that local is named
    ``import:MODULE:ATTR...`` (MODULE relative where the import is), read by ``_global`` from
    ``sys.modules``. A chain the code hands on whole (``getattr(configs, name)`` with a name it
    computes, ``vars(configs)``) is also named ``whole:CHAIN``: no attribute names what is read of
    it, so where it is a module, that module's values are (``_constant``).
    """
    found: set[str] = set()
    chain: str | None = None  # the dotted name the instructions so far load
    imported: dict[str, str] = {}  # a local an import in this code bound: the name of what it holds
    consts: tuple[Any, Any] = (0, None)  # the last two constants: an IMPORT_NAME's level and from-list
    module: str | None = None  # the module an IMPORT_NAME left for the IMPORT_FROMs after it
    item: str | None = None  # what the last import instruction pushed, for the STORE after it
    by_name: str | None = None  # ``importlib.import_module("cfg")``: the module a call with a literal name returns
    for ins in dis.get_instructions(code):
        op, arg = ins.opname, ins.argval
        if op in _CALL_PLUMBING:
            continue
        if by_name is not None:
            # the literal was the call's only argument: the call's result is that module, read as an import is
            chain = f"import:{by_name}:" if op in ("CALL", "CALL_FUNCTION", "CALL_METHOD") and ins.arg == 1 else None
            by_name = None
            if chain is not None:
                found.add(chain)
                continue
        if op == "IMPORT_NAME":
            level, fromlist = consts
            # ``import a.b`` (and ``import a.b as m``, which then takes ``b`` from it) pushes ``a``
            module = item = f"import:{arg.split('.')[0]}:" if fromlist is None and not level \
                else f"import:{'.' * (level or 0)}{arg}:"
        elif op == "IMPORT_FROM" and module is not None:
            item = _dotted(module, arg)
        elif op in ("STORE_FAST", "STORE_NAME"):
            if item is not None:
                imported[arg] = item
            else:
                imported.pop(arg, None)  # the local holds something else from here on
            item = None
        elif op == "POP_TOP":
            module = item = None
        if op == "LOAD_CONST":
            consts = (consts[1], arg)
        if op in ("LOAD_ATTR", "LOAD_METHOD") and chain is not None:
            chain = _dotted(chain, arg)
            found.add(chain)
            continue
        if op == "LOAD_CONST" and chain is not None and isinstance(arg, str) and _imports_by_name(chain) \
                and all(part.isidentifier() for part in arg.split(".")):
            by_name = arg if chain.rsplit(":", 1)[-1].rsplit(".", 1)[-1] == "import_module" else arg.split(".")[0]
            found.add(chain)
            chain = None
            continue
        if op == "LOAD_CONST" and chain is not None and isinstance(arg, str) and arg.isidentifier():
            # ``getattr(cfg, "LIMIT")``: a global, then a name; read as ``cfg.LIMIT`` (a guess that
            # is wrong only adds a value to the digest)
            found.add(_dotted(chain, arg))
            chain = None
            continue
        if chain is not None:  # the chain ends here: what it names is used whole
            found.add(f"{WHOLE}{chain}")
            chain = None
        if op in ("LOAD_GLOBAL", "LOAD_NAME"):
            chain = arg
        elif op.startswith("LOAD_FAST") and (arg[-1] if isinstance(arg, tuple) else arg) in imported:
            chain = imported[arg[-1] if isinstance(arg, tuple) else arg]  # 3.13 loads two locals at once
        else:
            continue
        found.add(chain)
    return sorted(found)


#: instructions between a call's last argument and the call, or around it, that change nothing read
_CALL_PLUMBING = frozenset({"PRECALL", "CACHE", "KW_NAMES", "EXTENDED_ARG", "NOP"})


def _imports_by_name(chain: str) -> bool:
    """Whether the chain names ``importlib.import_module`` or ``__import__`` (a global, an alias, a local import)."""
    last = chain.rsplit(":", 1)[-1].rsplit(".", 1)[-1]
    return last in ("import_module", "__import__")


def _dotted(name: str, attr: str) -> str:
    return f"{name}{attr}" if name.endswith(":") else f"{name}.{attr}"


_MISSING = object()
WHOLE = "whole:"  # globals_read: the object a chain names is handed on whole


def _global(found: dict[str, Any], name: str) -> Any:
    """The value of global ``name`` in ``found``, or of ``base.attr...`` through modules and classes.

    Read without running code (no module ``__getattr__``, no descriptor): only what the module or
    class holds itself, and only outside torch and the standard library, whose versions name theirs.
    """
    if name == f"{WHOLE}globals" and "globals" not in found:  # ``globals()["ROWS"]``: the module's values
        return _Values({k: v for k, v in found.items() if not k.startswith("__") and not callable(v)
                        and not isinstance(v, types.ModuleType)})
    name = name.removeprefix(WHOLE)
    if name.startswith("import:"):  # a module the code imported into a local (globals_read)
        _, module, rest = name.split(":", 2)
        try:
            module = importlib.util.resolve_name(module, found.get("__package__") or "")
        except (ImportError, ValueError):
            return _MISSING
        value = sys.modules.get(module, _MISSING)
        attrs = rest.split(".") if rest else []
    else:
        base, *attrs = name.split(".")
        value = found.get(base, _MISSING)
    for attr in attrs:
        value = _attribute(value, attr)
    return value


class _Values(dict):
    """The data values of a module's globals, which a function reading ``globals()`` hands on whole."""


def _attribute(value: Any, attr: str) -> Any:
    if isinstance(value, types.ModuleType):
        if opaque_module(getattr(value, "__name__", "")):
            return _MISSING
        return vars(value).get(attr, _MISSING)
    if isinstance(value, type):
        for cls in value.__mro__:
            if opaque_module(cls.__module__):
                continue
            if attr in vars(cls):
                return vars(cls)[attr]
    return _MISSING


def _tensor_or_module(value: Any) -> bool:
    torch = sys.modules.get("torch")
    return torch is not None and isinstance(value, (torch.Tensor, torch.nn.Module))


def _constant(value: Any, reader: Reader, whole: bool = False) -> str | None:
    """A module constant by value (``LIMIT = 16``, ``SIZES = (8, 16)``, a config object), None for code.

    Modules are code: named by their source when eager runs them, and what the code reads of them
    apart (``globals_read``); a module the code hands on ``whole`` is read by its values
    (python_state.Reader), except torch's and the standard library's, whose versions name them. A
    class outside torch and the standard library is read by its data attributes and what its
    methods' defaults and closures hold (``Cfg.limit()`` returning ``cls.LIMIT``). A function is
    named, with what its closure holds: an alias (``ACT = torch.relu``) is code no record of eager's
    names (torch's) or one a factory made.
    """
    if whole:  # only a module (or its globals()) is read again whole: anything else is read under its own name
        if isinstance(value, _Values):
            value = dict(value)
        elif not isinstance(value, types.ModuleType) or opaque_module(getattr(value, "__name__", "")):
            return None
    elif isinstance(value, types.ModuleType) or isinstance(value, type) and opaque_module(value.__module__):
        return None
    try:
        return reader(value)
    except Exception:  # noqa: BLE001 - Unreadable (a tensor subclass), a descriptor that raises: left out
        return None
