# Over 300 lines: one ordered list of small rules (first match wins); split up, the order would be lost from view.
"""Rules that pick a failure's category and one-line fix hint from a torch exception.

Each rule looks at the exception chain's class names, UserError type and message
(plus the user's source line) and either answers ``(category, hint[, stage])``
or passes; the first answer wins. The rules were written against what torch
2.14 raises, reproduced in tests/test_classify.py.

Importing this module does not import torch.
"""

from __future__ import annotations

import os
import re
import sys
import traceback as tb_module
from dataclasses import dataclass

from exportcore.sources import exception_chain, is_user_file, stdlib_module

__all__ = ["CATEGORIES", "EAGER_HINT", "ZERO_ONE", "decide", "decide_case", "format_traceback", "torch_hint"]

CATEGORIES = (
    "python.control-flow", "python.data-structure", "python.builtin", "python.context-manager",
    "python.object-model", "python.closure", "python.assert", "python.standard-library",
    "torch.dynamic-shape", "torch.dynamic-value", "torch.operator", "torch.mutation",
    "torch.escape-hatch", "torch.cond", "torch.map",
    "data-dependent", "eager", "numerics", "guards", "serialization", "decomposition", "internal",
)

EAGER_HINT = "the model fails in eager mode; fix the model or the example inputs"
#: What a hint about 0/1 specialization says (exportcore.explain.example_size finds it there).
ZERO_ONE = "export specializes example sizes 0 and 1"
_TRACEBACK_MAX = 16000


@dataclass
class _Facts:
    """What the rules look at, computed once per exception."""

    exc: BaseException
    stage: str
    names: set[str]  # class names along the MRO of the exception and its cause/context chain
    error_type: str  # UserError.error_type name, or ""
    text: str  # str(exc)
    low: str  # lowercased text of the whole exception chain
    code: str  # the user's source line, when known
    file: str  # the user's source file, when known
    tb: str  # the formatted traceback, for rules that look at where torch raised


def decide(exc: BaseException, stage: str, code: str = "", file: str = "") -> tuple[str, str, str]:
    """Return ``(category, hint, stage)`` for ``exc`` raised at ``stage``; ``code`` and ``file`` are the
    user's source line and file, where known."""
    return _decide(_facts(exc, stage, code, file))[:3]  # type: ignore[return-value]


def decide_case(exc: BaseException, stage: str, code: str = "", file: str = "") -> tuple[str, str, str, str | None]:
    """Like decide(), plus the ExportDB case the rule knows: None to ask the link table, "" for none at all
    (a rule that knows no case shows the cause keeps the table from linking a look-alike message)."""
    return _decide(_facts(exc, stage, code, file))


def format_traceback(exc: BaseException) -> str:
    """Return the formatted traceback of ``exc`` (its cause chain included), trimmed from the top."""
    text = "".join(tb_module.format_exception(type(exc), exc, exc.__traceback__))
    return text if len(text) <= _TRACEBACK_MAX else "...\n" + text[-_TRACEBACK_MAX:]


def _facts(exc: BaseException, stage: str, code: str, file: str = "") -> _Facts:
    chain = exception_chain(exc)
    names = {cls.__name__ for e in chain for cls in type(e).__mro__}
    error_type = getattr(getattr(exc, "error_type", None), "name", "") or ""
    text = _safe_str(exc)
    low = "\n".join(_safe_str(e) for e in chain).lower()
    return _Facts(exc, stage, names, error_type, text, low, code.strip(), file, format_traceback(exc))


def _safe_str(exc: BaseException) -> str:
    try:
        return str(exc)
    except Exception:  # a broken __str__ must not break classification
        return repr(exc)


def _decide(f: _Facts) -> tuple[str, str, str, str | None]:
    """Return (category, hint, stage, case); the first rule that matches wins."""
    for rule in _RULES:
        found = rule(f)
        if found is not None:
            category, hint, *rest = found
            return category, hint, (rest[0] or f.stage) if rest else f.stage, rest[1] if len(rest) > 1 else None
    return (*_fallback(f), None)


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


