"""The export stages, one module each: eager, capture, module, decompose, serialize (and keep, for targets).

Every module has ``run(ctx: Run) -> None``; exportcore.pipeline orders them with the checks.
A stage stores what it built on the Run (``ctx.reference``, ``ctx.ep``, ``ctx.programs``) and stops the
pipeline with ``ctx.fail()`` when it cannot.
"""
