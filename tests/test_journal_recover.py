"""A journal recovered into a report keeps what its session said about the run: its shard."""

from __future__ import annotations

import subprocess
import sys

from exportcore.codec import encode
from pytest_export.results.journal import Journal, recover
from pytest_export.results.schema import Scope


def test_a_crashed_shards_report_is_recovered_as_that_shard(tmp_path) -> None:
    # `merge` tells a missing shard from a present one by the shard each report names: a CI shard whose
    # session died must still name its own, or the merged run calls the split unknown.
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True,
                          text=True, check=True)
    journal = Journal(tmp_path / "r.json.journal", {"pid": int(dead.stdout)})
    scope = encode(Scope(shard=[2, 3]), "scope")
    journal.append({"scope": {**scope, "selected": [["test_m.py::test_a", "strict"]]}})
    journal.close(remove=False)
    report, _ = recover(journal.path)
    assert report.scope.shard == [2, 3]
    assert not report.complete and report.scope.not_run == {("test_m.py::test_a", "strict")}
