"""The save/load round trip's memoized parsing gives back exactly the program torch's own load gives."""

from __future__ import annotations

import io
import typing

import pytest

torch = pytest.importorskip("torch")
sympy = pytest.importorskip("sympy")

from torch.export import Dim  # noqa: E402

from exportcore.programs.serde_memo import memoized_parsing  # noqa: E402

serialize = pytest.importorskip("torch._export.serde.serialize")


class Reshaper(torch.nn.Module):
    """Symbolic sizes in many forms: s0, s0*s1, 4*s0*s1 and a slice's size, over a batch norm's buffers."""

    def __init__(self) -> None:
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 4, 3, padding=1)
        self.bn = torch.nn.BatchNorm2d(4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.bn(self.conv(x)).relu()
        flat = y.reshape(y.shape[0], -1)
        return flat[:, 1:] * 2 + flat.mean()


def _program() -> torch.export.ExportedProgram:
    torch.manual_seed(0)
    model = Reshaper().eval()
    spec = {"x": {0: Dim("batch", min=1, max=8), 2: Dim("h", min=4, max=32)}}
    return torch.export.export(model, (torch.randn(2, 3, 8, 6),), dynamic_shapes=spec).run_decompositions()


def _described(ep: torch.export.ExportedProgram) -> list:
    """Every node's name, target and value metadata (sizes and strides as symbolic text), and the ranges."""
    nodes = []
    for node in ep.graph.nodes:
        val = node.meta.get("val")
        meta = (str(val.shape), str(val.stride()), str(val.dtype)) if isinstance(val, torch.Tensor) else str(val)
        nodes.append((node.op, node.name, str(node.target), meta))
    return [nodes, sorted((str(k), str(v)) for k, v in ep.range_constraints.items()), str(ep.graph_signature)]


def test_a_memoized_round_trip_gives_back_what_torch_alone_gives() -> None:
    buffer = io.BytesIO()
    torch.export.save(_program(), buffer)
    data = buffer.getvalue()
    plain = torch.export.load(io.BytesIO(data))
    with memoized_parsing():
        memoized = torch.export.load(io.BytesIO(data))
        # the memo answered the repeats: far fewer distinct texts than the program has symbolic sizes
        assert isinstance(serialize.sympy._memo, dict) and serialize.sympy._memo
    assert _described(memoized) == _described(plain)
    x = torch.randn(5, 3, 13, 6)  # another batch and height than the example's
    torch.testing.assert_close(memoized.module()(x), plain.module()(x), rtol=0, atol=0)
    with pytest.raises(Exception):  # and its guards still reject what the spec does not allow
        memoized.module()(torch.randn(9, 3, 13, 6))


def test_the_serializer_gets_its_own_modules_back_after_the_block_even_when_the_load_fails() -> None:
    with pytest.raises(Exception):
        with memoized_parsing():
            assert serialize.sympy is not sympy and serialize.typing is not typing
            torch.export.load(io.BytesIO(b"not an archive"))
    assert serialize.sympy is sympy and serialize.typing is typing


def test_a_nested_block_runs_unmemoized_and_leaves_the_outer_one_in_place() -> None:
    with memoized_parsing():
        outer = serialize.sympy
        with memoized_parsing():
            assert serialize.sympy is outer  # the inner block did not swap again
        assert serialize.sympy is outer  # nor did it restore the real module under the outer block
    assert serialize.sympy is sympy


def test_the_same_text_with_other_bindings_is_parsed_again() -> None:
    with memoized_parsing():
        parse = serialize.sympy.sympify
        positive = sympy.Symbol("s0", integer=True, positive=True)
        plain = sympy.Symbol("s0")
        a = parse("Max(1, s0)", locals={"s0": positive})
        b = parse("Max(1, s0)", locals={"s0": plain})
        c = parse("Max(1, s0)", locals={"s0": positive})
    assert a == positive  # Max(1, s0) with s0 >= 1 is s0 itself
    assert b != a and b == sympy.Max(1, plain)  # not the first answer: s0 is bound to another symbol
    assert c is a  # a repeat with the same binding is the first answer


def test_get_type_hints_answers_are_copies() -> None:
    from torch._export.serde import schema

    with memoized_parsing():
        first = serialize.typing.get_type_hints(schema.Node, globalns=vars(schema))
        first.clear()  # a caller that edits its answer does not edit the next caller's
        second = serialize.typing.get_type_hints(schema.Node, globalns=vars(schema))
    assert second == typing.get_type_hints(schema.Node, globalns=vars(schema)) and second

