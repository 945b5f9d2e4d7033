"""ExecuTorch: XNNPACK lowering (to_edge_transform_and_lower), to_executorch(), the runtime bindings."""

from __future__ import annotations

import os
from typing import Any, Mapping

from exportcore.targets.base import Lowered, Runner, flat_inputs, flat_tensors

__all__ = ["TARGET", "ExecuTorch"]


class ExecuTorch:
    """The ``executorch`` target (CPU only: XNNPACK)."""

    name = "executorch"
    tolerance = (1e-3, 1e-3)
    unguarded_hint = ("ExecuTorch bounds a dynamic dimension only through the buffer sized for its maximum: "
                      "validate shapes before calling the method")

    def missing(self) -> str | None:
        """Return why executorch cannot run here: not installed, or built for another torch."""
        import importlib.util

        if importlib.util.find_spec("executorch") is None:
            return ("executorch: not installed (pip install executorch, or pip install 'pytest-export[executorch]'; "
                    "its wheel must match the installed torch)")
        try:
            from executorch.runtime import Runtime  # noqa: F401 - loads the compiled bindings
            from executorch.exir import to_edge_transform_and_lower  # noqa: F401
        except Exception as exc:  # noqa: BLE001 - an ABI mismatch shows as ImportError/OSError/RuntimeError
            first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
            return f"executorch: installed but cannot load with this torch ({type(exc).__name__}: {first[:200]})"
        return None

    def unsupported_device(self, device: str) -> str | None:
        """Return why ExecuTorch cannot run on ``device``: this target lowers to XNNPACK, a CPU backend."""
        return None if device == "cpu" else f"executorch on {device}: the XNNPACK backend runs on the CPU only"

    def lower(self, ep: Any, args: tuple, kwargs: dict, workdir: str, options: Mapping[str, Any]) -> Lowered:
        """Lower ``ep`` with the XNNPACK partitioner and write the .pte program."""
        from executorch.backends.xnnpack.partition.xnnpack_partitioner import XnnpackPartitioner
        from executorch.exir import to_edge_transform_and_lower

        program = to_edge_transform_and_lower(ep, partitioner=[XnnpackPartitioner()]).to_executorch()
        path = os.path.join(workdir, "model.pte")
        with open(path, "wb") as f:
            f.write(program.buffer)
        return Lowered(path=path)

    def load(self, lowered: Lowered, ep: Any, options: Mapping[str, Any], device: str) -> Runner:
        """Load the .pte program's forward method in the ExecuTorch runtime and return its runner."""
        import torch
        from executorch.runtime import Runtime

        method = Runtime.get().load_program(lowered.path).load_method("forward")

        def run(args: tuple, kwargs: dict) -> list:
            values = [v for _, v in flat_inputs(ep, args, kwargs)]
            with torch.no_grad():
                return flat_tensors(list(method.execute(values)))

        return run

    def rejection(self, exc: BaseException) -> bool:
        """Return True when the runtime refuses the inputs (set_inputs fails: a bounded buffer, a shape)."""
        return "set_inputs()" in str(exc)


TARGET = ExecuTorch()
