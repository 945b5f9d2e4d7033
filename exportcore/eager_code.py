"""The Python code eager ran on the examples, as a digest: what a later session must also run to be served.

A program is proven the same as a cached one by its graph, its tensors and eager's answer on the
examples. That misses code only eager runs and whose effect the examples do not show: a branch
under ``torch.compiler.is_exporting()`` (transformers has many), a custom autograd.Function, a
threshold eager checks at shapes larger than the example's. Edit such code, or upgrade the
library that holds it, and a cold run may find at a drawn shape what a warm run would serve as
the old pass. So the result cache's identity also names every Python function eager ran on the
examples, by its source, with the module constants it reads (``MAX_LEN = 512``, a config object:
exportcore.code_reads), and the environment
variables that code reads (exportcore.environ_reads). torch's own code, its dependencies, the
standard library and this engine are named by their versions already: left out.

Threads the recorded calls start (``threading.Thread``, a pool's workers) are recorded too, for
their life: a pool's worker started at the examples also runs the drawn shapes' work. Threads
already running before do not show.

Recording needs the interpreter's profile hook; when something else holds it (cProfile, a
profiler of the user's, a hook ``threading.setprofile`` installs), there is no digest and the case
is not served from or stored in the cache, never served on a guess.
"""

from __future__ import annotations

import functools
import gc
import hashlib
import inspect
import linecache
import os
import site
import sys
import sysconfig
import threading
import tokenize
import types
from typing import Any, Callable, TypeVar

from exportcore.code_reads import described, globals_read
from exportcore.environ_reads import reading
from exportcore.python_state import Reader

__all__ = ["recorded", "CodeRecord", "source_block", "versioned", "roots", "distribution", "TORCH_DEPENDENCIES"]

#: torch's own dependencies (and numpy, which it calls when present), left out like torch: the
#: identity names their versions (exportcore.result_cache.LIBRARIES). torch calls into them lazily,
#: so the first eager run of a process runs code of theirs the next finds cached (typing_extensions
#: on torch 2.6, the first backward): recording it made the first training case of every session a miss.
TORCH_DEPENDENCIES = ("typing_extensions", "sympy", "mpmath", "filelock", "jinja2", "markupsafe", "networkx",
                      "fsspec", "numpy", "optree", "triton", "setuptools")

T = TypeVar("T")


def recorded(fn: Callable[[], T]) -> tuple[T, str | None]:
    """Return ``fn()`` and a digest of the Python code it ran outside torch, the stdlib and the engine.

    The digest is None when the profile hook is taken (nothing was recorded, nothing is proven).
    """
    record = CodeRecord()
    result = record.run(fn)
    return result, record.digest()


class CodeRecord:
    """The functions one or more calls ran, as found on entry: code object, module globals, closure cells."""

    def __init__(self) -> None:
        # by id (a code object hashes its bytecode): the code, its module's globals, its closure's values
        self.seen: dict[int, tuple[types.CodeType, dict[str, Any], dict[str, Any]]] = {}
        #: False once a call ran while another profile hook was in use: what it ran is unknown
        self.complete = True
        #: the environment variables the calls read, by name: a digest of the value, None when unset
        #: (exportcore.environ_reads)
        self.environ: dict[str, str | None] = {}

    def run(self, fn: Callable[[], T]) -> T:
        """Return ``fn()``, adding the functions it ran to the record, on this thread and on threads it starts."""
        if sys.getprofile() is not None or threading.getprofile() is not None:
            self.complete = False
            return fn()
        calls = _Calls(self.seen)

        # The garbage collector runs callbacks (hypothesis registers one) and finalizers of objects
        # from anywhere, whenever it triggers: not the model's code, and not at the same moment twice.
        collecting = gc.isenabled()
        gc.disable()
        _RECORDING[:] = [calls]
        threading.setprofile(_thread_hook)  # threads started from here on (a pool's first worker too)
        sys.setprofile(calls.profile)
        try:
            with reading(self.environ, ignored=calls.ignored):
                return fn()
        finally:
            sys.setprofile(None)
            threading.setprofile(None)
            _RECORDING.clear()
            if collecting:
                gc.enable()
            if calls.traced:  # code dynamo traced instead of running: not in the record, so nothing is proven
                self.complete = False

    def merge(self, other: CodeRecord) -> None:
        """Add what ``other`` recorded (another mode's decomposition this walk takes) to this record."""
        self.seen.update(other.seen)
        self.environ.update(other.environ)
        self.complete = self.complete and other.complete

    def digest(self) -> str | None:
        """The record as one digest (None when incomplete): every function by source, constants and closure."""
        if not self.complete:
            return None
        # a set: torch.cond and friends run eager through dynamo, whose rewritten code (and resume
        # functions) stand for the same source as the original function
        reader = Reader(sys.modules.get("torch"))
        seen = list(self.seen.values())  # a worker the model started may still be adding to it
        parts = sorted({part for code, found, cells in seen if not versioned(code.co_filename)
                        for part in [_describe(code, found, cells, reader)] if part})
        # An installed library's native kernels (torchvision's, torch_scatter's) change with its version
        # and may leave every line of its Python the same: the versions of those eager ran code of.
        parts += sorted({found for code, _, _ in seen for found in [distribution(code.co_filename)]
                         if found})
        parts += sorted(f"environ {name}={value}" for name, value in self.environ.items())
        digest = hashlib.blake2b(digest_size=16)
        for part in parts:
            digest.update(part.encode("utf-8", "surrogatepass"))
        return digest.hexdigest()


