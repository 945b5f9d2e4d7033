"""The checks, one module each; every module has ``run(ctx: Run) -> None``, ordered in exportcore.pipeline.

A check compares what the stages built with eager or with the declared spec, and either stops
the pipeline with a failure (``ctx.fail``) or records a finding (``ctx.finding``).
"""
