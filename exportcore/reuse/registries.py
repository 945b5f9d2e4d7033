"""What torch's registries hold outside torch, as one digest: part of the whole proof (exportcore.reuse.whole).

A walk served after capture runs eager and the capture, so a kernel a registry hands out shows up in
what they ran. A walk served whole runs neither: a fake kernel registered anew for the same op
(``register_fake`` in a conftest), another real kernel, another decomposition in torch's table or
another pytree node's functions would go unseen, since the old functions still exist unchanged
where they are defined. So the whole key holds what each registry maps to now, outside torch:

- custom ops (``torch.library.custom_op``): their real kernels per device, fake kernel, autograd
  and vmap functions; and every op's fake kernel in torch's simple registry (``register_fake`` on
  an op defined with ``Library.define``);
- the decompositions a project puts in torch's table (exportcore.reuse.program_code);
- every pytree node registered outside torch (its flatten, unflatten and serialization functions);
- the ops of libraries outside torch given a Python kernel with ``Library.impl``, with where each
  was registered (the dispatcher keeps the function, not Python: a kernel swapped for another at
  the same line of the same file is told apart by its code only where the walk ran it).

Each function is named by its code, defaults, closure and the values of the globals it reads
(exportcore.reuse.code_reads.function_digest), torch's own by name (its version is in the key).
"""

from __future__ import annotations

import hashlib
import sys
from typing import Any

__all__ = ["registries_digest"]


def registries_digest() -> str:
    """A digest of the kernels, decompositions and pytree nodes torch's registries hold outside torch."""
    from exportcore.reuse.code_witnesses import _functions
    from exportcore.reuse.program_code import _code, _decompositions, _torchs
    from exportcore.sandbox.python_state import Reader

    reader = Reader(sys.modules.get("torch"))
    parts = [f"decompositions {_decompositions()}"]
    # torch's own ops are registered as its modules are imported, which depends on what ran before
    # in the process: only the entries outside torch, or a walk's key would depend on the test order
    for kind, found in (("op", _custom_ops()), ("fake", _fake_kernels())):
        for name, fn in found:
            # torch wraps a kernel (a device check, ``_disable_dynamo``): the user's functions it holds
            users = [f for f in _functions(fn) if not _torchs(f)] if callable(fn) else [fn] if fn else []
            parts += [f"{kind} {name}: {_code(f, reader)}" if callable(f) else f"{kind} {name}: {f}" for f in users]
    parts += [f"pytree {name}: {_code(fn, reader)}" for name, fn in _pytree_nodes()]
    parts += [f"impl {site}" for site in _python_kernels()]
    return hashlib.blake2b("\n".join(sorted(parts)).encode("utf-8", "surrogatepass"), digest_size=20).hexdigest()


def _custom_ops() -> list[tuple[str, Any]]:
    try:
        from torch._library.custom_ops import OPDEFS
    except ImportError:
        return []
    found = []
    for name, opdef in list(OPDEFS.items()):
        found.append((f"{name}.init", getattr(opdef, "_init_fn", None)))
        for device, fn in sorted(getattr(opdef, "_backend_fns", {}).items(), key=lambda kv: str(kv[0])):
            found.append((f"{name}.{device}", fn))
        for field in ("_abstract_fn", "_setup_context_fn", "_backward_fn", "_vmap_fn"):
            found.append((f"{name}.{field}", getattr(opdef, field, None)))
        autocast = getattr(opdef, "_autocast_dtype", {})
        if autocast:
            found.append((f"{name}.autocast", repr(sorted(map(repr, autocast.items())))))
    return found


def _fake_kernels() -> list[tuple[str, Any]]:
    try:
        from torch._library.simple_registry import singleton
    except ImportError:
        return []
    found = []
    for name, entry in list(getattr(singleton, "_data", {}).items()):
        kernel = getattr(getattr(entry, "fake_impl", None), "kernel", None)
        if kernel is not None:
            found.append((name, getattr(kernel, "func", kernel)))
    return found


def _pytree_nodes() -> list[tuple[str, Any]]:
    import torch.utils._pytree as pytree

    from exportcore.sandbox.python_state import opaque_module

    serialized = getattr(pytree, "SUPPORTED_SERIALIZED_TYPES", {})
    found = []
    for typ, node in list(pytree.SUPPORTED_NODES.items()):
        if opaque_module(getattr(typ, "__module__", None)):
            continue
        name = f"{typ.__module__}.{typ.__qualname__}"
        for part in ("flatten_fn", "unflatten_fn", "flatten_with_keys_fn"):
            found.append((f"{name}.{part}", getattr(node, part, None)))
        for part in ("to_dumpable_context", "from_dumpable_context"):
            found.append((f"{name}.{part}", getattr(serialized.get(typ), part, None)))
    return found


def _python_kernels() -> list[str]:
    """``NS/OP/KEY FILE:LINE`` for each Python kernel registered with ``Library.impl`` from outside torch."""
    import torch

    from exportcore.reuse.code_origins import versioned

    try:
        from torch.library import _keep_alive
    except ImportError:
        return []
    sites = []
    for library in list(_keep_alive):
        if getattr(library, "ns", None) in ("aten", "prims"):  # torch's own, by the thousand: its version names them
            continue
        for impl in sorted(getattr(library, "_op_impls", ()) or ()):
            op, _, key = impl.rpartition("/")
            try:
                dump = torch._C._dispatch_dump(op.replace("/", "::", 1))
            except Exception:  # noqa: BLE001 - an op the dispatcher no longer lists: its name alone
                dump = ""
            where = [line.split("registered at ", 1)[1].split(" ", 1)[0]
                     for line in dump.splitlines() if line.startswith(f"{key}: registered at ")]
            if where and versioned(where[0].rsplit(":", 1)[0]):
                continue
            sites.append(f"{impl} {' '.join(where)}")
    return sites
