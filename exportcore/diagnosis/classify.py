"""Turn an exception from an export stage into a Failure a user can act on.

Rules were written against the exceptions torch 2.14 actually raises (see
tests/test_classify.py, which reproduces each with a tiny model). ``classify``
assumes the pipeline order (eager, capture, decompose, ...): a failure at
"capture" or later means the eager reference already ran, so a fake-tensor error
there points at an operator's fake kernel rather than at a broken model.

Importing this module does not import torch.
"""

from __future__ import annotations

import re

from exportcore.diagnosis.categories import CATEGORIES, EAGER_HINT, decide_case, format_traceback
from exportcore.diagnosis.categories.facts import safe_str
from exportcore.diagnosis.links import nearest_case
from exportcore.outcome import STAGES, Failure
from exportcore.diagnosis.sources import user_source

__all__ = ["CATEGORIES", "EAGER_HINT", "EXAMPLE_SHAPE_HINT", "classify", "mismatch_failure", "user_source"]

_DETAIL_MAX = 4000
#: torch messages whose reason is elsewhere (torch 2.15's load logs it; exportcore.sandbox.logged_errors chains it)
_DEFERS = re.compile(r"check the warnings above|see the logs? above")
_MESSAGE_MAX = 400


def classify(exc: BaseException, stage: str) -> Failure:
    """Return the Failure (stage, category, hint, source, ...) that explains ``exc`` raised at ``stage``."""
    if not isinstance(exc, BaseException):
        raise TypeError(f"exc must be an exception, got {type(exc).__name__}")
    if stage not in STAGES:
        raise ValueError(f"stage must be one of {STAGES}, got {stage!r}")
    source = user_source(exc)
    category, hint, new_stage, case = decide_case(exc, stage, source.code if source else "", source.file if source else "")
    error_type = getattr(getattr(exc, "error_type", None), "name", "")  # torch._dynamo.exc.UserError
    exc_type = type(exc).__name__ + (f"({error_type})" if isinstance(error_type, str) and error_type else "")
    text = safe_str(exc)
    message = _headline(text) or exc_type
    inner = exc.__cause__ or exc.__context__
    if "found no exception handler" in message and inner is not None and not safe_str(inner).strip():
        # torch 2.6-2.8: dynamo's own raise (a dict lookup, a getattr) has no message; its type says what
        message = f"{message} (raised: {type(inner).__name__.removeprefix('Observed')})"
    if _DEFERS.search(message) and inner is not None:  # torch logged the reason; it is chained as the cause
        message = _shorten(f"{message} {_headline(safe_str(inner)) or type(inner).__name__}")
        text = f"{text}\n{type(inner).__name__}: {safe_str(inner)}"
    if message.startswith("Cond doesn't work unless it is captured completely") and inner is not None:
        message = _headline(safe_str(inner)) or message  # torch 2.6: the reason is in the cause
    return Failure(
        stage=new_stage,
        category=category,
        exc_type=exc_type,
        message=message,
        detail=_trim(text.strip(), _DETAIL_MAX),
        hint=hint,
        source=source,
        exportdb_case=(case or None) if case is not None else _safe_case(
            exc_type, _link_text(message, text), new_stage, category),
        traceback=format_traceback(exc),
    )


def mismatch_failure(mismatch: object, *, stage: str = "numerics", program: str = "") -> Failure:
    """Return the Failure for an output Mismatch (exportcore.compare) of the named program."""
    from exportcore.compare import Mismatch

    if not isinstance(mismatch, Mismatch):
        raise TypeError(f"mismatch must be a compare.Mismatch, got {type(mismatch).__name__}")
    if stage not in STAGES:
        raise ValueError(f"stage must be one of {STAGES}, got {stage!r}")
    prefix = f"{program} program: " if program else ""
    exc_type = f"{mismatch.kind.capitalize()}Mismatch"
    message = prefix + mismatch.message
    category = "numerics"
    return Failure(
        stage=stage,
        category=category,
        exc_type=exc_type,
        message=_shorten(message),
        detail=message,
        hint=_MISMATCH_HINTS.get(mismatch.kind, _MISMATCH_HINTS["value"]),
        exportdb_case=_safe_case(exc_type, message, stage, category),
    )


