"""A pytest plugin for benchmarks: the same exportable tests, each (case, mode) only exported and decomposed.

Loaded with ``-p bare_export_plugin`` (benchmarks/ on PYTHONPATH). It claims every mode through
``pytest_export_run`` and does what any export pipeline does, nothing more: ``torch.export.export``,
``run_decompositions()``, ``.module()`` and one call on the example. The harness around it
(collection, the plugin, reports) is the same as the checked sessions', so the ratio compares
the checking itself.

With ``BARE_EXPORT_ONLY=1`` in the environment it only calls ``torch.export.export``: the one step a
warm run (result cache) always runs, with none of the engine around it.
"""

from __future__ import annotations

import os
from typing import Any

import pytest


@pytest.hookimpl(tryfirst=True)
def pytest_export_run(item: pytest.Item, case: Any, mode: str, options: dict[str, Any]) -> Any:
    import torch

    from exportcore.outcome import Outcome

    mode = options.get("export_mode", mode)
    model, args, kwargs = case.model, case.args, dict(case.kwargs or {})
    outcome = Outcome(case_id=options["case_id"], mode=mode, torch_version=str(torch.__version__))
    try:
        if isinstance(model, torch.nn.Module):
            model.train(mode == "training")
        ep = torch.export.export(model, args, kwargs, dynamic_shapes=case.dynamic_shapes, strict=mode == "strict")
        if not os.environ.get("BARE_EXPORT_ONLY"):
            ep.run_decompositions().module()(*args, **kwargs)
    except Exception as exc:  # noqa: BLE001 - an expected failure is an outcome here too
        from exportcore.diagnosis.classify import classify

        outcome.status = "failed"
        outcome.failure = classify(exc, "capture")  # so a declared expect= still matches its category
    return outcome
