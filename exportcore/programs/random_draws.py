"""Which programs draw random numbers the way eager does, so that their values can be compared with eager's.

Every side runs from the same torch seed, so a program that keeps eager's random ops draws the same numbers
and must match it. A decomposition may rewrite them: torch 2.6's core-ATen table turns ``aten.bernoulli.p``
(dropout, stochastic depth) into ``aten.rand`` + ``aten.lt``, which consume the generator differently, so
the decomposed program of a correct training graph differs from eager in every element. That is not a wrong
program: its values are simply not comparable, and comparing them would blame a model that is fine. Such a
program still runs and is compared (a crash, an output-metadata contradiction or another shape still
fails); only a difference in values is not held against it, and the outcome says so.
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from exportcore.programs.context import ProgramRun
    from exportcore.outcome import Failure

__all__ = ["redrawn", "seeded_ops"]


def seeded_ops(program: Any) -> Counter[str]:
    """Count the ops of ``program``'s graph that draw from torch's seeded RNG (tag ``nondeterministic_seeded``).

    Attention with ``dropout_p=0`` is tagged but draws nothing: not counted (_no_dropout).
    """
    import torch

    counts: Counter[str] = Counter()
    graph = getattr(program, "graph", None)
    if not isinstance(graph, torch.fx.Graph):
        return counts
    for node in graph.nodes:
        if node.op == "call_function" and torch.Tag.nondeterministic_seeded in getattr(node.target, "tags", ()) \
                and not _no_dropout(node):
            counts[str(node.target)] += 1
    return counts


def _no_dropout(node: Any) -> bool:
    """Whether ``node`` is an attention op called with ``dropout_p=0``: tagged as seeded, it draws nothing then.

    ``aten.scaled_dot_product_attention`` and its fused kernels carry the tag whatever their
    ``dropout_p``, and decomposition rewrites them into matmul and softmax: counted, every
    attention model's decomposed program would be excused from matching eager's values.
    """
    schema = getattr(node.target, "_schema", None)
    names = [arg.name for arg in getattr(schema, "arguments", ())]
    if "dropout_p" not in names:
        return False
    at = names.index("dropout_p")
    if "dropout_p" in node.kwargs:
        value = node.kwargs["dropout_p"]
    elif at < len(node.args):
        value = node.args[at]
    else:
        value = schema.arguments[at].default_value
    # a symbolic or traced probability may be anything at run time: counted
    return isinstance(value, (int, float)) and not isinstance(value, bool) and value == 0


def redrawn(ctx: ProgramRun, label: str, failure: Failure | None) -> str | None:
    """Return why ``failure``, a value mismatch of program ``label``, says nothing about that program (a note),
    or None when it stands.

    It says nothing when the program draws random numbers with other ops than the exported program, which
    keeps the model's own random ops (and is compared with eager as usual): a stage rewrote them. A program
    that matches eager anyway, or differs in anything but values, is judged as usual.
    """
    if failure is None or failure.exc_type not in ("ValueMismatch", "NonfiniteMismatch"):
        return None
    program, exported = ctx.programs.get(label), ctx.programs.get("exported")
    if label == "exported" or program is None or exported is None:
        return None
    mine, theirs = seeded_ops(program), seeded_ops(exported)
    if mine == theirs:
        return None
    def names(c: Counter[str]) -> str:
        return ", ".join(f"{op} x{n}" for op, n in sorted(c.items())) or "none"
    return (f"the {label} program draws random numbers with other ops than the exported program ({names(theirs)}"
            f" -> {names(mine)}: this torch's decomposition rewrote them), so it cannot draw what eager draws: its"
            " outputs differ from eager's in value and that is not held against it; the exported program matched")
