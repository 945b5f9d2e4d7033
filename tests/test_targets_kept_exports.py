"""The inference exports a session keeps for a case's targets are found by what the spec declares
(exportcore.targets.cache.export_key over the parsed ShapeSpec), never by how it is written."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
from torch.export import Dim  # noqa: E402

import exportcore  # noqa: E402
from exportcore.reuse.session import EngineSession  # noqa: E402
from exportcore.shapes import ShapeSpec  # noqa: E402
from exportcore.targets import unavailable  # noqa: E402
from exportcore.targets.cache import export_key  # noqa: E402


class Pair(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc = torch.nn.Linear(4, 3)

    def forward(self, x, y):
        return self.fc(x).relu() + y.sum()


def pair_case() -> tuple:
    torch.manual_seed(0)
    return Pair(), (torch.randn(4, 4), torch.randn(4, 2))


def key(spec: object) -> tuple:
    model, args = pair_case()
    return export_key("c", "non_strict", "cpu", "the capture's inputs", ShapeSpec.from_export_spec(spec, args, model=model))


def test_equal_specs_written_otherwise_have_one_key_and_another_bound_or_kind_another():
    batch = Dim("batch", min=2, max=64)
    written = [
        {"x": {0: batch}, "y": {0: batch}},
        ({0: batch}, {0: batch}),  # a tuple for the same positional inputs
        [{0: Dim("batch", min=2, max=64)}, {0: Dim("batch", min=2, max=64)}],  # a list, each Dim built again
        {"x": {0: batch, 1: None}, "y": (batch, None)},  # the static axes spelled out
    ]
    assert len({key(spec) for spec in written}) == 1
    others = [
        {"x": {0: Dim("batch", min=3, max=64)}, "y": {0: Dim("batch", min=3, max=64)}},  # repr(Dim) omits min
        {"x": {0: Dim("batch", min=2, max=63)}, "y": {0: Dim("batch", min=2, max=63)}},
        {"x": {0: Dim("n", min=2, max=64)}, "y": {0: Dim("n", min=2, max=64)}},  # another name
        {"x": {0: batch}, "y": None},  # y's batch static
        {"x": {0: Dim.AUTO}, "y": {0: Dim.AUTO}},
        {"x": {0: Dim.DYNAMIC}, "y": {0: Dim.DYNAMIC}},
    ]
    keys = [key(spec) for spec in others]
    assert len(set(keys)) == len(keys) and key(written[0]) not in keys


needs_aoti = pytest.mark.skipif(unavailable("aoti") is not None, reason=str(unavailable("aoti")))
needs_onnx = pytest.mark.skipif(unavailable("onnx") is not None, reason=str(unavailable("onnx")))


@pytest.mark.parametrize("target", [pytest.param("aoti", marks=needs_aoti), pytest.param("onnx", marks=needs_onnx)])
def test_a_target_takes_the_export_kept_under_an_equal_spec_and_not_under_another_bound(target):
    session = EngineSession(keep_exports=True)
    kept = session.exports
    model, args = pair_case()
    spec = {"x": {0: Dim("batch", min=2, max=64)}, "y": {0: Dim("batch", min=2, max=64)}}
    assert exportcore.check(model, args, dynamic_shapes=spec, case_id="c", examples=1, session=session).status == "passed"
    hits = kept.hits
    # The mode's export, kept under a dict of Dims, serves a tuple of Dims built again.
    rewritten = ({0: Dim("batch", min=2, max=64)}, {0: Dim("batch", min=2, max=64)})
    served = exportcore.check(model, args, dynamic_shapes=rewritten, target=target, case_id="c", examples=1,
                              session=session)
    assert served.status == "passed" and kept.hits == hits + 1 and "capture" not in served.timings
    # Another minimum is another export (its range differs).
    narrower = ({0: Dim("batch", min=3, max=64)}, {0: Dim("batch", min=3, max=64)})
    exported = exportcore.check(model, args, dynamic_shapes=narrower, target=target, case_id="c", examples=1,
                                session=session)
    assert exported.status == "passed" and "capture" in exported.timings and kept.hits == hits + 1