def _by_stage(f: _Facts) -> tuple[str, ...] | None:
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
    if f.stage == "decompose":
        op = re.search(r"target=(torch\.ops\.[\w.]+)", f.text)
        where = f" of {op.group(1)}" if op else ""
        return ("decomposition", f"The decomposition{where} to core ATen failed: keep that op out of the"
                " decomposition table (ep.run_decompositions(table)) or report it to PyTorch")
    return None


#: torch.export's serialized argument kinds -> what a user wrote.
_CONSTANT_KINDS = {"string": "str", "strings": "list of str", "none": "None", "device": "torch.device",
                   "layout": "torch.layout", "memory_format": "torch.memory_format", "scalar_type": "torch.dtype"}


def _constraints(f: _Facts) -> tuple[str, ...] | None:
    if f.names & _DATA_DEPENDENT_NAMES or "data-dependent expression" in f.text.lower():
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


def _older_torch(f: _Facts) -> tuple[str, ...] | None:
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


def _inputs(f: _Facts) -> tuple[str, ...] | None:
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


def _guards(f: _Facts) -> tuple[str, ...] | None:
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


_DATA_DEPENDENT_NAMES = {"GuardOnDataDependentSymNode", "DataDependentOutputException", "DynamicOutputShapeException"}


def _data_dependent(f: _Facts) -> tuple[str, ...] | None:
    branching = "data-dependent branching" in f.low
    if not (
        branching
        or f.names & _DATA_DEPENDENT_NAMES
        or f.error_type in ("ANTI_PATTERN", "DYNAMIC_CONTROL_FLOW")
        or "data-dependent expression" in f.low
    ):
        return None
    inside = _torch_module_frame(f)
    if inside is not None:
        return ("data-dependent", _torch_module_hint(f, *inside), "", "")
    code = f.code
    if code.startswith("assert"):
        hint = ("Replace the `assert` on a tensor value with torch._check(...) on a Python value, or move it out"
                " of forward")
    elif branching or re.match(r"(el)?if\b|while\b", code) or re.search(r"\bif\b.*\belse\b", code):
        hint = ("Replace the Python `if` on a tensor value with torch.cond(pred, true_fn, false_fn, (x,)),"
                " or torch.where for an elementwise choice")
    else:
        hint = ("Tell export what the data-dependent value satisfies with torch._check(...) (e.g. n = t.item();"
                " torch._check(n >= 0)), or use torch.cond if it picks a branch")
    return ("data-dependent", hint)


_FRAME = re.compile(r'File "([^"]+)", line (\d+)')
_NN_MODULE = re.compile(r"[/\\]torch[/\\]nn[/\\]modules[/\\](\w+)\.py$")


def _torch_module_frame(f: _Facts) -> tuple[str, int] | None:
    """Return (file, line) when the deepest frame that is the user's or a torch.nn module's is torch's:
    the value export cannot trace is read by torch's own layer (as configured), not by the model's code."""
    traced = f.text.partition("from user code:")[2]  # strict: dynamo lists the traced frames there
    if traced:
        frames = [(file, int(line)) for file, line in _FRAME.findall(traced)]
    else:  # the raised frames only, innermost cause first: a message may quote the user's line at its end
        frames = [(fs.filename, fs.lineno or 0) for e in reversed(exception_chain(f.exc))
                  for fs in tb_module.extract_tb(e.__traceback__)]
    for file, line in reversed(frames):
        found = _NN_MODULE.search(file)
        if found and found.group(1) != "module":  # module.py is only the call machinery
            return file, int(line)
        if is_user_file(file):
            return None
    return None


def _torch_module_hint(f: _Facts, file: str, line: int) -> str:
    import linecache

    module = _NN_MODULE.search(file).group(1)  # type: ignore[union-attr]
    code = linecache.getline(file, line).strip()
    where = f"torch.nn's {module}.py:{line}" + (f" (`{code}`)" if code else "")
    if "num_batches_tracked" in code:
        # BatchNorm(momentum=None) keeps a cumulative average: 1 / num_batches_tracked, read as a Python float
        return (f"{where}: a BatchNorm with momentum=None averages by 1 / num_batches_tracked, a Python float read"
                " from a buffer, which training export cannot trace; give it a momentum (e.g. 0.1), or export"
                " it in eval mode")
    return (f"{where} reads a tensor value as a Python number, which export cannot trace: the layer as"
            " configured does not export in this mode; configure it differently or keep it out of the exported"
            " module")


