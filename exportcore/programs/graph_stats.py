"""What an exported program's graph looks like: node count, op histogram, code (for the report)."""

from __future__ import annotations

from typing import Any

from exportcore.outcome import GraphStats

__all__ = ["graph_stats"]

_GRAPH_CODE_LIMIT = 40_000


def graph_stats(ep: Any) -> GraphStats:
    """Return node count, call_function op histogram and code of an exported program."""
    hist: dict[str, int] = {}
    count = 0
    for node in ep.graph.nodes:
        count += 1
        if node.op == "call_function":
            # OpOverloads print as "aten.mm.default"; plain callables by their name.
            is_op = hasattr(node.target, "_overloadpacket")
            name = str(node.target) if is_op else getattr(node.target, "__name__", str(node.target))
            hist[name] = hist.get(name, 0) + 1
    try:
        code = ep.graph_module.code
    except Exception:  # pragma: no cover - code generation is best effort
        code = ""
    if len(code) > _GRAPH_CODE_LIMIT:
        code = code[:_GRAPH_CODE_LIMIT] + "\n# ... truncated ..."
    return GraphStats(node_count=count, op_histogram=dict(sorted(hist.items())), code=code.strip())
