"""What the rules look at, computed once per exception, and the helpers that read torch's wording."""

from __future__ import annotations

import re
import traceback as tb_module
from dataclasses import dataclass

from exportcore.diagnosis.sources import exception_chain

__all__ = ["Facts", "format_traceback", "facts", "safe_str", "what_torch_said", "torch_hint"]


_TRACEBACK_MAX = 16000


@dataclass
class Facts:
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


def format_traceback(exc: BaseException) -> str:
    """Return the formatted traceback of ``exc`` (its cause chain included), trimmed from the top."""
    text = "".join(tb_module.format_exception(type(exc), exc, exc.__traceback__))
    return text if len(text) <= _TRACEBACK_MAX else "...\n" + text[-_TRACEBACK_MAX:]


def facts(exc: BaseException, stage: str, code: str, file: str = "") -> Facts:
    chain = exception_chain(exc)
    names = {cls.__name__ for e in chain for cls in type(e).__mro__}
    error_type = getattr(getattr(exc, "error_type", None), "name", "") or ""
    text = safe_str(exc)
    low = "\n".join(safe_str(e) for e in chain).lower()
    return Facts(exc, stage, names, error_type, text, low, code.strip(), file, format_traceback(exc))


def safe_str(exc: BaseException) -> str:
    try:
        return str(exc)
    except Exception:  # a broken __str__ must not break classification
        return repr(exc)


def what_torch_said(text: str) -> str:
    """Return dynamo's title, explanation and debug context, lowercased, without its generic hints."""
    head = re.split(r"\nfrom user code:", text, maxsplit=1)[0]
    kept = [line for line in head.splitlines() if not line.strip().startswith(("Hint:", "For more details"))]
    return "\n".join(kept).lower()


_BOILERPLATE = re.compile(
    r"please (open|file|report)|report an issue|file an issue|open an issue|may result in an error when running"
    r" in eager|unlikely that dynamo will ever|possible to write dynamo tracing rules", re.I)


def torch_hint(text: str) -> str:
    """Return torch's own first actionable "Hint:" line from a dynamo message, or ""."""
    for line in text.splitlines():
        line = line.strip()
        if line.startswith("Hint:") and not _BOILERPLATE.search(line):
            return line.removeprefix("Hint:").strip()
    return ""
