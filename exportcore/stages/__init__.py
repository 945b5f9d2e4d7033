"""The export stages, one module each: eager, capture, module, decompose, serialize (and keep, for targets).

Every module has ``run(run: Run) -> None``; exportcore.pipeline orders them with the checks.
A stage stores what it built on the Run (``reference``, ``ep``, ``programs``) and stops the
pipeline with ``run.fail()`` when it cannot.
"""
