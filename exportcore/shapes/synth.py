"""Build inputs for a drawn shape by resizing the example inputs, or through a user factory.

Resized tensors keep dtype, device, layout (sparse, quantized, stride order: exportcore.shapes.layouts),
requires_grad and the example's value domain:
integers stay within the observed min..max (token ids stay below the vocabulary size; negatives beside
non-negatives, ``ignore_index=-100`` or padding -1, keep their observed values and rate),
bools keep their rate of True, constant tensors (masks of ones) stay constant, float masks
(at most 4 distinct values, e.g. {0, 1} or {0, -inf}) draw from those values, floats that
are never negative stay uniform in the observed range, other floats follow the observed
mean and std. Tensors whose shape does not change are cloned; non-tensor leaves are kept. An input
that cannot be built at the asked shape raises SynthesisError: the caller skips that probe.
"""

from __future__ import annotations

import random
import zlib
from dataclasses import dataclass
from typing import Any

from hypothesis import strategies as st

from exportcore.shapes.layouts import SynthesisError, in_layout_of
from exportcore.shapes.parse import input_paths
from exportcore.shapes.spec import ShapeSpec
from exportcore.shapes.strategies import valid_assignments

__all__ = [
    "Drawn", "SynthesisError", "synthesize", "inputs_strategy", "drawn_for", "input_shapes", "factory_mismatch",
    "strategy_mismatch",
]


@dataclass
class Drawn:
    """One drawn input: the root assignment (empty for a user strategy) and the inputs."""

    assignment: dict[str, int]
    shapes: dict[str, tuple[int, ...]]
    args: tuple
    kwargs: dict[str, Any]
    seed: int = 0
    #: Why the user's inputs factory failed this draw (it raised, or ignored the shapes); "" if it did not.
    problem: str = ""
    #: Why no input could be built at these shapes (exportcore.shapes.layouts): not probed; "" if built.
    skip: str = ""


def synthesize(args: tuple, kwargs: dict | None, shapes: dict[str, tuple], *, seed: int) -> tuple[tuple, dict]:
    """Return new (args, kwargs) whose tensor at each path in ``shapes`` has that shape."""
    from torch.utils._pytree import tree_flatten, tree_unflatten

    if not isinstance(args, tuple):
        raise TypeError(f"args must be a tuple, got {type(args).__name__}")
    kwargs = dict(kwargs or {})
    leaves, treespec = tree_flatten((args, kwargs))
    paths = input_paths(args, kwargs)
    known = {p for p, _ in paths}
    unknown = set(shapes) - known
    if unknown:
        raise ValueError(f"shapes: no input at {sorted(unknown)}; inputs are {sorted(known)}")
    out = []
    built: dict[tuple, Any] = {}  # the same example tensor at two paths stays one tensor (aliased inputs)
    for (path, leaf), same in zip(paths, leaves):
        assert same is leaf
        want = shapes.get(path)
        key = (id(leaf), None if want is None else tuple(int(n) for n in want))
        if key in built and not isinstance(leaf, (int, float, bool, str, type(None))):
            out.append(built[key])
            continue
        try:
            new = _resize(leaf, want, seed ^ zlib.crc32(path.encode("utf-8", "surrogatepass")))
        except SynthesisError as exc:
            raise SynthesisError(f"{path}: cannot build shape {list(want)}: {exc}") from None
        # Whatever the layout, a probe runs at the shape asked for or not at all.
        if want is not None and tuple(new.shape) != tuple(int(n) for n in want):
            raise SynthesisError(f"{path}: asked for shape {list(want)}, could only build {list(new.shape)}")
        built[key] = new
        out.append(new)
    new_args, new_kwargs = tree_unflatten(out, treespec)
    return tuple(new_args), new_kwargs


def input_shapes(args: tuple, kwargs: dict | None) -> dict[str, tuple[int, ...]]:
    """Return path -> shape of every tensor input."""
    import torch

    return {p: tuple(v.shape) for p, v in input_paths(args, kwargs) if isinstance(v, torch.Tensor)}


def inputs_strategy(
    spec: ShapeSpec, args: tuple, kwargs: dict | None, user_inputs: Any = None, *, seed: int = 0
) -> st.SearchStrategy[Drawn]:
    """Draw in-spec inputs: resized examples, a user factory ``(shapes, rng)``, or a user strategy."""
    if isinstance(user_inputs, st.SearchStrategy):
        return user_inputs.map(lambda value: _from_user(spec, value))
    if user_inputs is not None and not callable(user_inputs):
        raise TypeError(
            f"inputs must be a callable (shapes, rng) -> (args, kwargs) or a hypothesis strategy, "
            f"got {type(user_inputs).__name__}"
        )

    return valid_assignments(spec).map(lambda assignment: drawn_for(spec, args, kwargs, assignment, user_inputs, seed=seed))


