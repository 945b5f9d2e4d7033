""".github/workflows/zoo.yml (issue 55, item 4): its matrix covers every torch version and shard, and its
ledger job runs the commands docs/ci.md documents.

Read without a YAML library (none is a dependency): the workflow keeps to block mappings, block
sequences, ``[a, b]`` flow lists, quoted scalars and ``|`` blocks, which ``_load`` reads; where PyYAML
is installed it must read the file the same way, so the small reader cannot drift from YAML.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.machinery

ROOT = Path(__file__).resolve().parents[1]
WORKFLOW = ROOT / ".github" / "workflows" / "zoo.yml"
LEDGER_COMMAND = "python -m pytest_export ledger "


def _scalar(text: str) -> Any:
    text = text.strip()
    if text.startswith("[") and text.endswith("]"):
        return [_scalar(part) for part in text[1:-1].split(",") if part.strip()]
    if text[:1] in "\"'":
        return ast.literal_eval(text) if text[0] == '"' else text[1:-1].replace("''", "'")
    if re.fullmatch(r"-?\d+", text):
        return int(text)
    return {"true": True, "false": False}.get(text, text)


def _strip_comment(line: str) -> str:
    quote = ""
    for i, ch in enumerate(line):
        if ch in "\"'" and (not quote or quote == ch):
            quote = "" if quote else ch
        elif ch == "#" and not quote and (i == 0 or line[i - 1] == " "):
            return line[:i].rstrip()
    return line.rstrip()


def _load(text: str) -> Any:
    """Read the YAML subset the workflow uses (see the module's docstring)."""
    lines = [(len(raw) - len(raw.lstrip()), raw) for raw in text.splitlines()]
    value, _ = _block(lines, 0, 0)
    return value


def _block(lines: list[tuple[int, str]], i: int, indent: int) -> tuple[Any, int]:
    i = _skip(lines, i)
    if i >= len(lines) or lines[i][0] < indent:
        return None, i
    indent = lines[i][0]
    if _strip_comment(lines[i][1]).lstrip().startswith("- "):
        items = []
        while i < len(lines) and lines[i][0] == indent and lines[i][1].lstrip().startswith("- "):
            # "- key: value" opens a mapping whose keys sit two columns further in
            raw = lines[i][1]
            lines[i] = (indent + 2, raw[:indent] + "  " + raw[indent + 2:])
            body = _strip_comment(lines[i][1]).strip()
            if ":" in body and not body.startswith(("'", '"')):
                item, i = _block(lines, i, indent + 2)
            else:
                item, i = _scalar(body), i + 1
            items.append(item)
            i = _skip(lines, i)
        return items, i
    mapping: dict[str, Any] = {}
    while i < len(lines) and lines[i][0] == indent:
        key, _, rest = _strip_comment(lines[i][1]).strip().partition(":")
        rest = rest.strip()
        if rest == "|":
            i, block = i + 1, []
            while i < len(lines) and (not lines[i][1].strip() or lines[i][0] > indent):
                block.append(lines[i][1])
                i += 1
            depth = min(len(b) - len(b.lstrip()) for b in block if b.strip())
            mapping[key] = "\n".join(b[depth:] for b in block).rstrip("\n") + "\n"
        elif rest:
            mapping[key], i = _scalar(rest), i + 1
        else:
            mapping[key], i = _block(lines, i + 1, indent + 1)
        i = _skip(lines, i)
    return mapping, i


def _skip(lines: list[tuple[int, str]], i: int) -> int:
    while i < len(lines) and not _strip_comment(lines[i][1]).strip():
        i += 1
    return i


def _workflow() -> dict[str, Any]:
    return _load(WORKFLOW.read_text(encoding="utf-8"))


def _ledger_lines(script: str) -> set[str]:
    return {line.strip() for line in script.splitlines() if line.strip().startswith(LEDGER_COMMAND)}


def _documented() -> set[str]:
    text = (ROOT / "docs" / "ci.md").read_text(encoding="utf-8")
    section = text.split("### What the ledger job runs", 1)[1].split("\n#", 1)[0]
    return _ledger_lines(section)


def test_the_small_reader_reads_the_workflow_as_yaml_does() -> None:
    yaml = pytest.importorskip("yaml")
    loaded = yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))
    loaded["on"] = loaded.pop(True)  # YAML 1.1 reads the key `on` as true; GitHub reads it as "on"
    assert _workflow() == loaded


def test_the_matrix_covers_every_shard_and_the_three_torch_versions() -> None:
    from tools.torch_matrix import PINS

    releases = sorted((full for full, _ in PINS.values()), key=lambda v: tuple(map(int, v.split("."))))
    job = _workflow()["jobs"]["shard"]
    matrix = job["strategy"]["matrix"]
    assert matrix["torch"] == [releases[0], releases[-2], releases[-1]]
    script = next(s["run"] for s in job["steps"] if s.get("name") == "check this shard")
    shards = {int(n) for n in re.findall(r"--export-shard=\$\{\{ matrix.shard \}\}/(\d+)", script)}
    assert shards == {len(matrix["shard"])} and matrix["shard"] == list(range(1, len(matrix["shard"]) + 1))
    assert "--export-durations=" in script and "--export-report=../reports/" in script
    cache = next(s for s in job["steps"] if s.get("name") == "restore the result cache")
    assert cache["uses"].startswith("actions/cache@") and "pytest-export-results" in cache["with"]["path"]
    assert "matrix.torch" in cache["with"]["key"] and "matrix.shard" in cache["with"]["key"]
    upload = next(s for s in job["steps"] if str(s.get("uses", "")).startswith("actions/upload-artifact@"))
    assert upload["with"]["path"] == "reports/"
    ledger = _workflow()["jobs"]["ledger"]
    loop = next(s["run"] for s in ledger["steps"] if s.get("name") == "build the ledger, the pages and the drift")
    assert f"for TORCH in {' '.join(matrix['torch'])}; do" in loop


def test_the_ledger_job_runs_the_documented_commands() -> None:
    ledger = _workflow()["jobs"]["ledger"]
    assert ledger["needs"] == "shard"
    assert any(str(s.get("uses", "")).startswith("actions/download-artifact@") for s in ledger["steps"])
    ran = set().union(*(_ledger_lines(s.get("run", "")) for s in ledger["steps"]))
    documented = _documented()
    assert any(line.startswith(LEDGER_COMMAND + "build ") for line in ran)
    assert any(line.startswith(LEDGER_COMMAND + "diff ") for line in ran)
    assert ran == documented, (ran ^ documented)


def test_the_reader_reads_nesting_lists_and_blocks() -> None:
    text = "a:\n  b: [1, 2]  # c\n  c:\n    - x: 'y'\n      z: \"q#\"\n    - w\n  d: |\n    l1\n      l2\n"
    assert _load(text) == {"a": {"b": [1, 2], "c": [{"x": "y", "z": "q#"}, "w"], "d": "l1\n  l2\n"}}