class _Calls:
    """One recording's hooks: the first call of every function, on each thread it sees, machinery aside."""

    def __init__(self, seen: dict[int, tuple[types.CodeType, dict[str, Any], dict[str, Any]]]) -> None:
        self.seen = seen
        #: dynamo compiled or ran compiled code (torch.compile, torch.cond in eager): the functions it
        #: inlined never run as frames, so the record cannot name them (_dynamo_context)
        self.traced = False
        self.owner = threading.get_ident()
        # per thread, the outermost frame whose calls are not the model's (_aside)
        self.aside: dict[int, list[types.FrameType]] = {self.owner: []}
        self.hooks: dict[int, Callable[[types.FrameType, str, Any], None]] = {}
        self.profile = self._hook(self.aside[self.owner])  # the calling thread's, without a lookup per event

    def _hook(self, aside: list[types.FrameType]) -> Callable[[types.FrameType, str, Any], None]:
        seen = self.seen

        def profile(frame: types.FrameType, event: str, arg: Any) -> None:
            if aside:
                if event == "return" and frame is aside[-1]:
                    aside.pop()
                return
            if event != "call":
                return
            code = frame.f_code
            if id(code) in seen:
                return
            if _aside(code):
                context = _dynamo_context(frame)
                if context == "disable":
                    # ``torch._dynamo.disable`` (inside torch: a fake-tensor dispatch, checkpoint) runs
                    # what it wraps as frames: the user's code under it is recorded (its own code is torch's)
                    seen[id(code)] = (code, frame.f_globals, {})
                    return
                aside.append(frame)
                if context == "compile":
                    self.traced = True
            else:
                # the closure's cells as this call found them (a factory's ``limit``), before the body runs
                seen[id(code)] = (code, frame.f_globals, _cells(frame) if code.co_freevars else {})

        return profile

    def other(self, frame: types.FrameType, event: str, arg: Any) -> None:
        """An event on a thread started while a recording ran."""
        ident = threading.get_ident()
        hook = self.hooks.get(ident)
        if hook is None:
            hook = self.hooks[ident] = self._hook(self.aside.setdefault(ident, []))
        hook(frame, event, arg)

    def ignored(self, frame: types.FrameType) -> bool:
        """Whether an environment read is not the model's: on a thread not recorded, under machinery, by torch."""
        aside = self.aside.get(threading.get_ident())
        return aside is None or bool(aside) or _read_by_torch(frame)


#: the recording now running, if any (one at a time: a nested one finds the profile hook taken)
_RECORDING: list[_Calls] = []


