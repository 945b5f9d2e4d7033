"""A user's ``inputs=`` factory in the result cache's identity: the code it runs and what it builds, as eager is named.

The drawn-shape checks run the model on what the factory builds, so a served entry must have been
made with the same factory. A function object is not the same across processes; what it does is
proven the way eager's code is (exportcore.reuse.eager_code): the factory is called once at the
examples' own shapes, under a CodeRecord (the source of every function it runs, the module
constants it reads, its closure's values as found on entry) and its inputs are taken by value.
Called with the drawn shapes' RNG seeding for the examples' assignment and the torch, Python and
numpy generators set aside, so the call is the same in every session and changes nothing the
check then draws. Functions it runs only at other shapes are named as witnesses by the drawn
shapes themselves (exportcore.checks.accept records the factory's calls).

A hypothesis strategy, a ``functools.partial`` or an object with ``__call__`` is not a function
whose code a record names: such a case is never served from disk (within one session the memory store
still compares the very object).
"""

from __future__ import annotations

import random
import sys
import types
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from exportcore.reuse.context import ReuseRun

__all__ = ["factory_identity"]


def factory_identity(run: ReuseRun) -> str | None:
    """Return the factory's part of the identity ("" without one), or None when nothing proves it the same."""
    factory = run.inputs
    if factory is None or run.spec is None:
        return ""  # no factory, or none ever called: without dynamic shapes nothing is drawn
    if not isinstance(factory, types.FunctionType):
        return None
    import torch

    from exportcore.sandbox.python_state import closure
    from exportcore.reuse.eager_code import CodeRecord
    from exportcore.sandbox.tensor_digest import values_digest
    from exportcore.shapes.synth import drawn_for

    record = CodeRecord()
    numpy = sys.modules.get("numpy")
    state = random.getstate(), numpy.random.get_state() if numpy is not None else None
    try:
        with torch.random.fork_rng(devices=[]):
            # the CPU generator alone (factories build CPU tensors): torch.manual_seed would also
            # reseed CUDA's, which fork_rng(devices=[]) does not put back
            torch.random.default_generator.manual_seed(run.seed)
            drawn = record.run(lambda: drawn_for(run.spec, run.args, run.kwargs, run.spec.example_assignment(), factory,
                                                 seed=run.seed))
    except Exception:  # noqa: BLE001 - a factory that fails here fails the drawn shapes too: nothing is served
        return None
    finally:
        random.setstate(state[0])
        if numpy is not None:
            numpy.random.set_state(state[1])
    if drawn.problem or drawn.skip:
        return None
    # the tensors its closure holds, by value: the record leaves tensors to eager's answer, and a
    # factory may read one only at shapes other than the examples' (a table of token ids past some length)
    held = [value for value in closure(factory).values() if isinstance(value, torch.Tensor)]
    code, values, tensors = record.digest(), values_digest((drawn.args, drawn.kwargs)), values_digest(held)
    if code is None or values is None or tensors is None:
        return None
    return f"factory {code} {values} {tensors}"
