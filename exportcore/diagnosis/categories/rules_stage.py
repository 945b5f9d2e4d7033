"""Rules keyed by the stage that failed, by declared dynamic shapes and guards, and older torch's wording."""

from __future__ import annotations

import re
import sys

from exportcore.diagnosis.categories.facts import Facts
from exportcore.diagnosis.categories.rules_torch import DATA_DEPENDENT_NAMES
from exportcore.diagnosis.categories.vocab import EAGER_HINT, ZERO_ONE

__all__ = ["by_stage", "constraints", "older_torch", "inputs", "guards", "deferred_assert"]


def by_stage(f: Facts) -> tuple[str, ...] | None:
    if f.stage == "eager":
        return ("eager", EAGER_HINT)
    if f.stage == "serialize":
        # torch 2.8's load swallows why its archive reader failed and falls back to the pre-2.8
        # format, which then misses "version": a load failure too, whatever it hides.
        constant = re.search(r"unable to deserialize output node argument\(as_(\w+)=", f.low)
        if constant:
            kind = _CONSTANT_KINDS.get(constant.group(1), constant.group(1))
            return ("serialization", f"forward returns a {kind} constant (the graph's output node holds"
                    f" as_{constant.group(1)}) that torch.export.load cannot rebuild: return only tensors (and"
                    f" ints, floats, bools) from forward, and keep the {kind} outside the exported model", "", "")
        node = re.search(r"failed deserializing node node\(target='([\w.]+)'", f.text, re.IGNORECASE)
        if node and not _op_registered(node.group(1)):
            return ("serialization", f"torch.export.load cannot rebuild the {node.group(1)} node: no library"
                    " in this process registers that op. Import the modules that register its custom ops"
                    " (torch.library) before loading, and save/load with the same torch", "", "")
        if node:
            return ("serialization", f"torch.export.load cannot rebuild the {node.group(1)} node that save wrote"
                    " (a gap in this torch's serializer, not in the model): keep that op out of a program you"
                    " ship as .pt2, or report it to PyTorch with this reproducer", "", "")
        legacy_fallback = "no item named 'version' in the archive" in f.low
        if "deserializ" in f.low or "badzipfile" in {n.lower() for n in f.names} or legacy_fallback:
            return ("serialization", "torch.export.load cannot rebuild the program: import the modules that"
                    " register its custom ops (torch.library) before loading, and save/load with the same torch")
        return ("serialization", "torch.export.save cannot write this program: check for custom ops without a"
                " schema and non-tensor constants (opaque Python objects, ScriptObjects) held by the model")
    if f.stage == "run" and "tensor dtype mismatch! expected" in f.low:
        # the graph's _assert_tensor_metadata holds the dtypes the capture recorded; strict export of a
        # torch.autocast region records float32 where the autocast op computes bfloat16 (torch 2.6-2.15)
        return ("python.context-manager", "The exported program asserts a dtype its own computation does not"
                " produce, typically a torch.autocast region captured in strict mode: export it non-strict"
                " (strict=False), or cast explicitly (.to(torch.bfloat16)) instead of using autocast", "", "")
    if f.stage == "decompose" and (re.search(r"constant [\w.]+ is mutated in the forward method", f.low)
                                   or "mutating a non-functional tensor with a functional tensor" in f.low):
        # the capture kept a plain tensor attribute as a constant; the decomposition refuses to mutate one
        # (torch 2.6-2.x: an internal assert of functionalization says the same)
        return ("torch.mutation", "Register the tensor attribute forward mutates in place as a buffer"
                " (self.register_buffer(name, tensor, persistent=False) keeps it out of the state_dict): the"
                " decomposition refuses to mutate a plain tensor attribute, which the capture kept as a constant")
    if f.stage == "decompose":
        op = re.search(r"target=(torch\.ops\.[\w.]+)", f.text)
        where = f" of {op.group(1)}" if op else ""
        return ("decomposition", f"The decomposition{where} to core ATen failed: keep that op out of the"
                " decomposition table (ep.run_decompositions(table)) or report it to PyTorch")
    return None


