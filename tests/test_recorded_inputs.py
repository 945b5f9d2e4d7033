"""Recorded input sets (``recorded_inputs=``): each runs on eager and every program, compared like the example.

The narrowing model below exports under ``Dim.AUTO`` with its batch narrowed to [2, 8] (bare torch: the
program's guard refuses 12); a recorded set at 12 lies inside the declared spec, so each form of the
field (a list, torch.export.AdditionalInputs, torch.onnx.InputObserver) must fail the case at the
guards naming the set, and a set at 6 passes. A set outside the declared spec is the case's input
error, naming the set and the dim.
"""

from __future__ import annotations

import pytest
import torch
from torch.export import Dim

from exportcore import Case
from exportcore.check import check_case
from exportcore.checks.recorded import recorded_sets

has_additional = pytest.mark.skipif(not hasattr(torch.export, "AdditionalInputs"),
                                    reason="this torch has no torch.export.AdditionalInputs (torch 2.6)")
has_observer = pytest.mark.skipif(not hasattr(torch.onnx, "InputObserver"),
                                  reason="this torch has no torch.onnx.InputObserver")


class Narrows(torch.nn.Module):
    def forward(self, x):
        if x.shape[0] > 8:
            return x * 3
        return x * 2


class Doubles(torch.nn.Module):
    def forward(self, x):
        return x * 2


class Scales(torch.nn.Module):
    def forward(self, x, k: int):
        return x * k


AUTO = ({0: Dim.AUTO},)
X = torch.randn(4, 3)


def _check(model, args, recorded, dynamic_shapes=AUTO):
    case = Case(model, args, dynamic_shapes=dynamic_shapes, recorded_inputs=recorded)
    return check_case(case, "non_strict", examples=0, explain="off")


def _observed(*inputs):
    observer = torch.onnx.InputObserver()
    model = Narrows()
    with observer(model):
        for x in inputs:
            model(x)
    return observer


def _additional(*inputs):
    additional = torch.export.AdditionalInputs()
    for x in inputs:
        additional.add((x,))
    return additional


def test_bare_torch_narrows_the_batch_to_8() -> None:
    ep = torch.export.export(Narrows(), (X,), dynamic_shapes=AUTO)
    torch.testing.assert_close(ep.module()(torch.randn(6, 3)).shape, torch.Size([6, 3]))
    with pytest.raises(Exception, match="Guard failed|to be <= 8"):  # torch 2.6 words it the second way
        ep.module()(torch.randn(12, 3))


@pytest.mark.parametrize("form", [
    pytest.param(lambda *xs: [(x,) for x in xs], id="tuples"),
    pytest.param(lambda *xs: [((x,), {}) for x in xs], id="pairs"),
    pytest.param(_additional, id="AdditionalInputs", marks=has_additional),
    pytest.param(_observed, id="InputObserver", marks=has_observer),
])
def test_a_recorded_set_the_guards_refuse_fails_the_case_naming_the_set(form) -> None:
    assert _check(Narrows(), (X,), form(torch.randn(6, 3))).status == "passed"
    outcome = _check(Narrows(), (X,), form(torch.randn(6, 3), torch.randn(12, 3)))
    assert (outcome.status, outcome.failure.stage, outcome.failure.exc_type) == ("failed", "guards", "GuardRejected")
    assert outcome.failure.message.startswith("recorded_inputs[1] (args[0]=[12, 3]): in-spec shape rejected")


def test_a_refused_set_with_the_accept_check_off_is_noted_never_passed_silently() -> None:
    case = Case(Narrows(), (X,), dynamic_shapes=AUTO, recorded_inputs=[(torch.randn(12, 3),)])
    outcome = check_case(case, "non_strict", examples=0, explain="off", checks=("numerics",))
    assert outcome.status == "passed"
    assert any(note.startswith("recorded_inputs[0] not checked: ") for note in outcome.notes)


