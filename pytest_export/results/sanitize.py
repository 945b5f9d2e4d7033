"""Make text from exceptions and models safe to store (records) and to show (HTML, Markdown).

Exception messages can hold anything: a lone surrogate from ``os.fsdecode`` of non-UTF-8
bytes cannot be written as UTF-8 at all, and terminal escapes or NUL/BEL bytes must not
reach a page raw. Pure: imports neither pytest nor torch.
"""

from __future__ import annotations

import re
from typing import Any

from exportcore.codec import encodable

__all__ = ["clean_text", "shown_text"]

_ANSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?")
# C0 controls except tab and newline, DEL, C1 controls.
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


#: Text with what UTF-8 cannot encode escaped: the codec's own (it cleans every string it encodes).
clean_text = encodable


def shown_text(value: Any) -> str:
    """Return ``value`` as text fit for a page: encodable, terminal escapes dropped, controls as ``\\xNN``."""
    text = clean_text(str(value)).replace("\r\n", "\n").replace("\r", "\n")
    text = _ANSI.sub("", text)
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", text)