def _op_registered(target: str) -> bool:
    """Whether ``torch.ops.NS.OP[.OVERLOAD]`` names an op this process has a schema for."""
    torch = sys.modules.get("torch")
    parts = target.split(".")
    if torch is None or len(parts) < 4 or parts[:2] != ["torch", "ops"]:
        return True  # cannot tell: not a missing library's fault
    overload = parts[4] if len(parts) > 4 and parts[4] != "default" else ""
    try:
        torch._C._dispatch_find_schema_or_throw(f"{parts[2]}::{parts[3]}", overload)
    except RuntimeError:
        return False
    return True


#: torch.export's serialized argument kinds -> what a user wrote.
_CONSTANT_KINDS = {"string": "str", "strings": "list of str", "none": "None", "device": "torch.device",
                   "layout": "torch.layout", "memory_format": "torch.memory_format", "scalar_type": "torch.dtype"}


def constraints(f: Facts) -> tuple[str, ...] | None:
    if f.names & DATA_DEPENDENT_NAMES or "data-dependent expression" in f.text.lower():
        # strict export wraps a data-dependent guard in a CONSTRAINT_VIOLATION UserError even when no
        # dim was declared: the data-dependent rules say what it is
        return None
    if f.error_type == "CONSTRAINT_VIOLATION" or "ConstraintViolationError" in f.names:
        fixes = _suggested_fixes(f.text)
        constants = [re.fullmatch(r"(\w+) = (\d+)", fix) for fix in fixes]
        if fixes and all(constants):
            # torch only suggests a 0/1 constant when the example had that size: the example specialized
            # the dim (0/1 specialization), whether or not the model fixes it.
            by_example = [m for m in constants if m and int(m.group(2)) in (0, 1)]
            by_model = [m for m in constants if m and int(m.group(2)) not in (0, 1)]
            hints = []
            if by_model:
                pinned = ", ".join(f"{m.group(1)} to {m.group(2)}" for m in by_model)
                hints.append(f"torch suggests {'; '.join(m.group(0) for m in by_model)}: the model fixes {pinned}, so"
                             " declare it static (drop it from dynamic_shapes or use Dim.STATIC) or remove the code"
                             " that depends on its exact size")
            if by_example:
                names = ", ".join(f"{m.group(1)} is {m.group(2)}" for m in by_example)
                hints.append(f"the example input's size for {names}: {ZERO_ONE}, so the dim cannot stay dynamic;"
                             " use an example of size >= 2 (declare it static only if the model really needs that"
                             " size)")
            hint = "; ".join(hints)
        elif fixes:
            hint = "Apply torch's suggested fix to dynamic_shapes: " + "; ".join(fixes)
        else:
            hint = ("The model constrains a dim you declared dynamic: narrow its Dim range, derive it"
                    " (2*d, d+1) or use Dim.AUTO as the violated guards above say")
        return ("torch.dynamic-shape", hint, "constraints" if f.stage == "capture" else f.stage)
    if f.error_type == "DYNAMIC_DIM":
        return ("torch.dynamic-shape", "Declare the dims the model treats as dynamic in dynamic_shapes (Dim or"
                " Dim.AUTO) and keep the example sizes inside their ranges")
    return None


def _suggested_fixes(text: str) -> list[str]:
    match = re.search(r"Suggested fixes:\s*\n((?:[ \t]+\S.*\n?)+)", text)
    return [line.strip() for line in match.group(1).splitlines() if line.strip()] if match else []


def older_torch(f: Facts) -> tuple[str, ...] | None:
    """Message forms only older supported torch (2.6-2.9) raises for cases later releases export."""
    if "references tensors that are neither buffers/parameters/constants nor are direct inputs" in f.low:
        return ("python.closure", "Strict export on this torch refuses a tensor captured from outside forward:"
                " register it as a buffer (register_buffer) or pass it as an input", "capture")
    if re.search(r"tensor attribute [\w.]+ was assigned during export", f.low):
        return ("torch.mutation", "Register the tensor attribute as a buffer (register_buffer) before export;"
                " this torch refuses plain tensor attributes assigned in forward")
    if "delaygraphbreakvariable" in f.low and re.search(r"\.\w+_\(", f.code):
        # torch 2.6 dynamo names no reason for an in-place method it cannot trace (x.resize_(...))
        return ("torch.mutation", "Use an out-of-place op instead of mutating an input in place (x = x.reshape(...)"
                " rather than x.resize_(...)), or keep mutable state in a registered buffer")
    if "unexpected number of dimensions in input at" in f.low:
        return ("guards", "The exported program rejects this input before running: pass inputs with the same"
                " rank and types as the example inputs")
    return None


