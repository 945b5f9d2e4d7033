"""The Python code eager ran on the examples, as a digest: what a later session must also run to be served.

A program is proven the same as a cached one by its graph, its tensors and eager's answer on the
examples. That misses code only eager runs and whose effect the examples do not show: a branch
under ``torch.compiler.is_exporting()`` (transformers has many), a custom autograd.Function, a
threshold eager checks at shapes larger than the example's. Edit such code, or upgrade the
library that holds it, and a cold run may find at a drawn shape what a warm run would serve as
the old pass. So the result cache's identity also names every Python function eager ran on the
examples, by its source, with the module constants it reads (``MAX_LEN = 512``, a config object:
exportcore.reuse.code_reads), and the environment
variables that code reads (exportcore.reuse.environ_reads). torch's own code, its dependencies, the
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
import logging
import os
import sys
import threading
import types
from typing import Any, Callable, TypeVar

from exportcore.reuse.code_origins import distribution, harness, roots, source_block, versioned
from exportcore.reuse.code_reads import described, globals_read
from exportcore.reuse.environ_reads import reading
from exportcore.sandbox.python_state import Reader
from exportcore.reuse.traced_code import Translations, unseen_by_dynamo

__all__ = ["recorded", "CodeRecord"]

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

    def __init__(self, after: CodeRecord | None = None) -> None:
        """``after``: the record of the examples this one goes on from (exportcore.reuse.traced_code.Translations)."""
        # by id (a code object hashes its bytecode): the code, its module's globals, its closure's values
        self.seen: dict[int, tuple[types.CodeType, dict[str, Any], dict[str, Any]]] = {}
        #: what dynamo traced for torch's own operators (torch.cond in eager): recorded, not unknown
        self.translations = Translations(self.seen, after.translations if after is not None else None)
        #: False once a call ran while another profile hook was in use: what it ran is unknown
        self.complete = True
        #: the environment variables the calls read, by name: a digest of the value, None when unset
        #: (exportcore.reuse.environ_reads)
        self.environ: dict[str, str | None] = {}

    def run(self, fn: Callable[[], T]) -> T:
        """Return ``fn()``, adding the functions it ran to the record, on this thread and on threads it starts."""
        if sys.getprofile() is not None or threading.getprofile() is not None:
            self.complete = False
            return fn()
        calls = _Calls(self.seen, self.translations)

        # The garbage collector runs callbacks (hypothesis registers one) and finalizers of objects
        # from anywhere, whenever it triggers: not the model's code, and not at the same moment twice.
        collecting = gc.isenabled()
        gc.disable()
        from exportcore.sandbox.session_caches import active

        recording = active().recording
        recording[:] = [calls]
        # threads started from here on (a pool's first worker too)
        threading.setprofile(functools.partial(_thread_hook, recording))
        sys.setprofile(calls.profile)
        try:
            with reading(self.environ, ignored=calls.ignored):
                return fn()
        finally:
            sys.setprofile(None)
            threading.setprofile(None)
            recording.clear()
            if collecting:
                gc.enable()
            # code dynamo traced instead of running, unseen (a torch.compile'd helper), or an operator's
            # trace that never showed: not in the record, so nothing is proven
            if calls.traced or self.translations.pending:
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

    def __init__(self, seen: dict[int, tuple[types.CodeType, dict[str, Any], dict[str, Any]]],
                 translations: Translations) -> None:
        self.seen = seen
        self.translations = translations
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

        translations = self.translations
        # while torch's operator runs (its compile wrapper is aside[0]): the translators' and dynamo's
        # compile's code, and the operator's code. The model's own code that runs as frames there is
        # recorded as any call is: what the compiled branch runs (a custom op's Python kernel, a
        # function ``allow_in_graph`` keeps whole) and what dynamo runs while it traces (an
        # ``assume_constant_result`` function, a fake kernel). A logging handler that dynamo's
        # messages reach and the test harness's callbacks are not the model's: whether they run
        # depends on what the process logged before.
        watched: list[tuple[tuple[types.CodeType, ...], types.CodeType]] = []
        tracing: list[types.FrameType] = []
        machinery: set[int] = set()  # code under a watched context that is not the model's

        def profile(frame: types.FrameType, event: str, arg: Any) -> None:
            if aside:
                if event == "return":
                    if frame is aside[-1]:
                        aside.pop()
                        if watched and not aside:
                            tracing.clear()
                            translations.leave(watched.pop()[1])
                    elif tracing and frame is tracing[-1]:
                        tracing.pop()
                elif watched and event == "call" and len(aside) == 1:
                    code = frame.f_code
                    inits = watched[0][0]
                    if code in inits:
                        if code is inits[2]:
                            tracing.append(frame)
                        else:
                            translations.call(frame)
                    elif id(code) in seen or id(code) in machinery:
                        pass
                    elif code.co_name == "<module>" or code.co_filename.startswith(_IMPORTING):
                        aside.append(frame)  # an import (a finder, a module's body): where, depends on the process
                    elif code.co_filename.endswith(_EVAL_FRAME):
                        if _dynamo_context(frame) == "compile":  # a compile inside (the model's own, or an
                            self.traced = True  # operator a kernel calls): traced where no record watches
                    elif code.co_filename.startswith("<") or _aside(code) or versioned(code.co_filename) \
                            or harness(code.co_filename):
                        # (code without a file: dynamo's guards, generated methods; it adds nothing to a digest)
                        machinery.add(id(code))
                    elif not (tracing and _logged(frame, tracing[-1])):
                        # the model's: run by the compiled branch, or by dynamo while it traces (an
                        # ``assume_constant_result`` function, a fake kernel)
                        seen[id(code)] = _entry(frame)
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
                    unseen_by_dynamo(profile.__code__, _thread_hook.__code__, _Calls.other.__code__)
                    operator = translations.enter(_cells(frame).get("fn"))
                    if operator is not None:
                        watched.append((translations.inits, operator))
                    else:
                        self.traced = True
            else:
                # the closure's cells as this call found them (a factory's ``limit``), before the body runs
                seen[id(code)] = _entry(frame)

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


def _thread_hook(recording: list[_Calls], frame: types.FrameType, event: str, arg: Any) -> None:
    """The profile hook of a thread started while a recording ran, for the thread's life.

    A worker the model starts (``threading.Thread``, a ``ThreadPoolExecutor``'s, which starts
    them on the first ``submit``) runs model code the calling thread's hook never sees; a pool's
    workers outlive the call that started them and run the next call's work too: their calls
    join whichever recording is running then. Threads that already ran before the first
    recording (a pool started and used at import) are not seen: documented in docs/how-it-works.md.
    """
    if recording:  # the session's recording now running, if any (one at a time: a nested one finds the hook taken)
        recording[0].other(frame, event, arg)


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


def _logged(frame: types.FrameType, tracing: types.FrameType) -> bool:
    """Whether ``frame`` runs for the logging module (a handler, a record's formatting), below dynamo's ``tracing``."""
    caller = frame.f_back
    while caller is not None and caller is not tracing:
        if caller.f_code.co_filename.startswith(_LOGGING):
            return True
        caller = caller.f_back
    return False


_LOGGING = os.path.join(os.path.dirname(os.path.abspath(logging.__file__)), "")
_IMPORTING = "<frozen importlib"


def _entry(frame: types.FrameType) -> tuple[types.CodeType, dict[str, Any], dict[str, Any]]:
    """What the record keeps of a call: its code, its module's globals, its closure's values as found on entry.

    The closure only of code no version names (the digest reads no other's): holding the cells of
    torch's own frames kept its tracing state alive past the capture (aot_autograd's ``_to_fun``
    memo of functional tensors), and torch 2.6's decomposition then saw a buffer mutated by a
    value requiring gradients in a program that has none (tests/integration/test_verdicts_e2e.py's
    KV cache).
    """
    code = frame.f_code
    keep = code.co_freevars and not versioned(code.co_filename)
    return code, frame.f_globals, _cells(frame) if keep else {}


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
