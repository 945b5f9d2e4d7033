"""Sizes 0 and 1 inside a declared range are checked: torch traces around them (0/1 specialization).

``Dim("b", max=8)`` exports the range [0, 8], but torch traces assuming b >= 2 and adds no guard:
a branch on ``b == 1`` is baked in as not taken, and a decomposition may not handle an empty dim.
The drawn shapes start at 2, so before these checks such programs passed while computing the
wrong answer at batch 1 (bare torch: ep.module() returns the other branch's result).
"""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from torch.export import Dim  # noqa: E402

import exportcore  # noqa: E402


class OneRowBranch(torch.nn.Module):
    """What a squeeze-when-single or a batch-of-one fast path does: another result at size 1."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * 2 if x.shape[0] == 1 else x * 3


class InstanceNormed(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.nn.functional.instance_norm(x) + x.sum(0, keepdim=True)


@pytest.mark.parametrize("mode", ["strict", "non_strict", "training"])
def test_a_program_wrong_at_size_one_of_its_range_fails_there(mode: str) -> None:
    x = torch.randn(4, 3)
    ep = torch.export.export(OneRowBranch(), (x,), dynamic_shapes=({0: Dim("b", max=8)},), strict=mode == "strict")
    one = torch.ones(1, 3)
    assert not torch.equal(ep.module()(one), OneRowBranch()(one))  # bare torch: the other branch, unguarded
    outcome = exportcore.check(OneRowBranch(), (x,), mode=mode, dynamic_shapes=({0: Dim("b", max=8)},))
    assert outcome.status == "failed" and outcome.failure.stage in ("numerics", "training"), outcome.failure
    assert outcome.counterexample.shapes == {"args[0]": [1, 3]}
    assert "b=1 is inside the exported range [0, 8]" in outcome.failure.hint and "min=2" in outcome.failure.hint
    # declared from 2, the range leaves 1 out: not checked there, and torch's missing guard is a finding
    narrowed = exportcore.check(OneRowBranch(), (x,), mode=mode, dynamic_shapes=({0: Dim("b", min=2, max=8)},))
    assert narrowed.status == "passed", narrowed.failure
    assert any(f.kind == "size01_accepted" for f in narrowed.findings)


def test_a_decomposed_program_that_cannot_take_an_empty_batch_fails_at_size_zero() -> None:
    x = torch.randn(4, 3, 5)
    outcome = exportcore.check(InstanceNormed(), (x,), mode="non_strict", dynamic_shapes=({0: Dim("b", max=8)},))
    assert outcome.status == "failed", outcome.failure
    assert outcome.failure.message.startswith("decomposed program raised"), outcome.failure
    assert outcome.counterexample.shapes == {"args[0]": [0, 3, 5]} and "min=1" in outcome.failure.hint
    fine = exportcore.check(InstanceNormed(), (x,), mode="non_strict", dynamic_shapes=({0: Dim("b", min=1, max=8)},))
    assert fine.status == "passed", fine.failure


def test_a_size_eager_itself_refuses_is_noted_not_held_against_the_program() -> None:
    bn = torch.nn.BatchNorm1d(3)  # training: one row has no variance, eager raises
    outcome = exportcore.check(bn, (torch.randn(4, 3),), mode="training", dynamic_shapes=({0: Dim("b", min=1, max=8)},))
    assert outcome.status == "passed", outcome.failure
    assert any("size 1 of b" in n and "eager rejects it" in n for n in outcome.notes), outcome.notes


def test_a_model_right_at_sizes_zero_and_one_passes_and_they_ran() -> None:
    seen: list[int] = []

    class Linear(torch.nn.Linear):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            if not torch.compiler.is_compiling():
                seen.append(x.shape[0])
            return super().forward(x)

    outcome = exportcore.check(Linear(3, 2), (torch.randn(4, 3),), mode="non_strict",
                               dynamic_shapes=({0: Dim("b", max=8)},))
    assert outcome.status == "passed", outcome.failure
    assert {0, 1} <= set(seen)


class EmptyAndOneRow(torch.nn.Module):
    """Both at once: the decomposed program raises at batch 0 and takes the wrong branch at batch 1."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = torch.nn.functional.instance_norm(x) + x.sum(0, keepdim=True)
        return y * 2 if x.shape[0] == 1 else y * 3


