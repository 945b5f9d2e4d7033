"""When two exported programs are the same program: same graph code, signature, ranges and tensors.

Two programs are interchangeable for every check when everything their ``.module()`` is
built from is equal: the graph's generated code, the graph signature (which input is which
parameter, buffer or user input, which output mutates what), the range constraints, the
call signature (pytree in/out specs, argument names), the guards the capture recorded beyond the
ranges (``.module()`` checks them too) and every lifted tensor, by value. The engine uses it
to run work once: the reloaded program is not probed again on drawn shapes when it is the
exported one, and a mode whose capture equals another mode's reuses that mode's checks
(exportcore.reuse.donations). Anything it cannot compare (a script object, a tensor subclass, a
sparse or meta tensor) makes the programs "not known to be the same": never a shortcut.
"""

from __future__ import annotations

import hashlib
import re
from typing import Any, Iterator

from exportcore.sandbox.tensor_digest import feed_tensor, plain_tensor

__all__ = ["structure", "guard_structure", "same_program", "subgraphs", "outside_torch", "tensors_of",
           "module_digest", "constants_digest"]


def structure(ep: Any) -> str:
    """Return everything of ``ep`` but its tensor values, as one text equal for equivalent programs.

    Canonical, so that two captures of one program compare equal: nodes and torch's shape
    symbols are renamed in order of appearance (``s6`` in one capture is ``s77`` in the
    next), and a lifted parameter or buffer no node reads is left out (strict export drops
    an unread ``num_batches_tracked`` that non-strict keeps; a value never read cannot
    change a result). Submodule graphs (``torch.cond`` branches) are included.
    """
    return _Canon().program(ep)


def guard_structure(ep: Any) -> str:
    """Return what ``ep.module()``'s input checks are built from, as one text: its user inputs' shapes
    (static sizes, torch's symbols renamed in order of appearance), its ranges and its recorded guards.

    Two programs with equal texts refuse the same inputs before computing anything.
    """
    canon = _Canon()
    from torch.export.graph_signature import InputKind

    users = {spec.arg.name for spec in ep.graph_signature.input_specs
             if spec.kind == InputKind.USER_INPUT and hasattr(spec.arg, "name")}
    lines = [canon.text(repr(getattr(node.meta.get("val"), "shape", node.meta.get("val"))))
             for node in ep.graph.nodes if node.op == "placeholder" and node.name in users]
    lines += [f"range {canon.text(str(symbol))} {ep.range_constraints[symbol]}"
              for symbol in sorted(ep.range_constraints, key=lambda s: canon.text(str(s)))]
    lines.append(f"guards {canon.guards(ep)!r}")
    return "\n".join(lines)


