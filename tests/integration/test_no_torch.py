"""The plugin costs nothing where it is not used: no torch import without exportable tests."""

from __future__ import annotations

import subprocess
import sys

CHECK_AT_END = '''
import sys

def pytest_sessionfinish(session):
    loaded = sorted(m for m in ("torch", "sympy") if m in sys.modules)
    print(f"HEAVY MODULES LOADED: {loaded}")
'''


def test_importing_the_plugin_does_not_import_torch():
    code = (
        "import sys, pytest_export, pytest_export.plugin, exportcore, exportdb; "
        "heavy = [m for m in ('torch', 'sympy', 'hypothesis') if m in sys.modules]; "
        "assert not heavy, heavy"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_session_without_exportable_tests_never_imports_torch(pytester):
    pytester.makeconftest(CHECK_AT_END)
    pytester.makepyfile("def test_plain():\n    assert 1 + 1 == 2\n")
    # A subprocess: this process has torch loaded already.
    result = pytester.runpytest_subprocess("-s", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["*plugins:*export-*", "*HEAVY MODULES LOADED: [[][]]"])


ENGINE_AT_END = '''
import sys

def pytest_sessionfinish(session):
    engine = ("exportcore.outcome", "exportcore.context", "exportcore.diagnosis.categories", "pytest_export.results.records",
              "pytest_export.runner", "pytest_export.reporting.journal", "pytest_export.results.report", "pytest_export.reporting.plugin")
    print(f"ENGINE MODULES LOADED: {sorted(m for m in engine if m in sys.modules)}")
'''


def test_session_without_exportable_tests_loads_no_engine_record_or_report_code(pytester):
    # What keeps an unused plugin's cost to its few light modules (benchmarks/unused_cost.py);
    # xdist installed but not distributing, as in most users' sessions.
    pytester.makeconftest(ENGINE_AT_END)
    pytester.makepyfile("def test_plain():\n    assert 1 + 1 == 2\n")
    result = pytester.runpytest_subprocess("-s", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["*ENGINE MODULES LOADED: [[][]]"])
    # ...and a report asked for still loads what writes it.
    result = pytester.runpytest_subprocess("-s", "-p", "no:cacheprovider", "--export-report=r.json")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["*ENGINE MODULES LOADED: *pytest_export.reporting.plugin*"])
    assert (pytester.path / "r.json").exists()
