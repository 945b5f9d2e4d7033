"""The zoo's hook: replace what was inferred for a model (conftest.py or a plugin)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from exportcore.zoo import ZooCase, ZooEntry


@pytest.hookspec(firstresult=True)
def pytest_export_zoo_case(config: pytest.Config, entry: ZooEntry, case: ZooCase) -> ZooCase | None:
    """Return a replacement for a built zoo model's case (model, inputs, dynamic_shapes, note), or None.

    Use it where the inference is wrong for a family, e.g. ``if entry.zoo_id.startswith("timm/"):
    return dataclasses.replace(case, dynamic_shapes=...)``.
    """