#: numpy's global RNG draws on the host at every call: neither traced nor reproducible.
_HOST_RANDOM = re.compile(r"\b(np|numpy)\.random\b")


def _host_randomness(f: _Facts) -> tuple[str, ...] | None:
    if not (_HOST_RANDOM.search(f.code) or "randomstate" in f.low or "numpy.random" in f.low):
        return None
    return ("torch.dynamic-value", "forward draws from numpy.random: export cannot trace a host RNG draw (strict"
            " sees a value known only at run time, non-strict bakes one draw in as a constant); draw with"
            " torch's RNG (torch.rand, seeded), or pass the random values in as an input", "", "")


def _torch_generator(f: _Facts) -> tuple[str, ...] | None:
    said = _what_torch_said(f.text)
    if "TorchDynamoException" not in f.names:
        return None
    if not (re.search(r"variable\(generator\)", said) or re.search(r"torch\.Generator\(|\bgenerator=", f.code)):
        return None
    return ("python.object-model", "Strict export (TorchDynamo) cannot trace a torch.Generator (generator=...):"
            " draw from torch's global RNG (seeded with torch.manual_seed outside forward), or export with"
            " strict=False, which traces the draws", "", "")


_MISSING_FAKE = re.compile(r"no fake impl|fake impl registered|does not support running with fake tensors"
                           r"|unsupported operator: |meta kernel")


def _operator(f: _Facts) -> tuple[str, ...] | None:
    if "UnsupportedOperatorException" in f.names or _MISSING_FAKE.search(f.low):
        op = re.search(r"CustomOpDef\((\w+)::(\w+)\)|unsupported operator: (\w+)\.(\w+)|^(\w+)\.(\w+)\.\w+$",
                       f.text, re.M)
        name = "::".join(g for g in op.groups() if g) if op else "<ns>::<op>"
        return ("torch.operator", f"Register a fake kernel for the custom op: @torch.library.register_fake(\"{name}\")"
                " returning empty tensors with the output shapes/dtypes")
    return None


def _mutation(f: _Facts) -> tuple[str, ...] | None:
    if "needed for gradient computation has been modified by an inplace operation" in f.low:
        # The exported training graph writes a mutated buffer back in place, after forward used it:
        # a tensor autograd saved for backward changed (eager ran the same code without complaint).
        return ("torch.mutation", "A buffer (a step counter, a cache) is updated in place and also used by the"
                " differentiated computation; autograd saved it and the exported program's write-back changed it."
                " Use a copy in the computation (n = self.n.clone() after the update) or update the buffer"
                " under torch.no_grad() after using it")
    if "leaf variable that requires grad is being used in an in-place" in f.low:
        return ("torch.mutation", "Do the in-place update of the parameter under torch.no_grad(), or keep the"
                " state in a buffer (register_buffer) instead")
    # Only what torch said, not its hints: dynamo hints mention mutation for unrelated graph breaks.
    said = _what_torch_said(f.text)
    # "is not a Python constant or its mutation check fails" (torch 2.10-2.13, comparing with a
    # logging.Logger's name) is about a constant, not a mutation.
    said = said.replace("its mutation check fails", "")
    if f.error_type == "UNSUPPORTED_ALIASED_MUTATED_DYNAMIC_INPUTS" or re.search(
        r"inplace view on a graph input|mutat", said
    ):
        if "higher order op" in f.low:
            return None  # a torch.cond branch mutating its input: the torch.cond rule explains it
        return ("torch.mutation", "Use an out-of-place op instead of mutating an input or attribute in place"
                " (x = x.reshape(...) rather than x.resize_(...)), or keep mutable state in a registered buffer")
    return None


