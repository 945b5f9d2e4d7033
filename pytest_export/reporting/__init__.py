"""pytest glue for a session's outputs: report and gate options, writing reports, the crash journal.

options (--export-report, --export-baseline), paths (checked before any test runs), plugin (writes
the reports, decides the gate, exit status), environment (a report's environment block),
known_failures (the baseline's known failures as expected failures), journal and supervise
(results survive a killed process), junit (junit XML properties), transport (a test's records
on its TestReport, to the controller: serial and xdist runs alike). The work itself is
pytest_export.results and pytest_export.rendering. Importing this package loads nothing.
"""
