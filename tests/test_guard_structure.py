"""The reject check probes a decomposed or reloaded program too unless its input checks are proven ep.module()'s."""

from __future__ import annotations

import io

import pytest
import torch
from torch import nn
from torch.export import Dim

import exportcore
from exportcore.reuse import identity
from exportcore.reuse.identity import guard_structure
from exportcore.reuse.session import EngineSession

ROWS = {"x": {0: Dim("n", min=2, max=64)}}


class Scaled(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return (x * 2).relu()


class MappedColumns(nn.Module):
    """torch's decomposition of map over a transposed input adds a guard (rows != 3, the column count)."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        from torch._higher_order_ops.map import map as operator_map

        return operator_map(lambda column: column * 2 + 1, x.t()).t()


def _programs(model: nn.Module) -> dict[str, object]:
    ep = torch.export.export(model, (torch.randn(8, 3),), dynamic_shapes=ROWS)
    buffer = io.BytesIO()
    torch.export.save(ep, buffer)
    buffer.seek(0)
    return {"exported": ep, "decomposed": ep.run_decompositions(), "reloaded": torch.export.load(buffer)}


def _accepted(program: object) -> list[bool]:
    accepted = []
    for rows in (1, 2, 3, 5, 64, 65):
        try:
            program.module()(torch.randn(rows, 3))
            accepted.append(True)
        except Exception:  # noqa: BLE001 - a guard refusing the input
            accepted.append(False)
    return accepted


@pytest.mark.parametrize("model", [Scaled, MappedColumns])
def test_programs_with_equal_guard_structures_refuse_the_same_inputs(model) -> None:
    programs = _programs(model())
    exported = programs.pop("exported")
    for label, program in programs.items():
        if _accepted(program) != _accepted(exported):
            assert guard_structure(program) != guard_structure(exported), label
    if model is Scaled:  # nothing to tell apart: the reject check probes ep.module() alone
        assert all(guard_structure(program) == guard_structure(exported) for program in programs.values())


def test_a_program_whose_input_checks_are_not_proven_the_exported_ones_is_probed_out_of_range_too(monkeypatch) -> None:
    x = torch.randn(8, 3, generator=torch.Generator().manual_seed(0))
    alone = exportcore.check(Scaled(), (x,), dynamic_shapes=ROWS, mode="non_strict", case_id="a",
                             session=EngineSession(reuse=False))
    # no two programs proven to check their inputs alike: the decomposed and reloaded ones are probed as well
    monkeypatch.setattr(identity, "guard_structure", lambda ep: str(id(ep)))
    probed = exportcore.check(Scaled(), (x,), dynamic_shapes=ROWS, mode="non_strict", case_id="b",
                              session=EngineSession(reuse=False))
    assert alone.status == probed.status == "passed"
    assert alone.examples.rejected > 0
    assert probed.examples.rejected == 3 * alone.examples.rejected
