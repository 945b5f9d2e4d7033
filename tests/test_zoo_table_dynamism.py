"""tools/zoo_table.py's dynamism column and option rescue, from a fresh small report of real checks (issue 54).

The committed zoo reports predate the ledger and the rescue (their column says "not recorded",
tests/test_zoo_table.py renders them); here three tiny models are checked by the engine, written
as a zoo report and rendered: a batch kept dynamic over 2..8, a batch declared from 1 whose example
is 1 (torch specializes it: rescued by ``backed_size_oblivious``), and a broadcast that needs 4 rows
(no option rescues it). Each verdict is bare torch.export's (below).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from torch.export import Dim

import exportcore
from pytest_export.results.records import Record
from pytest_export.rendering.zoo_rates import rate_html, rate_lines
from pytest_export.results.report import build_report, load_report, report_document

_config = pytest.importorskip("torch.fx.experimental._config")
pytestmark = pytest.mark.skipif(not hasattr(_config, "backed_size_oblivious"),
                                reason="this torch has no backed_size_oblivious option (torch 2.6)")

ROOT = Path(__file__).resolve().parents[1]


class Doubles(torch.nn.Module):
    def forward(self, x):
        return x * 2


class BatchSum(torch.nn.Module):
    def forward(self, x):
        return (x * 2).sum(0)


class FourRows(torch.nn.Module):
    def forward(self, x):
        return x + torch.ones(4, 1)  # broadcasts only for 4 rows (or 1): the model needs that size


CASES = {  # model name -> (model, example, spec)
    "doubles": (Doubles(), torch.randn(3, 4), {"x": {0: Dim("batch", min=2, max=8)}}),
    "batch_sum": (BatchSum(), torch.randn(1, 4), {"x": {0: Dim("batch", min=1, max=8)}}),
    "four_rows": (FourRows(), torch.randn(4, 8), {"x": {0: Dim("batch", max=64)}}),
}


def _report(path: Path) -> None:
    records = []
    for name, (model, x, spec) in CASES.items():
        outcome = exportcore.check(model, (x,), dynamic_shapes=spec, mode="non_strict")
        case = f"zoo/toy/{name}"
        records.append(Record.make(f"{case}[non_strict]", case, "non_strict", outcome.status, outcome))
    path.write_text(json.dumps(report_document(build_report(records))), encoding="utf-8")


def _row(page: str, model: str) -> list[str]:
    line = next(line for line in page.splitlines() if line.startswith(f"| `{model}` |"))
    return [cell.strip() for cell in line.split(" | ")[1:]]


def test_the_zoo_table_shows_each_models_ledger_and_rescue(tmp_path: Path) -> None:
    _report(tmp_path / "shard-1.json")
    page = subprocess.run([sys.executable, str(ROOT / "tools" / "zoo_table.py"), str(tmp_path / "shard-1.json")],
                          capture_output=True, text=True, check=True).stdout
    # the page is the ledger's (pytest_export.ledger.pages): the modes the reports hold, then dynamism, then inputs
    assert "| model | non_strict | dynamism (what the program took) | inputs and dynamic dims (inferred) |" in page
    assert _row(page, "toy/doubles")[:2] == ["✅", "batch 2..8 ✓"]
    sum_row = _row(page, "toy/batch_sum")
    assert sum_row[0].startswith("❌ `constraints`") and sum_row[0].endswith("; rescued by backed_size_oblivious (verified)")
    assert sum_row[1] == "batch 1..8 → 1 ✗"  # torch fixed it to the example's 1
    four_row = _row(page, "toy/four_rows")
    assert four_row[0].startswith("❌") and four_row[0].endswith("; no option rescues")
    assert four_row[1] == "batch 0..64 → 4 ✗"
    assert "not recorded" not in page.split("## Models", 1)[1]
    records = load_report(tmp_path / "shard-1.json").records  # the terminal's and the HTML's rates say the same
    assert "<th>dynamic dims</th>" in rate_html(records) and "<td>2 specialized · 1 dynamic</td>" in rate_html(records)
    assert [line.split() for line in rate_lines(records)[1:3]] == [
        ["family", "models", "non_strict", "dynamic", "dims"], ["toy", "3", "1/3", "33%", "2", "specialized", "·", "1",
                                                                "dynamic"]]

    # bare torch agrees: the batch stays dynamic over 2..8; 1 is refused unless torch reasons size-obliviously
    ep = torch.export.export(Doubles(), (torch.randn(3, 4),), dynamic_shapes=CASES["doubles"][2], strict=False)
    for batch in (2, 8):
        torch.testing.assert_close(ep.module()(torch.ones(batch, 4)), torch.full((batch, 4), 2.0))
    with pytest.raises(Exception, match="batch"):
        torch.export.export(BatchSum(), (torch.randn(1, 4),), dynamic_shapes=CASES["batch_sum"][2], strict=False)
    with _config.patch(backed_size_oblivious=True):
        torch.export.export(BatchSum(), (torch.randn(1, 4),), dynamic_shapes=CASES["batch_sum"][2], strict=False)
    # and the broadcast refuses every batch but 4, whatever the option
    for option in ({}, {"backed_size_oblivious": True}):
        with _config.patch(**option), pytest.raises(Exception, match="batch"):
            torch.export.export(FourRows(), (torch.randn(4, 8),), dynamic_shapes=CASES["four_rows"][2], strict=False)
