"""tools/zoo_table.py (now the ledger's renderer over reports held in memory): a rerun's report replaces
the earlier rows of its models and says so (issue 50, items 8, 16).

Run on the committed reports: shard-1.json has timm/test_vit passing non_strict and training (the false
pass of issue 50, item 8); rerun-2026-11-29.json, made after the fix, fails them at guards.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ZOO = ROOT / "docs" / "zoo"


def _render(*names: str) -> str:
    return subprocess.run([sys.executable, str(ROOT / "tools" / "zoo_table.py"), *(str(ZOO / n) for n in names)],
                          capture_output=True, text=True, check=True).stdout


def _row(page: str, model: str) -> str:
    return next(line for line in page.splitlines() if line.startswith(f"| `{model}` |"))


def test_a_rerun_replaces_the_rows_of_its_models_whatever_the_order_given() -> None:
    for order in (("shard-1.json", "rerun-2026-11-29.json"), ("rerun-2026-11-29.json", "shard-1.json")):
        page = _render(*order)
        cells = _row(page, "timm/test_vit").split(" | ")[1:4]
        guards = "❌ `guards` `guards`"
        assert cells == ["❌ `constraints` `torch.dynamic-shape`", guards, guards], cells
        assert ("`hf/mobilebert`, `timm/test_vit`, `timm/test_vit2`, `timm/test_vit4` (12 results); "
                "their rows are from that run") in page
        assert _row(page, "timm/test_convnext3").split(" | ")[1:4] == ["✅"] * 3  # not rerun: the shard's row


def test_the_header_names_the_zoo_library_versions_each_report_recorded() -> None:
    page = _render("shard-1.json", "rerun-2026-11-29.json")
    assert ("- zoo libraries that built the models: `rerun-2026-11-29.json`: timm 1.0.31, transformers 5.24.0; "
            "not recorded by `shard-1.json` (run before reports recorded them)") in page


def _models(page: str) -> str:
    return page.split("\n## Models\n", 1)[1].split("\n## ", 1)[0]


def test_its_rows_are_the_published_rows_of_the_newest_torch() -> None:
    # The committed pages are the ledger's (tests/test_ledger.py); the script renders with the same renderer.
    page = _render(*sorted(p.name for p in ZOO.glob("*.json") if p.name.startswith(("shard-", "extra-", "rerun-"))))
    assert _models(page) == _models((ROOT / "docs" / "zoo.md").read_text(encoding="utf-8"))
