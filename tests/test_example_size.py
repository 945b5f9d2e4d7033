"""0/1 specialization (issue 20 point 13): an example of size 0 or 1 on a dynamic dim is the example's fault.

Real exports: the failure names the example (not "the model fixes batch to 1"), links the ExportDB
case, and the verified fix is the same spec with an example of size 2, never a static pin to 0/1.
"""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
from torch.export import Dim  # noqa: E402

import exportcore  # noqa: E402
from exportcore.diagnosis.classify import classify  # noqa: E402
from exportcore.diagnosis.explain.example_size import pins_example_size  # noqa: E402


class Double(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * 2


class FixesOne(torch.nn.Module):
    """A model that really needs batch 1: an example of size 2 fails in eager."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.reshape(1, 4) * 2


@pytest.mark.parametrize("size", [0, 1])
@pytest.mark.parametrize("dim", ["named", "auto"])
def test_example_of_size_0_or_1_is_diagnosed_and_fixed_by_the_example(size: int, dim: str) -> None:
    spec = {"x": {0: Dim("batch", max=64) if dim == "named" else Dim.AUTO}}
    out = exportcore.check(Double(), (torch.randn(size, 4),), dynamic_shapes=spec, mode="non_strict")
    assert out.status == "failed"
    failure = out.failure
    assert "fixes" not in failure.hint
    assert f"is {size}: export specializes example sizes 0 and 1" in failure.hint
    assert "use an example of size >= 2" in failure.hint
    assert failure.exportdb_case == "example_size_one_specializes"
    fix = out.explanation.fix
    assert fix.status == "verified"
    assert fix.changes == [f"args[0].shape[0] ({'batch' if dim == 'named' else 'Dim.AUTO'}): example size {size} -> 2"
                           " (change the example input)"]
    assert "static" not in fix.dynamic_shapes and ": 1}" not in fix.dynamic_shapes and ": 0}" not in fix.dynamic_shapes
    # the fix is what it says: the same spec exports and passes from an example of size 2
    again = exportcore.check(Double(), (torch.randn(2, 4),), dynamic_shapes=spec, mode="non_strict")
    assert again.status == "passed"


def test_a_static_pin_to_the_example_size_is_never_the_verified_fix() -> None:
    # The model does need size 1 here; still, exporting with the dim pinned to 1 proves nothing the
    # example did not already force, so the pin is shown as a suggestion, with why.
    out = exportcore.check(FixesOne(), (torch.randn(1, 4),), dynamic_shapes={"x": {0: Dim("batch", max=64)}},
                           mode="non_strict")
    assert out.failure.stage == "constraints"
    fix = out.explanation.fix
    assert fix.status == "suggested"
    assert "pins a dim to its example size (0 or 1)" in fix.reason
    assert "an example of size 2 did not pass either" in fix.reason


class FixesSeq(torch.nn.Module):
    """Fixes its second dim to 16 (a real constraint) while the example's batch of 1 specializes the first."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.reshape(x.shape[0], 2, 8) * 2


def test_example_and_model_constraints_are_told_apart_and_fixed_together() -> None:
    spec = {"x": {0: Dim("batch", max=64), 1: Dim("seq", min=2, max=64)}}
    out = exportcore.check(FixesSeq(), (torch.randn(1, 16),), dynamic_shapes=spec, mode="non_strict")
    hint = out.failure.hint
    assert "the model fixes seq to 16" in hint and "the model fixes batch" not in hint
    assert "batch is 1: export specializes example sizes 0 and 1" in hint
    fix = out.explanation.fix
    assert fix.status == "verified"
    assert fix.changes == ["args[0].shape[0] (batch): example size 1 -> 2 (change the example input)",
                           "dynamic_shapes['x'][1]: seq [2, 64] -> static 16"]
    assert "{0: batch, 1: 16}" in fix.dynamic_shapes


def test_constraint_hint_for_a_0_1_constant_names_the_example() -> None:
    def export() -> None:
        torch.export.export(Double(), (torch.randn(1, 4),), dynamic_shapes={"x": {0: Dim("batch", max=64)}})

    try:
        export()
    except Exception as exc:  # noqa: BLE001 - the error torch raises is the subject
        failure = classify(exc, "capture")
    else:
        pytest.fail("torch exported a dynamic dim from an example of size 1")
    assert failure.stage == "constraints" and failure.category == "torch.dynamic-shape"
    assert "the model fixes" not in failure.hint and "use an example of size >= 2" in failure.hint
    assert failure.exportdb_case == "example_size_one_specializes"


def test_pins_example_size() -> None:
    from exportcore.shapes.parse import read_form

    b = Dim("b")

    def pins(before: object, after: object) -> bool:
        return pins_example_size(read_form(before), read_form(after))

    assert pins({"x": {0: b}}, {"x": {0: 1}})
    assert pins(({0: b},), ({0: 0},))
    assert not pins({"x": {0: b}}, {"x": {0: 4}})
    assert not pins({"x": {0: 1}}, {"x": {0: 1}})
