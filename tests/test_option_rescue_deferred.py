"""The option rescue's second option: ``prefer_deferred_runtime_asserts_over_guards``, an export keyword.

A guard torch cannot prove over the declared range but that holds on every size in it
(``2*((n+1)//2) >= n``: rounding up to even never shrinks) fails the export as a constraint
violation; with the option torch puts it in the program as a runtime assert instead, and bare
``torch.export`` agrees that the program equals eager at every size from 1 to 8. A guard that is
false somewhere in the range (``n % 2 == 0``) also captures under the option, but the program then
refuses odd sizes the spec declares: the re-check fails a later check, and that is no rescue.
"""

from __future__ import annotations

import inspect

import pytest
import torch
from torch.export import Dim

import exportcore
from exportcore.case import Case, EngineOptions
from exportcore.check import run_check
from exportcore.diagnosis.explain.rescue import OPTIONS, export_config
from exportcore.reuse.session import EngineSession

OPTION = "prefer_deferred_runtime_asserts_over_guards"
HAS_OPTION = OPTION in inspect.signature(torch.export.export).parameters
needs_option = pytest.mark.skipif(not HAS_OPTION, reason=f"this torch's export has no {OPTION} (torch 2.6)")
SPEC = {"x": {0: Dim("batch", min=1, max=8)}}


class PadsToEven(torch.nn.Module):
    def forward(self, x):
        n = x.shape[0]
        if (n + 1) // 2 * 2 >= n:  # true for every n; torch's ranges cannot prove it
            return x * 2
        return x - 1


class EvenOnly(torch.nn.Module):
    def forward(self, x):
        if x.shape[0] % 2 == 0:  # false for odd sizes the spec declares
            return x * 2
        return x - 1


class Doubles(torch.nn.Module):
    def forward(self, x):
        return x * 2


def _export(model: torch.nn.Module, **options: bool) -> torch.export.ExportedProgram:
    return torch.export.export(model, (torch.randn(4, 3),), dynamic_shapes=SPEC, strict=False, **options)


@needs_option
def test_an_unprovable_guard_is_rescued_by_deferred_runtime_asserts_verified() -> None:
    with pytest.raises(Exception, match="Constraints violated"):  # bare torch: plain export refuses
        _export(PadsToEven())
    ep = _export(PadsToEven(), **{OPTION: True})  # the option exports a program equal to eager over the range
    for batch in range(1, 9):
        x = torch.randn(batch, 3)
        torch.testing.assert_close(ep.module()(x), PadsToEven()(x))

    outcome = exportcore.check(PadsToEven(), (torch.randn(4, 3),), dynamic_shapes=SPEC, mode="non_strict")
    assert (outcome.status, outcome.failure.stage) == ("failed", "constraints")
    rescue = outcome.explanation.rescue
    assert (rescue.status, rescue.option, rescue.tried) == ("verified", OPTION, list(OPTIONS[:2]))
    assert rescue.reasons == {"backed_size_oblivious": "still failed at constraints (torch.dynamic-shape)"}
    assert rescue.code == (
        f"@pytest.mark.exportable(..., export_config={{'{OPTION}': True}})\n"
        "# or in your own export call:\n"
        f"ep = torch.export.export(model, args, dynamic_shapes=dynamic_shapes, {OPTION}=True)")


@needs_option
def test_an_option_that_captures_but_fails_a_later_check_is_no_rescue() -> None:
    ep = _export(EvenOnly(), **{OPTION: True})  # bare torch: the capture passes under the option...
    with pytest.raises(RuntimeError, match="Runtime assertion failed"):
        ep.module()(torch.randn(3, 3))  # ...but the program refuses a size the spec declares

    outcome = exportcore.check(EvenOnly(), (torch.randn(4, 3),), dynamic_shapes=SPEC, mode="non_strict")
    rescue = outcome.explanation.rescue
    assert (rescue.status, rescue.option, rescue.code) == ("none", "", "")
    assert rescue.tried == list(OPTIONS)
    assert rescue.reasons[OPTION].startswith("still failed at ") and "capture" not in rescue.reasons[OPTION]


@needs_option
def test_a_deferred_assert_refusing_a_declared_size_is_a_dynamic_shape_failure_not_internal() -> None:
    # under the option the even-only guard becomes a runtime assert; size 3, which the spec declares, trips it
    outcome = run_check(Case(model=EvenOnly(), args=(torch.randn(4, 3),), dynamic_shapes=SPEC),
                        EngineOptions(mode="non_strict", export_config={OPTION: True}, explain="off"))
    failure = outcome.failure
    assert (outcome.status, failure.stage, failure.category) == ("failed", "run", "torch.dynamic-shape")
    assert "Runtime assertion failed" in failure.message
    assert failure.hint.startswith("The exported program asserts `Eq(Mod(") and "Narrow the Dim" in failure.hint
    # the ledger must not read "dynamic as declared": the program's range is [1, 8], its assert refuses odd sizes
    (dim,) = outcome.dims
    assert (dim.name, dim.kind) == ("batch", "narrowed")
    assert dim.exported == "[1, 8] where Eq(Mod(batch, 2), 0) (a runtime assert)"
    assert dim.failed == "size 3 is declared but the program's runtime assert Eq(Mod(batch, 2), 0) refuses it"


def test_an_option_this_torch_lacks_is_not_tried() -> None:
    outcome = exportcore.check(PadsToEven(), (torch.randn(4, 3),), dynamic_shapes=SPEC, mode="non_strict")
    rescue = outcome.explanation.rescue if outcome.explanation else None
    tried = rescue.tried if rescue is not None else []
    assert (OPTION in tried) == HAS_OPTION
    if not HAS_OPTION:
        with pytest.raises(ValueError, match=f"'{OPTION}' is not an option of torch.export.export"):
            with export_config({OPTION: True}):
                pass


@needs_option
@pytest.mark.parametrize("first", ["plain", "deferred"])
def test_a_rescued_run_and_a_plain_one_never_serve_each_other(first: str) -> None:
    # Doubles' program is the same graph with or without the option (it has no guard to defer), so only the
    # proof's options keep a run under the option from taking a plain run's results, and the other way round.
    session = EngineSession()
    case = Case(model=Doubles(), args=(torch.randn(4, 3),), dynamic_shapes=SPEC)
    config = {"plain": {}, "deferred": {OPTION: True}}
    second = "plain" if first == "deferred" else "deferred"
    donor = run_check(case, EngineOptions(mode="non_strict", export_config=config[first]), session)
    assert donor.status == "passed"
    other = run_check(case, EngineOptions(mode="strict", export_config=config[second]), session)
    assert other.status == "passed" and other.reused_from is None
    same = run_check(case, EngineOptions(mode="strict", export_config=config[first]), session)
    assert same.status == "passed" and same.reused_from == "non_strict"  # the control: like for like is served
