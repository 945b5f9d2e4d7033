"""Stage serialize: torch.export.save/load round trip; the reloaded .module() joins the programs checked."""

from __future__ import annotations

import contextlib
import io
import logging
import warnings
from typing import TYPE_CHECKING, Iterator

from exportcore.reuse import shared_programs
from exportcore.diagnosis.classify import classify
from exportcore.sandbox.logged_errors import chain_logged, logged_errors
from exportcore.programs.serde_memo import memoized_parsing
from exportcore.programs.sides import compare_guards, remember

if TYPE_CHECKING:
    from exportcore.context import Run

__all__ = ["run"]


def run(ctx: Run) -> None:
    """Set ``ctx.programs["reloaded"]``."""
    import torch

    with ctx.clock.stage("serialize"):
        shared = shared_programs.take(ctx, "round_trip")
        if shared is not None:
            ctx.outcome.notes.append(
                f"save/load: this capture is the program {shared[1]} saved and loaded back unchanged (graph, ranges and "
                "tensors by value), so it was not round-tripped again; its reloaded program is this capture's, checked "
                "here this mode's way")
            remember(ctx, "reloaded", ctx.ep.module())
            ctx.same_as["reloaded"] = "exported"
            return
        try:
            buffer = io.BytesIO()
            with _tolerant_logging(), logged_errors() as logged, memoized_parsing():
                torch.export.save(ctx.ep, buffer)
                buffer.seek(0)
                loaded = torch.export.load(buffer)
                remember(ctx, "reloaded", loaded.module())
            compare_guards(ctx, "reloaded", loaded)
        except Exception as exc:
            ctx.fail(classify(chain_logged(exc, logged), "serialize"))
        same = _same(ctx.ep, loaded)
        shared_programs.keep(ctx, "round_trip", same)
        if same:
            ctx.same_as["reloaded"] = "exported"


def _same(ep: object, loaded: object) -> bool:
    """Whether the round trip gave back the exported program itself (then drawn shapes probe it once)."""
    from exportcore.reuse.identity import same_program

    try:
        return same_program(ep, loaded)
    except Exception:  # noqa: BLE001 - not known to be the same: probe both, as without the shortcut
        return False


@contextlib.contextmanager
def _tolerant_logging() -> Iterator[None]:
    # torch 2.14's load logs a malformed record (a stray '%') when it falls back from
    # weights_only for a registered dataclass/namedtuple; under pytest's log capture a bad
    # record raises (logging.raiseExceptions) and would fail a round trip that works.
    # (pytorch/pytorch#189679, fixed in 2.15: drop this part when 2.14 is no longer supported)
    previous = logging.raiseExceptions
    logging.raiseExceptions = False
    try:
        with warnings.catch_warnings():
            # torch 2.8-2.12 load weights with torch.frombuffer over a read-only archive buffer and
            # warn about it: torch's own doing, and under -W error it would fail a round trip that works.
            warnings.filterwarnings("ignore", message="The given buffer is not writable", category=UserWarning)
            yield
    finally:
        logging.raiseExceptions = previous
