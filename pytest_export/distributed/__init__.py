"""pytest glue for running a session in pieces: pytest-xdist workers and CI shards.

xdist_workers (what crosses from workers to the controller; crashed workers), scheduling (a case's
modes on one worker), threads (a fair share of CPU threads per worker), sharding (--export-shard=K/N).
Importing this package loads nothing.
"""