@pytest.mark.parametrize(("model", "mode", "floor", "exports"), [
    (OneRowBranch(), "strict", 2, 1),
    (InstanceNormed(), "non_strict", 1, 1),
    (EmptyAndOneRow(), "non_strict", 2, 2),  # from 1 fails at 1: one more step
])
def test_the_fix_raises_the_min_past_the_failing_size_and_is_verified_by_every_check(model, mode, floor, exports):
    x = torch.randn(4, 3, 5)
    outcome = exportcore.check(model, (x,), mode=mode, dynamic_shapes=({0: Dim("b", max=8)},))
    assert outcome.status == "failed", outcome.failure
    fix = outcome.explanation.fix
    assert (fix.status, fix.exports, fix.verified_by) == ("verified", exports, "all the checks the case ran"), fix
    assert fix.dynamic_shapes.splitlines()[0] == f"b = Dim('b', min={floor}, max=8)"
    assert fix.changes == [f"dynamic_shapes[0][0]: b [0, 8] -> b [{floor}, 8]"]
    # torch guards nothing below 2: a range raised to 2 leaves sizes 0 and 1 unguarded, and the fix says so
    assert floor < 2 or "size01_accepted" in fix.findings, fix
    # what it claims holds: every default check passes from that min, and the size below it fails still
    fixed = exportcore.check(model, (x,), mode=mode, dynamic_shapes=({0: Dim("b", min=floor, max=8)},), explain="off")
    assert fixed.status == "passed", fixed.failure
    below = exportcore.check(model, (x,), mode=mode, dynamic_shapes=({0: Dim("b", min=floor - 1, max=8)},),
                             explain="off")
    assert below.status == "failed" and below.counterexample.shapes == {"args[0]": [floor - 1, 3, 5]}


def test_the_fix_is_verified_with_the_run_s_own_tolerances() -> None:
    # Eager adds 1e-3 where the program does not (everywhere: the user's atol=1e-2 allows it) and the
    # program takes the wrong branch at batch 1 (no tolerance allows that). The re-check that verifies
    # the range from 2 must use the run's atol: at the default one it would fail on the examples.
    class OffByALittleAndAtOne(torch.nn.Module):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            if not torch.compiler.is_compiling():  # eager only (is_exporting is 2.7+)
                x = x + 1e-3
            return x * 2 if x.shape[0] == 1 else x * 3

    x = torch.randn(4, 3)
    outcome = exportcore.check(OffByALittleAndAtOne(), (x,), mode="non_strict", atol=1e-2,
                               dynamic_shapes=({0: Dim("b", max=8)},))
    assert outcome.status == "failed" and outcome.counterexample.shapes == {"args[0]": [1, 3]}, outcome.failure
    assert outcome.explanation.fix.status == "verified", outcome.explanation.fix
    assert outcome.explanation.fix.dynamic_shapes.startswith("b = Dim('b', min=2, max=8)")
    fixed = exportcore.check(OffByALittleAndAtOne(), (x,), mode="non_strict", atol=1e-2, explain="off",
                             dynamic_shapes=({0: Dim("b", min=2, max=8)},))
    assert fixed.status == "passed", fixed.failure
    default = exportcore.check(OffByALittleAndAtOne(), (x,), mode="non_strict", explain="off",
                               dynamic_shapes=({0: Dim("b", min=2, max=8)},))
    assert default.status == "failed" and default.failure.stage == "numerics"


