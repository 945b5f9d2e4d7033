"""A drawn shape on which eager's outputs are entirely NaN/inf checks nothing; a factory that builds such inputs is broken.

The comparison holds NaN equal to NaN where the positions agree (so that a model whose outputs hold
a few NaN is judged on the rest), so on outputs that are NaN everywhere any program that also
returns NaN everywhere "matches": a wrong model passes. An ``inputs=`` factory that builds all-NaN
inputs does exactly that at every drawn shape. The test, as for a factory whose inputs eager
rejects (exportcore.shapes.blame): eager runs on the example inputs resized to the same shapes. If
its outputs are finite there, the factory is to blame (an input error naming it); if they are not,
the model itself answers NaN at that shape, and the shape is simply not counted as a check.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from exportcore.context import Run

__all__ = ["NOT_COUNTED", "nothing_to_compare", "blame_factory"]

#: The discard message of a drawn shape whose eager outputs are entirely non-finite (read back by accept).
NOT_COUNTED = "eager's outputs are entirely NaN/inf there: comparing them checks nothing"


def nothing_to_compare(outputs: Any) -> bool:
    """Whether every value of ``outputs`` that could tell two programs apart is NaN or inf.

    Only floating and complex tensors with at least one element count as values; an integer or
    bool tensor, or a Python number, compares exactly and still checks something.
    """
    import torch
    from torch.utils._pytree import tree_leaves

    floats = 0
    for leaf in tree_leaves(outputs):
        if isinstance(leaf, torch.Tensor):
            if not leaf.numel():
                continue
            if not (leaf.dtype.is_floating_point or leaf.dtype.is_complex) or leaf.layout != torch.strided:
                return False  # exact values, or a layout whose stored values are not all there is
            if bool(torch.isfinite(leaf.detach()).any()):
                return False
            floats += 1
        elif isinstance(leaf, (bool, int, str)) or (isinstance(leaf, float) and leaf == leaf and abs(leaf) != float("inf")):
            return False
    return floats > 0


def eager_on_resized_examples(ctx: Run, args: tuple, kwargs: dict) -> Any:
    """Eager's outputs on the example inputs resized to the shapes of ``args``/``kwargs`` (a user's inputs).

    What tells a user's ``inputs=`` apart from the declared range: eager refusing the resized
    examples too is the range's matter; taking them (or answering finitely) puts the inputs at fault.
    Raises what eager raises; the model is reset afterwards either way.
    """
    import torch

    from exportcore.shapes.parse import input_paths
    from exportcore.shapes.synth import input_shapes, synthesize
    from exportcore.programs.sides import prepare, run_side

    examples = dict(input_paths(ctx.args, ctx.kwargs))
    shapes = {p: s for p, s in input_shapes(args, kwargs).items()
              if isinstance(examples.get(p), torch.Tensor) and len(s) == examples[p].dim()}
    try:
        resized = synthesize(ctx.args, ctx.kwargs, shapes, seed=ctx.seed)
        return run_side(ctx, ctx.model, *resized).outputs
    finally:
        prepare(ctx)


def factory_name(ctx: Run) -> str:
    """How the failure text names the user's ``inputs=``."""
    from hypothesis.strategies import SearchStrategy

    return "inputs strategy" if isinstance(ctx.inputs, SearchStrategy) else "inputs factory"


def blame_factory(ctx: Run, args: tuple, kwargs: dict) -> str:
    """Return why the user's ``inputs=`` is to blame for eager's all-non-finite outputs on ``args``/``kwargs``
    ("" when there is no factory or the example inputs resized to those shapes give no finite output either)."""
    from exportcore.shapes.synth import input_shapes

    if ctx.inputs is None:
        return ""
    drawn = input_shapes(args, kwargs)
    try:
        if nothing_to_compare(eager_on_resized_examples(ctx, args, kwargs)):
            return ""
    except Exception:  # noqa: BLE001 - eager refuses the resized examples: nothing shows the factory at fault
        return ""
    who = factory_name(ctx)
    where = ", ".join(f"{p}={list(s)}" for p, s in drawn.items())
    found = _nonfinite_inputs(args, kwargs)
    why = "; ".join(found) if found else "its values"
    return (f"{who}: eager's outputs are entirely NaN/inf on the {who}'s inputs at the drawn shapes {where}, but"
            f" finite on the example inputs resized to those shapes ({why}): NaN compared with NaN checks nothing,"
            " so no drawn shape could tell a wrong program from eager")


def _nonfinite_inputs(args: tuple, kwargs: dict) -> list[str]:
    """Say which floating inputs hold NaN or inf, and how many of their elements do."""
    import torch

    from exportcore.shapes.parse import input_paths

    out = []
    for path, value in input_paths(args, kwargs):
        if isinstance(value, torch.Tensor) and value.layout == torch.strided and value.numel() \
                and (value.dtype.is_floating_point or value.dtype.is_complex):
            bad = int((~torch.isfinite(value.detach())).sum())
            if bad:
                out.append(f"{path} holds NaN/inf at {bad} of {value.numel()} elements")
    return out
