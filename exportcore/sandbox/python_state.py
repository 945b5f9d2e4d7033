"""The reader of the Python state a model's code reads besides its tensors (exportcore.reuse.python_digest digests it).

A module's plain attributes (``self.limit = 16``, a transformers config, timm's ``fused_attn``)
steer eager's code without always showing in the graph or in eager's answer on the examples: a
threshold only eager's own branch reads (under ``torch.compiler.is_compiling()``), or only past
the example's size. Change one between two sessions and a cold run finds the mismatch at a drawn
shape while a warm run, proving only graph, tensors and eager's answer the same, would serve the
old pass. So the identity names every module's attributes by value, as the module constants the
model's functions read (exportcore.reuse.eager_code).

A value is described the same way in every process or not at all: plain values by repr, an enum
member by name and value, tensors and arrays by their bytes, containers item by item, torch's and
the standard library's functions and classes by module and name, objects of user or library
classes (a config, a dataclass) by their attributes and their classes' data attributes (``class
Net: LIMIT = 16``), a user's class itself (``self.cfg = Cfg``) by those data attributes, a function
by its code object (code_digest) with what its closure and defaults hold (``make_scaler(2.0)``; a
helper redefined under its name is another function), a method in a class by its defaults and the
closure its decorator made, a bound method by its function and the object it is bound to (a hook
that is a method of a plain object). Objects of torch are described by their type only, and so
are the standard library's that hold the process's state rather than values (a logger, a lock, a
thread pool, a generator); the standard library's values are read: ``SimpleNamespace``,
``argparse.Namespace``, a ``ConfigParser``, a mapping proxy, a deque, a slice or range, a decimal
or fraction, a ``bytearray``, a compiled pattern, and by what pickling keeps of them the objects of
_VALUE_MODULES (an ``array.array``, a date, a path, a ``UserDict``); and ``torch.finfo``.
A tensor this module cannot read (a subclass, meta) means no digest, so the case is never served
from the cache.
"""

from __future__ import annotations

import collections
import enum
import functools
import hashlib
import sys
import types
import warnings
from typing import Any

from exportcore.sandbox.tensor_digest import values_digest

__all__ = ["Reader", "Unreadable", "opaque_module", "closure", "code_digest"]

_SCALARS = (bool, int, float, complex, str, bytes, type(None))
#: Packages whose objects are described by their type only (besides the standard library's).
_OPAQUE = frozenset({"builtins", "torch", "functorch", "torchgen", "sympy", "numpy", "pytest", "_pytest",
                     "hypothesis", "pluggy", "exportcore", "exportdb", "pytest_export"})


class Unreadable(Exception):
    """A value no digest can stand for (a tensor subclass, a meta tensor): nothing is proven."""


