"""Check output metadata: what a program returns has the shapes and dtypes its graph declares.

The graph's output node carries ``meta["val"]``, computed by the ops' fake/meta kernels during
export. AOTInductor and ExecuTorch plan buffers from it, but nothing in torch.export compares it
with what the kernels return: a custom op whose fake kernel claims ``[4, 4]`` while its kernel
returns ``[4]`` exports, runs and equals eager (eager runs the same kernel), and breaks only in
the runtime that trusted the metadata. Symbolic sizes are evaluated against the call's input
sizes (the placeholders' symbols bound to them); a size that stays symbolic (an unbacked one) is
not compared. Rank and dtype are always compared.
"""

from __future__ import annotations

from typing import Any


__all__ = ["contradiction"]

def contradiction(program: Any, args: tuple, kwargs: dict, outputs: Any) -> str | None:
    """Return how ``outputs`` (``program(*args, **kwargs)``) contradict its graph's output metadata, or None.

    None too when the program has no graph or its outputs cannot be matched to the graph's leaves.
    """
    import torch
    from torch.utils._pytree import keystr, tree_flatten_with_path, tree_leaves

    graph = getattr(program, "graph", None)
    if not isinstance(graph, torch.fx.Graph):
        return None
    output = next((n for n in reversed(graph.nodes) if n.op == "output"), None)
    if output is None:
        return None
    declared = tree_leaves(output.args)
    try:
        actual = [(keystr(path), value) for path, value in tree_flatten_with_path(outputs)[0]]
    except ValueError:
        # an output type registered without flatten_with_keys_fn, which export accepts: by position
        actual = [(f" leaf {i}", value) for i, value in enumerate(tree_leaves(outputs))]
    if len(declared) != len(actual):
        return None  # the module's own output spec rearranged them: nothing to pair safely
    bindings = _bindings(program, graph, args, kwargs)
    for node, (path, value) in zip(declared, actual):
        val = node.meta.get("val") if isinstance(node, torch.fx.Node) else None
        if not isinstance(val, torch.Tensor) or not isinstance(value, torch.Tensor):
            continue
        where = f"output{path} (graph node {node.name}{_made_by(node)})"
        if val.dtype != value.dtype:
            return f"{where}: the graph declares dtype {val.dtype}, the program returned {value.dtype}"
        sizes = [_concrete(size, bindings) for size in val.shape]
        shown = [str(s) if c is None else c for s, c in zip(val.shape, sizes)]
        if val.dim() != value.dim() or any(c is not None and c != n for c, n in zip(sizes, value.shape)):
            return f"{where}: the graph declares shape {shown}, the program returned {list(value.shape)}"
    return None



def _made_by(node: Any) -> str:
    target = getattr(node, "target", None)
    return f" = {target}" if node.op == "call_function" and target is not None else ""


def _bindings(program: Any, graph: Any, args: tuple, kwargs: dict) -> dict[Any, Any]:
    """Return torch symbol -> the size the call's inputs give it, from the graph's placeholders."""
    import sympy
    import torch
    from torch.utils._pytree import tree_leaves

    placeholders = [n for n in graph.nodes if n.op == "placeholder"]
    info = getattr(getattr(graph, "_codegen", None), "pytree_info", None)
    try:
        if info is not None and info.in_spec is not None:
            import torch.fx._pytree as fx_pytree

            leaves = fx_pytree.tree_flatten_spec((args, kwargs), info.in_spec)
        else:
            leaves = tree_leaves((args, kwargs))
    except Exception:  # noqa: BLE001 - inputs that do not match the spec: only static sizes are compared
        return {}
    if len(leaves) != len(placeholders):
        return {}
    bound: dict[Any, Any] = {}
    for node, leaf in zip(placeholders, leaves):
        val = node.meta.get("val")
        if isinstance(val, torch.Tensor) and isinstance(leaf, torch.Tensor) and val.dim() == leaf.dim():
            pairs = list(zip(val.shape, leaf.shape))
        elif isinstance(val, torch.SymInt) and isinstance(leaf, int):
            pairs = [(val, leaf)]
        else:
            continue
        for size, got in pairs:
            expr = size.node.expr if isinstance(size, torch.SymInt) else None
            if expr is not None and expr.is_Symbol:
                bound[expr] = sympy.Integer(int(got))
    return bound


def _concrete(size: Any, bindings: dict[Any, Any]) -> int | None:
    import torch

    if not isinstance(size, torch.SymInt):
        return int(size)
    expr = size.node.expr
    if not expr.free_symbols <= set(bindings):
        return None  # unbacked, or a symbol no input gives: not compared
    try:
        return int(expr.xreplace(bindings))
    except (TypeError, ValueError):
        return None
