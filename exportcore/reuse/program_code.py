"""Code outside torch that only the steps after capture run: what neither the graph nor eager's record shows.

The result cache serves decompose, save/load and the programs' runs once the captured program,
the model and eager's answer are proven the same. Two kinds of user code run only in those steps:

- decompositions a project puts in torch's table (``global_decomposition_table``, from a
  conftest or a plugin of its own): ``run_decompositions`` lowers with them, so an edit changes
  the decomposed program and its numerics and nothing before it (torch's own entries are named by
  its version: a project that removes one, or maps an op to another of torch's functions, is not
  told apart);
- the functions of a pytree node a program's inputs or outputs use (``register_pytree_node``):
  ``.module()`` builds outputs with its ``unflatten_fn``, save/load writes and reads the spec's
  context with its ``to_dumpable_context``/``from_dumpable_context``. Eager builds its own
  outputs, so an edit there shows in no run eager makes.

Both are named here as the table and the registry hold them now: code outside torch by its code
object, defaults, closure and the values of the globals it reads (exportcore.reuse.code_reads.function_digest;
a helper it calls is such a global, by its code too), torch's own by name, whose version the
identity holds. What they run of the user's code beyond that is recorded while ``run_decompositions``
runs (exportcore.stages.decompose) and checked again as any witness is (exportcore.reuse.code_witnesses).
"""

from __future__ import annotations

import functools
import hashlib
import sys
import types
from typing import Any

from exportcore.reuse.code_reads import function_digest
from exportcore.reuse.code_origins import versioned
from exportcore.sandbox.python_state import Reader, opaque_module

__all__ = ["program_code"]


def program_code(ep: Any) -> str:
    """Return a digest of the decomposition table and of the pytree nodes in ``ep``'s call signature."""
    return f"decompositions {_decompositions()} pytree {_pytree_nodes(ep)}"


def _decompositions() -> str:
    from torch._decomp import global_decomposition_table

    # by the functions' identities, a cheap pass: the table changes where a project edits it, not per case
    fingerprint = tuple((name, tuple(map(id, table)), tuple(map(id, table.values())))
                        for name, table in sorted(global_decomposition_table.items()))
    from exportcore.sandbox.session_caches import active

    kept = active().decompositions
    if kept and kept[0] == fingerprint:
        return kept[1]
    reader = Reader(sys.modules.get("torch"))
    h = hashlib.blake2b(digest_size=16)
    for name, table in sorted(global_decomposition_table.items()):
        # Only what is not torch's own: torch fills its table as its modules are imported, so which of
        # its entries exist depends on what ran before in the process (a warm run skips decompose).
        for op, fn in sorted(((op, fn) for op, fn in table.items() if not _torchs(fn)), key=lambda e: str(e[0])):
            h.update(f"{name}:{op}={_code(fn, reader)};".encode("utf-8", "surrogatepass"))
    # the ops and functions whose ids make the fingerprint stay alive with it, so no id is reused meanwhile
    kept[:] = [fingerprint, h.hexdigest(), [dict(table) for table in global_decomposition_table.values()]]
    return kept[1]


def _torchs(fn: Any) -> bool:
    code = getattr(getattr(fn, "func", fn), "__code__", None)  # a partial's function
    if isinstance(code, types.CodeType):
        return versioned(code.co_filename)
    return opaque_module(getattr(fn, "__module__", None))


def _pytree_nodes(ep: Any) -> str:
    import torch.utils._pytree as pytree

    calls = getattr(ep, "module_call_graph", None) or []
    signature = calls[0].signature if calls else None
    types_used: set[type] = set()
    for spec in (getattr(signature, "in_spec", None), getattr(signature, "out_spec", None)):
        _types(spec, types_used)
    reader = Reader(sys.modules.get("torch"))
    parts = []
    for typ in sorted(types_used, key=lambda t: f"{t.__module__}.{t.__qualname__}"):
        node = pytree.SUPPORTED_NODES.get(typ)
        serialized = getattr(pytree, "SUPPORTED_SERIALIZED_TYPES", {}).get(typ)
        functions = [getattr(node, f, None) for f in ("flatten_fn", "unflatten_fn", "flatten_with_keys_fn")]
        functions += [getattr(serialized, f, None) for f in ("to_dumpable_context", "from_dumpable_context")]
        parts.append(f"{typ.__module__}.{typ.__qualname__}:{','.join(_code(fn, reader) for fn in functions)}")
    return ";".join(parts)


def _types(spec: Any, found: set[type]) -> None:
    if spec is None:
        return
    typ = getattr(spec, "type", None)
    if isinstance(typ, type):
        found.add(typ)
    children = getattr(spec, "children", None)  # torch 2.15; children_specs before (deprecated since)
    for child in (children() if callable(children) else getattr(spec, "children_specs", None)) or ():
        _types(child, found)


def _code(fn: Any, reader: Reader) -> str:
    """A function by its code (with its defaults, closure and the globals it reads) outside torch, by its name inside."""
    if fn is None:
        return "-"
    if isinstance(fn, functools.partial):
        return f"partial({_code(fn.func, reader)}, {_value(fn.args, reader)}, {_value(fn.keywords, reader)})"
    code = getattr(fn, "__code__", None)
    name = f"{getattr(fn, '__module__', None)}.{getattr(fn, '__qualname__', type(fn).__qualname__)}"
    if not isinstance(code, types.CodeType) or versioned(code.co_filename):
        return name
    if isinstance(fn, types.MethodType) and isinstance(fn.__func__, types.FunctionType):
        return f"{name} {function_digest(fn.__func__, reader)} of {_value(fn.__self__, reader)}"
    if not isinstance(fn, types.FunctionType):
        return f"{name} (not a function)@{id(fn)}"  # cannot be proven in another process: never matches there
    return f"{name} {function_digest(fn, reader)}"


def _value(value: Any, reader: Reader) -> str:
    try:
        return reader(value)
    except Exception:  # noqa: BLE001 - a value no digest stands for: this process only
        return f"unreadable@{id(value)}"