@pytest.mark.parametrize("model, args, recorded, spec, message", [
    (Doubles(), (X,), [(torch.randn(6, 3),), (torch.randn(20, 3),)], ({0: Dim("b", max=16)},),
     "recorded_inputs[1] is outside the declared spec: args[0].shape[0] is 20, outside 'b' [0, 16]"),
    (Doubles(), (X,), [(torch.randn(6, 3),)], None,
     "recorded_inputs[0] is outside the declared spec: args[0].shape[0] is 6, a static dim (the example's size; "
     "declare it dynamic in dynamic_shapes)"),
    (Narrows(), (X,), [(torch.randn(4, 5),)], AUTO,
     "recorded_inputs[0] is outside the declared spec: args[0].shape[1] is 5, a static dim"),
    (Scales(), (X, 2), [(torch.randn(4, 3), 3)], None,
     "recorded_inputs[0] is outside the declared spec: args[1] is 3, the example's 2"),
    (Doubles(), (X,), [torch.randn(4, 3)], None,
     "recorded_inputs[0] must be a tuple of inputs (wrap one input as (x,)) or an (args, kwargs) pair, got Tensor"),
    (Doubles(), (X,), 5, None, "recorded_inputs must be a list of input tuples"),
])
def test_a_set_outside_the_spec_or_malformed_is_an_input_error_naming_set_and_dim(model, args, recorded, spec,
                                                                                   message) -> None:
    outcome = _check(model, args, recorded, spec)
    assert (outcome.status, outcome.failure.stage) == ("error", "input")
    assert outcome.failure.message.startswith(message), outcome.failure.message


def test_a_torch_without_the_recorded_classes_says_so_in_the_error() -> None:
    with pytest.raises(TypeError) as raised:
        recorded_sets(5)
    lacks = str(raised.value).partition(" has no ")[2]
    for name, where in (("AdditionalInputs", torch.export), ("InputObserver", torch.onnx)):
        assert (name in lacks) is (not hasattr(where, name))


class ClampsWhenExported(torch.nn.Module):
    def forward(self, x):
        if torch.compiler.is_exporting():  # the exported program computes something else than eager past 1
            return x.clamp(max=1.0)
        return x


@pytest.mark.skipif(not hasattr(torch.compiler, "is_exporting"), reason="this torch has no is_exporting (2.6)")
def test_a_recorded_set_the_program_computes_wrongly_fails_numerics_naming_the_set() -> None:
    small, big = torch.rand(4, 3) * 0.5, torch.rand(4, 3) + 2
    ep = torch.export.export(ClampsWhenExported(), (small,))  # bare torch: equal at the example, not at big
    assert torch.equal(ep.module()(small), small) and not torch.equal(ep.module()(big), big)

    assert _check(ClampsWhenExported(), (small,), [(small * 1.5,)], None).status == "passed"
    outcome = _check(ClampsWhenExported(), (small,), [(small * 1.5,), (big,)], None)
    assert (outcome.status, outcome.failure.stage, outcome.failure.exc_type) == ("failed", "numerics", "ValueMismatch")
    assert outcome.failure.message.startswith("recorded_inputs[1] (args[0]=[4, 3]): ")


def test_options_built_by_hand_still_check_what_the_case_carries() -> None:
    # run_check(case, EngineOptions(...)) without for_case: the case's recorded sets and name still count
    from exportcore import EngineOptions
    from exportcore.check import run_check

    case = Case(Narrows(), (X,), dynamic_shapes=AUTO, recorded_inputs=[(torch.randn(12, 3),)], name="narrows")
    outcome = run_check(case, EngineOptions(mode="non_strict", examples=0, explain="off"))
    assert outcome.case_id == "narrows"
    assert (outcome.status, outcome.failure.stage) == ("failed", "guards")
    assert outcome.failure.message.startswith("recorded_inputs[0] (args[0]=[12, 3])")
