"""A zoo build is a download skip only when the refused connection caused its failure (issue 50, item 9).

A factory that swallows the refused probe and then fails on something real was SKIPPED as "a download"
with exit 0, its real error shown nowhere. Nothing here reaches the network: no_network refuses first.
"""

from __future__ import annotations

import json

import pytest

pytest.importorskip("torch")

from exportcore.zoo import ZooSkip, build, expand  # noqa: E402

MODELS = '''
import socket, urllib.request, torch

def _probe():
    urllib.request.urlopen("http://198.51.100.7/weights.pt", timeout=1)

def swallows_then_breaks():
    try:
        _probe()
    except Exception:
        pass  # "offline, use random weights"
    raise ValueError("the model's own bug: 3 heads do not divide 64 channels")

def breaks_while_handling():
    try:
        _probe()
    except Exception:
        raise KeyError("config has no 'hidden_size'")

def wraps_the_refusal():
    try:
        _probe()
    except OSError as exc:
        raise RuntimeError("could not fetch the weights") from exc

def urllib_refused():
    _probe()
    return torch.nn.Linear(2, 2), (torch.randn(2, 2),)
'''


@pytest.fixture
def models(monkeypatch: pytest.MonkeyPatch, tmp_path) -> str:
    (tmp_path / "netprobe_models.py").write_text(MODELS)
    monkeypatch.syspath_prepend(str(tmp_path))
    return "netprobe_models"


@pytest.mark.parametrize("name, error, message", [
    ("swallows_then_breaks", ValueError, "3 heads do not divide 64 channels"),
    ("breaks_while_handling", KeyError, "hidden_size"),
])
def test_a_real_error_after_a_refused_probe_is_the_models_error(models: str, name: str, error: type,
                                                                 message: str) -> None:
    with pytest.raises(error, match=message) as raised:
        build(expand([f"{models}:{name}"])[0])
    assert any("198.51.100.7:80" in note and "did not cause this error" in note
               for note in getattr(raised.value, "__notes__", [])), raised.value


@pytest.mark.parametrize("name", ["wraps_the_refusal", "urllib_refused"])
def test_a_failure_the_refused_connection_caused_is_a_download_skip(models: str, name: str) -> None:
    with pytest.raises(ZooSkip, match=rf"{models}/{name}: building it tried to reach 198\.51\.100\.7:80 "
                                      r"\(a download\)"):
        build(expand([f"{models}:{name}"])[0])


def test_the_plugin_shows_the_real_error_and_fails(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(netprobe_models=MODELS)
    result = pytester.runpytest_subprocess("--export-model=netprobe_models:swallows_then_breaks",
                                           "--export-modes=strict", "-rs", "--export-report=r.json")
    assert result.ret == pytest.ExitCode.TESTS_FAILED, result.stdout.str()
    result.stdout.fnmatch_lines(["*ValueError: the model's own bug: 3 heads do not divide 64 channels*"])
    out = result.stdout.str()
    assert "(a download); zoo models are built offline" not in out and "SKIPPED" not in out, out
    [record] = json.loads((pytester.path / "r.json").read_text())["records"]
    assert record["verdict"] == "error", record
    assert "3 heads do not divide 64 channels" in record["outcome"]["failure"]["message"], record
