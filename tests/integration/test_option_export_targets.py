"""Targets and devices through the plugin: real lowering (AOTInductor, ONNX Runtime, ExecuTorch when
installed), ids and records per target, the shapes × runtimes report, the gate, xdist, missing extras."""

from __future__ import annotations

import json
from typing import Any

import pytest

torch = pytest.importorskip("torch")

from exportcore.targets import unavailable  # noqa: E402

MODEL = """
import torch
from torch.export import Dim

BATCH = {"x": {0: Dim("batch", min=2, max=64)}}

class Small(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(4, 3)

    def forward(self, x):
        return self.fc(x).relu()

def small_case():
    torch.manual_seed(0)
    return Small(), (torch.randn(4, 4),)

@torch.library.custom_op("pxplugin::twice", mutates_args=())
def twice(x: torch.Tensor) -> torch.Tensor:
    return x * 2

@twice.register_fake
def _(x):
    return torch.empty_like(x)

class CustomOp(torch.nn.Module):
    def forward(self, x):
        return twice(x) + 1
"""

AOTI_TESTS = """
import pytest
from targets_model import BATCH, small_case

@pytest.mark.exportable(dynamic_shapes=BATCH, modes=["non_strict"], targets=["aoti", "onnx", "executorch"],
                        target_options={"aoti": {"check_inputs": True}})
def test_checked():
    return small_case()

@pytest.mark.exportable(dynamic_shapes=BATCH, modes=["non_strict"], targets=["aoti"],
                        target_options={"aoti": {"check_inputs": False}})
def test_unchecked():
    return small_case()
"""

ONNX_TESTS = """
import pytest
from targets_model import BATCH, CustomOp, small_case

@pytest.mark.exportable(dynamic_shapes=BATCH, modes=["non_strict"], targets=["onnx"])
def test_small():
    return {small}
"""


def _report(project: pytest.Pytester, name: str = "r.json") -> dict[str, Any]:
    return json.loads((project.path / name).read_text())


def _by_test(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {r["test"]: r for r in report["records"]}


def _row(record: dict[str, Any], kind: str) -> dict[str, str]:
    """The report's first row of ``kind``: its shapes, its kind and its cells in one dict."""
    row = next(r for r in record["outcome"]["shape_table"] if r["kind"].startswith(kind))
    return {"shapes": row["shapes"], "kind": row["kind"], **row["cells"]}


@pytest.fixture(scope="module")
def aoti_session(tmp_path_factory: pytest.TempPathFactory) -> tuple[Any, dict[str, Any], str]:
    """One session, two AOTInductor compiles (input checks on and off): shared by the tests below."""
    reason = unavailable("aoti") or unavailable("onnx")
    if reason:
        pytest.skip(reason)
    import subprocess
    import sys

    root = tmp_path_factory.mktemp("aoti_session")
    (root / "targets_model.py").write_text(MODEL)
    (root / "test_t.py").write_text(AOTI_TESTS)
    (root / "pytest.ini").write_text("[pytest]\nexport_examples = 3\n")
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-rs", "-W", "ignore::UserWarning",
         "--export-report=r.json", "--export-report=r.html", "--export-report=r.md"],
        cwd=root, capture_output=True, text=True, timeout=1200,
    )
    return done, json.loads((root / "r.json").read_text()), (root / "r.html").read_text()


def test_a_model_passes_in_every_runtime_with_one_test_per_target(aoti_session):
    done, report, _ = aoti_session
    verdicts = {t: r["verdict"] for t, r in _by_test(report).items()}
    executorch = "passed" if unavailable("executorch") is None else "skipped"
    assert verdicts == {
        "test_t.py::test_checked[non_strict]": "passed", "test_t.py::test_checked[aoti]": "passed",
        "test_t.py::test_checked[onnx]": "passed", "test_t.py::test_checked[executorch]": executorch,
        "test_t.py::test_unchecked[non_strict]": "passed", "test_t.py::test_unchecked[aoti]": "passed",
    }, done.stdout[-3000:]
    checked = _by_test(report)["test_t.py::test_checked[aoti]"]
    assert (checked["case"], checked["mode"]) == ("test_t.py::test_checked", "aoti")
    assert {"lower", "load", "run", "guards"} <= set(checked["outcome"]["timings"])


def test_aoti_with_input_checks_rejects_out_of_range_shapes(aoti_session):
    record = _by_test(aoti_session[1])["test_t.py::test_checked[aoti]"]
    assert _row(record, "out of range (above_max")["aoti"] == "rejected"
    assert _row(record, "out of range (below_min")["aoti"] == "rejected"
    assert not [f for f in record["outcome"]["findings"] if f["kind"] == "reject_unguarded"]


