"""A non-strict export that specializes a declared-dynamic dim names the line of the user's code.

Strict export names it from dynamo's frame; non-strict raises from torch's solver with only torch's
own reference-op line, so the failure said nothing of where (the README promises "the line of your
code"). The engine finds it by running the failing export once more with torch's shape-guard log.
"""

from __future__ import annotations

import inspect
import logging

import pytest
import torch
from torch.export import Dim

import exportcore


class Reshape4(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.lin = torch.nn.Linear(32, 2)

    def forward(self, x):
        flat = x.reshape(4, -1)  # the batch fixed to 4
        return self.lin(flat)


class Fine(torch.nn.Module):
    def forward(self, x):
        return x.reshape(x.shape[0], -1).sum(1)


LINE = inspect.getsourcelines(Reshape4.forward)[1] + 1
SPEC = {"x": {0: Dim("batch", max=64)}}


@pytest.mark.parametrize("mode", ["non_strict", "training", "strict"])
def test_the_failure_names_the_users_line(mode: str) -> None:
    outcome = exportcore.check(Reshape4(), (torch.randn(4, 8, 4),), dynamic_shapes=SPEC, mode=mode, examples=0)
    failure = outcome.failure
    assert outcome.status == "failed" and failure.stage == "constraints", failure
    assert failure.source is not None, failure.headline()
    assert (failure.source.line, failure.source.function) == (LINE, "forward")
    assert failure.source.file.endswith("test_specialization_site.py")
    assert "x.reshape(4, -1)" in failure.source.code


def test_looking_leaves_torchs_log_as_it_was(caplog: pytest.LogCaptureFixture) -> None:
    logger = logging.getLogger("torch.fx.experimental.symbolic_shapes")
    before = (logger.level, logger.propagate, list(logger.handlers))

    def decisions() -> int:
        return sum(1 for r in caplog.records if r.name == logger.name and "set_replacement" in r.getMessage())

    with caplog.at_level(logging.INFO):  # a user who asked for torch's INFO log
        with pytest.raises(Exception):
            torch.export.export(Reshape4(), (torch.randn(4, 8, 4),), dynamic_shapes=SPEC, strict=False)
        bare = decisions()
        caplog.clear()
        exportcore.check(Reshape4(), (torch.randn(4, 8, 4),), dynamic_shapes=SPEC, mode="non_strict", examples=0)
        # the user sees the capture's log as bare torch prints it, and nothing of the second look
        assert decisions() == bare
    assert (logger.level, logger.propagate, list(logger.handlers)) == before


def test_a_passing_model_runs_no_second_export() -> None:
    outcome = exportcore.check(Fine(), (torch.randn(4, 8, 4),), dynamic_shapes=SPEC, mode="non_strict", examples=0)
    assert outcome.status == "passed" and outcome.failure is None


def test_no_line_is_named_where_the_specializing_code_is_not_the_users() -> None:
    # torch's own modules fix the batch to 8: the only user frame on the stack is this test's call of
    # check(), which is not where the model specialized; the failure names no line rather than that one
    model = torch.nn.Sequential(torch.nn.Unflatten(0, (4, 2)), torch.nn.Flatten(0, 1))
    outcome = exportcore.check(model, (torch.randn(8, 3),), dynamic_shapes={"input": {0: Dim("batch", max=64)}},
                               mode="non_strict", examples=0)
    assert outcome.status == "failed" and outcome.failure.stage == "constraints", outcome.failure
    assert "constant (8)" in outcome.failure.message
    assert outcome.failure.source is None, outcome.failure.source