def _thread_hook(frame: types.FrameType, event: str, arg: Any) -> None:
    """The profile hook of a thread started while a recording ran, for the thread's life.

    A worker the model starts (``threading.Thread``, a ``ThreadPoolExecutor``'s, which starts
    them on the first ``submit``) runs model code the calling thread's hook never sees; a pool's
    workers outlive the call that started them and run the next call's work too: their calls
    join whichever recording is running then. Threads that already ran before the first
    recording (a pool started and used at import) are not seen: documented in docs/how-it-works.md.
    """
    if _RECORDING:
        _RECORDING[0].other(frame, event, arg)


def _read_by_torch(frame: types.FrameType | None) -> bool:
    """Whether the code that read an environment variable is torch's, its dependencies' or the engine's.

    The stdlib frames a read passes through (``os.getenv``, ``Mapping.get``) are skipped: the
    reader is the first frame past them.
    """
    _, installed, stdlib, _ = roots()
    while frame is not None:
        filename = frame.f_code.co_filename
        if not (filename.startswith("<frozen ") or filename.startswith(stdlib) and not filename.startswith(installed)):
            return versioned(filename)
        frame = frame.f_back
    return True


def _aside(code: types.CodeType) -> bool:
    """Whether what runs under this frame is machinery, not the model: an import, or dynamo compiling.

    A module's body runs where it is first imported, which depends on what ran before in the
    process; dynamo (torch.cond and the other control-flow operators compile their bodies even in
    eager) calls into sympy in an order that follows string hashing, different in every process.
    Neither is the model's behaviour, and recording them would make every digest a new one.
    """
    # (a module body has a file; ``eval``/``exec`` of a string in forward is the model's own, its
    # calls are recorded)
    return code.co_name == "<module>" and not code.co_filename.startswith("<string") \
        or code.co_filename.startswith(roots()[3])


def _dynamo_context(frame: types.FrameType) -> str | None:
    """``"compile"`` where this frame turns dynamo on for what it calls, ``"disable"`` where it turns it off.

    On: a ``torch.compile``d function or module, ``torch.cond`` and the other control-flow
    operators in eager, which compile their bodies. Dynamo traces the functions such a call reaches
    instead of running them (and runs the compiled code on later calls): they never show as
    frames, so an edit to one (a branch taken only at shapes past the examples) would leave the
    record the same. Off: ``torch._dynamo.disable``, whose wrapped code runs as frames.
    """
    code = frame.f_code
    if "self" not in code.co_freevars or not code.co_filename.endswith(_EVAL_FRAME):
        return None
    kinds = [cls.__name__ for cls in type(_cells(frame).get("self")).__mro__]
    if "DisableContext" in kinds:
        return "disable"
    return "compile" if "_TorchDynamoContext" in kinds else None


_EVAL_FRAME = os.path.join("_dynamo", "eval_frame.py")


def _describe(code: types.CodeType, found: dict[str, Any], cells: dict[str, Any], reader: Reader) -> str:
    """One function: its source (nested functions too), the module constants it names and its closure, by value.

    By source, not bytecode: dynamo's rewritten bytecode differs from process to process; and
    not by file name or line: moving a function changes neither what it does nor the verdict.
    Code with no source file (generated ``__init__``, an FX graph's forward) comes from code that
    has one, or from a graph whose code is its own identity: it adds nothing.
    """
    source = source_block(code.co_filename, code.co_firstlineno)
    if source is None:
        return ""
    return described(source, globals_read(code), found, cells, reader)


def _cells(frame: types.FrameType) -> dict[str, Any]:
    try:
        local = frame.f_locals
        return {name: local[name] for name in frame.f_code.co_freevars if name in local}
    except Exception:  # noqa: BLE001 - an empty cell, a frame proxy that refuses: nothing to add
        return {}


def source_block(filename: str, line: int) -> str | None:
    """The source block of the function that starts at ``line`` of ``filename``, None without one."""
    try:
        stamp = os.stat(filename).st_mtime_ns
    except OSError:
        return None
    key = (filename, line)
    kept = _SOURCES.get(key)
    if kept is not None and kept[0] == stamp:
        return kept[1]
    if stamp != _STAMPS.get(filename):  # edited since linecache read it (a session that edits a model)
        linecache.checkcache(filename)
        _STAMPS[filename] = stamp
    lines = linecache.getlines(filename)
    if not 0 < line <= len(lines):
        return None
    try:
        block = "".join(inspect.getblock(lines[line - 1:]))
    except (IndentationError, SyntaxError, tokenize.TokenError):
        return None
    _SOURCES[key] = (stamp, block)
    return block