def _higher_order(f: _Facts) -> tuple[str, ...] | None:
    said = _what_torch_said(f.text)
    if not (
        f.names & {"UncapturedHigherOrderOpError", "CondOpArgsMismatchError"}
        or "higher order op" in f.low
        or re.search(r"torch\.cond|torch\.map|\bmap_impl\b", said)  # e.g. branches' outputs differ
    ):
        return None
    if re.search(r"torch\.cond|\bcond\b|condop", f.low):
        category = "torch.cond"
    elif re.search(r"torch\.map|\bmap_impl\b", f.low):
        category = "torch.map"
    else:
        category = "torch.operator"  # while_loop, scan, ...: no ExportDB tag of their own
    if "aliasing" in f.low:
        hint = "Return x.clone() instead of an input (or a view of it) from the branch function"
    elif "mutation" in f.low:
        hint = "Do not mutate inputs inside the branch functions; compute and return new tensors instead"
    elif re.search(r"same (structure|shape|dim|dtype|metadata)|mismatch", f.low):
        hint = "Make every branch return the same structure, shapes and dtypes"
    else:
        hint = torch_hint(f.text) or "Make the branch functions pure tensor code that export can trace"
    return (category, hint)


def _fake_runtime(f: _Facts) -> tuple[str, ...] | None:
    """TorchRuntimeError, or a plain error from fake-tensor propagation during capture (eager already ran)."""
    through_fake = f.stage == "capture" and re.search(
        r"torch/_subclasses/fake_tensor\.py|torch/_meta_registrations\.py|torch/_refs/", f.tb
    )
    if "TorchRuntimeError" in f.names or through_fake:
        return ("torch.operator", "Eager runs but fake-tensor tracing fails: an op's fake/meta kernel disagrees"
                " with its real kernel - check torch.library.register_fake kernels return the real output shapes")
    return None


# (pattern over what dynamo said, category, hint) for graph breaks in strict mode; first match wins.
_GRAPH_BREAKS: list[tuple[str, str, str]] = [
    (r"\bassert", "python.assert", "The model's `assert` fails or cannot be traced: make it hold for the"
     " example inputs, or express it with torch._check(...)"),
    (r"context manager|before_with \w+variable", "python.context-manager",  # 2.6: BEFORE_WITH ...Variable
     "Move the unsupported `with` block out of forward, or export with strict=False; strict export traces only"
     " torch's own context managers (torch.no_grad, autocast, ...)"),
    (r"graph_break\(\)|skip function graph_break\b", "torch.escape-hatch", "Remove torch._dynamo.graph_break() from the exported code path"),
    (r"randomvaluesource|\brandom\.\w+|logging|logger", "python.standard-library",
     "Replace the Python standard-library call in forward with a torch op (torch.rand for random), or compute"
     " it outside the model and pass it in"),
    (r"tolist\(\)|for tolist", "data-dependent",
     "Keep the values as tensors instead of Tensor.tolist(), or pass them in as Python values"),
    (r"\bsort\b|sorted", "python.builtin", "Sort tensors with torch.sort / torch.argsort instead of sorted()"),
    (r"closure|nonlocal|cell contents", "python.closure",
     "Pass the captured value as an argument or a module attribute instead of a closure variable"),
    (r"generator|iterator|yield", "python.control-flow",
     "Replace the generator/iterator with a plain loop over a list, or a torch op"),
    (r"userdefinedobjectvariable|userdefinedclassvariable|__setattr__|__getattr__|metaclass|descriptor|super\(\)",
     "python.object-model",
     "Keep forward to plain module attributes and tensors; move custom-class logic out of forward"),
    (r"\b(dict|list|set|tuple|namedtuple|dataclass)\b", "python.data-structure",
     "Use plain tuples, lists and dicts of tensors; register custom containers with torch.utils._pytree"),
]
_STDLIB_HINT = ("Strict export cannot trace `{}` (Python standard library) in forward: compute it outside the"
                " model and pass the result in, use a torch op, or export with strict=False")


