"""What every zoo builder needs: the optional package, the parameter budget, a seed, the batch dim."""

from __future__ import annotations

import contextlib
import importlib
from typing import Any, Callable, Iterator

from exportcore.zoo.common import ZooEntry, ZooSkip, ZooSpecError, seed_for

__all__ = [
    "BATCH", "EXAMPLE_BATCH", "amount", "batch_dim", "batch_only", "check_budget", "count_params", "require", "seeded",
]

#: The batch every zoo case declares: dynamic from 2 (0 and 1 specialize) to a size drawn shapes can afford.
BATCH = (2, 8)
EXAMPLE_BATCH = 2


def require(package: str) -> Any:
    """Import a zoo package, or raise ZooSpecError saying how to install it."""
    try:
        return importlib.import_module(package)
    except ImportError as exc:
        raise ZooSpecError(f"{package} is not installed ({exc}); pip install 'pytest-export[zoo]' "
                           "(timm, transformers, torchvision)") from None


def count_params(model: Any) -> int:
    """Return the number of parameters of a module (shared ones once)."""
    return sum(p.numel() for p in {id(p): p for p in model.parameters()}.values())


def check_budget(entry: ZooEntry, params: int | None, max_params: int | None,
                 on_meta: Callable[[], Any] | None = None) -> int | None:
    """Raise ZooSkip when the model has more parameters than the budget; return the count when known.

    Without a count from the library's metadata the model is built on the meta device (no memory, no
    initialization), so an over-budget model costs nothing to skip.
    """
    if params is None and on_meta is not None and max_params is not None:
        import torch

        try:
            with torch.device("meta"):
                params = count_params(on_meta())
        except Exception:  # noqa: BLE001 - a builder that cannot run on meta is counted once built
            params = None
    if params is not None and max_params is not None and params > max_params:
        raise ZooSkip(f"{entry.zoo_id}: {amount(params)} parameters, over the budget of "
                      f"{amount(max_params)} (--export-model-max-params)")
    return params


def amount(count: int) -> str:
    """A parameter count as a reader takes it in: 25.6M, or the number where millions would read 0.0M."""
    # millions where that reads well; a small budget (a test's 1E1) is not "0.0M"
    return f"{count / 1e6:.1f}M" if count >= 100_000 else str(count)


@contextlib.contextmanager
def seeded(entry: ZooEntry) -> Iterator[None]:
    """Draw weights and inputs from the entry's own seed: every mode and process builds the same model."""
    import torch

    state = torch.random.get_rng_state()
    torch.manual_seed(seed_for(entry.zoo_id))
    try:
        yield
    finally:
        torch.random.set_rng_state(state)


def batch_dim() -> Any:
    import torch

    return torch.export.Dim("batch", min=BATCH[0], max=BATCH[1])


def batch_only(dynamic_shapes: Any) -> Any:
    """Return the spec with only axis 0 of each ``{axis: dim}`` left dynamic, spelled as it was written.

    ``--export-model-shapes`` "batch": the parsed spelling (exportcore.shapes.parse.read_form) drops
    the other axes, and torch's spec is built from it again.
    """
    from exportcore.shapes.parse import read_form

    return read_form(dynamic_shapes).only_axes({0}).build()
