"""The README's zoo command runs where its text says and is the one benchmarks/zoo_demo.py times (issue 51, item 1).

The time itself is measured, not tested (no timing asserts): benchmarks/zoo_demo.py runs this command cold.
"""

from __future__ import annotations

import re
import shlex
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

from zoo_demo import readme_command  # noqa: E402


def _section() -> str:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    start = text.index("## Zero code: a model zoo")
    return text[start:text.index("\n## ", start + 1)]


def test_the_command_installs_from_the_checkout_and_runs_outside_it() -> None:
    section = _section()
    steps = [shlex.split(step) for step in re.search(r"```bash\n(.*?)```", section, re.S).group(1).split("&&")]
    assert steps[0] == ["pip", "install", "-e", ".[zoo]"] and "From the checkout's root" in section
    folder = next(words[1] for words in steps if words[0] == "cd")
    # outside any project: pytest finds no tests or ini above it, so the items keep their ids (no ../zoo/...)
    assert Path(folder).is_absolute() and ROOT not in Path(folder).parents and f"`{folder}`" in section
    env, args = readme_command()
    assert env == {"HF_HUB_OFFLINE": "1"}
    examples = [a for a in args if a.startswith("--export-examples=")]
    assert len(examples) == 1 and f"`{examples[0]}`" in section  # chosen deliberately, and said
    assert "-n" not in args  # pytest-xdist is not in the [zoo] extra


def test_the_models_it_names_exist_and_the_text_counts_them() -> None:
    for package in ("torchvision", "timm", "transformers"):
        pytest.importorskip(package)
    from exportcore.zoo import expand

    specs = [a.split("=", 1)[1] for a in readme_command()[1] if a.startswith("--export-model=")]
    models = expand(specs)
    section = _section()
    assert len(models) == 4 and "four small models" in section and "of the 12 pass" in section