def _graph_break(f: _Facts) -> tuple[str, ...] | None:
    dynamo_assert = "AssertionError" in f.names and "dynamo" in f.low  # e.g. "Dynamo attempts to add ... input"
    if "TorchDynamoException" not in f.names and not dynamo_assert:
        return None
    said = _what_torch_said(f.text)
    called = re.search(r"builtin (?:operator )?`([\w.]+?)\.?`", f.text)  # "`open`", "`time.time.`"
    # torch 2.15: "Call to a time function ... Called `time.time()` inside a compiled region"
    called = called or re.search(r"Called `([\w.]+?)\(\)` inside a compiled region", f.text)
    # torch 2.6-2.8 spell it "unsupported builtin time.time." / "builtin: open [...]"
    called = called or re.search(r"unsupported builtin (?!None\.)([\w.]+?)\.(?:\s|$)|^builtin: (\w+) \[", f.text, re.M)
    if called and called.group(1) is None:
        called = re.search(r"^builtin: (\w+)", f.text, re.M)
    module = _stdlib_frame(f.text) or (called and called.group(1).partition(".")[0]) or _old_stdlib(f.text)
    for pattern, category, hint in _GRAPH_BREAKS[:3]:  # more specific than where it was raised
        if re.search(pattern, said):
            return (category, hint)
    if module and module in sys.stdlib_module_names and module != "builtins":
        return ("python.standard-library", _STDLIB_HINT.format(module if not called else called.group(1)))
    if called:
        return ("python.builtin", f"Move the call to the Python builtin `{called.group(1)}` out of forward (pass"
                " its result in as an input), or export with strict=False")
    for pattern, category, hint in _GRAPH_BREAKS[3:]:
        if re.search(pattern, said):
            return (category, hint)
    return None


def _old_stdlib(text: str) -> str | None:
    """Return the stdlib module of torch 2.6's forms: "skip function f in file .../logging/__init__.py",
    "copy.deepcopy TensorVariable()"."""
    skipped = re.search(r"skip function \w+ in file ([^'\n]+)", text)
    if skipped:
        return stdlib_module(skipped.group(1))
    call = re.match(r"([a-z_]\w*)\.\w+ \w*Variable\(", text)
    # torch 2.10-2.13: "Dynamo does not support copy.deepcopy()" / "Developer debug context: copy.deepcopy(...)"
    call = call or re.search(r"does not support ([a-z_]\w*)\.\w+\(\)|debug context: ([a-z_]\w*)\.\w+\(", text)
    name = call and next((g for g in call.groups() if g), None)
    return name if name in sys.stdlib_module_names else None


def _stdlib_frame(text: str) -> str | None:
    """Return the standard-library module dynamo was tracing when it gave up, from its "from user code" frames."""
    frames = re.findall(r'File "([^"]+)", line \d+', text.partition("from user code:")[2])
    # torch 2.10+ ends the trail in its own polyfills (logging's `name == root.name` -> polyfills.cmp_eq)
    frames = [f for f in frames if not re.search(r"[/\\]torch[/\\]_dynamo[/\\]", f)]
    return stdlib_module(frames[-1]) if frames else None


def _what_torch_said(text: str) -> str:
    """Return dynamo's title, explanation and debug context, lowercased, without its generic hints."""
    head = re.split(r"\nfrom user code:", text, maxsplit=1)[0]
    kept = [line for line in head.splitlines() if not line.strip().startswith(("Hint:", "For more details"))]
    return "\n".join(kept).lower()


def _raw_data(f: _Facts) -> tuple[str, ...] | None:
    if not re.search(r"cannot access data pointer of tensor|\.numpy\(\) is not supported", f.low):
        return None
    if re.search(r'[/\\]copy\.py"', f.tb):
        return ("python.standard-library", "Do not copy.deepcopy tensors inside forward; use t.clone() instead")
    return ("torch.operator", "Code in forward reads raw tensor data (data_ptr, .numpy(), a C extension): wrap it"
            " in a torch.library custom op with a fake kernel, or replace it with torch ops")


_PYTEST_REWROTE = ("pytest rewrote this model's `assert` (the model lives in a test module): move the model to a"
                   " non-test module or add PYTEST_DONT_REWRITE to the module docstring, or use torch._check(...)")


def _rewritten_by_pytest(file: str) -> bool:
    """Whether the module loaded from ``file`` had its asserts rewritten by pytest (it holds the rewriter's names)."""
    if not file:
        return False
    wanted = os.path.realpath(file)  # the source location is shown relative to the working directory
    for module in list(sys.modules.values()):
        path = getattr(module, "__file__", None)
        if isinstance(path, str) and "@pytest_ar" in getattr(module, "__dict__", {}) and os.path.realpath(path) == wanted:
            return True
    return False


