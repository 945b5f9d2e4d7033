"""Code that ran only beyond the examples, named in a cache entry so a later session can check it by source.

The result cache's identity names the code eager ran on the examples (exportcore.eager_code). The
drawn shapes and the other probes then run eager and the programs at other shapes, where a model
may call functions the examples never reach: a helper past a size threshold, a chunked path for
long inputs, a custom op's Python kernel for large sizes. Edit such a function and a cold run finds
at a drawn shape what a warm run would serve as the old pass. So every such function becomes a
witness in the entry: its module, its file (relative to the module's own, so that a CI checkout
elsewhere reads the same), its first line, the globals it reads and a digest of its source with
their values; for a function of an installed library (torchvision, transformers) also the library's
version, whose native kernels may change with every line of its Python the same. A later session is
served the entry only if every witness still describes the same, read from the source file, the
module and the installed library as they are now; one that cannot be found again (its module is
not loaded) also means a full run, never a guess.

A witness's closure cells are part of it where the function is a global of its module under its
own name (``long = make_long(LIMIT)`` in a helper module a forward imports): a later session finds
it there without calling it. Otherwise left out (the call that would show them does not happen in
the later session; a function a model attribute holds is read with the model's state), as is code
of torch, its dependencies, the standard library and this engine (named by their versions, as in
exportcore.eager_code).
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field
from typing import Any

from exportcore.code_reads import described, globals_read
from exportcore.code_origins import distribution, source_block, versioned
from exportcore.eager_code import CodeRecord
from exportcore.python_state import Reader, closure

__all__ = ["Witness", "witnesses", "hold"]


@dataclass
class Witness:
    """One function run beyond the examples: where to find it again and what it was."""

    module: str  # the ``__name__`` of the module whose globals it runs in
    file: str  # its source file, relative to the folder of that module's ``__file__``
    line: int  # its first line
    digest: str  # exportcore.code_reads.described: the source block with the globals' values
    names: list[str] = field(default_factory=list)  # the globals it reads
    #: ``name==version`` of the installed library it belongs to ("" for the user's own code): its native
    #: kernels change with the version and may leave every line of its Python the same
    version: str = ""
    #: the module global that holds it, whose closure cells the digest holds ("" when none does)
    holder: str = ""


def witnesses(later: CodeRecord, examples: CodeRecord) -> list[Witness] | None:
    """Return witnesses for what ``later`` ran and ``examples`` did not; None when one cannot be named.

    None (also when ``later`` is incomplete: another profile hook was in use) means the walk's
    results must not be stored: nothing would prove a later session ran the same code.
    """
    if not later.complete:
        return None
    reader = Reader(sys.modules.get("torch"))
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
        cells = _global_closure(globs, code.co_name, code.co_filename, code.co_firstlineno)
        found[(module, where, code.co_firstlineno)] = Witness(
            module=module, file=where, line=code.co_firstlineno, names=names,
            digest=described(source, names, globs, cells or {}, reader), version=distribution(code.co_filename) or "",
            holder=code.co_name if cells is not None else "")
    return [found[k] for k in sorted(found)]


def hold(kept: list[Witness], model: Any) -> bool:
    """Whether every witness still describes the same function, as the source and modules are now."""
    if not kept:
        return True
    homes = _homes(model)
    reader = Reader(sys.modules.get("torch"))
    for witness in kept:
        globs = homes.get(witness.module)
        if globs is None:
            module = sys.modules.get(witness.module)
            globs = vars(module) if module is not None else None
        home = globs.get("__file__") if globs is not None else None
        if not isinstance(home, str):
            return False
        filename = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(home)), witness.file))
        source = source_block(filename, witness.line)
        cells = _global_closure(globs, witness.holder, filename, witness.line) if witness.holder else {}
        if source is None or cells is None or described(source, witness.names, globs, cells, reader) != witness.digest:
            return False
        if witness.version and distribution(filename) != witness.version:
            return False
    return True


def _global_closure(globs: dict[str, Any], name: str, filename: str, line: int) -> dict[str, Any] | None:
    """The closure of the function that module global ``name`` holds, if it is the code at ``filename:line``."""
    function = globs.get(name)
    code = getattr(function, "__code__", None)
    if code is None or code.co_firstlineno != line or os.path.abspath(code.co_filename) != os.path.abspath(filename):
        return None
    found = closure(function)
    return found if found else None


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

