"""The marker's ``recorded_inputs=`` end to end: a pytest session runs each recorded set, and a bad field is named.

Bare torch's verdicts behind these are in tests/test_recorded_inputs.py (the narrowing model's program
refuses a batch of 12 under Dim.AUTO).
"""

from __future__ import annotations

import pytest

CASES = '''
import pytest
import torch
from torch.export import Dim

from exportcore import Case


class Doubles(torch.nn.Module):
    def forward(self, x):
        return x * 2


class Narrows(torch.nn.Module):
    def forward(self, x):
        if x.shape[0] > 8:
            return x * 3
        return x * 2


BATCH = {"x": {0: Dim("b", max=16)}}


@pytest.mark.exportable(modes=["non_strict"], dynamic_shapes=BATCH, recorded_inputs=[(torch.randn(6, 3),)])
def test_ok():
    return Doubles(), (torch.randn(4, 3),)


@pytest.mark.exportable(modes=["non_strict"], dynamic_shapes={"x": {0: Dim.AUTO}},
                        recorded_inputs=[(torch.randn(6, 3),), (torch.randn(12, 3),)])
def test_refused():
    return Narrows(), (torch.randn(4, 3),)


@pytest.mark.exportable(modes=["non_strict"], dynamic_shapes=BATCH, recorded_inputs=[(torch.randn(20, 3),)])
def test_outside():
    return Doubles(), (torch.randn(4, 3),)


@pytest.mark.exportable(modes=["non_strict"], recorded_inputs=[(torch.randn(4, 3),)])
def test_twice():
    return Case(Doubles(), (torch.randn(4, 3),), recorded_inputs=[(torch.randn(4, 3),)])
'''


def test_a_session_runs_each_recorded_set_and_names_the_one_at_fault(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_recorded=CASES)
    pytester.makeini("[pytest]\nexport_examples = 2\n")
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(passed=1, failed=1, errors=2)
    out = result.stdout.str()
    assert "recorded_inputs[1] (args[0]=[12, 3]): in-spec shape rejected by exported program" in out
    assert "recorded_inputs[0] is outside the declared spec: args[0].shape[0] is 20, outside 'b' [0, 16]" in out
    assert "recorded_inputs is given both in the marker and in the returned Case; keep one" in out


@pytest.mark.machinery
def test_a_recorded_inputs_field_of_another_type_is_a_collection_error_naming_test_and_field(
        pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_m="""
        import pytest

        @pytest.mark.exportable(recorded_inputs=5)
        def test_it():
            pass
    """)
    result = pytester.runpytest("-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.INTERRUPTED
    assert ("test_m.py::test_it: @pytest.mark.exportable: recorded_inputs must be a list of input tuples or "
            "(args, kwargs) pairs, a torch.export.AdditionalInputs or a torch.onnx.InputObserver, got int"
            in result.stdout.str())
