"""A target column's dynamism ledger says what its runtime did with each dim's sizes (issue 54 item 1).

The lowered program is the mode's export, whose range says [2, 64]; an AOTInductor package loaded
without input checks runs sizes past it. The target record's ledger reads the runtime's own cells
of the shapes table: the batch is unbounded *on the runtime*, measured at the sizes it ran, and bare
AOTInductor agrees (the package runs batch 65 and 1, past the declared range, and matches eager).
"""

from __future__ import annotations

import os

import pytest
import torch
from torch.export import Dim

import exportcore
from exportcore.targets import unavailable

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(unavailable("aoti") is not None, reason=str(unavailable("aoti")))]

BATCH = {"x": {0: Dim("batch", min=2, max=64)}}


class Small(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc = torch.nn.Linear(4, 3)

    def forward(self, x):
        return self.fc(x).relu()


def test_an_unchecked_aoti_package_is_unbounded_on_its_runtime_as_measured(tmp_path, monkeypatch) -> None:
    torch.manual_seed(0)
    model = Small()
    outcome = exportcore.check(model, (torch.randn(4, 4),), dynamic_shapes=BATCH, target="aoti", examples=2,
                               target_options={"check_inputs": False})
    assert outcome.status == "passed"  # out-of-range runs are a finding (reject_unguarded), not a failure
    [dim] = outcome.dims
    assert (dim.name, dim.declared, dim.exported, dim.kind) == ("batch", "[2, 64]", "[2, 64]", "unbounded")
    assert dim.checked.startswith("on the aoti runtime: took 2, 4, 64, took past the range 1, 65; ")
    assert dim.failed == ""

    # bare torch: the program refuses 65, the package loaded without input checks runs it (and 1) like eager
    ep = torch.export.export(model, (torch.randn(4, 4),), dynamic_shapes=BATCH, strict=False)
    with pytest.raises(Exception):
        ep.module()(torch.randn(65, 4))
    monkeypatch.setenv("AOTI_RUNTIME_CHECK_INPUTS", "0")
    package = torch._inductor.aoti_load_package(
        torch._inductor.aoti_compile_and_package(ep, package_path=os.path.join(tmp_path, "m.pt2")))
    for batch in (1, 65):
        x = torch.randn(batch, 4)
        with torch.no_grad():
            torch.testing.assert_close(package(x), model(x), rtol=1e-4, atol=1e-4)
