"""The failure categories and the hints other modules quote (no torch, no rules)."""

from __future__ import annotations

__all__ = ["CATEGORIES", "EAGER_HINT", "ZERO_ONE"]


CATEGORIES = (
    "python.control-flow", "python.data-structure", "python.builtin", "python.context-manager",
    "python.object-model", "python.closure", "python.assert", "python.standard-library",
    "torch.dynamic-shape", "torch.dynamic-value", "torch.operator", "torch.mutation",
    "torch.escape-hatch", "torch.cond", "torch.map",
    "data-dependent", "eager", "numerics", "guards", "serialization", "decomposition", "internal",
)


EAGER_HINT = "the model fails in eager mode; fix the model or the example inputs"


#: What a hint about 0/1 specialization says (exportcore.explain.example_size finds it there).
ZERO_ONE = "export specializes example sizes 0 and 1"
