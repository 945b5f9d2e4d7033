"""Nested inputs and outputs: dicts, lists, namedtuples and dataclasses."""

from __future__ import annotations

from exportdb.registry import Fails, case


@case(
    name="dict_input",
    tags=("pytree", "python.data-structure"),
    description="""
    A dict of tensors as input; dynamic_shapes mirrors the structure with a dict of the
    same keys. Export flattens the dict into its leaves and rebuilds it on call.
    """,
)
def _():
    import torch
    from torch.export import Dim

    class M(torch.nn.Module):
        def forward(self, batch):
            return batch["x"] * batch["scale"]

    b = Dim("b", min=2, max=16)
    inputs = {"x": torch.randn(4, 3), "scale": torch.randn(4, 1)}
    return M(), (inputs,), {"batch": {"x": {0: b}, "scale": {0: b}}}


@case(
    name="dict_output",
    tags=("pytree", "python.data-structure"),
    description="""
    Returning a dict of tensors: the exported module returns a dict with the same keys.
    """,
)
def _():
    import torch

    class M(torch.nn.Module):
        def forward(self, x):
            return {"logits": x * 2, "probs": x.softmax(-1)}

    return M(), (torch.randn(2, 5),)


@case(
    name="namedtuple_input_output",
    tags=("pytree", "python.data-structure"),
    description="""
    namedtuples are pytree nodes out of the box, so they export as inputs and outputs.
    To save the program (torch.export.save), the namedtuple type also needs a serialized
    name: register it with torch.utils._pytree._register_namedtuple(cls,
    serialized_type_name=...), as done here.
    """,
)
def _():
    import torch

    Pair = _pair_class("RegisteredPair", serialized="exportdb.RegisteredPair")

    class M(torch.nn.Module):
        def forward(self, p):
            return Pair(p.a + p.b, p.a - p.b)

    return M(), (Pair(torch.randn(3), torch.randn(3)),)


@case(
    name="namedtuple_without_serialized_name",
    tags=("pytree", "python.data-structure"),
    description="""
    A namedtuple input exports and runs, but torch.export.save cannot write the program's
    input/output spec: the namedtuple type has no serialized name. Register one with
    torch.utils._pytree._register_namedtuple(cls, serialized_type_name=...).
    """,
    expect=Fails("serialization", stage="serialize"),
    rewrite="namedtuple_input_output",
)
def _():
    import torch

    Pair = _pair_class("UnnamedPair")

    class M(torch.nn.Module):
        def forward(self, p):
            return p.a * p.b

    return M(), (Pair(torch.randn(3), torch.randn(3)),)


def _pair_class(name: str, serialized: str | None = None) -> type:
    """Return a module-level namedtuple (serialized names must map to one importable type)."""
    import collections

    if name not in _CLASSES:
        cls = collections.namedtuple(name, ["a", "b"], module=__name__)
        globals()[name] = cls
        if serialized is not None:
            import torch.utils._pytree as pytree

            pytree._register_namedtuple(cls, serialized_type_name=serialized)
        _CLASSES[name] = cls
    return _CLASSES[name]


@case(
    name="list_of_tensors_input",
    tags=("pytree", "torch.dynamic-shape"),
    description="""
    A list of tensors with a dynamic length per element: dynamic_shapes is a list with one
    spec per element.
    """,
)
def _():
    import torch
    from torch.export import Dim

    class M(torch.nn.Module):
        def forward(self, xs):
            return torch.cat([t * (i + 1) for i, t in enumerate(xs)], dim=0)

    a, b = Dim("a", min=2, max=16), Dim("b", min=2, max=16)
    return M(), ([torch.randn(3, 2), torch.randn(4, 2)],), {"xs": [{0: a}, {0: b}]}


@case(
    name="dataclass_registered",
    tags=("pytree", "python.object-model"),
    description="""
    A dataclass used as input must be registered as a pytree node with
    torch.export.register_dataclass; export then flattens its fields. Pass
    serialized_type_name so that torch.export.save can write the program too.
    """,
)
def _():
    import torch

    Batch = _batch_class("RegisteredBatch", serialized="exportdb.RegisteredBatch")

    class M(torch.nn.Module):
        def forward(self, batch):
            return batch.x * batch.mask

    return M(), (Batch(torch.randn(3, 4), torch.ones(3, 4)),)


@case(
    name="dataclass_without_serialized_name",
    tags=("pytree", "python.object-model"),
    description="""
    A dataclass registered with torch.export.register_dataclass but without
    serialized_type_name: export and the exported module work, torch.export.save fails
    because the input spec names a type it cannot write.
    """,
    expect=Fails("serialization", stage="serialize"),
    rewrite="dataclass_registered",
)
def _():
    import torch

    Batch = _batch_class("UnnamedBatch", serialized="")

    class M(torch.nn.Module):
        def forward(self, batch):
            return batch.x + batch.mask

    return M(), (Batch(torch.randn(3, 4), torch.ones(3, 4)),)


@case(
    name="dataclass_unregistered",
    tags=("pytree", "python.object-model"),
    description="""
    An unregistered dataclass input is an opaque Python object to export: it cannot be
    flattened into tensors, so every mode rejects the input. Register it with
    torch.export.register_dataclass.
    """,
    expect=Fails("python.data-structure"),
    rewrite="dataclass_registered",
)
def _():
    import torch

    Batch = _batch_class("UnregisteredBatch")

    class M(torch.nn.Module):
        def forward(self, batch):
            return batch.x * batch.mask

    return M(), (Batch(torch.randn(3, 4), torch.ones(3, 4)),)


_CLASSES: dict[str, type] = {}


def _batch_class(name: str, serialized: str | None = None) -> type:
    """Return a module-level dataclass, registered once when ``serialized`` is not None ("" = no name)."""
    import dataclasses

    import torch

    if name not in _CLASSES:
        cls = dataclasses.make_dataclass(name, [("x", torch.Tensor), ("mask", torch.Tensor)])
        cls.__module__ = __name__
        globals()[name] = cls
        if serialized is not None:
            torch.export.register_dataclass(cls, serialized_type_name=serialized or None)
        _CLASSES[name] = cls
    return _CLASSES[name]


@case(
    name="nested_tuple_output",
    tags=("pytree",),
    description="""
    Arbitrarily nested tuples and lists in the output are preserved by the exported module.
    """,
)
def _():
    import torch

    class M(torch.nn.Module):
        def forward(self, x):
            return (x, [x * 2, (x * 3, x * 4)])

    return M(), (torch.randn(2),)


@case(
    name="optional_none_input",
    tags=("pytree", "python.control-flow"),
    description="""
    An optional input passed as None is a leaf with no tensor: the branch on `mask is None`
    is resolved at trace time, and the exported program requires None there.
    """,
)
def _():
    import torch

    class M(torch.nn.Module):
        def forward(self, x, mask=None):
            if mask is None:
                return x.sum(-1)
            return (x * mask).sum(-1)

    return M(), (torch.randn(3, 4), None)


@case(
    name="custom_class_output_unregistered",
    tags=("pytree", "python.object-model"),
    description="""
    Returning an instance of a plain Python class is not supported: outputs must be
    tensors, scalars or registered pytree containers. Return a dict or namedtuple, or
    register the class as a pytree node.
    """,
    expect=Fails("python.data-structure"),
    rewrite="namedtuple_input_output",
)
def _():
    import torch

    class Result:
        def __init__(self, value):
            self.value = value

    class M(torch.nn.Module):
        def forward(self, x):
            return Result(x * 2)

    return M(), (torch.randn(3),)
