"""A zoo report names the timm / transformers / torchvision versions that built its models (issue 50, item 16).

A published table that does not say which library versions built the models cannot be pinned, so it
cannot be reproduced. The versions come from installed metadata: no zoo package is imported for them.
"""

from __future__ import annotations

import json
import subprocess
import sys
from importlib import metadata

import pytest

from exportcore.zoo import package_versions

FACTORY = '''
import torch

def make():
    return torch.nn.Linear(4, 4), (torch.randn(3, 4),)
'''


def _installed(name: str) -> str:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return "not installed"


def test_each_kind_named_records_its_library_and_nothing_else() -> None:
    assert package_versions(["hf:bert", "timm:test_*", "!torchvision:*", "mymodels:make"]) == {
        "timm": _installed("timm"), "transformers": _installed("transformers")}
    assert package_versions(["torchvision:classification/*"]) == {"torchvision": _installed("torchvision")}
    assert package_versions(["mymodels:make"]) == {}


def test_reading_the_versions_imports_no_zoo_package() -> None:
    code = ("import sys; from exportcore.zoo import package_versions; "
            "package_versions(['hf:bert', 'timm:x', 'torchvision:y']); "
            "print(sorted({'torch', 'timm', 'transformers', 'torchvision'} & set(sys.modules)))")
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True).stdout.strip() == "[]"


@pytest.mark.machinery  # plugin machinery: the same on any torch (.ci/run runs it on the newest only)
def test_the_report_environment_names_the_zoo_versions(pytester: pytest.Pytester) -> None:
    pytest.importorskip("torch")
    pytest.importorskip("timm")
    pytester.makepyfile(version_models=FACTORY)
    # timm's models are listed (collected), only the factory's runs: the report still says which timm
    result = pytester.runpytest_subprocess("--export-model=timm:test_vit3", "--export-model=version_models:make",
                                           "--export-modes=strict", "--export-examples=1", "-k", "make",
                                           "--export-report=r.json", "-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.OK, result.stdout.str()
    environment = json.loads((pytester.path / "r.json").read_text())["environment"]
    assert environment["zoo_packages"] == {"timm": _installed("timm")}
    plain = pytester.runpytest_subprocess("--export-model=version_models:make", "--export-modes=strict",
                                          "--export-examples=1", "--export-report=p.json", "-p", "no:cacheprovider")
    assert plain.ret == pytest.ExitCode.OK, plain.stdout.str()
    assert "zoo_packages" not in json.loads((pytester.path / "p.json").read_text())["environment"]