class Reader:
    """Describes values as ``state_digest`` does; raises Unreadable for what it cannot.

    One reader per digest: an object met twice (one config in every layer) is described once.
    """

    def __init__(self, torch: Any) -> None:
        self.torch = torch
        self.done: dict[int, str] = {}
        self.path: set[int] = set()
        self.keep: list[Any] = []  # what ``done`` is keyed by stays alive, so no id is reused meanwhile

    def __call__(self, value: Any) -> str:
        if isinstance(value, enum.Enum):  # and its value: ``ROWS = 16`` edited is another member
            return f"enum {_name(type(value))}.{value.name}={self(value.value)}"
        if isinstance(value, _SCALARS):
            return f"{type(value).__name__} {value!r}"
        torch = self.torch
        if torch is not None:
            if isinstance(value, torch.Tensor):
                return self.tensor(value)
            if isinstance(value, (torch.dtype, torch.device, torch.layout, torch.memory_format)):
                return f"torch {value}"
        key = id(value)
        if key in self.done:
            return self.done[key]
        if key in self.path:
            return "cycle"
        self.path.add(key)
        try:
            text = self.compound(value)
        finally:
            self.path.discard(key)
        digest = hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()
        self.done[key] = digest
        self.keep.append(value)
        return digest

    def compound(self, value: Any) -> str:
        kind = _name(type(value))
        if isinstance(value, (tuple, list)):
            return f"{kind}[{','.join(self(v) for v in value)}]"
        if isinstance(value, dict):
            return f"{kind}{{{','.join(f'{self(k)}:{self(v)}' for k, v in value.items())}}}"
        if isinstance(value, (set, frozenset)):
            return f"{kind}{{{','.join(sorted(self(v) for v in value))}}}"
        if isinstance(value, functools.partial):
            return f"partial {self(value.func)} {self(value.args)} {self(value.keywords)}"
        if isinstance(value, types.MethodType):
            # and what it is bound to, which its code reads through ``self``/``cls``: a module of the
            # model's tree is named by its path (state_digest), any other module, a class (a
            # classmethod's ``cls.LIMIT``) or a plain object (a hook's) by its state
            return f"method {self(value.__func__)} of {self(value.__self__)}"
        bound = getattr(value, "__self__", None)
        if isinstance(value, types.BuiltinMethodType) and not isinstance(bound, (types.ModuleType, type(None))):
            # ``config.get`` kept as a lookup function: the dict it reads
            return f"builtin method {type(bound).__name__}.{value.__name__} of {self(bound)}"
        if isinstance(value, types.FunctionType) and not opaque_module(value.__module__):
            # by its code, not only its name: a helper redefined under the same name, or chosen at import
            # (``if os.environ.get("FAST"): def kernel``), is another function; and a closure a factory
            # made (``make_scaler(2.0)``): the same code, other behaviour
            return (f"function {_name(value)} {code_digest(value.__code__)} {self(closure(value))} "
                    f"{self(value.__defaults__)} {self(value.__kwdefaults__)}")
        if isinstance(value, types.CodeType):
            return f"code {code_digest(value)}"
        if isinstance(value, type) and not _opaque(value):
            # a class used as a config (``self.cfg = Cfg``, ``Cfg.limit()``): its data attributes, as an object's
            return f"class {_name(value)}{self.class_attributes(value)}"
        if isinstance(value, types.ModuleType) and not opaque_module(getattr(value, "__name__", None)):
            # a config module the model holds (``self.cfg = configs``): its values, as a config object's;
            # its functions, classes and the modules it imports are code, named by their source where they run
            return f"module {value.__name__} " + self({k: v for k, v in vars(value).items()
                                                       if not k.startswith("__") and not callable(v)
                                                       and not isinstance(v, types.ModuleType)})
        if isinstance(value, (types.FunctionType, types.BuiltinFunctionType, type, types.ModuleType)):
            return f"{type(value).__name__} {_name(value)}"
        if self.torch is not None and isinstance(value, self.torch.nn.Module):
            # one kept outside the module tree (a plain list): its tensors are nobody else's
            return f"{kind} {self.module_attributes(value)} {self(dict(value.named_parameters()))} " \
                   f"{self(dict(value.named_buffers()))}"
        if all(hasattr(value, a) for a in ("dtype", "shape", "tobytes")) and callable(value.tobytes):
            return f"{kind} {value.dtype} {tuple(value.shape)} {hashlib.blake2b(value.tobytes()).hexdigest()}"
        if _namespace(type(value)):
            return f"{kind}({','.join(f'{k}={self(v)}' for k, v in vars(value).items())})"
        if _opaque(type(value)):
            return f"{kind} {self.library_value(value)}"
        # an object of a user's or a library's class, a dataclass too (its fields are in __dict__ or slots;
        # a ClassVar and an attribute set after __init__ are state as well)
        fields = dict(getattr(value, "__dict__", {}))
        for cls in type(value).__mro__:
            for slot in _slots(cls):
                if slot not in fields and hasattr(value, slot):
                    fields[slot] = getattr(value, slot)
        return (f"{kind}({','.join(f'{k}={self(v)}' for k, v in fields.items() if not _fingerprint(k))})"
                f"{self.class_attributes(type(value))}")

    def library_value(self, value: Any) -> str:
        """A standard-library or torch object: by content where it is a value a config holds, else by type only."""
        if isinstance(value, (types.MappingProxyType, collections.ChainMap)):
            return self(dict(value))
        if isinstance(value, collections.deque):
            return self(list(value))
        if isinstance(value, (range, slice)) or type(value).__module__ in ("decimal", "fractions"):
            return repr(value)
        configparser = sys.modules.get("configparser")
        if configparser is not None and isinstance(value, configparser.RawConfigParser):
            return self({name: dict(value.items(name, raw=True)) for name in value.sections()} | {
                "DEFAULT": dict(value.defaults())})
        torch = self.torch
        if torch is not None and isinstance(value, (torch.finfo, torch.iinfo)):
            return repr(value)
        module = (type(value).__module__ or "").partition(".")[0]
        wrapped = vars(value).get("__wrapped__") if module == "functools" and hasattr(value, "__dict__") else None
        if isinstance(wrapped, types.FunctionType):  # ``functools.lru_cache``'s wrapper: the function it runs
            return f"wraps {self(wrapped)}"
        if isinstance(value, bytearray):
            return self(bytes(value))
        if module == "re" and hasattr(value, "pattern") and hasattr(value, "flags"):  # pickled through copyreg
            return f"pattern {self(value.pattern)} {self(value.flags)}"
        if module in _VALUE_MODULES:
            return self.reduced(value)
        return "object"  # a logger, a lock, a generator, a pool: the process's state, not the model's

    def reduced(self, value: Any) -> str:
        """A value-like standard-library object by what pickling it keeps (an ``array.array``, a date, a path).

        Such an object may hold a threshold as a dataclass does. One pickling refuses (a match
        object) is described by its type only.
        """
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                reduced = value.__reduce_ex__(4)
            if isinstance(reduced, str):  # a module-level singleton, named
                return f"named {reduced}"
            parts = list(reduced) + [None] * (5 - len(reduced))
            parts[3:5] = [list(part) if part is not None else None for part in parts[3:5]]
            return f"reduced {self(parts[0])} {self(parts[1])} {self(parts[2])} {self(parts[3])} {self(parts[4])}"
        except Exception:  # noqa: BLE001 - pickling refused: its type only
            return "object"

    def class_attributes(self, cls: type) -> str:
        """The data attributes of ``cls`` and its bases outside torch and the standard library.

        Code (functions, properties, static and class methods) is left to exportcore.reuse.eager_code,
        which names what eager ran by its source; but not what a method's source does not show:
        its defaults (``def forward(self, x, limit=LIMIT)``: ``LIMIT`` is read when the class is
        made) and the closure a decorator gave it (``@chunked_by(LIMIT)``).
        """
        parts = []
        for base in cls.__mro__:
            if _opaque(base):
                continue
            for attr, value in vars(base).items():
                if attr.startswith("__") or _fingerprint(attr):
                    continue
                if isinstance(value, _CODE):
                    held = self.code_values(value)
                    if held:
                        parts.append(f"{_name(base)}.{attr}:{held}")
                    continue
                parts.append(f"{_name(base)}.{attr}={self(value)}")
        return f" class {';'.join(parts)}" if parts else ""

    def code_values(self, value: Any) -> str:
        """What a method holds besides its source: defaults and closure cells ("" when none)."""
        function = getattr(value, "__func__", value)  # a static or class method's function
        if not isinstance(function, types.FunctionType):
            return ""
        # not ``__class__``, the cell every method that calls ``super()`` has: the class is being read
        cells = {name: cell for name, cell in closure(function).items() if name != "__class__"}
        if not (function.__defaults__ or function.__kwdefaults__ or cells):
            return ""
        return f"{self(function.__defaults__)} {self(function.__kwdefaults__)} {self(cells)}"

    def module_attributes(self, module: Any) -> str:
        internals = _internals(self.torch)
        parts = [_name(type(module))]
        for attr, value in vars(module).items():
            if attr in internals:
                if "hooks" in attr and isinstance(value, dict):  # the hooks, not their handles' ids
                    parts.append(f"{attr}={self(list(value.values()))}")
                continue
            if not _fingerprint(attr):
                parts.append(f"{attr}={self(value)}")
        return ";".join(parts) + self.class_attributes(type(module))

    def tensor(self, value: Any) -> str:
        digest = values_digest(value)  # by value and layout, as the model's own tensors; None: not plain
        if digest is None:
            raise Unreadable(type(value).__name__)
        return f"tensor {digest}"


