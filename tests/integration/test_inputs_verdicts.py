"""End to end: verdicts about a case's inputs and names hold in a real pytest session (issue 20)."""

from __future__ import annotations

import json
import os

import pytest

# A test module whose file name is not valid UTF-8 (b"\xe9": latin-1 "é"). Python holds it as a
# surrogate-escaped str ("\udce9"); the model lives in a UTF-8 module, because torch itself cannot
# export code whose file name it cannot encode (its traceback symbolizer refuses the name).
NON_UTF8_TEST = b'''
import pytest
from models import lin_case

@pytest.mark.exportable(modes=["strict", "non_strict"])
def test_lin():
    return lin_case()
'''


def test_a_test_file_with_a_non_utf8_name_is_checked_like_any_other(project: pytest.Pytester, records) -> None:
    name = os.fsencode(project.path) + b"/test_caf\xe9.py"
    try:
        with open(name, "wb") as f:
            f.write(NON_UTF8_TEST)
    except (OSError, UnicodeError) as exc:  # a filesystem that holds only UTF-8 names
        pytest.skip(f"the filesystem refuses a non-UTF-8 file name: {exc}")
    # pytest's own cache plugin cannot write such a node id (its JSON file is strict UTF-8): off.
    result = project.runpytest("-q", "-p", "no:cacheprovider", "--export-report=r.json", "--export-report=r.html", "--export-report=r.md")
    got = {(r["case"], r["mode"]): r["verdict"] for r in records()["records"]}
    case = "test_caf\\udce9.py::test_lin"  # records keep every text encodable: the byte is spelled out
    assert got == {(case, "strict"): "passed", (case, "non_strict"): "passed"}, result.stdout.str()
    result.assert_outcomes(passed=2)
    report = json.loads((project.path / "r.json").read_text())
    assert sorted(r["verdict"] for r in report["records"]) == ["passed", "passed"]
    assert "test_caf" in (project.path / "r.md").read_text()
    assert "test_caf" in (project.path / "r.html").read_text()


def test_a_shapes_collection_returned_by_a_test_passes(project: pytest.Pytester, verdicts) -> None:
    # README: ShapesCollection is supported. It is keyed by the identity of the returned tensors.
    project.makepyfile(test_collection="""
        import pytest
        import torch
        from torch.export import Dim, ShapesCollection
        from exportcore import Case

        class Add(torch.nn.Module):
            def forward(self, x, y):
                return x + y

        @pytest.mark.exportable(modes=["strict", "non_strict"])
        def test_add():
            x, y = torch.randn(4, 3), torch.randn(4, 3)
            shapes = ShapesCollection()
            batch = Dim("batch", min=2, max=8)
            shapes[x] = {0: batch}
            shapes[y] = {0: batch}
            return Case(Add(), (x, y), dynamic_shapes=shapes)
    """)
    result = project.runpytest("-q")
    assert set(verdicts().values()) == {"passed"}, result.stdout.str()
    result.assert_outcomes(passed=2)