class _Canon:
    def __init__(self) -> None:
        self.symbols: dict[str, str] = {}

    def text(self, value: str) -> str:
        return _SYMBOL.sub(self._symbol, value)

    def _symbol(self, match: Any) -> str:
        name = match.group(0)
        return self.symbols.setdefault(name, f"{name[0]}#{len(self.symbols)}")

    def guards(self, ep: Any) -> list[str]:
        """The guards the capture recorded beyond the ranges (torch 2.7+), as torch wrote them, sorted."""
        return sorted(self.text(code) for code in getattr(ep, "_guards_code", None) or ())

    def program(self, ep: Any) -> str:
        from torch.export.graph_signature import InputKind

        kinds = {spec.arg.name: spec for spec in ep.graph_signature.input_specs if hasattr(spec.arg, "name")}
        kept = [
            node for node in ep.graph.nodes
            # an unread parameter/buffer/constant cannot change a result
            if not (node.op == "placeholder" and node.name in kinds
                    and kinds[node.name].kind != InputKind.USER_INPUT and not node.users)
        ]
        # Lifted parameters/buffers/constants are bound by name, not position (strict lists them in
        # the order forward reads them, non-strict in named_parameters order): name them by target.
        order: dict[Any, Any] = {}
        users = compute = 0
        for node in kept:
            spec = kinds.get(node.name) if node.op == "placeholder" else None
            if spec is not None and spec.kind != InputKind.USER_INPUT:
                order[node] = _Ref(f"{spec.kind.name}:{spec.target}")
            elif node.op == "placeholder":
                order[node], users = _Ref(f"in{users}"), users + 1
            else:
                order[node], compute = _Ref(f"%{compute}"), compute + 1
        lines = sorted(self.node(node, kinds[node.name], order) for node in kept
                       if node.op == "placeholder" and kinds.get(node.name) is not None
                       and kinds[node.name].kind != InputKind.USER_INPUT)
        lines += [self.node(node, kinds.get(node.name) if node.op == "placeholder" else None, order) for node in kept
                  if not (node.op == "placeholder" and kinds.get(node.name) is not None
                          and kinds[node.name].kind != InputKind.USER_INPUT)]
        for symbol in sorted(ep.range_constraints, key=lambda s: self.text(str(s))):
            lines.append(f"range {self.text(str(symbol))} {ep.range_constraints[symbol]}")
        lines.append(f"outputs {[(str(o.kind), o.target) for o in ep.graph_signature.output_specs]}")
        calls = getattr(ep, "module_call_graph", None) or []
        signature = calls[0].signature if calls else None
        lines.append(f"call {getattr(signature, 'in_spec', None)!r} -> {getattr(signature, 'out_spec', None)!r} "
                     f"names {getattr(signature, 'forward_arg_names', None)!r}")
        # .module() also checks the guards the capture recorded beyond the ranges (``x.size()[0] != 3``
        # from a shape test only non-strict tracing ran, or one a decomposition added): two programs
        # equal in all else may still accept different shapes. As torch wrote them: strict and
        # non-strict spell one guard's input differently, and then they are not proven the same.
        lines.append(f"guards {self.guards(ep)!r} examples {getattr(ep, 'example_inputs', None) is not None}")
        if any(spec.kind.name == "TOKEN" for spec in ep.graph_signature.input_specs):
            # effect tokens: .module() strips them from any program but a training-dialect one
            lines.append(f"dialect {[getattr(verifier, 'dialect', None) for verifier in ep.verifiers]}")
        for name, sub in subgraphs(ep.graph_module):
            lines.append(f"sub {name}:{self.text(sub.code)}")
        return "\n".join(lines)

    def node(self, node: Any, spec: Any, order: dict[Any, Any]) -> str:
        from torch.fx.node import map_arg

        args = map_arg((node.args, node.kwargs), order.__getitem__)
        if str(node.target) == "aten.slice.Tensor":
            args = (_slice_defaults(args[0]), args[1])
        args = _by_schema(node.target, args)
        if node.op != "placeholder":
            declared = f" -> {_meta(node.meta.get('val'))}" if outside_torch(node.target) else ""
            return self.text(f"{order[node]} {node.op} {_target(node.target)} {args!r}{declared}")
        val = node.meta.get("val")
        shape = getattr(val, "shape", val)
        kind = f"persistent={getattr(spec, 'persistent', None)}" if spec is not None else ""
        name = node.target if spec is None or spec.kind.name == "USER_INPUT" else ""
        return self.text(f"{order[node]} placeholder {name} {kind} {shape!r}")


def subgraphs(owner: Any, prefix: str = "") -> Iterator[tuple[str, Any]]:
    """The graphs ``owner``'s graph reads by ``get_attr`` (cond's branches, map's body), and theirs in turn.

    A cond inside a cond's branch is a submodule of the branch's graph, not of the program's: its
    code is part of what the program computes like any other.
    """
    for node in owner.graph.nodes:
        sub = getattr(owner, node.target, None) if node.op == "get_attr" else None
        if sub is not None and hasattr(sub, "code"):
            yield prefix + node.target, sub
            if hasattr(sub, "graph"):
                yield from subgraphs(sub, f"{prefix}{node.target}.")


def _target(target: Any) -> str:
    """Name a node's target the same way in every process.

    A plain function's repr holds its address (``<function sym_float at 0x7f...>``), new in every
    process: torch's, operator's, math's and the builtins' are named by module and name, which
    their versions fix. Any other function keeps its repr, so it never matches another process's.
    """
    module = getattr(target, "__module__", None) or ""
    if callable(target) and not hasattr(target, "_schema") and (
            module.split(".")[0] in ("torch", "_operator", "operator", "math", "builtins")):
        return f"{module}.{getattr(target, '__qualname__', getattr(target, '__name__', target))}"
    return str(target)


def outside_torch(target: Any) -> bool:
    """Whether a node's operator runs code that is not torch's own: its kernels, and its fake kernel's shapes.

    What the node declares about its output then comes from the user's code: a custom op's fake
    kernel (``register_fake``) decides the shapes the graph declares after it, and the drawn
    shapes check them (exportcore.programs.output_meta); the user may edit it while the
    graph's code and eager's answer stay the same. A higher-order op's outputs come from its
    bodies and the ops it wraps (``auto_functionalized(mylib.op, ...)``). torch's own operators'
    meta kernels are named by the torch version in the result cache's identity.
    """
    from torch._ops import HigherOrderOperator, OpOverload

    if isinstance(target, OpOverload):
        return target.namespace not in ("aten", "prims")
    return isinstance(target, HigherOrderOperator)


def _meta(val: Any) -> str:
    """Describe a node's ``meta["val"]``: tensors by dtype, shape, strides and device, symbols as written."""
    if isinstance(val, (list, tuple)):
        return "(" + ", ".join(_meta(v) for v in val) + ")"
    shape = getattr(val, "shape", None)
    if shape is not None and hasattr(val, "stride"):
        return f"{val.dtype}{list(shape)}/{list(val.stride())}@{val.device}"
    return repr(val)