def drawn_for(
    spec: ShapeSpec, args: tuple, kwargs: dict | None, assignment: dict[str, int], user_inputs: Any = None, *, seed: int = 0
) -> Drawn:
    """Build the inputs of one root assignment: resized examples, or the user factory's ``(shapes, rng)``."""
    # values follow from the shape, not from a drawn seed: shrinking then only ever
    # works on sizes, and each shape is reproducible from (seed, shape) alone
    value_seed = (seed ^ zlib.crc32(repr(sorted(assignment.items())).encode("utf-8", "surrogatepass"))) & 0xFFFFFFFF
    shapes = spec.shapes_for(assignment)
    if user_inputs is None:
        try:
            new_args, new_kwargs = synthesize(args, kwargs, shapes, seed=value_seed)
        except SynthesisError as exc:
            return Drawn(assignment, shapes, (), {}, value_seed, skip=str(exc))
        return Drawn(assignment, shapes, new_args, new_kwargs, value_seed)
    return _from_factory(user_inputs, assignment, shapes, value_seed)


def _from_factory(factory: Any, assignment: dict[str, int], shapes: dict[str, tuple], seed: int) -> Drawn:
    # The factory's faults are the user's input, not the export's: a factory that raises, or
    # returns other shapes than drawn, would otherwise be blamed on guards or numerics.
    drawn = ", ".join(f"{p}={list(s)}" for p, s in shapes.items())
    try:
        produced = factory(shapes, random.Random(seed))
    except Exception as exc:  # noqa: BLE001 - any error of user code is reported, not raised
        text = str(exc).strip().splitlines()
        what = f"{type(exc).__name__}: {text[0]}" if text else type(exc).__name__
        return Drawn(assignment, shapes, (), {}, seed, problem=f"inputs factory raised {what} (drawn shapes: {drawn})")
    try:
        new_args, new_kwargs = _check_pair(produced)
    except TypeError as exc:
        return Drawn(assignment, shapes, (), {}, seed, problem=f"{exc} (drawn shapes: {drawn})")
    problem = factory_mismatch(shapes, new_args, new_kwargs)
    return Drawn(assignment, shapes, new_args, new_kwargs, seed, problem=problem)


def factory_mismatch(shapes: dict[str, tuple], args: tuple, kwargs: dict) -> str:
    """Return what an inputs factory got wrong about the drawn ``shapes`` ("" when nothing)."""
    import torch

    got = dict(input_paths(args, kwargs))
    for path, want in shapes.items():
        value = got.get(path)
        if not isinstance(value, torch.Tensor):
            found = "nothing" if path not in got else type(value).__name__
            return (f"inputs factory returned {found} at {path}, where the drawn shapes need a tensor of shape "
                    f"{list(want)}")
        if tuple(value.shape) != tuple(want):
            return (f"inputs factory returned {path} of shape {list(value.shape)}, but the drawn shape is "
                    f"{list(want)}: the factory must build inputs of the shapes it is given")
    return ""


def _from_user(spec: ShapeSpec, value: Any) -> Drawn:
    try:
        new_args, new_kwargs = _check_pair(value)
    except TypeError as exc:
        return Drawn({}, {}, (), {}, problem=f"inputs strategy: {exc}")
    shapes = input_shapes(new_args, new_kwargs)
    return Drawn({}, shapes, new_args, new_kwargs, problem=strategy_mismatch(spec, shapes))


def strategy_mismatch(spec: ShapeSpec, shapes: dict[str, tuple[int, ...]]) -> str:
    """Return how shapes drawn by a user's strategy leave the declared spec ("" when they do not).

    Out-of-spec draws would be refused by the exported program's guards and read as the
    export narrowing a range; they are the strategy's fault.
    """
    from exportcore.shapes.solve import coefficients

    assignment: dict[str, int] = {}
    derived: list[tuple[Any, int]] = []
    for slot in spec.tensors:
        shape = shapes.get(slot.path)
        if shape is None or len(shape) != len(slot.axes):
            got = "no tensor" if shape is None else f"shape {list(shape)}"
            return f"inputs strategy drew {got} at {slot.path}, whose example has shape {list(slot.shape)}"
        for axis, size in zip(slot.axes, shape):
            if axis.root is None or axis.derived:
                assignment[axis.key] = size
                if axis.derived:
                    derived.append((axis, size))
            elif assignment.setdefault(axis.root, size) != size:
                assignment[axis.key] = size  # a second axis of the same dim, disagreeing
    for axis, size in derived:
        a, b = coefficients(axis.expr, axis.root)
        if axis.root not in assignment and (size - b) % a == 0:
            assignment[axis.root] = (size - b) // a
    broken = spec.violations(assignment)
    if not broken:
        return ""
    where = ", ".join(f"{p}={list(s)}" for p, s in shapes.items())
    return f"inputs strategy drew shapes outside the declared dynamic_shapes ({', '.join(broken)}): {where}"