def _user_assert(f: _Facts) -> tuple[str, ...] | None:
    if re.search(r"_pytest[/\\]assertion[/\\]rewrite\.py", f.low):
        # A model defined in a test module: pytest rewrote its `assert` and dynamo traced into saferepr.
        return ("python.assert", _PYTEST_REWROTE)
    if f.code.startswith("assert") and "ObservedException" in f.names and _rewritten_by_pytest(f.file):
        # Same cause, another symptom: something in pytest's assertion helpers (plugins' assertrepr
        # hooks included) raised under dynamo, whose user stack then shows only the model's line.
        return ("python.assert", _PYTEST_REWROTE)
    if type(f.exc) is AssertionError and f.code.startswith("assert"):
        return ("python.assert", "The model's own `assert` fails during export: make it hold for the example"
                " inputs, or express it with torch._check(...)")
    return None


def _spec_violation(f: _Facts) -> tuple[str, ...] | None:
    if "SpecViolationError" in f.names:
        category = "torch.operator" if "operator" in f.low else "internal"
        return (category, "The exported graph is not valid export IR: make custom ops torch.library ops with a"
                " fake kernel, or report the torch bug with this reproducer")
    return None


def _escapes(f: _Facts) -> tuple[str, ...] | None:
    # Code that leaves the traced world on purpose; before the operator rules, whose fake-tensor
    # wording ("Cannot access data pointer", ".numpy() ... tensor subclasses") would claim it.
    # Only dynamo's wording: "Cannot access data pointer" (non-strict) is also what an opaque custom
    # kernel without a fake implementation raises, which the operator rules handle.
    if "data pointer comparison" in f.low or "dataptrvariable" in f.low:  # the latter: torch 2.6-2.8
        return ("python.builtin", "Tensor identity (data_ptr(), id(), `is`) means nothing for traced tensors:"
                " pass an explicit flag argument, or keep the value you need in a local variable")
    if "torch.compiler.disable" in f.low or "torch._dynamo.disable" in f.low:
        return ("torch.escape-hatch", "A torch.compiler.disable()d function cannot be captured by strict export:"
                " remove the decorator on code that must export, or export with strict=False")
    if ".numpy() is not supported" in f.low:
        return ("torch.escape-hatch", "Tensor.numpy() leaves the traced world: write the computation with torch"
                " ops (strict export traces numpy calls, non-strict cannot)")
    return None


_RULES = [
    _by_stage, _host_randomness, _constraints, _older_torch, _inputs, _escapes, _guards, _torch_generator, _data_dependent, _operator, _higher_order, _mutation,
    _spec_violation, _raw_data, _fake_runtime, _user_assert, _graph_break,
]


def _fallback(f: _Facts) -> tuple[str, str, str]:
    said = torch_hint(f.text)
    if "Unsupported" in f.names:
        hint = (said.rstrip(". ") + "; or export with strict=False") if said else (
            "Strict export (TorchDynamo) cannot trace this code: rewrite it, or export with strict=False")
        return ("internal", hint, f.stage)
    hints = {
        "numerics": ("numerics", "The exported program computes different outputs than eager"),
        "guards": ("guards", "The exported program's guards disagree with the declared dynamic shapes"),
        "run": ("internal", "The exported module raises on inputs eager accepts: look for a size or value"
                " export fixed from the example inputs"),
    }
    if f.stage == "capture" and _raised_by_user_code(f):
        return ("internal", "The model raises while being traced although eager runs: it reads tensor values or"
                " types that tracing replaces with fake tensors (.numpy(), data_ptr, isinstance checks); use torch"
                " ops, or wrap the code in a torch.library custom op", f.stage)
    category, hint = hints.get(f.stage, ("internal", said or (
        f"Unrecognized failure at stage {f.stage}: read the detail; if torch itself crashed, report it with"
        " this reproducer")))
    return (category, hint, f.stage)


_BOILERPLATE = re.compile(
    r"please (open|file|report)|report an issue|file an issue|open an issue|may result in an error when running"
    r" in eager|unlikely that dynamo will ever|possible to write dynamo tracing rules", re.I)


def _raised_by_user_code(f: _Facts) -> bool:
    frames = re.findall(r'File "([^"]+)", line \d+', f.tb)
    return bool(frames) and is_user_file(frames[-1])


def torch_hint(text: str) -> str:
    """Return torch's own first actionable "Hint:" line from a dynamo message, or ""."""
    for line in text.splitlines():
        line = line.strip()
        if line.startswith("Hint:") and not _BOILERPLATE.search(line):
            return line.removeprefix("Hint:").strip()
    return ""


