"""The checks, one module each with ``run(ctx: Run) -> None``, ordered in exportcore.pipeline; beside them what
they share (nonfinite, dynamism) and small_sizes, the part of size01 that runs the programs at sizes 0 and 1.

A check compares what the stages built with eager or with the declared spec, and either stops
the pipeline with a failure (``ctx.fail``) or records a finding (``ctx.finding``).
"""