def test_aoti_without_input_checks_runs_them_and_says_so(aoti_session):
    record = _by_test(aoti_session[1])["test_t.py::test_unchecked[aoti]"]
    above = _row(record, "out of range (above_max")
    assert above["aoti"] == "accepted" and above[".module()"] == "rejected"
    [finding, *_] = [f for f in record["outcome"]["findings"] if f["kind"] == "reject_unguarded"]
    assert above["shapes"] in finding["message"] and "AOTI_RUNTIME_CHECK_INPUTS=1" in finding["message"]


def test_report_has_a_shapes_by_runtimes_table_per_case(aoti_session):
    _, report, html = aoti_session
    table = report["runtimes"]["test_t.py::test_checked"]
    expected = [".module()", "aoti", "onnx"] + (["executorch"] if unavailable("executorch") is None else [])
    assert table["columns"] == expected
    above = next(r for r in table["rows"] if r["kind"].startswith("out of range (above_max"))
    assert (above[".module()"], above["aoti"], above["onnx"]) == ("rejected", "rejected", "accepted")
    assert "Shapes × runtimes" in html and "test_t.py::test_checked" in html


def test_op_without_onnx_translation_fails_onnx_at_lower_and_the_gate_sees_a_regression(project):
    project.makepyfile(targets_model=MODEL, test_m=ONNX_TESTS.format(small="small_case()"))
    if unavailable("onnx"):
        pytest.skip(unavailable("onnx"))
    project.runpytest("-p", "no:cacheprovider", "--export-baseline=base.json",
                      "--export-baseline-update").assert_outcomes(passed=2)
    project.makepyfile(test_m=ONNX_TESTS.format(small="CustomOp(), (torch.randn(4, 4),)").replace(
        "import pytest", "import pytest\nimport torch"))
    result = project.runpytest("-p", "no:cacheprovider", "--export-baseline=base.json", "--export-report=r.json")
    result.assert_outcomes(passed=1, failed=1)
    failure = _by_test(_report(project))["test_m.py::test_small[onnx]"]["outcome"]["failure"]
    assert (failure["stage"], failure["category"]) == ("lower", "target.operator")
    assert "pxplugin.twice" in failure["message"]
    result.stdout.fnmatch_lines([
        "export gate FAILED vs base.json: 1 regression*",
        "  REGRESSION test_m.py::test_small [[]onnx[]]: passed -> failed: [[]lower[]] target.operator: "
        "ConversionError: onnx lower: unsupported operator pxplugin.twice.default",
        "FAILED test_m.py::test_small[[]onnx[]] - onnx failed: [[]lower[]] target.operator*",
    ])


def _comparable(report: dict[str, Any]) -> list[dict[str, Any]]:
    out = []
    for r in sorted(report["records"], key=lambda r: r["test"]):
        out.append(dict(r, duration=None, outcome=dict(r["outcome"], timings=None)))
    return out


def test_two_workers_record_the_same_target_outcomes_as_serial(project):
    pytest.importorskip("xdist")
    if unavailable("onnx"):
        pytest.skip(unavailable("onnx"))
    project.makepyfile(targets_model=MODEL, test_m=ONNX_TESTS.format(small="small_case()") + """
@pytest.mark.exportable(dynamic_shapes=BATCH, modes=["strict"], targets=["onnx"], target_mode="strict")
def test_strict_based():
    return small_case()
""")
    project.runpytest_subprocess("-p", "no:cacheprovider", "--export-report=r.json").assert_outcomes(passed=4)
    serial = _comparable(_report(project))
    assert [r["mode"] for r in serial] == ["non_strict", "onnx", "onnx", "strict"]
    assert all(r["outcome"]["shape_table"] for r in serial if r["mode"] == "onnx")
    project.runpytest_subprocess("-p", "xdist", "-n", "2", "-p", "no:cacheprovider",
                                 "--export-report=r.json").assert_outcomes(passed=4)
    assert _comparable(_report(project)) == serial


IMPORTS = """
import json, sys
import pytest

@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session):
    # Not torch._inductor.package: torch 2.9's own export machinery imports it (torch._dynamo.package);
    # exportcore.targets.aoti stands for the AOTInductor target.
    heavy = ("onnx", "onnxruntime", "onnxscript", "executorch",
             "exportcore.targets.aoti", "exportcore.targets.onnx", "exportcore.targets.executorch")
    (session.config.rootpath / "imports.json").write_text(json.dumps([m for m in heavy if m in sys.modules]))
"""

MISSING = """
import sys
# As if the extras were not installed: find_spec() answers None for these names.
for name in ("onnx", "onnxruntime", "onnxscript", "executorch"):
    sys.modules[name] = None
"""


