"""ONNX: torch.onnx.export(ep, dynamo=True) to a .onnx file, run by an onnxruntime InferenceSession."""

from __future__ import annotations

import os
from typing import Any, Mapping

from exportcore.targets.base import Lowered, Runner, flat_inputs

__all__ = ["TARGET", "OnnxRuntime"]


class OnnxRuntime:
    """The ``onnx`` target: the dynamo ONNX exporter plus ONNX Runtime."""

    name = "onnx"
    tolerance = (1e-3, 1e-4)
    unguarded_hint = ("the ONNX model keeps the dimension symbolic but not its range: validate shapes before "
                      "calling the session")

    def missing(self) -> str | None:
        """Return which of onnx, onnxscript, onnxruntime is not importable, or None."""
        import importlib.util

        absent = [m for m in ("onnx", "onnxscript", "onnxruntime") if importlib.util.find_spec(m) is None]
        if absent:
            return (f"onnx: {', '.join(absent)} not installed (pip install {' '.join(absent)}, or "
                    "pip install 'pytest-export[onnx]' for the versions it was verified with)")
        return None

    def unsupported_device(self, device: str) -> str | None:
        """Return why onnxruntime cannot run on ``device``: cuda needs the CUDA execution provider."""
        if device == "cpu":
            return None
        import onnxruntime as ort

        if "CUDAExecutionProvider" not in ort.get_available_providers():
            return (f"onnx on {device}: onnxruntime has no CUDAExecutionProvider (install onnxruntime-gpu); "
                    f"available: {', '.join(ort.get_available_providers())}")
        return None

    def lower(self, ep: Any, args: tuple, kwargs: dict, workdir: str, options: Mapping[str, Any]) -> Lowered:
        """Convert ``ep`` to ONNX (the ranges stay in ``ep``; the exporter keeps only symbolic dims)."""
        import torch

        extra: dict[str, Any] = {}
        if options.get("opset") is not None:
            extra["opset_version"] = int(options["opset"])
        program = torch.onnx.export(ep, args, kwargs=kwargs or None, dynamo=True, verbose=False, **extra)
        path = os.path.join(workdir, "model.onnx")
        program.save(path)
        return Lowered(path=path)

    def load(self, lowered: Lowered, ep: Any, options: Mapping[str, Any], device: str) -> Runner:
        """Open an InferenceSession (CUDA provider for device cuda) and return its runner."""
        import numpy as np
        import onnxruntime as ort
        import torch

        providers = ["CUDAExecutionProvider"] if device == "cuda" else ["CPUExecutionProvider"]
        session_options = ort.SessionOptions()
        session_options.log_severity_level = 3  # errors only: the runtime's warnings are not findings
        session = ort.InferenceSession(lowered.path, session_options, providers=providers)
        names = [i.name for i in session.get_inputs()]

        def run(args: tuple, kwargs: dict) -> list:
            values = dict(flat_inputs(ep, args, kwargs))
            missing = [n for n in names if n not in values]
            if missing:
                raise RuntimeError(f"the ONNX model expects inputs {missing} that the exported program does not have")
            feed = {n: _numpy(values[n]) for n in names}
            return [torch.from_numpy(np.asarray(o)) for o in session.run(None, feed)]

        return run

    def rejection(self, exc: BaseException) -> bool:
        """Return True for onnxruntime refusing an input's shape or type (INVALID_ARGUMENT)."""
        text = str(exc)
        return "INVALID_ARGUMENT" in text and ("invalid dimensions" in text or "Unexpected input data type" in text)


def _numpy(value: Any) -> Any:
    import numpy as np
    import torch

    if isinstance(value, torch.Tensor):
        return value.detach().cpu().numpy()
    return np.asarray(value)


TARGET = OnnxRuntime()
