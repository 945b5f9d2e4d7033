"""``hf:GLOB`` (``hf:TYPE@AutoClass``): HF transformers model types built offline from a shrunk config.

The config is the type's default one (``CONFIG_MAPPING[type]()``), shrunk in code (exportcore.zoo.hf_config):
no file or weight is read, so nothing downloads. The model is ``AutoClass.from_config`` (``AutoModel`` by
default). Inputs (exportcore.zoo.hf_inputs) follow the model's ``main_input_name``.
"""

from __future__ import annotations

import fnmatch
from typing import Any

from exportcore.zoo.building import check_budget, count_params, require, seeded
from exportcore.zoo.common import ZooCase, ZooEntry, ZooSkip, ZooSpecError

__all__ = ["DEFAULT_AUTO", "build", "list_entries"]

DEFAULT_AUTO = "AutoModel"


def list_entries(pattern: str) -> list[ZooEntry]:
    """Return the model types matching ``pattern`` (``TYPE_GLOB`` or ``TYPE_GLOB@AutoClass``) the class can build."""
    glob, _, auto = pattern.partition("@")
    auto = auto or DEFAULT_AUTO
    mapping = _mapping(auto)
    names = sorted(t for t in mapping if fnmatch.fnmatchcase(t, glob))
    suffix = "" if auto == DEFAULT_AUTO else f"@{auto}"
    return [ZooEntry("hf", f"{t}{suffix}", "hf") for t in names]


def build(entry: ZooEntry, max_params: int | None) -> ZooCase:
    """Build the model type from its shrunk default config with random weights, and its inputs."""
    from exportcore.zoo.hf_config import shrink
    from exportcore.zoo.hf_inputs import infer_inputs

    transformers = require("transformers")
    model_type, _, auto = entry.name.partition("@")
    auto_class = getattr(transformers, auto or DEFAULT_AUTO)
    try:
        config = transformers.CONFIG_MAPPING[model_type]()
        shrunk = shrink(config)
    except Exception as exc:  # noqa: BLE001 - a config that cannot be shrunk is not checked, and says so
        raise ZooSkip(f"{entry.zoo_id}: its default config could not be shrunk ({type(exc).__name__}: "
                      f"{str(exc).splitlines()[0] if str(exc) else ''})") from None
    with seeded(entry):
        try:
            model = auto_class.from_config(config)
        except Exception as exc:  # noqa: BLE001
            # from exc: a config naming a pretrained backbone fails on the refused download, and the zoo's
            # build() follows the cause to say so ("a download"), where any other failure keeps this reason
            raise ZooSkip(f"{entry.zoo_id}: {auto or DEFAULT_AUTO}.from_config on the shrunk config failed "
                          f"({type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''})") from exc
        params = check_budget(entry, count_params(model), max_params)
        args, kwargs, dynamic, why = infer_inputs(entry, model, config)
        _runs_in_eager(entry, model, args, kwargs)
    note = f"hf {model_type} ({type(model).__name__}), config shrunk: {shrunk}; {why}"
    return ZooCase(entry, model, args, kwargs, dynamic, note, {}, params or 0)


def _runs_in_eager(entry: ZooEntry, model: Any, args: tuple, kwargs: dict[str, Any]) -> None:
    """Skip a model whose shrunk config does not even run in eager: that is the shrinking's fault, not export's."""
    import torch

    try:
        with torch.no_grad():
            model.eval()(*args, **kwargs)
    except Exception as exc:  # noqa: BLE001
        raise ZooSkip(f"{entry.zoo_id}: the shrunk config does not run in eager on the inferred inputs "
                      f"({type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''})") from None
    finally:
        model.train()  # as from_config left it; the engine sets each mode's own


def _mapping(auto: str) -> Any:
    transformers = require("transformers")
    auto_class = getattr(transformers, auto, None)
    names = getattr(getattr(auto_class, "_model_mapping", None), "_model_mapping", None)
    if not auto.startswith("Auto") or names is None:
        raise ZooSpecError(f"hf:...@{auto}: not a transformers auto model class (e.g. AutoModel, "
                           "AutoModelForCausalLM, AutoModelForSequenceClassification, AutoModelForImageClassification)")
    return names
