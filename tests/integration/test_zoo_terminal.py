"""A zoo run's terminal leads with what a zoo user reads first: pass rates, ranked causes, the matrix; then one
line per failure (-v: the whole text; the report keeps it either way). Real exports of a factory's models."""

from __future__ import annotations

import json

import pytest

# Plugin machinery (options, ids, terminal text, warnings filters): the same on any torch, so .ci/run's
# oldest-torch step leaves it out.
pytestmark = pytest.mark.machinery


pytest.importorskip("torch")

MODELS = '''
import torch
from torch.export import Dim

class Branchy(torch.nn.Module):
    def forward(self, x):
        if x.sum() > 0:  # data-dependent: no mode exports it
            return x * 2
        return x - 1

class Scale(torch.nn.Module):
    def forward(self, x):
        return x * 3

def branchy():
    return Branchy(), (torch.ones(3, 4),), None, ({0: Dim("rows", min=2, max=16)},)

def scale():
    return Scale(), (torch.ones(3, 4),), None, ({0: Dim("rows", min=2, max=16)},)
'''

ARGS = ("--export-model=mymodels:branchy", "--export-model=mymodels:scale", "--export-modes=strict,non_strict",
        "--export-examples=1", "--export-report=r.json", "-p", "no:cacheprovider")


def _failure_bodies(lines: list[str]) -> dict[str, list[str]]:
    """The FAILURES section: each failure's header -> the lines below it."""
    start = next(i for i, line in enumerate(lines) if " FAILURES " in line)
    bodies: dict[str, list[str]] = {}
    current = None
    for line in lines[start + 1:]:
        if line.startswith("====="):
            break
        if line.startswith("_____"):
            current = line.strip("_ ")
            bodies[current] = []
        elif current is not None:
            bodies[current].append(line)
    return bodies


def test_rates_and_causes_lead_and_each_failure_is_one_line(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(mymodels=MODELS)
    result = pytester.runpytest_subprocess(*ARGS)
    assert result.ret == 1, result.stdout.str()
    lines = result.outlines
    text = "\n".join(lines)
    rates = next(i for i, line in enumerate(lines) if line.startswith("zoo pass rates"))
    causes = lines.index("zoo failure causes:")
    matrix = next(i for i, line in enumerate(lines) if line.split()[:1] == ["zoo/mymodels/branchy"])  # its row
    failures = next(i for i, line in enumerate(lines) if " FAILURES " in line)
    assert rates < causes < matrix < failures, text
    assert "export matrix" not in text  # printed once, ahead
    bodies = _failure_bodies(lines)
    assert sorted(bodies) == ["zoo/mymodels/branchy[non_strict]", "zoo/mymodels/branchy[strict]"], text
    for test, body in bodies.items():
        assert len(body) == 1, (test, body)
        assert body[0].startswith(test[test.index("[") + 1:-1] + " failed: [") and "-v" in body[0], body
    # names as the ids the reports use: no path prefix in a directory of their own
    assert "FAILED zoo/mymodels/branchy[strict]" in text and "../zoo" not in text
    # the report keeps the whole failure: the one line is the terminal's only
    records = {r["test"]: r for r in json.loads((pytester.path / "r.json").read_text())["records"]}
    failure = records["zoo/mymodels/branchy[strict]"]["outcome"]["failure"]
    assert failure["stage"] and failure["category"] and failure["hint"]
    assert records["zoo/mymodels/scale[strict]"]["verdict"] == "passed"


def test_verbose_shows_each_failure_in_full(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(mymodels=MODELS)
    result = pytester.runpytest_subprocess(*ARGS, "-v")
    assert result.ret == 1, result.stdout.str()
    bodies = _failure_bodies(result.outlines)
    full = bodies["zoo/mymodels/branchy[strict]"]
    assert len(full) > 3 and any(line.startswith("note: zoo mymodels/branchy") for line in full), full
    lines = result.outlines
    assert next(i for i, line in enumerate(lines) if line.startswith("zoo pass rates")) < \
        next(i for i, line in enumerate(lines) if " FAILURES " in line)


def test_a_session_without_zoo_cases_keeps_its_matrix_after_failures(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_m='''
import pytest, torch

class Branchy(torch.nn.Module):
    def forward(self, x):
        if x.sum() > 0:
            return x * 2
        return x - 1

@pytest.mark.exportable(modes=["strict"])
def test_branchy():
    return Branchy(), (torch.ones(3, 4),)
''')
    result = pytester.runpytest_subprocess("--export-examples=1", "-p", "no:cacheprovider")
    assert result.ret == 1, result.stdout.str()
    lines = result.outlines
    failures = next(i for i, line in enumerate(lines) if " FAILURES " in line)
    matrix = next(i for i, line in enumerate(lines) if " export matrix " in line)
    assert failures < matrix and not any(line.startswith("zoo pass rates") for line in lines)
    assert len(_failure_bodies(lines)["test_branchy[strict]"]) > 1  # a marker test's failure stays in full


def test_below_a_projects_root_the_header_says_why_items_read_dot_dot(pytester: pytest.Pytester,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    pytester.makepyfile(mymodels=MODELS)
    pytester.makeini("[pytest]\n")
    run_dir = pytester.mkdir("zoo-run")
    (run_dir / "mymodels.py").write_text(MODELS)
    pytester.chdir()  # back at the rootdir: ids as they are, no header line
    at_root = pytester.runpytest_subprocess("--export-model=mymodels:scale", "--collect-only", "-q")
    assert "zoo/mymodels/scale[strict]" in at_root.outlines and "zoo: items are ids" not in at_root.stdout.str()
    monkeypatch.chdir(run_dir)  # pytest's ids stay rootdir-relative; its terminal shows them from the cwd
    below = pytester.runpytest_subprocess("--export-model=mymodels:scale", "--export-modes=strict",
                                          "--export-examples=1", "-p", "no:cacheprovider")
    below.stdout.fnmatch_lines(["zoo: items are ids under the rootdir *, so pytest shows them from here as "
                                "../zoo/...; run from the rootdir, or from an empty folder outside any project",
                                "../zoo/mymodels/scale*"])
