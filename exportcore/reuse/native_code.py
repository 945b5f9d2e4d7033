"""Native code no version names, by its content: a rebuilt kernel is never served the old results.

The result cache names the Python a case runs by its source (exportcore.reuse.eager_code), and torch,
its dependencies and Python by their versions. A kernel compiled in the user's tree is named by
neither: a custom op's C++ built in place (``pip install -e .``, ``torch.utils.cpp_extension.load``,
a CMake build loaded with ``torch.ops.load_library``) or a helper library a Python kernel calls
through ctypes. Rebuild it with a bug past some size and the examples (and so eager's answer and
the captured program) may not show it, while a cold run's drawn shapes would: a warm run served
the old pass. So the identity also holds the content of every code library mapped into the
process from outside torch, its dependencies, installed distributions, the Python installation
and the system's library folders. Named by file name and content, not path: a CI checkout in
another folder builds the same bytes to another place.

Code a target compiled from a program and loaded to run it (AOTInductor's ``.so``, extracted to a
temporary folder and deleted while mapped) is left out too: it is generated from a graph, not the
user's, and a library deleted while mapped can never be named by content, so every case after the
first AOTInductor column in a process would run in full (``generated()`` marks it as it loads).

Installed distributions' native code (torchvision's kernels) is left out here: which of their
libraries a process has loaded depends on which tests ran before in it, and the identity would
differ between xdist workers. It is named by version instead: the distributions whose Python eager
ran (exportcore.reuse.code_origins.distribution).
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import os
import re
import sys
from importlib.machinery import EXTENSION_SUFFIXES
from typing import Iterator

__all__ = ["native_code", "loaded_libraries", "generated"]

#: Folders of the operating system's own libraries (libc, libstdc++, libm): they change with the
#: machine's image, and a process loads them whatever its tests are.
SYSTEM_FOLDERS = ("/lib/", "/lib32/", "/lib64/", "/usr/lib/", "/usr/lib32/", "/usr/lib64/", "/usr/libexec/",
                  "/System/", "/nix/store/")


def native_code() -> str:
    """Return the native libraries the identity must name by content, as one digest ("" when there are none)."""
    from exportcore.sandbox.session_caches import active

    generated = active().generated
    return _digest(frozenset(path for path in loaded_libraries()
                             if not _named_elsewhere(path) and _undeleted(path) not in generated))


@contextlib.contextmanager
def generated() -> Iterator[None]:
    """Inside the block the engine lowers or loads a program's compiled code: what it maps is not the user's."""
    from exportcore.sandbox.session_caches import active

    marked = active().generated  # by path, " (deleted)" taken off
    before = loaded_libraries()
    try:
        yield
    finally:
        marked.update(_undeleted(path) for path in loaded_libraries() - before)


def _undeleted(path: str) -> str:
    return path.removesuffix(" (deleted)")


def _digest(paths: frozenset[str]) -> str:
    # Not cached by the paths: a file rewritten in place keeps its path; _file_digest's key holds its stat.
    if not paths:
        return ""
    parts = sorted(_content(path) for path in paths)
    return hashlib.blake2b("\n".join(parts).encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()


def loaded_libraries() -> set[str]:
    """Return the files of native code mapped into this process.

    On Linux every executable mapping (``/proc/self/maps``): extension modules, libraries they link
    and libraries loaded by ctypes or ``torch.ops.load_library`` alike. Elsewhere the extension
    modules Python imported and the libraries torch loaded.
    """
    try:
        with open("/proc/self/maps", encoding="utf-8", errors="surrogateescape") as maps:
            return set(_EXECUTABLE_FILE.findall(maps.read()))
    except OSError:
        pass
    found = {getattr(module, "__file__", None) or "" for module in list(sys.modules.values())}
    found = {path for path in found if path.endswith(tuple(EXTENSION_SUFFIXES))}
    torch = sys.modules.get("torch")
    ops = getattr(getattr(torch, "ops", None), "loaded_libraries", None) or ()
    return found | {str(path) for path in ops}


#: A line of /proc/self/maps that maps a file's code: "start-end r-xp offset dev inode   /path".
_EXECUTABLE_FILE = re.compile(r"^\S+ ..x. \S+ \S+ \S+ +(/.*)$", re.MULTILINE)


@functools.lru_cache(maxsize=4096)
def _named_elsewhere(path: str) -> bool:
    """Whether ``path`` is code the identity names otherwise: by a version, or as the machine's own."""
    if path.startswith("/memfd:"):  # anonymous memory a JIT (libffi's closures) maps as a file
        return True
    real = os.path.realpath(path.removesuffix(" (deleted)"))
    return real.startswith(_elsewhere()) or real.startswith(SYSTEM_FOLDERS)


@functools.lru_cache(maxsize=1)
def _elsewhere() -> tuple[str, ...]:
    from exportcore.reuse.code_origins import roots

    versioned, installed, stdlib, _ = roots()
    python = {os.path.join(os.path.realpath(prefix), "") for prefix in (sys.base_prefix, sys.base_exec_prefix)}
    folders = {os.path.join(os.path.realpath(folder), "") for folder in (*versioned, *installed, *stdlib)
               if not folder.startswith("<")}
    return tuple(sorted(folders | python))


def _content(path: str) -> str:
    """``name:digest`` of one library; a replaced or unreadable one is named so that it never matches."""
    name = os.path.basename(path.removesuffix(" (deleted)"))
    if path.endswith(" (deleted)"):  # rebuilt while loaded: the code running is no file's any more
        return f"{name}:replaced-in-pid-{os.getpid()}"
    try:
        stat = os.stat(path)
    except OSError:
        return f"{name}:unreadable-in-pid-{os.getpid()}"
    return f"{name}:{_file_digest(path, stat.st_size, stat.st_mtime_ns, stat.st_ino)}"


@functools.lru_cache(maxsize=256)
def _file_digest(path: str, size: int, mtime_ns: int, inode: int) -> str:
    digest = hashlib.blake2b(digest_size=16)
    try:
        with open(path, "rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
    except OSError:
        return f"unreadable-in-pid-{os.getpid()}"
    return digest.hexdigest()
