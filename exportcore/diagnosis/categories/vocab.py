"""The failure categories (from exportcore.vocab) and the hints other modules quote (no torch, no rules)."""

from __future__ import annotations

from exportcore.vocab import CATEGORIES

__all__ = ["CATEGORIES", "EAGER_HINT", "ZERO_ONE"]


EAGER_HINT = "the model fails in eager mode; fix the model or the example inputs"


#: What a hint about 0/1 specialization says (exportcore.diagnosis.explain.example_size finds it there).
ZERO_ONE = "export specializes example sizes 0 and 1"
