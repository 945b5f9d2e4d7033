"""--export-model end to end: zoo models collected with no test file, exported, recorded, skipped, overridden."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("torch")

OFFLINE = {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}

FACTORY = '''
import torch
from torch.export import Dim

class Scale(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.w = torch.nn.Parameter(torch.randn(4))

    def forward(self, x):
        return x * self.w

def make():
    return Scale(), (torch.randn(3, 4),), None, ({0: Dim("rows", min=2, max=16)},)

def downloads():
    import urllib.request
    urllib.request.urlopen("http://example.com/weights.pt", timeout=2)
    return Scale(), (torch.randn(3, 4),)
'''


@pytest.fixture
def offline(monkeypatch: pytest.MonkeyPatch) -> None:
    for name, value in OFFLINE.items():
        monkeypatch.setenv(name, value)


def _records(pytester: pytest.Pytester) -> dict[str, dict]:
    report = json.loads((pytester.path / "r.json").read_text())
    return {r["test"]: r for r in report["records"]}


def test_each_spec_kind_exports_with_a_declared_dynamic_batch(pytester: pytest.Pytester, offline: None) -> None:
    pytest.importorskip("torchvision")
    pytest.importorskip("timm")
    pytest.importorskip("transformers")
    pytester.makepyfile(mymodels=FACTORY)
    result = pytester.runpytest_subprocess(
        "--export-model=torchvision:squeezenet1_1", "--export-model=timm:test_efficientnet",
        "--export-model=hf:bert", "--export-model=mymodels:make", "--export-modes=non_strict",
        "--export-examples=1", "--export-report=r.json", "-p", "no:cacheprovider")
    assert result.ret == 0, result.stdout.str()
    records = _records(pytester)
    assert sorted(records) == ["zoo/hf/bert[non_strict]", "zoo/mymodels/make[non_strict]",
                               "zoo/timm/test_efficientnet[non_strict]", "zoo/torchvision/squeezenet1_1[non_strict]"]
    for test, record in records.items():
        outcome = record["outcome"]
        assert record["verdict"] == "passed", test
        assert outcome["notes"][0].startswith("zoo "), outcome["notes"]  # what was inferred, and why
        if "mymodels" in test:  # the factory's own spec
            assert outcome["range_constraints"]["rows"] == "[2, 16]"
        else:
            assert outcome["range_constraints"]["batch"] == "[2, 8]"
    assert "input_ids in [3, 1024)" in records["zoo/hf/bert[non_strict]"]["outcome"]["notes"][0]


def test_collect_only_lists_every_timm_test_model_in_every_mode(pytester: pytest.Pytester, offline: None) -> None:
    timm = pytest.importorskip("timm")
    result = pytester.runpytest_subprocess("--export-model=timm:test_*", "--collect-only", "-q")
    assert result.ret == 0, result.stdout.str()
    ids = [line for line in result.outlines if line.startswith("zoo/")]
    assert len(ids) == len(timm.list_models("test_*")) * 3
    assert "zoo/timm/test_vit[strict]" in ids
    narrowed = pytester.runpytest_subprocess("--export-model=timm:test_*", "--collect-only", "-q", "-k", "resnet")
    assert [line for line in narrowed.outlines if line.startswith("zoo/")] == [
        "zoo/timm/test_resnet[strict]", "zoo/timm/test_resnet[non_strict]", "zoo/timm/test_resnet[training]"]


def test_ini_export_models_and_exclusions(pytester: pytest.Pytester, offline: None) -> None:
    pytest.importorskip("timm")
    pytester.makeini("[pytest]\nexport_models =\n    timm:test_vit*\n    !*relpos*\n    !timm:test_vit2\n")
    result = pytester.runpytest_subprocess("--collect-only", "-q", "--export-modes=strict")
    ids = [line for line in result.outlines if line.startswith("zoo/")]
    assert "zoo/timm/test_vit[strict]" in ids and "zoo/timm/test_vit3[strict]" in ids
    assert not [i for i in ids if "relpos" in i or "test_vit2" in i]


def test_over_budget_model_is_a_skip_with_the_reason(pytester: pytest.Pytester, offline: None) -> None:
    pytest.importorskip("torchvision")
    result = pytester.runpytest_subprocess("--export-model=torchvision:resnet18", "--export-model-max-params=5M",
                                           "--export-modes=strict", "--export-report=r.json", "-rs")
    assert result.ret == 0, result.stdout.str()
    result.stdout.fnmatch_lines(["*SKIPPED*resnet18: 11.7M parameters, over the budget of 5.0M "
                                 "(--export-model-max-params)*"])
    assert _records(pytester)["zoo/torchvision/resnet18[strict]"]["verdict"] == "skipped"


def test_a_builder_that_would_download_is_skipped_naming_why(pytester: pytest.Pytester, offline: None) -> None:
    pytester.makepyfile(mymodels=FACTORY)
    result = pytester.runpytest_subprocess("--export-model=mymodels:downloads", "--export-modes=strict", "-rs")
    assert result.ret == 0, result.stdout.str()
    result.stdout.fnmatch_lines(["*SKIPPED*mymodels/downloads: building it tried to reach example.com:80 "
                                 "(a download)*"])


def test_bad_specs_are_usage_errors(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest_subprocess("--export-model=resnet18")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--export-model: zoo spec 'resnet18': expected KIND:GLOB*"])
    result = pytester.runpytest_subprocess("--export-model=nomodule:make")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*zoo spec nomodule:make: cannot import 'nomodule'*"])
    result = pytester.runpytest_subprocess("--export-model=mymodels:make", "--export-model-shapes=*=wide")
    result.stderr.fnmatch_lines(["*--export-model-shapes '*=wide': expected GLOB=HOW*"])


def test_shapes_override_and_hook(pytester: pytest.Pytester, offline: None) -> None:
    """The inferred H/W dims of test_vit fail strict export (torch specializes them); a rule or the hook overrides."""
    pytest.importorskip("timm")
    base = ("--export-model=timm:test_vit", "--export-modes=strict", "--export-examples=1", "--export-report=r.json",
            "-p", "no:cacheprovider")
    inferred = pytester.runpytest_subprocess(*base)
    assert inferred.ret == 1
    assert _records(pytester)["zoo/timm/test_vit[strict]"]["outcome"]["failure"]["category"] == "torch.dynamic-shape"
    overridden = pytester.runpytest_subprocess(*base, "--export-model-shapes=timm/test_vi*=batch")
    assert overridden.ret == 0, overridden.stdout.str()
    note = _records(pytester)["zoo/timm/test_vit[strict]"]["outcome"]["notes"][0]
    assert note.endswith("--export-model-shapes: batch only (dim 0 of each input)")
    pytester.makeconftest(
        "import dataclasses\n"
        "def pytest_export_zoo_case(config, entry, case):\n"
        "    if entry.zoo_id == 'timm/test_vit':\n"
        "        return dataclasses.replace(case, dynamic_shapes=None, note='static, by conftest')\n"
    )
    hooked = pytester.runpytest_subprocess(*base)
    assert hooked.ret == 0, hooked.stdout.str()
    assert _records(pytester)["zoo/timm/test_vit[strict]"]["outcome"]["notes"][0] == "zoo timm/test_vit: static, by conftest"
