"""The README's five-minute tutorial prints what README shows, on the installed torch.

tools/torch_matrix.py runs this on every supported release, so the tutorial (or the
per-version difference README states in "Torch versions") stays true for each of them.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[2] / "README.md"


def _tutorial() -> tuple[str, list[str]]:
    """Return the tutorial's test file and its printed failure lines."""
    text = README.read_text()
    section = text.split("## Five-minute tutorial", 1)[1].split("\n## ", 1)[0]
    code = re.search(r"```python\n# test_export.py\n(.*?)```", section, re.S).group(1)
    failure = re.search(r"The test fails, and the failure reads:\n\n```\n(.*?)```", section, re.S).group(1)
    return code, [line for line in failure.splitlines() if line.strip()]


def _torch_release() -> tuple[int, int]:
    import torch

    major, minor = torch.__version__.split("+")[0].split(".")[:2]
    return int(major), int(minor)


def test_the_tutorial_failure_reads_as_readme_shows(pytester: pytest.Pytester) -> None:
    code, expected = _tutorial()
    pytester.makepyfile(test_export=code)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)
    out = [line.rstrip() for line in result.stdout.lines]
    at = 0
    for line in expected:
        if line.strip() == "...":
            continue  # README cuts a block here
        if line.strip().startswith("UserError(") and _torch_release() < (2, 8):
            # README ("Torch versions"): torch 2.6 and 2.7 word the violation differently; the rest is the same.
            want = lambda o: "Not all values of batch" in o and "inferred to be a constant (4)" in o  # noqa: E731
        elif line.endswith("..."):
            want = lambda o, p=line[:-3].rstrip(): o.startswith(p)  # noqa: E731
        else:
            want = lambda o, p=line: o == p  # noqa: E731
        found = next((i for i in range(at, len(out)) if want(out[i])), None)
        assert found is not None, f"README line not printed (in order): {line!r}\n" + "\n".join(out[at:])
        at = found + 1
