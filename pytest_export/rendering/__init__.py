"""Rendering: results as text. HTML, Markdown, the terminal summary, failure text. No pytest, no torch.

formats (the one format -> renderer table, and write_report), html, markdown, style (labels, marks,
the page template call), charts, findings, overview, runtimes (report sections), diff (a report
diff as text, Markdown or HTML), summary (the terminal matrix), failure_text and story (a failed
test's text), zoo_rates (zoo pass rates). Templates: ``templates/`` (on exportdb/html's page shell).
Reads pytest_export.results only; imports no cli and no pytest glue (tests/test_import_graph.py).
"""
