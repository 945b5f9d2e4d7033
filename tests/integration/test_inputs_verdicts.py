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
    # docs/reference.md: ShapesCollection is supported. It is keyed by the identity of the returned tensors.
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


UNCHECKED_MODELS = '''
import torch
from torch.export import Dim
from exportcore import Case


class EagerTakesFourOnly(torch.nn.Module):
    def forward(self, x):
        if not torch.compiler.is_exporting() and x.shape[0] != 4:
            raise ValueError("this model takes a batch of 4")
        return x * 2


class Embed(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = torch.nn.Embedding(10, 4)

    def forward(self, ids):
        return self.emb(ids)


def out_of_vocabulary(shapes, rng):
    return (torch.randint(100, 200, shapes["args[0]"]),), {}


def unchecked_case():
    return Case(EagerTakesFourOnly(), (torch.randn(4, 3),), dynamic_shapes={"x": {0: Dim("b", min=2, max=8)}})


def broken_factory_case():
    return Case(Embed(), (torch.arange(20).reshape(4, 5) % 10,), dynamic_shapes={"ids": {0: Dim("b", min=2, max=8)}},
                inputs=out_of_vocabulary)
'''


@pytest.mark.skipif(not hasattr(__import__("torch").compiler, "is_exporting"), reason="needs torch.compiler.is_exporting")
def test_a_pass_that_checked_no_drawn_shape_says_so_in_the_terminal_and_every_report(project, records) -> None:
    project.makepyfile(inputmodels=UNCHECKED_MODELS, test_unchecked="""
        import pytest
        from inputmodels import unchecked_case

        @pytest.mark.exportable(modes=["non_strict"])
        def test_four_only():
            return unchecked_case()
    """)
    result = project.runpytest("-q", "--export-report=r.json", "--export-report=r.html", "--export-report=r.md")
    result.assert_outcomes(passed=1)
    out = result.stdout.str()
    assert "unchecked: 1 passed without checking any drawn shape (the example inputs only):" in out
    assert "0 of 2 drawn shapes checked: eager rejected 2 (first: ValueError: this model takes a batch of 4)" in out
    (record,) = records()["records"]
    assert "no_shape_checked" in [f["kind"] for f in record["outcome"]["findings"]]
    report = json.loads((project.path / "r.json").read_text())
    assert "no_shape_checked" in [f["kind"] for f in report["records"][0]["outcome"]["findings"]]
    assert "✅ passed · no drawn shape checked" in (project.path / "r.md").read_text()
    assert "no drawn shape checked" in (project.path / "r.html").read_text()


def test_a_factory_whose_inputs_eager_rejects_is_an_input_error_not_a_pass(project, records) -> None:
    project.makepyfile(inputmodels=UNCHECKED_MODELS, test_factory="""
        import pytest
        from inputmodels import broken_factory_case

        @pytest.mark.exportable(modes=["non_strict"])
        def test_embed():
            return broken_factory_case()
    """)
    result = project.runpytest("-q")
    result.assert_outcomes(errors=1)
    (record,) = records()["records"]
    assert record["verdict"] == "error"
    failure = record["outcome"]["failure"]
    assert (failure["stage"], failure["category"], failure["exc_type"]) == ("input", "input", "InputFactoryError")
    assert ("inputs factory: eager rejects the inputs factory's inputs at the drawn shapes args[0]=[2, 5] "
            "(IndexError: index out of range in self)") in failure["message"]
    assert "export error in non_strict: stage input, category input" in result.stdout.str()
    assert "hint: build inputs the model accepts, like the examples" in result.stdout.str()
