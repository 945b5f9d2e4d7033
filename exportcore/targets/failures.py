"""Failures of a target in its own terms: which stage, which category, the operator, a hint.

Categories: ``target.operator`` (an operator the backend cannot convert or lower, named),
``target.dynamic-shape`` (the backend cannot keep a dimension symbolic), ``target.dtype``
(a dtype the backend does not support), ``target.toolchain`` (the C++ compiler or the
runtime's build failed), ``target.unavailable`` (skipped: the extra or compiler is missing),
``target.internal`` (anything else: the backend's own error, reported verbatim).
"""

from __future__ import annotations

import re

from exportcore.outcome import Failure

__all__ = ["target_failure", "unsupported_operator"]

_OP_PATTERNS = (
    re.compile(r"No ONNX function found for <OpOverload\(op='([\w.:]+)', overload='(\w+)'"),
    re.compile(r"Missing out variants: \{'([\w.:]+)'"),
    re.compile(r"Operator (?:torch\._ops\.)?([\w.:]+) is not (?:Aten )?(?:Canonical|supported)"),
    re.compile(r"(?:missing|no) (?:lowering|kernel|out variant) for (?:op(?:erator)? )?([\w.:]+)", re.I),
    re.compile(r"target: ([\w.:]+)\n"),  # inductor's LoweringException
)
_DYNAMIC = re.compile(r"dynamic (?:shape|dim)|symbolic (?:shape|dim)|symint|unbacked|data.dependent|upper bound",
                      re.I)
_DTYPE = re.compile(r"\bdtype\b|data type|not implemented for '\w+'|unsupported type", re.I)
_TOOLCHAIN = re.compile(r"CppCompileError|C\+\+ compile error|compilation failed|ld returned|fatal error:", re.I)

_HINTS = {
    "target.operator": "{target} cannot convert operator {op}: register a translation/decomposition for it, "
                       "or replace it in the model with ops the backend supports",
    "target.dynamic-shape": "{target} cannot keep this dimension dynamic: declare it static (Dim.STATIC) for "
                            "this target, or bound it with a smaller range",
    "target.dtype": "{target} does not support a dtype used here: cast the model or its inputs to float32",
    "target.toolchain": "the {target} toolchain failed to build the artifact: check the C++ compiler "
                        "(CXX) and the torch build",
    "target.internal": "the {target} backend failed on this program; the full message is below",
}


def unsupported_operator(text: str) -> str | None:
    """Return the operator a backend message says it cannot handle (e.g. ``mylib.op.default``)."""
    for pattern in _OP_PATTERNS:
        m = pattern.search(text)
        if m:
            return ".".join(g for g in m.groups() if g)
    return None


def target_failure(exc: BaseException, stage: str, target: str) -> Failure:
    """Return the Failure for ``exc`` raised by ``target`` at ``stage`` (lower, load or run)."""
    text = _chain_text(exc)
    op = unsupported_operator(text)
    if op is not None:
        category = "target.operator"
    elif _TOOLCHAIN.search(text):
        category = "target.toolchain"
    elif _DYNAMIC.search(text):
        category = "target.dynamic-shape"
    elif _DTYPE.search(text):
        category = "target.dtype"
    else:
        category = "target.internal"
    first = _first_line(str(exc)) or type(exc).__name__
    message = f"{target} {stage}: unsupported operator {op}" if op else f"{target} {stage}: {first}"
    return Failure(
        stage=stage, category=category, exc_type=type(exc).__name__, message=message[:400],
        detail=text[:4000], hint=_HINTS[category].format(target=target, op=op),
    )


def _chain_text(exc: BaseException) -> str:
    parts, seen = [], set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        parts.append(f"{type(current).__name__}: {current}")
        current = current.__cause__ or current.__context__
    return "\n".join(parts)


def _first_line(text: str) -> str:
    for line in text.strip().splitlines():
        line = re.sub(r"\x1b\[[0-9;]*m", "", line).strip()
        if line:
            return line
    return ""