def _name(obj: Any) -> str:
    return f"{getattr(obj, '__module__', None)}.{getattr(obj, '__qualname__', getattr(obj, '__name__', '?'))}"


#: What a class holds that is code, not state: named by its source where eager runs it.
_CODE = (types.FunctionType, staticmethod, classmethod, property, types.MemberDescriptorType,
         types.GetSetDescriptorType, types.WrapperDescriptorType, types.MethodDescriptorType, functools.cached_property)


def code_digest(code: types.CodeType) -> str:
    """What a code object runs, the same in every process: bytecode, constants (nested functions' code too), names.

    Not its file or its lines: a checkout in another folder, or a function moved down its file,
    runs the same.
    """
    from exportcore.sandbox.session_caches import active

    known = active().code_digests
    try:
        return known[code]
    except (KeyError, TypeError):
        pass
    parts = [code.co_name, getattr(code, "co_qualname", ""), code.co_code.hex(),
             repr((code.co_argcount, code.co_posonlyargcount, code.co_kwonlyargcount, code.co_flags)),
             repr(code.co_names), repr(code.co_varnames), repr(code.co_freevars), repr(code.co_cellvars),
             getattr(code, "co_exceptiontable", b"").hex(), *map(_code_constant, code.co_consts)]
    digest = hashlib.blake2b("\n".join(parts).encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()
    try:
        known[code] = digest  # by the code object (equal code objects run the same), for as long as it lives
    except TypeError:
        pass
    return digest


def _code_constant(value: Any) -> str:
    if isinstance(value, types.CodeType):
        return f"code {code_digest(value)}"
    if isinstance(value, tuple):
        return f"({','.join(map(_code_constant, value))})"
    if isinstance(value, frozenset):  # ``x in {"a", "b"}``: its order follows string hashing, new in every process
        return f"{{{','.join(sorted(map(_code_constant, value)))}}}"
    if isinstance(value, (*_SCALARS, type(Ellipsis))):
        return f"{type(value).__name__} {value!r}"
    return type(value).__name__


def closure(function: Any) -> dict[str, Any]:
    """What a function's closure holds, by free variable name (empty cells left out)."""
    code = getattr(function, "__code__", None)
    found = {}
    for name, cell in zip(getattr(code, "co_freevars", ()), getattr(function, "__closure__", None) or ()):
        try:
            found[name] = cell.cell_contents
        except ValueError:  # an empty cell
            pass
    return found


def _namespace(cls: type) -> bool:
    """A standard-library class that is only a bag of attributes: read like a user's config object."""
    return cls is types.SimpleNamespace or (cls.__module__ == "argparse" and cls.__name__ == "Namespace")


def opaque_module(module: str | None) -> bool:
    """Whether objects of ``module`` are torch's, the standard library's or this engine's: named by versions."""
    root = (module or "").partition(".")[0]
    return root in _OPAQUE or root in sys.stdlib_module_names


def _fingerprint(attr: str) -> bool:
    """Whether an attribute holds a hash of the object's other attributes (transformers' GenerationConfig
    keeps ``hash(self)`` as ``_original_object_hash``): those are described themselves, and str's hash
    differs in every process. Private ones only: ``rows_before_hash = 16`` is a user's threshold."""
    return attr.startswith("_") and attr.lower().endswith("hash")


def _opaque(cls: type) -> bool:
    return opaque_module(cls.__module__)


#: Standard-library modules whose objects are values a config may hold, read by what pickling them keeps (not
#: a logger, a lock, a thread pool: pickling one would read the process's state, a thread's name or ident).
_VALUE_MODULES = frozenset({"array", "collections", "datetime", "pathlib", "re", "uuid", "ipaddress", "string",
                            "operator"})


def _slots(cls: type) -> tuple[str, ...]:
    slots = cls.__dict__.get("__slots__", ())
    return (slots,) if isinstance(slots, str) else tuple(s for s in slots if s not in ("__dict__", "__weakref__"))


@functools.lru_cache(maxsize=1)
def _internals(torch: Any) -> frozenset[str]:
    """nn.Module's own bookkeeping: its tensors and submodules are digested elsewhere; ``training`` is state."""
    return frozenset(vars(torch.nn.Module())) - {"training"}
