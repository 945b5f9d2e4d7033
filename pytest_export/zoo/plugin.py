"""The zoo's pytest hooks: its options, its collectors under the session, its notes in each outcome."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Generator

import pytest

from pytest_export.session_state import plugin_session
from pytest_export.zoo.options import add_options, resolve, zoo_options

if TYPE_CHECKING:
    from exportcore.outcome import Outcome


def pytest_addhooks(pluginmanager: pytest.PytestPluginManager) -> None:
    from pytest_export.zoo import hookspecs

    pluginmanager.add_hookspecs(hookspecs)


def pytest_addoption(parser: pytest.Parser) -> None:
    add_options(parser, parser.getgroup("export", "pytest-export (torch.export checks)"))


def pytest_configure(config: pytest.Config) -> None:
    options = plugin_session(config).zoo = resolve(config)
    if options.specs:
        from exportcore.zoo import package_versions
        # Imported here: a session without zoo models loads no reporting code (tests/integration/test_no_torch.py).
        from pytest_export.reporting.environment import add_to_environment

        # A report of zoo models names the timm / transformers / torchvision versions that built them.
        add_to_environment(config, "zoo_packages", package_versions(options.specs))


def pytest_report_header(config: pytest.Config) -> str | None:
    """Say why zoo items read ``../zoo/...`` when pytest runs below its rootdir (their ids are rootdir-relative)."""
    if not zoo_options(config).specs or config.invocation_params.dir == config.rootpath:
        return None
    return (f"zoo: items are ids under the rootdir {config.rootpath}, so pytest shows them from here as ../zoo/...; "
            "run from the rootdir, or from an empty folder outside any project")


@pytest.hookimpl(wrapper=True)
def pytest_make_collect_report(collector: pytest.Collector) -> Generator[None, Any, Any]:
    """Add the zoo's collectors next to what the session collected from files (nothing, in an empty directory)."""
    report = yield
    if isinstance(collector, pytest.Session) and report.passed:
        from pytest_export.zoo.items import zoo_collectors

        report.result = [*report.result, *zoo_collectors(collector)]
    return report


def pytest_export_outcome(item: pytest.Item, case: Any, outcome: Outcome) -> None:
    """Say which inputs and dynamic dims were inferred for a zoo model, and why; for a failing row, what passes."""
    note = getattr(item, "zoo_note", "")
    if note and note not in outcome.notes:
        outcome.notes.insert(0, note)
    if note and case is not None:
        from pytest_export.zoo.relax import least_restrictive

        relaxed = least_restrictive(item, case, outcome)
        if relaxed:
            outcome.notes.insert(1, relaxed)