def _check_pair(value: Any) -> tuple[tuple, dict]:
    if not (isinstance(value, tuple) and len(value) == 2 and isinstance(value[0], tuple)):
        raise TypeError(f"inputs must produce (args: tuple, kwargs: dict), got {type(value).__name__}")
    if value[1] is not None and not isinstance(value[1], dict):
        raise TypeError(f"inputs must produce (args, kwargs) with kwargs a dict, got {type(value[1]).__name__}")
    return value[0], dict(value[1] or {})


def _resize(leaf: Any, shape: tuple | None, seed: int) -> Any:
    import torch

    if not isinstance(leaf, torch.Tensor):
        return leaf
    if shape is None or tuple(shape) == tuple(leaf.shape):
        return leaf.detach().clone().requires_grad_(leaf.requires_grad)
    gen = torch.Generator().manual_seed(seed % (2**63))
    shape = tuple(int(s) for s in shape)
    if any(s < 0 for s in shape):
        raise ValueError(f"shapes: negative size in {list(shape)}")
    new = in_layout_of(leaf, shape, gen, _values).to(leaf.device)
    if leaf.requires_grad:
        new.requires_grad_(True)
    return new


#: A float example with at most this many distinct values is treated as a mask of levels.
_FEW_LEVELS = 4


def _values(ref: Any, shape: tuple[int, ...], gen: Any) -> Any:
    import torch

    dtype = ref.dtype
    if ref.numel() == 0:
        return torch.zeros(shape, dtype=dtype)
    if dtype == torch.bool:
        rate = ref.float().mean().item()
        return torch.rand(shape, generator=gen) < rate
    if not (dtype.is_floating_point or dtype.is_complex):
        return _integers(ref, shape, gen)
    if dtype.is_complex:
        scale = ref.abs().double().std().item() if ref.numel() > 1 else 1.0
        return (torch.randn(shape, generator=gen, dtype=dtype) * scale).to(dtype)
    wide = ref.double()
    levels = torch.unique(wide[~torch.isnan(wide)])
    if 1 < levels.numel() <= _FEW_LEVELS and ref.numel() >= 2 * levels.numel():
        # a float mask ({0, 1}, or additive {0, -inf}) stays a mask: draw its levels
        pick = torch.randint(0, levels.numel(), shape, generator=gen)
        return levels[pick].to(dtype)
    wide = wide[torch.isfinite(wide)]  # a NaN/inf in a continuous example says nothing of its domain
    if wide.numel() == 0:
        return torch.zeros(shape, dtype=dtype)
    lo, hi = wide.min().item(), wide.max().item()
    if lo == hi:
        return torch.full(shape, lo, dtype=dtype)
    if lo >= 0:
        return (torch.rand(shape, generator=gen, dtype=torch.float64) * (hi - lo) + lo).to(dtype)
    mean, std = wide.mean().item(), (wide.std().item() if wide.numel() > 1 else 1.0)
    return (torch.randn(shape, generator=gen, dtype=torch.float64) * std + mean).to(dtype)


def _integers(ref: Any, shape: tuple[int, ...], gen: Any) -> Any:
    """Integers within the observed min..max; negatives beside non-negatives are sentinels, kept as observed.

    Labels with ``ignore_index=-100`` or ids padded with -1 are valid at those values only: drawn
    uniformly over [-100, 4], nearly every label would be one no loss accepts.
    """
    import torch

    values = ref.flatten().to(torch.int64)
    negative = values[values < 0]
    if negative.numel() == 0 or negative.numel() == values.numel():
        lo, hi = int(values.min().item()), int(values.max().item())
        return torch.randint(lo, hi + 1, shape, generator=gen, dtype=torch.int64).to(ref.dtype)
    rest = values[values >= 0]
    lo, hi = int(rest.min().item()), int(rest.max().item())
    drawn = torch.randint(lo, hi + 1, shape, generator=gen, dtype=torch.int64)
    rate = negative.numel() / values.numel()
    sentinel = negative[torch.randint(0, negative.numel(), shape, generator=gen)]
    return torch.where(torch.rand(shape, generator=gen) < rate, sentinel, drawn).to(ref.dtype)
