"""``python -m pytest_export explain`` on a report made before the ledger: it says the ledger is not recorded.

docs/zoo/rerun-2026-11-29.json (committed) declares batch and seq for every model and holds no
ledger and no option rescue: explain must say the first and invent neither.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.machinery

REPORT = Path(__file__).resolve().parents[1] / "docs" / "zoo" / "rerun-2026-11-29.json"


def test_explain_says_a_report_without_a_ledger_did_not_record_it(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "pytest_export", "explain", str(REPORT), "--rootdir", str(tmp_path)],
                          capture_output=True, text=True, timeout=300)
    out = done.stdout
    assert out.startswith("explaining zoo/") and "  recorded dynamism: not recorded in this report\n" in out
    assert "recorded option rescue" not in out and "recorded dynamism (" not in out
    assert done.returncode == 2  # the zoo's items are not under tmp_path: pytest finds nothing to re-run