#: A shape mismatch on the very inputs the program was exported from: no dim could have been declared.
EXAMPLE_SHAPE_HINT = ("On the inputs it was exported from, the program returns another shape: an output size came"
                      " from a value export baked in as a constant (a random draw, a global, the clock, a Python"
                      " number read from a tensor), not from the input shapes; compute it with tensor ops or"
                      " pass it in as an input")

_MISMATCH_HINTS = {
    "value": "If the error is float reordering, pass a looser rtol/atol for this case; otherwise export baked in"
    " something computed from the example input (a Python branch, .item(), a size) - make it a tensor op",
    "nonfinite": "NaN/inf land in different places: guard ops at the edge of their domain (log, div, sqrt)"
    " with torch.where/clamp so eager and the exported graph agree",
    "shape": "The exported program returns another shape: a size was fixed at export time - declare the dim"
    " dynamic, or avoid Python ints taken from tensor sizes",
    "dtype": "The exported program returns another dtype: make type promotion explicit (.to(dtype)) instead"
    " of relying on Python scalars or autocast state",
    "device": "The exported program returns a tensor on another device: avoid hard-coded devices in forward;"
    " create tensors with device=x.device",
    "structure": "The exported program returns another output structure: return plain tuples/dicts or register"
    " the output class with torch.export.register_dataclass / torch.utils._pytree",
    "type": "The exported program returns another output type: return tensors in plain containers or register"
    " the class with torch.export.register_dataclass / torch.utils._pytree",
}


def _safe_case(exc_type: str, message: str, stage: str, category: str) -> str | None:
    try:
        return nearest_case(exc_type, message, stage, category)
    except Exception:  # a broken link table must not hide the failure itself
        return None


def _link_text(message: str, text: str) -> str:
    """The headline, plus dynamo's debug context line where there is one: torch 2.7's graph break on
    ``a.data_ptr() == b.data_ptr()`` names the traced value's kind (DataPtrVariable) only there."""
    context = next((line.strip() for line in text.splitlines() if line.strip().startswith("Developer debug context:")), "")
    return f"{message}\n{context}" if context else message


def _headline(text: str) -> str:
    """Return the first meaningful line of a torch message, with dynamo's explanation folded in."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    if not lines:
        return ""
    title = lines[0]
    if title.endswith("Got graph break/error:") and len(lines) > 1:
        title = lines[1]  # a higher-order op wraps the real graph break
    elif title.startswith("Failed running call_function") and title.endswith(":") and len(lines) > 1:
        title = f"{title} {lines[1]}"  # torch 2.6-2.8: the operator's own error is on the next line
    title = re.sub(r"\s*For more information, run with TORCH_LOGS=\S+", "", title)
    title = re.sub(r"\s*\((unhinted|Size-like symbols): [^()]*(\([^()]*\)[^()]*)*\)", "", title).strip()
    explanation = next((line for line in lines if line.startswith("Explanation:")), "")
    explanation = explanation.removeprefix("Explanation:").strip()
    inner = re.search(r"got (\w+(?:Error|Exception)\(.*\))\s*$", explanation)
    if inner:
        explanation = inner.group(1)
    raised = next((line for line in lines if line.startswith("Developer debug context: raised exception")), "")
    if raised:  # dynamo's "Observed exception": the exception the traced code raised says more
        explanation = raised.removeprefix("Developer debug context: raised exception").strip()
    if explanation:
        title = f"{title}: {explanation}"
    elif title.endswith("!"):
        bullet = next((line for line in lines if line.startswith("- ")), "")
        title = f"{title} {bullet[2:]}" if bullet else title
    return _shorten(title)


def _shorten(text: str) -> str:
    text = " ".join(text.split())  # a headline is one line
    return text if len(text) <= _MESSAGE_MAX else text[: _MESSAGE_MAX - 3] + "..."


def _trim(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    head = int(limit * 0.75)
    tail = limit - head - 40
    # Keep the tail: torch puts "Suggested fixes" and the user stack at the end.
    return f"{text[:head]}\n... [{len(text) - head - tail} chars trimmed] ...\n{text[-tail:]}"

