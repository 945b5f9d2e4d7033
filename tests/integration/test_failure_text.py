"""A failure's text: torch's own prints and logs stay out of it, an identical failure of another mode shows once."""

from __future__ import annotations

TESTS = """
    import sys
    import pytest
    import torch
    from models import DataDependent

    class Chatty(DataDependent):
        def forward(self, x):
            print("MODEL SAYS HELLO", file=sys.stderr)  # the user's own output: kept
            return super().forward(x)

    @pytest.mark.exportable(modes=["non_strict", "training"])
    def test_branchy():
        return DataDependent(), (torch.ones(2, 4),)

    @pytest.mark.exportable(modes=["non_strict"])
    def test_chatty():
        return Chatty(), (torch.ones(2, 4),)
"""


def test_torch_prints_stay_out_and_an_identical_failure_is_shown_once(project):
    project.makepyfile(test_m=TESTS)
    result = project.runpytest("-p", "no:randomly")
    result.assert_outcomes(failed=3)
    out = result.stdout.str()
    # torch prints a failed export's partial graph to stderr (twice): not in the failure's text
    assert "def forward(self, arg0_1" not in out
    assert "MODEL SAYS HELLO" in out  # but what the model itself prints stays
    result.stdout.fnmatch_lines([
        "*_ test_branchy[[]non_strict[]] _*",
        "export failed in non_strict: stage capture, category data-dependent",
        "*_ test_branchy[[]training[]] _*",
        "export failed in training: stage capture, category data-dependent",
        "  GuardOnDataDependentSymNode: Could not guard on data-dependent expression *",
        "  at models.py:13 in forward: if x.sum() > 0:*",
        "  same failure as [[]non_strict[]]: its report above shows it in full (-vv shows every mode in full)",
        "*_ test_chatty[[]non_strict[]] _*",
    ])
    branchy = out[out.index("test_branchy[non_strict] _"):out.index("test_chatty[non_strict] _")]
    assert branchy.count("  hint: ") == 1 and branchy.count("detail:") == 1


def _torch_prints_the_partial_graph(capfd) -> bool:
    """Whether this torch prints a failed non-strict export's partial graph (2.6 does not)."""
    import torch

    class Branchy(torch.nn.Module):
        def forward(self, x):
            return x + 1 if x.sum() > 0 else x - 1

    capfd.readouterr()
    try:
        torch.export.export(Branchy(), (torch.ones(2, 4),), strict=False)
    except Exception:
        pass
    out, err = capfd.readouterr()
    return "def forward(self, arg0_1" in out + err


def test_with_vv_every_mode_and_torchs_output_are_shown(project, capfd):
    torch_prints = _torch_prints_the_partial_graph(capfd)
    project.makepyfile(test_m=TESTS)
    result = project.runpytest("-p", "no:randomly", "-vv", "-k", "branchy")
    result.assert_outcomes(failed=2)
    out = result.stdout.str()
    assert "same failure as" not in out
    assert out.count("  hint: ") == 2
    if torch_prints:
        assert "def forward(self, arg0_1" in out  # asked for: torch's own output too
