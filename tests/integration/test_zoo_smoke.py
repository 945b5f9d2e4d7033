"""The zoo smoke: three of timm's test_* models in every mode and two tiny HF configs, as a user runs them.

Sized for CI on 2 cores (a few minutes); skips cleanly without timm/transformers (pip install -e '.[test]').
"""

from __future__ import annotations

import json

import pytest

pytest.importorskip("torch")

# passing models: a failing row also runs its fix, rescue and relax re-checks (tests/test_zoo_relax.py,
# tests/test_option_rescue_plugin.py), which tripled this test's time
TIMM = ("test_vit3", "test_efficientnet", "test_convnext")
HF = ("bert", "gpt2@AutoModelForCausalLM")


def _run(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, *args: str) -> list[dict]:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("TRANSFORMERS_OFFLINE", "1")
    result = pytester.runpytest_subprocess(*args, "--export-examples=1", "--export-report=r.json",
                                           "-p", "no:cacheprovider")
    assert result.ret in (0, 1), result.stdout.str()  # 1: an export failed, which the records say truthfully
    return json.loads((pytester.path / "r.json").read_text())["records"]


def test_timm_test_models_in_every_mode(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("timm")
    records = _run(pytester, monkeypatch, *(f"--export-model=timm:{name}" for name in TIMM))
    assert sorted((r["case"], r["mode"]) for r in records) == sorted(
        (f"zoo/timm/{name}", mode) for name in TIMM for mode in ("strict", "non_strict", "training"))
    for r in records:
        # every model built and exported: a verdict about the export, never the harness's own error
        assert r["verdict"] in ("passed", "failed"), (r["test"], r["outcome"].get("failure"))
        assert r["outcome"]["notes"][0].startswith(f"zoo {r['case'][4:]}: timm: 3x"), r["outcome"]["notes"]
        assert r["outcome"]["range_constraints"].get("batch") == "[2, 8]" or r["verdict"] == "failed"


def test_two_tiny_hf_configs(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("transformers")
    records = _run(pytester, monkeypatch, *(f"--export-model=hf:{name}" for name in HF), "--export-modes=non_strict")
    assert sorted(r["case"] for r in records) == sorted(f"zoo/hf/{name}" for name in HF)
    for r in records:
        assert r["verdict"] in ("passed", "failed"), (r["test"], r["outcome"].get("failure"))
        assert "token length dynamic 2..64" in r["outcome"]["notes"][0]
