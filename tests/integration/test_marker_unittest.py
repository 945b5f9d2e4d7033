"""@pytest.mark.exportable on a unittest.TestCase method is a collection error, never silently ignored."""

from __future__ import annotations

import pytest

# Plugin machinery (options, ids, terminal text, warnings filters): the same on any torch, so .ci/run's
# oldest-torch step leaves it out.
pytestmark = pytest.mark.machinery


def test_marker_on_a_testcase_method_or_class_is_a_collection_error_naming_the_test(project):
    project.makepyfile(test_m="""
        import unittest
        import pytest
        from models import DataDependent
        import torch

        class TestModels(unittest.TestCase):
            @pytest.mark.exportable
            def test_branchy(self):
                return DataDependent(), (torch.ones(3),)

            def test_plain(self):
                pass

        @pytest.mark.exportable(modes=["strict"])
        class TestMarkedClass(unittest.TestCase):
            def test_also(self):
                return DataDependent(), (torch.ones(3),)
    """)
    result = project.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(errors=2)
    result.stdout.fnmatch_lines([
        "*test_m.py::TestModels::test_branchy: @pytest.mark.exportable does not work on a unittest.TestCase "
        "method (pytest cannot parametrize it over export modes, so nothing would be exported); mix "
        "pytest_export.unittest.ExportableMixin into the TestCase and call "
        "self.assertExportable(model, args, dynamic_shapes=...) in the method (one record per mode), "
        "or make it a plain test function",
        "*test_m.py::TestMarkedClass::test_also: @pytest.mark.exportable does not work*",
    ])
    assert "passed" not in result.stdout.str().splitlines()[-1]