def inputs(f: Facts) -> tuple[str, ...] | None:
    structure = "pytree" in f.low or "unsupported input type" in f.low
    if f.error_type == "INVALID_INPUT" or (f.stage in ("capture", "input") and "unsupported input type" in f.low):
        if structure:
            return ("python.data-structure", "Register the custom input class with torch.export.register_dataclass"
                    " or torch.utils._pytree.register_pytree_node, or pass its tensors directly", "input")
        return ("torch.dynamic-shape", "Make dynamic_shapes mirror the inputs: one entry per argument (by name or"
                " position), each a dict or tuple of Dims per tensor dimension", "input")
    # torch 2.10-2.13 strict: an unregistered output object flattens to no leaves, then fails to unflatten
    unknown_output = (r"in output, which is not a known type|unrecognized type .* at output"
                      r"|treespec\.unflatten\(leaves\): `leaves` has length 0")
    if f.error_type == "INVALID_OUTPUT" or re.search(unknown_output, f.low):
        return ("python.data-structure", "Return tensors in tuples, lists or dicts, or register the output class"
                " with torch.export.register_dataclass / torch.utils._pytree.register_pytree_node")
    return None


def deferred_assert(text: str) -> tuple[str, str] | None:
    """A program's runtime assert refusing a size: ``(category, hint)``, or None for any other text."""
    asserted = re.search(r"Runtime assertion failed for expression (.+?) on node", text)
    if asserted is None:
        return None
    # A guard the capture deferred (prefer_deferred_runtime_asserts_over_guards, an unbacked size)
    # refusing a size: not a crash of the program but the model needing that relation at every
    # size, which the declared range does not promise (plain export fails it at constraints).
    return ("torch.dynamic-shape", f"The exported program asserts `{asserted.group(1).strip()}` at run time (a guard"
            " the capture deferred to a runtime check), and a size the declared range allows breaks it: the model"
            " needs that relation at every size. Narrow the Dim to the sizes that hold it (an export without the"
            " deferred option shows torch's suggested fix)")


def guards(f: Facts) -> tuple[str, ...] | None:
    deferred = deferred_assert(f.text)
    if deferred is not None:
        return deferred
    failed = re.search(r"Guard failed: (.+)", f.text)
    if failed:
        return ("guards", f"The exported program only accepts inputs with `{failed.group(1).strip()}`: declare"
                " that dim dynamic (Dim / Dim.AUTO) if it must vary, or call it with in-spec inputs")
    expected = re.search(r"Expected input at (\S+) to be equal to (\S+), but got", f.text)
    if expected:  # the pre-hook form (the only one before torch 2.9)
        return ("guards", f"The exported program only accepts inputs with `{expected.group(1)} =="
                f" {expected.group(2)}`: declare that dim dynamic (Dim / Dim.AUTO) if it must vary, or call it"
                " with in-spec inputs")
    if "expected input at" in f.low:
        return ("guards", "The exported program rejects this input's shape or dtype: declare the dim dynamic"
                " (Dim / Dim.AUTO) if it must vary, or call it with inputs like the examples")
    if "self._guards_fn(" in f.tb:
        # The exported module's guard function itself crashed: the input's rank or type differs from the example.
        return ("guards", "The exported program rejects this input before running: pass inputs with the same"
                " rank and types as the example inputs")
    if "trying to flatten user inputs with exported input tree spec" in f.low:
        return ("guards", "Call the exported module with the same args/kwargs structure as the example inputs")
    return None
