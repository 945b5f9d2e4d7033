"""The exportability ledger: one compact record per (model, mode, torch version), and what reads it.

``rows`` (one record and its JSON line), ``store`` (a ledger directory: one JSON-lines file per torch
version), ``build`` (records from plugin JSON reports, dates kept from the previous ledger), ``pages``
and ``page_parts`` (docs/zoo.md and the per-family pages, rendered from the ledger only), ``drift`` and
``drift_page`` (what moved between two ledgers, as Markdown). Pure: imports neither pytest nor torch.
"""
