"""Rules that pick a failure's category and one-line fix hint from a torch exception.

Each rule looks at the exception chain's class names, UserError type and message (plus the user's
source line) and either answers ``(category, hint[, stage[, case]])`` or passes; the first answer
wins, so the order of ``RULES`` below is the policy. The rules live by what they look at:
``rules_stage`` (the failing stage, declared dynamic shapes, guards, older torch's wording),
``rules_torch`` (what torch cannot trace), ``rules_python`` (Python strict export cannot trace, asserts,
the fallback). They were written against what torch raises, reproduced in tests/test_classify.py.

Importing this package does not import torch.
"""

from __future__ import annotations

from exportcore.diagnosis.categories import rules_python, rules_stage, rules_torch
from exportcore.diagnosis.categories.facts import Facts, facts, format_traceback, torch_hint
from exportcore.diagnosis.categories.vocab import CATEGORIES, EAGER_HINT, ZERO_ONE

__all__ = ["CATEGORIES", "EAGER_HINT", "ZERO_ONE", "decide", "decide_case", "format_traceback", "torch_hint"]

RULES = [
    rules_stage.by_stage, rules_python.recursion, rules_torch.host_randomness, rules_stage.constraints,
    rules_stage.older_torch, rules_stage.inputs, rules_python.escapes, rules_stage.guards, rules_torch.torch_generator,
    rules_torch.concrete_sizes_only, rules_torch.data_dependent, rules_torch.operator, rules_torch.higher_order,
    rules_torch.mutation, rules_torch.spec_violation, rules_torch.raw_data, rules_torch.fake_runtime,
    rules_python.user_assert, rules_python.user_raise, rules_python.graph_break,
]


def decide(exc: BaseException, stage: str, code: str = "", file: str = "") -> tuple[str, str, str]:
    """Return ``(category, hint, stage)`` for ``exc`` raised at ``stage``; ``code`` and ``file`` are the
    user's source line and file, where known."""
    return _decide(facts(exc, stage, code, file))[:3]  # type: ignore[return-value]


def decide_case(exc: BaseException, stage: str, code: str = "", file: str = "") -> tuple[str, str, str, str | None]:
    """Like decide(), plus the ExportDB case the rule knows: None to ask the link table, "" for none at all
    (a rule that knows no case shows the cause keeps the table from linking a look-alike message)."""
    return _decide(facts(exc, stage, code, file))


def _decide(f: Facts) -> tuple[str, str, str, str | None]:
    """Return (category, hint, stage, case); the first rule that matches wins."""
    for rule in RULES:
        found = rule(f)
        if found is not None:
            category, hint, *rest = found
            return category, hint, (rest[0] or f.stage) if rest else f.stage, rest[1] if len(rest) > 1 else None
    return (*rules_python.fallback(f), None)
