"""What the docs show a run printing, it prints, on the installed torch.

Covers the tutorial (docs/tutorial.md: the failure, the export matrix after the fix, the gate's
regression) and the README's example. tools/torch_matrix.py runs this on every supported
release, so the pages (or the per-version difference docs/torch-versions.md states) stay true
for each of them.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path
from typing import Callable

import pytest

# The docs as the newest torch prints them (.ci/run's oldest-torch step leaves them out).
pytestmark = pytest.mark.machinery

ROOT = Path(__file__).resolve().parents[2]
TUTORIAL = ROOT / "docs" / "tutorial.md"
README = ROOT / "README.md"
BROKEN, FIXED = "x.reshape(4, -1)", "x.reshape(x.shape[0], -1)"


def _block(text: str, after: str, lang: str = "") -> str:
    """Return the fenced block that follows the sentence ``after`` (a ValueError names a missing one)."""
    found = re.search(re.escape(after) + r"\s*```" + lang + r"\n(.*?)```", text, re.S)
    if found is None:
        raise ValueError(f"no ```{lang} block after {after!r}")
    return found.group(1)


def _shown(block: str) -> list[str]:
    return [line.rstrip() for line in block.splitlines() if line.strip()]


def _code(text: str) -> str:
    found = re.search(r"```python\n# test_export.py\n(.*?)```", text, re.S)
    assert found is not None, "no ```python block starting with '# test_export.py'"
    return found.group(1)


def _torch_release() -> tuple[int, int]:
    import torch

    major, minor = torch.__version__.split("+")[0].split(".")[:2]
    return int(major), int(minor)


def _matcher(line: str) -> Callable[[str], bool]:
    header = re.fullmatch(r"=+ (.+?) =+", line.strip())
    if header is not None:
        # pytest pads a section header to the terminal's width: the page shows it at 80 columns,
        # a reader's terminal (or COLUMNS) may be 120 wide; the words are what the page promises.
        words = re.compile(r"=+ " + re.escape(header.group(1)) + r" =+")
        return lambda o: words.fullmatch(o.strip()) is not None
    if line.strip().startswith("UserError(") and _torch_release() < (2, 8):
        # docs/torch-versions.md: torch 2.6 and 2.7 word the violation differently; the rest is the same.
        return lambda o: "Not all values of batch" in o and "inferred to be a constant (4)" in o
    if line.endswith("..."):
        prefix = line[:-3].rstrip()
        return lambda o: o.startswith(prefix)
    return lambda o: o == line


def assert_printed_in_order(expected: list[str], output: list[str], page: str) -> None:
    """Each shown line is printed, in order; ``...`` alone skips lines, a trailing ``...`` cuts one."""
    out = [line.rstrip() for line in output]
    at = 0
    for line in expected:
        if line.strip() == "...":
            continue  # the page cuts a block here
        want = _matcher(line)
        found = next((i for i in range(at, len(out)) if want(out[i])), None)
        assert found is not None, f"{page} line not printed (in order): {line!r}\n" + "\n".join(out[at:])
        at = found + 1


def _pytest_args(command: str) -> list[str]:
    """The arguments after ``python -m pytest`` in a command the page shows."""
    words = shlex.split(command, comments=True)
    assert words[:3] == ["python", "-m", "pytest"], command
    return words[3:]


def test_the_tutorial_failure_reads_as_the_tutorial_shows(pytester: pytest.Pytester) -> None:
    text = TUTORIAL.read_text()
    pytester.makepyfile(test_export=_code(text))
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)
    expected = _shown(_block(text, "The test fails, and the failure reads:"))
    assert_printed_in_order(expected, result.stdout.lines, "docs/tutorial.md")


def _every_mode(code: str) -> str:
    """Step 5: the test without ``modes=``."""
    every = re.sub(r",\s*modes=\[[^\]]*\]", "", code)
    assert every != code, "the tutorial's test names no modes= for step 5 to drop"
    return every


def test_the_tutorial_fix_and_gate_print_what_the_tutorial_shows(pytester: pytest.Pytester) -> None:
    """The steps in order, as a reader runs them (the result cache on, as it is for a reader).

    Step 4's fix passes and shows the matrix; step 5 drops ``modes=``; step 6's commands write a
    report and a baseline, then gate the broken model in every mode.
    """
    text = TUTORIAL.read_text()
    code = _code(text)
    assert BROKEN in code and f"`{FIXED}` instead of `{BROKEN.removeprefix('x.')}`" in text
    pytester.makepyfile(test_export=code.replace(BROKEN, FIXED))
    result = pytester.runpytest()
    result.assert_outcomes(passed=1)
    matrix = _shown(_block(text, "`x` expected failure, ...):"))
    assert_printed_in_order(matrix, result.stdout.lines, "docs/tutorial.md (step 4)")

    pytester.makepyfile(test_export=_every_mode(code).replace(BROKEN, FIXED))
    commands = [line for line in _block(text, "## 6. Write a report and gate on it\n\nThree commands:", "bash")
                .splitlines() if line]
    write_reports, update, gate = (_pytest_args(c) for c in commands)
    result = pytester.runpytest(*write_reports)
    result.assert_outcomes(passed=3)
    assert (pytester.path / "reports" / "export.html").is_file()

    result = pytester.runpytest(*update)
    result.assert_outcomes(passed=3)
    assert result.ret == 0
    said = re.search(r"The second run prints `(reused: [^`]*?)\.\.\.`", text)
    assert said is not None, "step 6 does not quote the second run's reused: line"
    assert_printed_in_order([said.group(1).rstrip() + "..."], result.stdout.lines, "docs/tutorial.md (step 6)")

    pytester.makepyfile(test_export=_every_mode(code))  # someone reintroduces reshape(4, -1)
    result = pytester.runpytest(*gate)
    assert result.ret == 1
    shown = _shown(_block(text, "the session\nends with exit status 1 and:"))
    assert_printed_in_order(shown, result.stdout.lines, "docs/tutorial.md (step 6)")
    assert sum(line.lstrip().startswith("REGRESSION") for line in result.stdout.lines) == sum(
        line.lstrip().startswith("REGRESSION") for line in shown)


def test_the_tutorials_expect_step_has_a_model_that_shows_it(pytester: pytest.Pytester) -> None:
    """Step 5 names an example whose strict mode is pinned with ``expect=``: it runs as the page says."""
    text = TUTORIAL.read_text()
    named = re.search(r"A model to try `expect=` on is\s+`(examples/[\w/]+\.py)`", text)
    assert named is not None, "step 5 names no example to try expect= on"
    example = ROOT / named.group(1)
    pytester.makepyfile(**{example.stem: example.read_text()})
    result = pytester.runpytest("-p", "no:cacheprovider", "-rx")
    result.assert_outcomes(passed=2, xfailed=1)
    result.stdout.fnmatch_lines(["XFAIL *[[]strict[]]*"])
    pytester.makepyfile(**{example.stem: re.sub(r"expect=\{.*?\n    \},\n", "", example.read_text(), flags=re.S)})
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(passed=2, failed=1)


def test_the_readme_example_prints_what_the_readme_shows(pytester: pytest.Pytester) -> None:
    text = README.read_text()
    pytester.makepyfile(test_export=_code(text))
    command = re.search(r"`(python -m pytest test_export\.py\s+--export-report=\S+)`", text)
    assert command is not None, "README names no `python -m pytest test_export.py ...` command"
    result = pytester.runpytest(*_pytest_args(" ".join(command.group(1).split())),
                                           "-p", "no:cacheprovider")
    result.assert_outcomes(passed=3)
    expected = _shown(_block(text, "runs it once per mode and ends with the export matrix:"))
    assert_printed_in_order(expected, result.stdout.lines, "README.md")


@pytest.mark.parametrize("width", [40, 80, 120, 200])
def test_a_section_header_shown_at_80_columns_matches_at_any_width(width: int) -> None:
    """pytest pads a header to the terminal's width: the pages' 80-column headers match any width."""
    words = " export matrix "
    printed = words.center(width, "=")
    assert_printed_in_order(["=" * 32 + words + "=" * 33], ["", printed], "a page")
    with pytest.raises(AssertionError):
        assert_printed_in_order(["=" * 32 + words + "=" * 33], [" export gate ".center(width, "=")], "a page")
