"""Finding dtype_accepted: ep.module() silently runs inputs of another dtype than it was exported for."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from exportcore.programs.execute import clone_tree
from exportcore.programs.sides import call_quiet

if TYPE_CHECKING:
    from exportcore.context import Run

__all__ = ["run"]


def run(ctx: Run) -> None:
    """Swap every floating input's dtype (float32 <-> float64, half -> float32) and call ep.module() once."""
    import torch
    import torch.utils._pytree as pytree

    program = ctx.programs["exported"]
    swap = {torch.float32: torch.float64, torch.float64: torch.float32, torch.float16: torch.float32, torch.bfloat16: torch.float32}
    changed: list[tuple[Any, Any]] = []

    def cast(t: Any) -> Any:
        if isinstance(t, torch.Tensor) and t.dtype in swap:
            changed.append((t.dtype, swap[t.dtype]))
            return t.detach().to(swap[t.dtype])
        return t

    args, kwargs = pytree.tree_map(cast, clone_tree((ctx.args, ctx.kwargs)))
    if not changed:
        return
    try:
        call_quiet(program, args, kwargs, ctx)
    except Exception:
        return
    before, after = changed[0]
    ctx.finding(
        "dtype_accepted",
        f"ep.module() silently accepted inputs of another dtype ({before} -> {after}); "
        "the program was exported for the example dtypes only",
    )
