"""Shared pieces for the plugin's pytester tests: tiny models, a records dump, hook-driven outcomes.

Real exports where the behaviour depends on torch.export; a ``pytest_export_run`` hook that
returns a canned Outcome where only the plugin's verdict logic is under test (fast, exact).
"""

from __future__ import annotations

import json
from typing import Any, Callable

import pytest

# Written into each pytester project: dumps what the controller aggregated.
RECORDER = '''
import json
import pytest
from pytest_export.session_state import plugin_session

@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session):
    config = session.config
    if hasattr(config, "workerinput"):
        return
    session = plugin_session(config)
    records = [r.to_dict() for r in session.records]  # typed in memory, JSON in the dump
    data = {"records": records, "selected": sorted(map(list, session.selected))}
    (config.rootpath / "records.json").write_text(json.dumps(data, sort_keys=True, indent=1))
'''

MODELS = '''
import torch

class Lin(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(4, 3)

    def forward(self, x):
        return self.fc(x)

class DataDependent(torch.nn.Module):
    def forward(self, x):
        if x.sum() > 0:  # data-dependent branch: no export mode supports it
            return x + 1
        return x - 1

def lin_case():
    torch.manual_seed(0)
    return Lin(), (torch.randn(2, 4),)
'''

# A conftest snippet: tests named *canned* get this Outcome instead of a real export.
CANNED = '''
from exportcore.outcome import Failure, Outcome, SourceLocation

CANNED = {}

def pytest_export_run(item, case, mode, options):
    if "canned" not in item.name:
        return None
    status, category = CANNED.get(item.originalname, ("passed", None))
    outcome = Outcome(case_id=options["case_id"], mode=mode, status=status)
    if status != "passed":
        outcome.failure = Failure(
            stage="capture", category=category, exc_type="UserError", message="it broke",
            detail="it broke\\nSuggested fix: do not", hint="try the rewrite", traceback="TORCH-INTERNAL-FRAMES",
            exportdb_case="cond_branch_class_method",
            source=SourceLocation("model.py", 12, "forward", "if x.sum() > 0:"),
        )
    return outcome
'''


@pytest.fixture
def project(pytester: pytest.Pytester) -> pytest.Pytester:
    """Return a pytester project with tiny models, a records dump and few drawn examples."""
    pytester.makeconftest(RECORDER)
    pytester.makepyfile(models=MODELS)
    pytester.makeini("[pytest]\nexport_examples = 2\n")
    return pytester


@pytest.fixture
def records(project: pytest.Pytester) -> Callable[[], dict[str, Any]]:
    """Return a loader of the last session's records.json: {"records": [...], "selected": [...]}."""

    def load() -> dict[str, Any]:
        return json.loads((project.path / "records.json").read_text())

    return load


@pytest.fixture
def verdicts(records: Callable[[], dict[str, Any]]) -> Callable[[], dict[tuple[str, str], str]]:
    """Return a loader of {(case, mode): verdict} from the last session's records."""
    return lambda: {(r["case"], r["mode"]): r["verdict"] for r in records()["records"]}


@pytest.fixture
def canned(project: pytest.Pytester) -> Callable[[dict[str, tuple[str, str | None]]], None]:
    """Return a setter: ``canned({"test_canned_x": ("failed", "data-dependent")})`` fakes those outcomes."""

    def setup(table: dict[str, tuple[str, str | None]]) -> None:
        project.makeconftest(RECORDER + CANNED + f"\nCANNED.update({table!r})\n")

    return setup