def _by_schema(target: Any, args: Any) -> Any:
    """Bind an operator's (args, kwargs) to its schema, defaults filled in.

    torch 2.6's deserializer passes ``bias`` to aten.linear by keyword where export wrote it
    positionally: one call, two spellings (fixed by pytorch/pytorch#144686, which keeps each
    argument's positional/keyword kind; drop this when 2.6 is no longer supported).
    """
    schema = getattr(target, "_schema", None)
    if schema is None:
        return args
    positional, keywords = args
    bound = []
    for i, argument in enumerate(schema.arguments):
        if i < len(positional) and not argument.kwarg_only:
            value = positional[i]
        elif argument.name in keywords:
            value = keywords[argument.name]
        elif argument.has_default_value():
            value = argument.default_value
        else:
            return args  # a call the schema does not describe: compare it as written
        bound.append((argument.name, value))
    if len(positional) > len(bound) or set(keywords) - {name for name, _ in bound}:
        return args
    return tuple(bound)


def _slice_defaults(args: tuple) -> tuple:
    # aten.slice.Tensor(self, dim=0, start=None, end=None, step=1): start None *is* 0 (strict
    # writes 0, non-strict None for `t[:n]`), and the defaults may be spelled or left out.
    full = list(args) + [0, None, None, 1][len(args) - 1:] if len(args) < 5 else list(args)
    if full[2] is None:
        full[2] = 0
    return tuple(full)


class _Ref(str):
    def __repr__(self) -> str:
        return str(self)


_SYMBOL = re.compile(r"\b[su]\d+\b")


def tensors_of(ep: Any) -> dict[str, Any] | None:
    """Return every lifted tensor of ``ep`` by name, or None when one cannot be compared by value."""
    import torch

    from torch.export.graph_signature import InputKind

    read = {node.name for node in ep.graph.nodes if node.op == "placeholder" and node.users}
    found: dict[str, Any] = {}
    for spec in ep.graph_signature.input_specs:
        if spec.kind == InputKind.USER_INPUT or getattr(spec.arg, "name", None) not in read:
            continue
        table = ep.state_dict if spec.kind in (InputKind.PARAMETER, InputKind.BUFFER) and spec.target in ep.state_dict \
            else ep.constants
        value = table.get(spec.target)
        if not plain_tensor(value, torch):
            return None  # a script object, a tensor subclass, a non-persistent buffer missing: not comparable
        found[spec.target] = value
    return found


def same_program(a: Any, b: Any) -> bool:
    """Return True only when ``a`` and ``b`` are known to be the same program (see the module doc)."""
    import torch

    if a is b:
        return True
    if structure(a) != structure(b):
        return False
    ta, tb = tensors_of(a), tensors_of(b)
    if ta is None or tb is None or ta.keys() != tb.keys():
        return False
    return all(
        x.dtype == y.dtype and x.shape == y.shape and x.device == y.device and x.requires_grad == y.requires_grad
        and torch.equal(x.detach(), y.detach())
        for x, y in ((ta[k], tb[k]) for k in ta)
    )


def module_digest(module: Any) -> str | None:
    """Return a digest of a module's parameters and buffers (names, values), or None if one is not comparable."""
    import torch

    name = f"{type(module).__module__}.{type(module).__qualname__}"
    h = hashlib.blake2b(name.encode("utf-8", "surrogatepass"), digest_size=20)
    if isinstance(module, torch.nn.Module):
        for kind, named in (("p", module.named_parameters(remove_duplicate=False)),
                            ("b", module.named_buffers(remove_duplicate=False))):
            for name, tensor in named:
                if tensor is None:
                    continue
                if not plain_tensor(tensor, torch):
                    return None
                feed_tensor(h, f"{kind}:{name}", tensor)
    return h.hexdigest()


def constants_digest(ep: Any) -> str | None:
    """Return a digest of the tensor constants ``ep`` lifted and reads, or None if one is not a plain tensor."""
    import torch
    from torch.export.graph_signature import InputKind

    read = {node.name for node in ep.graph.nodes if node.op == "placeholder" and node.users}
    h = hashlib.blake2b(digest_size=20)
    for spec in ep.graph_signature.input_specs:
        if spec.kind in (InputKind.USER_INPUT, InputKind.PARAMETER, InputKind.BUFFER):
            continue  # the model's own tensors: module_digest
        if getattr(spec.arg, "name", None) not in read:
            continue
        value = ep.constants.get(spec.target)
        if not plain_tensor(value, torch):
            return None  # a script object (CUSTOM_OBJ), a token: not compared, so never shared
        feed_tensor(h, str(spec.target), value)
    return h.hexdigest()
