"""exportcore.register_mode: a user's mode joins the built-ins, and never takes a target column's name."""

from __future__ import annotations

import pytest

pytest.importorskip("torch")

import torch  # noqa: E402

from exportcore import check  # noqa: E402
from exportcore import modes as modes_module  # noqa: E402
from exportcore.modes import Mode, get_mode, mode_names, register_mode  # noqa: E402


@pytest.fixture(autouse=True)
def _registry(monkeypatch):
    monkeypatch.setattr(modes_module, "_REGISTRY", dict(modes_module._REGISTRY))


def test_a_registered_mode_is_checked_like_a_builtin():
    mode = Mode("eval_strict", strict=True, training=False, description="mine")
    register_mode(mode)
    register_mode(Mode("eval_strict", strict=True, training=False, description="mine"))  # same: a no-op
    assert mode_names()[-1] == "eval_strict" and get_mode("eval_strict") == mode
    outcome = check(torch.nn.Linear(3, 2), (torch.randn(2, 3),), mode="eval_strict")
    assert outcome.passed, outcome.failure


def test_another_definition_under_a_taken_name_is_refused():
    with pytest.raises(ValueError, match="already registered with another definition"):
        register_mode(Mode("strict", strict=False, training=False))


@pytest.mark.parametrize(("name", "what"), [("aoti", "a target's name"), ("onnx", "a target's name"),
                                            ("fast-cuda", "a device column's name")])
def test_a_target_or_device_column_name_is_refused(name, what):
    with pytest.raises(ValueError, match=f"mode {name!r} is {what}"):
        register_mode(Mode(name, strict=False, training=False))
    assert name not in mode_names()
