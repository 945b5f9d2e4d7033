"""Find the smallest submodules that fail to export on their own, in the failure's category.

One eager run with forward hooks records the inputs every submodule actually received;
each distinct submodule type is then exported once (the first instance called) with those
inputs. Types from torch itself are skipped: the answer points at the user's own code.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from exportcore.diagnosis.explain.context import reset
from exportcore.outcome import SubmoduleFailure

if TYPE_CHECKING:
    from exportcore.diagnosis.explain.context import FailedRun as Run

__all__ = ["failing_submodules"]


def failing_submodules(run: Run, category: str, budget_s: float = 120.0) -> tuple[list[SubmoduleFailure], list[str]]:
    """Return the smallest submodules failing alone with ``category``, and notes on what was skipped."""
    import torch

    from exportcore.diagnosis.classify import classify

    if not isinstance(run.model, torch.nn.Module):
        return [], []
    calls, counts = _record_inputs(run)
    reset(run)
    failing: dict[str, SubmoduleFailure] = {}
    notes: list[str] = []
    started = time.perf_counter()
    for path, (module, args, kwargs) in calls.items():
        if time.perf_counter() - started > budget_s:
            notes.append(f"submodule search stopped after {budget_s:g} s; {len(calls) - len(failing)} types unchecked")
            break
        try:
            torch.export.export(module, args, kwargs or None, strict=run.mode.strict)
        except Exception as exc:  # noqa: BLE001 - every export failure is a finding here
            failure = classify(exc, "capture")
            if failure.category == category:
                failing[path] = SubmoduleFailure(
                    path=path, module_type=type(module).__qualname__, category=failure.category,
                    message=failure.message, instances=counts[type(module)],
                )
        finally:
            reset(run)
    # Smallest first: drop a failing module when one of its own submodules fails the same way.
    smallest = [f for p, f in failing.items() if not any(q != p and q.startswith(p + ".") for q in failing)]
    if calls and not smallest and not notes:
        notes.append(f"no submodule of your own fails alone with {category} ({len(calls)} type(s) exported on "
                     "their recorded inputs): the failure needs the whole model's forward")
    return smallest, notes


def _record_inputs(run: Run) -> tuple[dict[str, tuple[Any, tuple, dict]], dict[type, int]]:
    import torch

    from exportcore.programs.execute import clone_tree, run_inference

    calls: dict[str, tuple[Any, tuple, dict]] = {}
    called: dict[type, set[str]] = {}
    handles = []

    def hook_for(path: str) -> Any:
        def hook(module: Any, args: tuple, kwargs: dict) -> None:
            paths = called.setdefault(type(module), set())
            if not paths:
                calls[path] = (module, clone_tree(tuple(args)), clone_tree(dict(kwargs)))
            paths.add(path)
        return hook

    for path, module in run.model.named_modules():
        if not path or type(module).__module__.startswith("torch."):
            continue
        handles.append(module.register_forward_pre_hook(hook_for(path), with_kwargs=True))
    try:
        reset(run)
        with torch.no_grad():
            # Inference is enough to see each submodule's inputs, in the mode's train/eval setting.
            run_inference(run.model, run.args, run.kwargs, seed=run.seed)
    except Exception:  # noqa: BLE001 - eager ran before; whatever was recorded is still usable
        pass
    finally:
        for handle in handles:
            handle.remove()
    return calls, {kind: len(paths) for kind, paths in called.items()}
