"""A pytree nested hundreds of levels deep is judged by what torch.export does with it (issue 50, item 16).

The engine's own walks of the inputs (parsing the spec, copying the inputs) take a few frames a
level, from deeper in the stack than a bare export call: they hit the recursion limit first, and
the case came out as broken input (check() raised) where bare export fails at capture. The truth,
in each test: bare torch.export from the same process.
"""

from __future__ import annotations

import pytest
import torch

import exportcore


class Innermost(torch.nn.Module):
    def forward(self, t):
        while isinstance(t, (list, tuple, dict)):
            t = t["a"] if isinstance(t, dict) else t[0]
        return t * 2


def _nested(depth: int, kind: str = "tuple"):
    t = torch.randn(2, 3)
    for _ in range(depth):
        t = (t,) if kind == "tuple" else {"a": t}
    return t


def _bare_capture_fails(t, strict: bool) -> bool:
    try:
        torch.export.export(Innermost(), (t,), strict=strict)
    except RecursionError:
        return True
    except Exception as exc:  # noqa: BLE001 - torch 2.6's dynamo wraps it (InternalTorchDynamoError)
        if isinstance(exc.__cause__ or exc.__context__, RecursionError) or "RecursionError" in str(exc):
            pytest.skip(f"this torch wraps the RecursionError in {type(exc).__name__}: not the case under test")
        raise
    return False


@pytest.mark.parametrize("kind", ["tuple", "dict"])
@pytest.mark.parametrize("mode", ["strict", "non_strict"])
def test_a_pytree_too_deep_for_capture_fails_at_capture_not_as_broken_input(mode, kind):
    t = _nested(700, kind)
    if not _bare_capture_fails(t, mode == "strict"):
        pytest.skip("this torch captures a 700-deep pytree: nothing to agree with")
    out = exportcore.check(Innermost(), (t,), mode=mode, examples=0)  # raised RecursionError before
    assert (out.status, out.failure.stage) == ("failed", "capture"), out.failure and out.failure.headline()
    assert out.failure.exc_type == "RecursionError"
    assert out.failure.category == "python.data-structure", out.failure.headline()
    assert "recursion limit" in out.failure.hint


def test_the_engine_leaves_the_recursion_limit_as_it_found_it():
    import sys

    limit = sys.getrecursionlimit()
    exportcore.check(Innermost(), (_nested(700),), mode="non_strict", examples=0)
    assert sys.getrecursionlimit() == limit


def test_in_a_pytest_session_a_deep_pytree_is_a_capture_failure_as_bare_export_says(pytester):
    # pytest's and the plugin's frames put the engine deeper in the stack than a script: there a
    # 500-deep pytree was reported as an input error (the spec walk raised RecursionError).
    t = _nested(500)
    if not (_bare_capture_fails(t, True) and _bare_capture_fails(t, False)):
        pytest.skip("this torch captures a 500-deep pytree")
    pytester.makepyfile(test_deep="""
        import pytest, torch

        class Innermost(torch.nn.Module):
            def forward(self, t):
                while isinstance(t, (list, tuple)):
                    t = t[0]
                return t * 2

        @pytest.mark.exportable(modes=["strict", "non_strict"])
        def test_deep():
            t = torch.randn(2, 3)
            for _ in range(500):
                t = (t,)
            return Innermost(), (t,)
    """)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-W", "ignore::UserWarning")
    result.assert_outcomes(failed=2)
    result.stdout.fnmatch_lines(["export failed in strict: stage capture, category python.data-structure",
                                 "export failed in non_strict: stage capture, category python.data-structure"])
    assert "stage input" not in result.stdout.str()
