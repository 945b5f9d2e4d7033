"""Say what a user's ``inputs=`` factory (or strategy) got wrong when eager rejects its inputs.

Eager rejecting a drawn input is normally read as "the declared range is wider than the model":
the draw is discarded. With a user's factory it may be the factory's fault (a wrong dtype, token
ids outside the vocabulary, a keyword the model does not take), and every draw then being
discarded reads as a pass that checked nothing. The test: eager runs on the example inputs
resized to the same shapes. If it does, the factory is to blame, and this module names how its
inputs differ from the examples.
"""

from __future__ import annotations

from exportcore.shapes.parse import input_paths

__all__ = ["differences", "rejected_message"]


def differences(args: tuple, kwargs: dict, example_args: tuple, example_kwargs: dict) -> list[str]:
    """Return how the factory's inputs differ from the examples, input by input (structure, dtype, value range)."""
    import torch

    mine = dict(input_paths(args, kwargs))
    theirs = dict(input_paths(example_args, example_kwargs))
    out = [f"{p} is not an input of the examples" for p in mine if p not in theirs]
    out += [f"{p} is missing (the examples have it)" for p in theirs if p not in mine]
    for path, value in mine.items():
        ref = theirs.get(path)
        if not isinstance(ref, torch.Tensor):
            continue
        if not isinstance(value, torch.Tensor):
            out.append(f"{path} is a {type(value).__name__}, the example's is a tensor")
        elif value.dtype != ref.dtype:
            out.append(f"{path} is {value.dtype}, the example's is {ref.dtype}")
        elif value.device != ref.device:
            out.append(f"{path} is on {value.device}, the example is on {ref.device}")
        elif value.numel() and ref.numel() and not (value.dtype.is_floating_point or value.dtype.is_complex
                                                    or value.dtype == torch.bool):
            lo, hi = int(value.min()), int(value.max())
            rlo, rhi = int(ref.min()), int(ref.max())
            if lo < rlo or hi > rhi:
                out.append(f"{path} holds values {lo}..{hi}, the example's {rlo}..{rhi}")
    return out


def rejected_message(who: str, shapes: dict[str, tuple], error: BaseException, found: list[str]) -> str:
    """Return the failure message: ``who`` ("inputs factory"/"inputs strategy"), the shapes, eager's error, the differences."""
    where = ", ".join(f"{p}={list(s)}" for p, s in shapes.items())
    text = str(error).strip().splitlines()
    said = f"{type(error).__name__}: {text[0][:200]}" if text else type(error).__name__
    why = "; ".join(found) if found else "its values, which eager refuses where it accepts the examples' own"
    return (f"{who}: eager rejects the {who}'s inputs at the drawn shapes {where} ({said}) but runs on the example "
            f"inputs resized to those shapes: {why}")