_SOURCES: dict[tuple[str, int], tuple[int, str]] = {}
_STAMPS: dict[str, int] = {}


def versioned(filename: str) -> bool:
    """Whether code in ``filename`` is named by a version the identity holds: torch's, the stdlib's, the engine's."""
    versioned, installed, stdlib, _ = roots()
    if filename.startswith(versioned):
        return True
    # site-packages may sit inside the stdlib's folder (a Python without a virtualenv): libraries there
    # (transformers, timm, torchvision) are versioned by nothing the identity holds.
    return filename.startswith(stdlib) and not filename.startswith(installed)


def distribution(filename: str) -> str | None:
    """``name==version`` of the installed distribution ``filename`` belongs to (by its top-level package), or None."""
    _, installed, _, _ = roots()
    for folder in installed:
        if filename.startswith(folder) and not versioned(filename):
            top = filename[len(folder):].split(os.sep, 1)[0]
            return _top_level_version(top.removesuffix(".py"))
    return None


@functools.lru_cache(maxsize=None)
def _top_level_version(top: str) -> str | None:
    # The distribution named like its package (torchvision, transformers, timm, torch_scatter) first; a
    # package named otherwise (PIL: pillow, cv2: opencv-python, sklearn: scikit-learn) through the table
    # of every installed distribution's packages, read once per process and only when needed (0.1-0.2 s).
    from importlib.metadata import PackageNotFoundError, version

    try:
        return f"{top}=={version(top)}"
    except (PackageNotFoundError, ValueError):
        pass
    found = []
    for name in sorted(set(_owners().get(top, ()))):  # several for a namespace package (google)
        try:
            found.append(f"{name}=={version(name)}")
        except (PackageNotFoundError, ValueError):
            continue
    return ",".join(found) or None


@functools.lru_cache(maxsize=1)
def _owners() -> dict[str, list[str]]:
    from importlib.metadata import packages_distributions

    try:
        return dict(packages_distributions())
    except Exception:  # noqa: BLE001 - a broken installed distribution's metadata: no name for these
        return {}


def _location(name: str) -> str:
    """Where top-level package ``name`` lives (its folder, or its file for a single module), "" if nowhere."""
    import importlib.util

    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return ""
    if spec is None:
        return ""
    if spec.submodule_search_locations:
        return os.path.join(os.path.abspath(list(spec.submodule_search_locations)[0]), "")
    return os.path.abspath(spec.origin) if spec.origin and os.path.isabs(spec.origin) else ""


@functools.lru_cache(maxsize=1)
def roots() -> tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...], tuple[str, ...]]:
    """Return the folders (versioned: torch's, its dependencies', the engine's; installed; stdlib; machinery)."""
    import torch

    def folders(*paths: str) -> tuple[str, ...]:
        return tuple(sorted({os.path.join(os.path.abspath(p), "") for p in paths if p}))

    torch_root = os.path.dirname(os.path.abspath(torch.__file__))
    siblings = [os.path.join(os.path.dirname(torch_root), name) for name in ("functorch", "torchgen")]
    dependencies = tuple(sorted(found for found in map(_location, TORCH_DEPENDENCIES) if found))
    versioned = folders(torch_root, *siblings, os.path.dirname(os.path.abspath(__file__))) + dependencies + (
        "<frozen ",)
    paths = sysconfig.get_paths()
    installed = folders(paths["purelib"], paths["platlib"], *site.getsitepackages(), site.getusersitepackages())
    # "<frozen importlib": the import system calls the finders installed on sys.meta_path
    machinery = folders(os.path.join(torch_root, "_dynamo"), os.path.join(torch_root, "_inductor")) + (
        "<frozen importlib",)
    return versioned, installed, folders(paths["stdlib"], paths["platstdlib"]), machinery