def test_a_verified_fix_that_leaves_a_warning_says_so_in_the_failure_text_and_the_reports(pytester) -> None:
    # Where findings are errors (filterwarnings = error) the fixed spec fails on size01_accepted: the
    # fix must not read as if the test would then pass unconditionally.
    pytester.makepyfile(test_one="""
        import pytest, torch
        from torch.export import Dim

        class OneRowBranch(torch.nn.Module):
            def forward(self, x):
                return x * 2 if x.shape[0] == 1 else x * 3

        @pytest.mark.exportable(dynamic_shapes=({0: Dim("b", max=8)},), modes=["non_strict"])
        def test_one_row():
            return OneRowBranch(), (torch.randn(4, 3),)
    """)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--export-report=r.md", "--export-report=r.html")
    result.assert_outcomes(failed=1)
    text = result.stdout.str()
    assert "fix: verified (exports with this spec, and all the checks the case ran pass)" in text
    assert "with this spec the re-check reports" in text and "size01_accepted" in text.split("fix: verified", 1)[1]
    assert "it fails the test where findings are errors" in text or "they fail the test where findings are errors" in text
    md = (pytester.path / "r.md").read_text()
    assert "`size01_accepted`" in md and "where findings are errors" in md
    assert "with this spec the re-check reports" in (pytester.path / "r.html").read_text()


class TwoDims(torch.nn.Module):
    """x's decomposed program raises at batch 0; y's program takes the wrong branch at length 1."""

    def forward(self, x: torch.Tensor, y: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return InstanceNormed()(x), (y * 2 if y.shape[0] == 1 else y * 3)


def test_a_fix_raises_each_dim_its_re_check_fails_at_zero_or_one() -> None:
    args = (torch.randn(4, 3, 5), torch.randn(6, 2))
    spec = ({0: Dim("a", max=8)}, {0: Dim("c", max=9)})
    outcome = exportcore.check(TwoDims(), args, mode="non_strict", dynamic_shapes=spec)
    assert outcome.status == "failed" and outcome.counterexample.shapes["args[0]"] == [0, 3, 5], outcome.failure
    fix = outcome.explanation.fix
    assert (fix.status, fix.exports) == ("verified", 2), fix
    assert fix.dynamic_shapes.splitlines()[:2] == ["a = Dim('a', min=1, max=8)", "c = Dim('c', min=2, max=9)"]
    assert fix.origin.startswith("0/1 specialization: a from 1, c from 2")
    fixed = exportcore.check(TwoDims(), args, mode="non_strict", explain="off",
                             dynamic_shapes=({0: Dim("a", min=1, max=8)}, {0: Dim("c", min=2, max=9)}))
    assert fixed.status == "passed", fixed.failure


def test_where_findings_are_errors_a_fix_is_verified_only_by_every_check_the_case_ran() -> None:
    # torch's suggested fix (min=3) passes the accept/reject re-check, yet the case, with findings as
    # errors, fails with it on a finding of the dtype check: so it is only suggested, naming that finding.
    class AtLeastThree(torch.nn.Module):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            torch._check(x.shape[0] >= 3)
            return x * 2

    x = torch.randn(4, 3)
    outcome = exportcore.check(AtLeastThree(), (x,), mode="non_strict", dynamic_shapes=({0: Dim("b", max=8)},),
                               findings_as_errors=True)
    fix = outcome.explanation.fix
    assert fix.dynamic_shapes.startswith("b = Dim('b', min=3, max=8)") and fix.verified_by == "all the checks the case ran"
    fixed = exportcore.check(AtLeastThree(), (x,), mode="non_strict", dynamic_shapes=({0: Dim("b", min=3, max=8)},),
                             findings_as_errors=True, explain="off")
    assert (fix.status == "verified") == (fixed.status == "passed"), (fix, fixed.failure)
    assert fix.status == "suggested" and "dtype" in fix.reason, fix
    # as warnings, the accept/reject re-check verifies it, as before
    relaxed = exportcore.check(AtLeastThree(), (x,), mode="non_strict", dynamic_shapes=({0: Dim("b", max=8)},))
    assert relaxed.explanation.fix.status == "verified"
    assert relaxed.explanation.fix.verified_by == "its accept/reject checks"


def test_a_fix_s_findings_read_back_from_a_report_cannot_break_the_markdown() -> None:
    from exportcore.outcome import SpecFix
    from pytest_export.rendering.story import fix_findings

    fix = SpecFix(status="verified", dynamic_shapes="dynamic_shapes=None", findings=["x`y\n## injected"])
    line = fix_findings(fix, code="`")
    assert "\n" not in line and line.count("`") % 2 == 0 and "`x'y ## injected`" in line
