"""Eager's scores behind an index output: the model run again with each argmax / max(dim) / topk call caught.

Made only when a program's integer output differs from eager's (exportcore.programs.parity): eager runs
once more from the snapshot, on the same inputs and seed, under a TorchFunctionMode that keeps the input
and the indices of every DISCRETE_OPS call. The output leaf is matched to the calls that returned exactly
its indices; exportcore.compare.ties judges a flip against their scores. A leaf no call returned (indices
computed further, or a call torch dispatches below Python) finds none: it is compared exactly, as before.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable

from exportcore.compare.ties import DISCRETE_OPS, DiscreteCall, Tie, tie_of
from exportcore.programs.sides import prepare, run_side, traced_path

if TYPE_CHECKING:
    from exportcore.programs.context import ProgramRun

__all__ = ["eager_calls", "tie_judge"]


def eager_calls(run: ProgramRun, inputs: tuple[tuple, dict]) -> list[DiscreteCall]:
    """Return every DISCRETE_OPS call eager makes on ``inputs`` (empty where it cannot run again)."""
    from torch.overrides import TorchFunctionMode

    calls: list[DiscreteCall] = []

    class Catch(TorchFunctionMode):
        def __torch_function__(self, func: Any, types: Any, args: tuple = (), kwargs: dict | None = None) -> Any:
            kwargs = kwargs or {}
            out = func(*args, **kwargs)
            name = getattr(func, "__name__", "")
            if name in DISCRETE_OPS:
                call = _call(name, args, kwargs, out)
                if call is not None:
                    calls.append(call)
            return out

    try:
        with traced_path(), Catch():
            run_side(run, run.model, *inputs, backward=False)
    except Exception:  # noqa: BLE001 - it ran once already; if it cannot again, no tie is judged
        return []
    finally:
        prepare(run)
    return calls


def _call(name: str, args: tuple, kwargs: dict, out: Any) -> DiscreteCall | None:
    import torch

    def arg(i: int, key: str, default: Any = None) -> Any:
        return args[i] if len(args) > i else kwargs.get(key, default)

    scores = arg(0, "input")
    if not isinstance(scores, torch.Tensor):
        return None
    if name in ("argmax", "argmin"):
        indices, dim, keepdim = out, arg(1, "dim"), bool(arg(2, "keepdim", False))
    elif name == "topk":
        indices, dim, keepdim = getattr(out, "indices", None), arg(2, "dim", -1), True
    else:  # max / min: only the form over a dim returns indices
        dim = arg(1, "dim")
        if not isinstance(dim, int) or isinstance(dim, bool):
            return None
        indices, keepdim = getattr(out, "indices", None), bool(arg(2, "keepdim", False))
    if not isinstance(indices, torch.Tensor) or (dim is not None and not isinstance(dim, int)):
        return None
    return DiscreteCall(name, scores.detach().clone(), dim, keepdim, indices.detach().clone())


def tie_judge(run: ProgramRun, inputs: tuple[tuple, dict] | None, noted: Callable[[str, Tie], None]
              ) -> Callable[[str, Any, Any], float | None]:
    """Return the judge compare() asks about an integer leaf that differs: the worst gap's share of its tolerance
    where every flip is a tie (``noted`` hears of it), else None. Eager runs again once, on the first leaf asked."""
    caught: list[list[DiscreteCall]] = []

    def judge(path: str, expected: Any, actual: Any) -> float | None:
        import torch

        if inputs is None or expected.is_floating_point() or expected.dtype == torch.bool:
            return None
        if not caught:
            caught.append(eager_calls(run, inputs))
        matching = [c for c in caught[0] if c.indices.shape == expected.shape and c.indices.dtype == expected.dtype
                    and c.indices.device == expected.device and torch.equal(c.indices, expected)]
        judged = [tie_of(c, expected, actual, run.rtol, run.atol) for c in matching]
        ties = [t for t in judged if t is not None]
        if not ties or len(ties) < len(judged):
            return None  # no call returned it, or one that did calls a flip real: compared exactly
        tie = max(ties, key=lambda t: t.fraction)  # (every call returning these indices agrees it is a tie)
        noted(path, tie)
        return tie.fraction

    return judge
