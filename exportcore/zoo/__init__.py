"""Model zoos as cases, with no test code: list a library's models, build them offline, infer their inputs.

``expand(["timm:test_*", "!timm:test_vit*"])`` lists the entries a spec names (no model is built);
``build(entry)`` builds one with random weights and returns a ``ZooCase``: the model, example inputs and
the dynamic-shape spec a careful user would declare, inferred from the model's own metadata, with a note
saying what was inferred and why. Nothing here imports torch, timm, transformers or torchvision until a
spec of that kind is expanded or built, and nothing imports pytest.
"""

from __future__ import annotations

from exportcore.zoo.common import DEFAULT_MAX_PARAMS, ZooCase, ZooEntry, ZooSkip, ZooSpecError
from exportcore.zoo.offline import NetworkAttempt, no_network
from exportcore.zoo.specs import KINDS, PACKAGES, build, expand, package_versions, parse_spec

__all__ = [
    "DEFAULT_MAX_PARAMS", "KINDS", "NetworkAttempt", "ZooCase", "ZooEntry", "ZooSkip", "ZooSpecError",
    "PACKAGES", "build", "expand", "no_network", "package_versions", "parse_spec",
]
