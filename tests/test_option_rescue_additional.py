"""The AdditionalInputs rescue: a spec torch.export.AdditionalInputs infers from inputs at the declared bounds.

Two inputs added elementwise, declared with two independent dims: bare torch refuses the spec (the
dims must be equal), neither config option changes that, and the spec AdditionalInputs infers from
inputs at the bounds (``Dim.DYNAMIC`` on both: torch finds the equality itself) exports a program
equal to eager over the range. The code the rescue prints is that spec, and it works pasted.
"""

from __future__ import annotations

import pytest
import torch
from torch.export import Dim

import exportcore
from exportcore.diagnosis.explain.rescue import ADDITIONAL_INPUTS, export_config

pytestmark = pytest.mark.skipif(not hasattr(torch.export, "AdditionalInputs"),
                                reason="this torch has no torch.export.AdditionalInputs (torch 2.6)")


class Adds(torch.nn.Module):
    def forward(self, x, y):
        return x + y


SPEC = ({0: Dim("a", max=64)}, {0: Dim("b", max=64)})
ARGS = (torch.randn(4, 3), torch.randn(4, 3))


def test_two_dims_that_must_be_equal_are_rescued_by_the_inferred_spec_verified() -> None:
    with pytest.raises(Exception, match="must always be equal"):  # bare torch refuses the user's spec
        torch.export.export(Adds(), ARGS, dynamic_shapes=SPEC)

    outcome = exportcore.check(Adds(), ARGS, dynamic_shapes=SPEC, mode="non_strict", examples=3)
    assert (outcome.status, outcome.failure.stage) == ("failed", "constraints")
    rescue = outcome.explanation.rescue
    assert (rescue.status, rescue.option, rescue.tried[-1]) == ("verified", ADDITIONAL_INPUTS, ADDITIONAL_INPUTS)
    assert all(reason.startswith("still failed at constraints") for reason in rescue.reasons.values())
    assert "dynamic_shapes = {'x': (Dim.DYNAMIC, None), 'y': (Dim.DYNAMIC, None)}" in rescue.code

    written = {"Dim": Dim}
    exec(rescue.code.splitlines()[1], written)  # the line a user pastes, exported by bare torch
    ep = torch.export.export(Adds(), ARGS, dynamic_shapes=written["dynamic_shapes"])
    for rows in (2, 5, 64):
        x, y = torch.randn(rows, 3), torch.randn(rows, 3)
        torch.testing.assert_close(ep.module()(x, y), x + y)


def test_additional_inputs_is_no_export_config_option() -> None:
    # the option changes the spec, not torch's config: the marker's export_config= refuses it by name
    with pytest.raises(ValueError, match="export_config: 'additional_inputs' is not an option"):
        with export_config({ADDITIONAL_INPUTS: True}):
            pass
