"""A bounded spec from the spread of recorded input sets: each varying dim ranges over the sizes seen.

``torch.export.AdditionalInputs`` infers which dims vary but leaves them unbounded (``Dim.DYNAMIC``):
the program is then promised, and checked, at sizes no recorded input ever had. A deployment
engineer holding the inputs a model really sees usually means "these sizes, and what lies between":
``spec_from_recorded`` declares exactly that, so the drawn shapes stay inside what was seen, the
guards are checked against it and the dynamism ledger says what torch made of each range.

Rules, each visible in the spec it returns (print it, or read the record's declared ranges):

- an axis whose size is the same in the example and every set is static (None);
- a varying axis gets a named ``Dim`` over [smallest, largest] seen; axes whose sizes are equal in the
  example and in every set share one Dim (torch's equality relation: the attention mask's length is
  the tokens' length);
- no other relation is inferred (``s1 = 2*s0``): such an axis gets its own Dim, and torch's constraint
  solver then reports the relation with the spec it suggests, as for a hand-written spec;
- a lower bound of 0 or 1 is kept as seen: torch specializes a backed dim at its example size 0 or 1,
  and the verdict says so (``backed_size_oblivious`` is the rescue the engine tries).

Sets whose structure differs from the example's (another number of inputs, a tensor where the
example has a scalar, another rank) raise TypeError naming ``recorded_inputs[i]``: no range can
describe them.
"""

from __future__ import annotations

import inspect
from typing import Any

__all__ = ["spec_from_recorded"]


def spec_from_recorded(args: tuple, recorded: Any, kwargs: dict[str, Any] | None = None,
                       model: Any = None) -> Any:
    """Return a ``dynamic_shapes`` for ``args``/``kwargs`` whose ranges are the spread of ``recorded``.

    ``recorded``: what ``Case.recorded_inputs`` takes (a list of input tuples or ``(args, kwargs)``
    pairs, a ``torch.export.AdditionalInputs``, a ``torch.onnx.InputObserver``). Positional inputs
    only: a tuple, one entry per input. With keyword inputs: a dict keyed by ``model.forward``'s
    parameter names (``model`` is then required), as torch.export takes it.
    """
    import torch
    from torch.export import Dim
    from torch.utils import _pytree as pytree

    from exportcore.case import RECORDED_INPUTS as FIELD
    from exportcore.case import recorded_sets

    kwargs = dict(kwargs or {})
    sets = recorded_sets(recorded)
    if not sets:
        raise TypeError(f"{FIELD}: no recorded input set to take a spread from")
    example_leaves, structure = pytree.tree_flatten((tuple(args), kwargs))
    columns: list[list[Any]] = [[leaf] for leaf in example_leaves]
    for index, (set_args, set_kwargs) in enumerate(sets):
        leaves, other = pytree.tree_flatten((tuple(set_args), dict(set_kwargs)))
        if other != structure:
            raise TypeError(f"{FIELD}[{index}]: its inputs are not structured like the example's "
                            f"({other} against {structure}): no range describes them")
        for column, leaf, first in zip(columns, leaves, example_leaves):
            if isinstance(first, torch.Tensor) != isinstance(leaf, torch.Tensor) or (
                    isinstance(first, torch.Tensor) and first.dim() != leaf.dim()):
                raise TypeError(f"{FIELD}[{index}]: an input is {_kind(leaf)} where the example's is {_kind(first)}")
            column.append(leaf)
    dims: dict[tuple[int, ...], Any] = {}  # sizes across the example and the sets -> their shared Dim
    specs = []
    for column in columns:
        if not isinstance(column[0], torch.Tensor):
            specs.append(None)
            continue
        axes = {}
        for axis in range(column[0].dim()):
            sizes = tuple(int(t.shape[axis]) for t in column)
            if len(set(sizes)) == 1:
                continue
            if sizes not in dims:
                dims[sizes] = Dim(f"d{len(dims)}", min=min(sizes), max=max(sizes))
            axes[axis] = dims[sizes]
        specs.append(axes or None)
    spec_args, spec_kwargs = pytree.tree_unflatten(specs, structure)
    if not spec_kwargs:
        return tuple(spec_args)
    if model is None:
        raise TypeError("spec_from_recorded: keyword inputs need the model (its forward's parameter names)")
    names = list(inspect.signature(getattr(model, "forward", model)).parameters)
    keyed = dict(zip(names, spec_args))
    keyed.update(spec_kwargs)
    return keyed


def _kind(value: Any) -> str:
    dim = getattr(value, "dim", None)
    return f"a {dim()}-d tensor" if callable(dim) else f"a {type(value).__name__}"
