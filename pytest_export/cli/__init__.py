"""The command line, ``python -m pytest_export SUBCOMMAND``: one module per subcommand. No pytest.

merge, recover, explain, diff: each has ``add_parser(sub)`` and ``run(args) -> exit status``
(pytest_export/__main__.py dispatches); paths checks the paths they are given. Reads results and
rendering; imports no pytest glue (tests/test_import_graph.py). ``explain`` runs pytest in a subprocess.
"""
