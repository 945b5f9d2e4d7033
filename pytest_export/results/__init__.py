"""Results: what a session found, as data. No pytest, no torch, no rendering.

records (one typed Record per (case, mode)), expectation (an expected failure, which a record
carries), report (the typed Report: build, validate, load, atomic write), schema (its scope, gate and merge
sections), runtimes (the shapes x runtimes tables a report keeps), gate (compare with a baseline),
baseline (the baseline file), merge (shard reports into one), diff (two reports, case by case),
journal (the crash journal's file format and recovery), unique_keys (one result per key), sanitize
(safe text in records).
Everything above this package may read results; nothing here imports pytest_export's rendering,
cli or pytest glue (tests/test_import_graph.py checks it).
"""
