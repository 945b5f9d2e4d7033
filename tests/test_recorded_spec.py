"""A spec from the spread of recorded input sets (exportcore.spec_from_recorded), checked like a written one."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from exportcore import Case, check_case, spec_from_recorded


class Attend(nn.Module):
    """Tokens and their padding mask: the mask's length must be the tokens' length."""

    def __init__(self) -> None:
        super().__init__()
        self.proj = nn.Linear(4, 4)

    def forward(self, tokens: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        return self.proj(tokens).masked_fill(mask.unsqueeze(-1), 0.0).sum(1)


def _pair(batch: int, length: int) -> tuple[torch.Tensor, torch.Tensor]:
    generator = torch.Generator().manual_seed(batch * 100 + length)
    return torch.randn(batch, length, 4, generator=generator), torch.rand(batch, length, generator=generator) > 0.7


def _recorded() -> list[tuple]:
    return [_pair(3, 5), _pair(2, 9), _pair(6, 12)]


def test_each_varying_dim_ranges_over_the_sizes_seen_and_equal_dims_share_one() -> None:
    spec = spec_from_recorded(_pair(4, 7), _recorded())
    (tokens, mask) = spec
    assert set(tokens) == {0, 1} and set(mask) == {0, 1}  # the feature size never varies: static
    batch, length = tokens[0], tokens[1]
    assert (batch.min, batch.max, length.min, length.max) == (2, 6, 5, 12)
    assert mask[0] is batch and mask[1] is length  # equal in every set: one dim, torch's equality relation


def test_bare_torch_exports_the_spread_spec_with_exactly_those_ranges() -> None:
    args = _pair(4, 7)
    ep = torch.export.export(Attend(), args, dynamic_shapes=spec_from_recorded(args, _recorded()))
    assert sorted((r.lower, r.upper) for r in ep.range_constraints.values()) == [(2, 6), (5, 12)]


def test_the_engine_checks_the_spread_spec_with_the_recorded_sets_and_reports_the_ranges() -> None:
    args = _pair(4, 7)
    recorded = _recorded()
    case = Case(Attend(), args, dynamic_shapes=spec_from_recorded(args, recorded), recorded_inputs=recorded)
    outcome = check_case(case, "non_strict", examples=3)
    assert outcome.status == "passed", outcome.failure
    assert outcome.declared == {"d0": "[2, 6]", "d1": "[5, 12]"}
    # the program takes exactly the spread: its bounds ran, one past each was refused
    assert [(d.name, d.kind, d.exported) for d in outcome.dims] == [("d0", "dynamic", "[2, 6]"),
                                                                   ("d1", "dynamic", "[5, 12]")]


def test_keyword_inputs_are_keyed_by_forwards_parameter_names() -> None:
    tokens, mask = _pair(4, 7)
    recorded = [((t,), {"mask": m}) for t, m in _recorded()]
    spec = spec_from_recorded((tokens,), recorded, {"mask": mask}, model=Attend())
    assert set(spec) == {"tokens", "mask"} and spec["mask"][1] is spec["tokens"][1]
    with pytest.raises(TypeError, match="keyword inputs need the model"):
        spec_from_recorded((tokens,), recorded, {"mask": mask})


@pytest.mark.parametrize("bad, message", [
    ([_pair(3, 5), (torch.randn(3, 5, 4),)], r"recorded_inputs\[1\]: its inputs are not structured like the example"),
    ([(torch.randn(3, 5), torch.zeros(3, 5, dtype=torch.bool))], r"recorded_inputs\[0\]: an input is a 2-d tensor "
                                                                r"where the example's is a 3-d tensor"),
    ([], r"recorded_inputs: no recorded input set"),
])
def test_sets_no_range_can_describe_are_an_error_naming_the_set(bad, message) -> None:
    with pytest.raises(TypeError, match=message):
        spec_from_recorded(_pair(4, 7), bad)
