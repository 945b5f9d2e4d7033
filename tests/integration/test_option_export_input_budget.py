"""--export-input-budget / ini export_input_budget: drawn inputs stay within it, and the skipped part is noted."""

from __future__ import annotations

import pytest

TEST = """
    import pytest
    import torch
    from torch.export import Dim

    class RowSum(torch.nn.Module):
        def forward(self, x):
            if not getattr(torch.compiler, "is_exporting", torch.compiler.is_compiling)():  # eager sees every drawn shape (is_compiling on 2.6)
                with open("rows.txt", "a") as f:
                    f.write(f"{x.shape[0]}\\n")
            return (x * 2).sum(-1)

    @pytest.mark.exportable(modes=["non_strict"], dynamic_shapes={"x": {0: Dim("tokens", min=2, max=1_000_000)}})
    def test_tokens():
        return RowSum(), (torch.randn(8, 64),)
"""


@pytest.mark.parametrize(("args", "ini", "limit"), [
    (["--export-input-budget=256KiB"], "", 1024),
    ([], "export_input_budget = 1MiB", 4096),
    (["--export-input-budget=256KiB"], "export_input_budget = 1MiB", 1024),  # the command line wins
])
def test_budget_bounds_the_drawn_shapes_and_the_outcome_says_what_was_skipped(project, records, args, ini, limit):
    project.makeini(f"[pytest]\nexport_examples = 4\n{ini}\n")
    project.makepyfile(test_m=TEST)
    project.runpytest("-p", "no:cacheprovider", *args).assert_outcomes(passed=1)
    rows = [int(n) for n in (project.path / "rows.txt").read_text().split()]
    assert len(rows) >= 3 and max(rows) <= limit, rows
    (record,) = records()["records"]
    notes = record["outcome"]["notes"]
    assert any(n.startswith(f"range upper part not exercised above {limit}: dim 'tokens'") for n in notes), notes
    assert any("reject probe above the max of dim 'tokens' (1000001) not run" in n for n in notes), notes


@pytest.mark.parametrize(("args", "ini", "message"), [
    (["--export-input-budget=lots"], "", "--export-input-budget: expected a size in bytes such as 268435456, 256MiB "
                                        "or 2GB, got 'lots'"),
    (["--export-input-budget=0"], "", "--export-input-budget: must be a positive size in bytes, got '0'"),
    ([], "export_input_budget = 12 parsecs", "--export-input-budget: expected a size in bytes"),
])
def test_bad_budget_is_a_usage_error_naming_the_option(pytester, args, ini, message):
    pytester.makeini(f"[pytest]\n{ini}\n")
    pytester.makepyfile(test_p="def test_p():\n    pass\n")
    result = pytester.runpytest("-p", "no:cacheprovider", *args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert message in result.stderr.str()
