"""Rules for Python that strict export (TorchDynamo) cannot trace, the model's own asserts, and the fallback."""

from __future__ import annotations

import os
import re
import sys

from exportcore.diagnosis.categories.facts import Facts, torch_hint, what_torch_said
from exportcore.diagnosis.sources import is_user_file, stdlib_module

__all__ = ["graph_break", "user_assert", "user_raise", "escapes", "recursion", "fallback"]


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


def graph_break(f: Facts) -> tuple[str, ...] | None:
    dynamo_assert = "AssertionError" in f.names and "dynamo" in f.low  # e.g. "Dynamo attempts to add ... input"
    if "TorchDynamoException" not in f.names and not dynamo_assert:
        return None
    said = what_torch_said(f.text)
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


def user_assert(f: Facts) -> tuple[str, ...] | None:
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


def user_raise(f: Facts) -> tuple[str, ...] | None:
    """The model's own ``raise`` fired while being traced (eager runs): its code, not torch, refused the trace.

    Non-strict: the exception itself, raised by a ``raise`` in the user's file. Strict: dynamo's
    "Observed exception" naming what the user's code raised. Either way "internal" would send the
    user to report a bug in torch.
    """
    if f.stage != "capture":
        return None
    observed = re.search(r"raised exception (\w+)\(", f.text) if "observed exception" in f.low else None
    if observed:
        kind = observed.group(1)
    elif _raised_by_user_code(f) and _own_exception(f):
        kind = type(f.exc).__name__
    else:
        return None
    return ("python.object-model", f"The model's own code raised {kind} while being traced, though eager runs:"
            " under export it sees fake tensors (another type, no values) and torch.compiler.is_exporting() is"
            " True. Make the check hold for traced tensors (isinstance(x, torch.Tensor), not type(x) is"
            " torch.Tensor; torch._check(...) for a condition on sizes), or do it outside forward", "", "")


def _own_exception(f: Facts) -> bool:
    """Whether the user's frame raised ``f.exc`` itself: a ``raise`` on its line, or a Python exception a torch
    op does not raise (a RuntimeError from a user line is an op's, from C++)."""
    cls = type(f.exc)
    if re.search(r"\braise\b", _last_line(f.tb)):
        return True
    if cls.__module__ == "builtins":
        return not issubclass(cls, RuntimeError)
    return not cls.__module__.startswith(("torch", "sympy", "numpy"))


def _last_line(tb: str) -> str:
    """The source line of the traceback's innermost frame ("" when it shows none)."""
    found = re.findall(r'File "[^"]+", line \d+, in [^\n]+\n[ \t]+([^\n]+)', tb)
    return found[-1].strip() if found else ""


def escapes(f: Facts) -> tuple[str, ...] | None:
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


def recursion(f: Facts) -> tuple[str, ...] | None:
    """torch.export walks inputs and outputs (and traces code) recursively: past the recursion limit it is the
    nesting that fails, whatever torch's frame raised it; "internal" would send the user to torch."""
    if "RecursionError" not in f.names or f.stage not in ("capture", "decompose", "serialize", "run"):
        return None
    return ("python.data-structure", "torch.export recursed past Python's recursion limit: inputs or outputs nested"
            " hundreds of levels deep (or code that recurses that deep) cannot be exported; pass a flatter structure"
            " (a tuple or dict of tensors), or raise sys.setrecursionlimit() before exporting and loading", "", "")


def fallback(f: Facts) -> tuple[str, str, str]:
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


def _raised_by_user_code(f: Facts) -> bool:
    frames = re.findall(r'File "([^"]+)", line \d+', f.tb)
    return bool(frames) and is_user_file(frames[-1])
