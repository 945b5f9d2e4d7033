"""A model that leaves autocast on or flips torch.backends flags does not change the tests after it."""

from __future__ import annotations

TEST = """
    import pytest
    import torch

    from models import lin_case

    class Leaves(torch.nn.Module):
        def forward(self, x):
            if not getattr(torch.compiler, "is_exporting", torch.compiler.is_compiling)():  # is_compiling on 2.6
                torch.autocast("cpu", dtype=torch.bfloat16).__enter__()  # never left
                torch.backends.cudnn.benchmark = True
                torch.backends.cuda.matmul.allow_tf32 = True
                torch.backends.mha.set_fastpath_enabled(False)
            return x * 2

    @pytest.mark.exportable
    def test_a_leaves_state_behind():
        return Leaves(), (torch.ones(2, 4),)

    @pytest.mark.exportable
    def test_b_next_exportable_case():
        return lin_case()

    def test_c_plain_test_sees_the_defaults():
        assert not torch.is_autocast_enabled("cpu")
        assert torch.ones(2, 2) @ torch.ones(2, 2) is not None
        assert (torch.ones(2, 2) @ torch.ones(2, 2)).dtype == torch.float32
        assert not torch.backends.cudnn.benchmark
        assert not torch.backends.cuda.matmul.allow_tf32
        assert torch.backends.mha.get_fastpath_enabled()
"""


def test_autocast_and_backend_flags_do_not_leak_into_later_tests(project, verdicts):
    project.makepyfile(test_m=TEST)
    result = project.runpytest_subprocess("-p", "no:cacheprovider", "-p", "no:randomly")
    result.assert_outcomes(passed=7)
    assert set(verdicts().values()) == {"passed"}