@pytest.mark.machinery  # plugin machinery: the same on any torch (.ci/run runs it on the newest only)
def test_without_extras_each_target_skips_once_with_its_reason_and_nothing_else_changes(project, monkeypatch):
    project.makepyfile(targets_model=MODEL, test_m="""
import pytest
from targets_model import BATCH, small_case

@pytest.mark.exportable(dynamic_shapes=BATCH, modes=["non_strict"])
def test_a():
    return small_case()

@pytest.mark.exportable(dynamic_shapes=BATCH, modes=["non_strict"])
def test_b():
    return small_case()
""")
    project.makeconftest(IMPORTS)
    project.runpytest_subprocess("-p", "no:cacheprovider", "--export-report=plain.json").assert_outcomes(passed=2)
    assert json.loads((project.path / "imports.json").read_text()) == []  # no target, no target packages
    plain = _comparable(_report(project, "plain.json"))

    project.makeconftest(IMPORTS + MISSING)
    monkeypatch.setenv("CXX", "no-such-compiler-xyz")
    result = project.runpytest_subprocess("-p", "no:cacheprovider", "-rs", "--export-report=r.json",
                                          "--export-targets=aoti,onnx,executorch")
    result.assert_outcomes(passed=2, skipped=6)
    summary = [line for line in result.outlines if line.startswith("SKIPPED")]
    assert len(summary) == 3, summary  # one line per target, each naming what is missing
    assert any("[2]" in s and "aoti: no working C++ compiler" in s and "no-such-compiler-xyz" in s for s in summary)
    assert any("[2]" in s and "onnx: onnx, onnxscript, onnxruntime not installed" in s for s in summary)
    assert any("[2]" in s and "executorch: not installed" in s for s in summary)
    # without -rs too: the matrix says why, with the packages to install by their real names
    skipped = next(line for line in result.outlines if line.startswith("skipped: "))
    assert "onnx: onnx, onnxscript, onnxruntime not installed (pip install onnx onnxscript onnxruntime, " in skipped
    assert "executorch: not installed (pip install executorch, " in skipped and "(2)" in skipped
    md = (project.path / "r.md")
    project.runpytest_subprocess("-p", "no:cacheprovider", f"--export-report={md}", "--export-targets=onnx")
    assert "pip install onnx onnxscript onnxruntime" in md.read_text()
    with_targets = _comparable(_report(project))
    assert [r for r in with_targets if r["mode"] == "non_strict"] == plain


def test_cuda_device_ids_and_skip_reason_cpu_ids_unchanged(project):
    project.makepyfile(targets_model=MODEL, test_m="""
import pytest
from targets_model import BATCH, small_case

@pytest.mark.exportable(dynamic_shapes=BATCH, modes=["strict", "non_strict"])
def test_a():
    return small_case()

@pytest.mark.exportable(dynamic_shapes=BATCH, modes=["non_strict"], devices=["cpu"])
def test_cpu_only():
    return small_case()
""")
    result = project.runpytest("-p", "no:cacheprovider", "-rs", "--export-devices=cpu,cuda",
                               "--export-report=r.json", "--collect-only", "-q")
    result.stdout.fnmatch_lines([
        "test_m.py::test_a[[]strict[]]", "test_m.py::test_a[[]non_strict[]]",
        "test_m.py::test_a[[]strict-cuda[]]", "test_m.py::test_a[[]non_strict-cuda[]]",
        "test_m.py::test_cpu_only[[]non_strict[]]",
    ])
    result = project.runpytest("-p", "no:cacheprovider", "-rs", "--export-devices=cpu,cuda",
                               "--export-report=r.json", "-k", "test_a")
    records = _by_test(_report(project))
    cuda = records["test_m.py::test_a[strict-cuda]"]
    assert (cuda["case"], cuda["mode"]) == ("test_m.py::test_a", "strict-cuda")
    if torch.cuda.is_available():
        result.assert_outcomes(passed=4)
    else:
        result.assert_outcomes(passed=2, skipped=2)
        result.stdout.fnmatch_lines(["SKIPPED [[]2[]] *device cuda: not available*"])


def test_a_target_whose_export_fails_carries_its_export_modes_expectation(project, verdicts):
    if unavailable("onnx"):
        pytest.skip(unavailable("onnx"))
    project.makepyfile(test_m="""
import pytest
import torch
from models import DataDependent

@pytest.mark.exportable(modes=["non_strict"], targets=["onnx"], expect={"non_strict": "data-dependent branch"})
def test_branchy():
    return DataDependent(), (torch.ones(3),)
""")
    project.runpytest("-p", "no:cacheprovider").assert_outcomes(xfailed=2)
    assert verdicts() == {("test_m.py::test_branchy", "non_strict"): "xfailed",
                          ("test_m.py::test_branchy", "onnx"): "xfailed"}
