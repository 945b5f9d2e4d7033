"""The code dynamo traces when torch runs a control-flow operator in eager, read from dynamo's translators.

``torch.cond`` (and while_loop, map, scan, flex_attention) in eager does not call its branches: it
hands them to ``torch.compile(..., backend="eager", fullgraph=True)``, and dynamo *traces* every
function they reach, the branch not taken too. No frame of theirs runs, so a profile hook sees
nothing of the user's code there; yet an edit to it (a branch's helper that eager takes only at
shapes past the examples) changes what a cold run finds. Dynamo builds one inlining translator per
function it traces, from that function's code object; its ``__init__`` is a frame the profile hook
does see, with the code, the globals and the function (its closure) among its arguments. That is
the record.

Two conditions make it a complete record, and each is checked, never assumed:

- the trace has to happen where the record sees it: a call whose compiled code is already in
  dynamo's cache runs that code and traces nothing. A cache entry traced while the record watched
  (or the examples' record it goes on from) may serve a call: dynamo's guards admit only calls its
  trace holds for, so the code is what the record holds. Any other entry (an earlier case's, an
  unrecorded run's) and the operator's cache is dropped (``reset_code``) before the call: it traces.
- a context that was to trace and shows no root translator (something kept dynamo from tracing)
  leaves the record incomplete, so nothing is proven and the case runs in full.

A ``torch.compile``d function of the user's is not covered: its backend may take seconds to compile
again each session, and it stays unproven (exportcore.reuse.eager_code).
"""

from __future__ import annotations

import os
import sys
import types
from typing import Any

from exportcore.sandbox.python_state import closure

__all__ = ["Translations", "unseen_by_dynamo"]

#: (code, its module's globals, its closure's values by name): what exportcore.reuse.eager_code records per function
Found = tuple[types.CodeType, dict[str, Any], dict[str, Any]]


class Translations:
    """One record's view of the compile contexts torch opens for its operators: what dynamo traced in them.

    A call that runs compiled code instead of tracing is proven only where that code was traced
    while this record (or the examples' record it goes on from) watched: its cache entries are
    kept here, and a context that finds any other entry of the operator's drops them all first, so
    that dynamo traces again where the record sees it.
    """

    def __init__(self, seen: dict[int, Found], after: Translations | None = None) -> None:
        self._seen = seen
        #: compiled code of the cache entries traced while watched (kept alive: an id is not reused)
        self._ours: dict[int, types.CodeType] = dict(after._ours) if after is not None else {}
        #: operators (by code id) a context of which was to trace and has not shown that trace yet
        self.pending: set[int] = set()
        #: dynamo's inlining and root translators' ``__init__`` and its ``_compile``, found on the first watched context
        self.inits: tuple[types.CodeType, ...] = ()

    def enter(self, fn: Any) -> types.CodeType | None:
        """The compiled code of a context around ``fn`` where it is torch's own operator, now watched; else None."""
        code = getattr(fn, "__code__", None)
        if not isinstance(code, types.CodeType) or not _operator_file(code.co_filename):
            return None
        if not self.inits:
            self.inits = _translator_inits()
            if not self.inits:
                return None
        entries = _entries(code)
        if entries is None:
            return None
        if not entries or any(id(entry) not in self._ours for entry in entries):
            if entries:
                _reset_code(code)
            self.pending.add(id(code))  # a trace must show; a context that shows none leaves it unproven
        return code

    def call(self, frame: types.FrameType) -> None:
        """A call inside a watched context: a translator's ``__init__`` names the code dynamo is about to trace."""
        code = frame.f_code
        if code is self.inits[0]:
            local = frame.f_locals
            traced, funcvar = local.get("code"), local.get("funcvar")
            if isinstance(traced, types.CodeType) and id(traced) not in self._seen:
                self._seen[id(traced)] = (traced, _globals(funcvar), _closure(funcvar, traced))
        elif code is self.inits[1]:
            traced = frame.f_locals.get("f_code")
            if isinstance(traced, types.CodeType):
                self.pending.discard(id(traced))

    def leave(self, code: types.CodeType) -> None:
        """The context around ``code`` returned: what its cache holds now was traced under watch (or was already ours)."""
        if id(code) in self.pending:
            return
        for entry in _entries(code) or ():
            self._ours[id(entry)] = entry


def _entries(code: types.CodeType) -> list[types.CodeType] | None:
    """The compiled code of each of dynamo's cache entries for ``code``; None where torch does not list them."""
    try:
        from torch._C._dynamo.eval_frame import _debug_get_cache_entry_list

        return [entry.code for entry in _debug_get_cache_entry_list(code)]
    except (ImportError, AttributeError, TypeError):
        return None


def unseen_by_dynamo(*codes: types.CodeType) -> None:
    """Keep dynamo from compiling these functions (the record's own hooks) and what they call.

    A profile function is called inside the compiled region like any frame; torch 2.15 compiles it
    (guarded on the event's name, with the operators' recompile limit off), 2.6 does not.
    """
    from exportcore.sandbox.session_caches import active

    unseen = active().unseen
    for code in codes:
        if id(code) in unseen:
            continue
        unseen[id(code)] = code
        try:
            from torch._dynamo.eval_frame import FrameAction, FrameExecStrategy, set_code_exec_strategy
        except ImportError:  # torch 2.6: the frame alone (2.6 does not compile a profile function anyway)
            from torch._C._dynamo.eval_frame import skip_code

            skip_code(code)
        else:
            set_code_exec_strategy(code, FrameExecStrategy(FrameAction.SKIP, FrameAction.SKIP))



def _translator_inits() -> tuple[types.CodeType, ...]:
    """The code of dynamo's inlining and root translators' ``__init__`` and of its ``_compile`` (the whole trace).

    Empty when they are not where expected.
    """
    translators = sys.modules.get("torch._dynamo.symbolic_convert")
    frames = sys.modules.get("torch._dynamo.convert_frame")
    try:
        return (translators.InliningInstructionTranslator.__init__.__code__,  # type: ignore[union-attr]
                translators.InstructionTranslator.__init__.__code__,  # type: ignore[union-attr]
                frames._compile.__code__)  # type: ignore[union-attr]
    except AttributeError:
        return ()


def _operator_file(filename: str) -> bool:
    """Whether ``filename`` holds torch's control-flow operators' eager wrappers (not a compiled module's ``_call_impl``)."""
    torch = sys.modules.get("torch")
    if torch is None:
        return False
    root = os.path.dirname(os.path.abspath(torch.__file__))
    return os.path.abspath(filename).startswith(tuple(os.path.join(root, *folder, "") for folder in _OPERATORS))


#: where torch compiles its operators' bodies in eager: torch.cond, while_loop, map, scan; flex_attention
_OPERATORS = (("_higher_order_ops",), ("nn", "attention"))


def _reset_code(code: types.CodeType) -> None:
    from torch._C._dynamo.eval_frame import reset_code

    reset_code(code)


def _globals(funcvar: Any) -> dict[str, Any]:
    try:
        found = funcvar.get_globals()
    except Exception:  # noqa: BLE001 - a tracker without globals of its own (a generator's): its code's module
        return {}
    return found if isinstance(found, dict) else {}


def _closure(funcvar: Any, code: types.CodeType) -> dict[str, Any]:
    """The closure's values of the function traced, where it is a real function (not one made inside the trace).

    A function defined in traced code closes over values that code computed: its source is part of
    the enclosing function's, and those values follow from what that one read.
    """
    fn = getattr(funcvar, "fn", None)
    if not code.co_freevars or not isinstance(fn, types.FunctionType) or fn.__code__ is not code:
        return {}
    return closure(fn)
