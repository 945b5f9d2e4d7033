"""JSON read strictly and placed by line, for files people edit and merge (the baseline).

``json.loads`` keeps the last of a repeated field silently, and says nothing about where an object
is. A committed file resolved by keeping both sides of a merge conflict needs both: a repeated field
is refused, and a fault found in the document is named by its line. Pure: imports neither pytest nor torch.
"""

from __future__ import annotations

import json
import json.decoder
import json.scanner
import re
from typing import Any

__all__ = ["RepeatedField", "unrepeated", "decode_with_lines"]


class RepeatedField(ValueError):
    """One JSON object names a field twice (json.loads would keep the last silently)."""

    def __init__(self, field: str, line: int | None = None) -> None:
        super().__init__(field)
        self.field, self.line = field, line


def unrepeated(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """``object_pairs_hook`` for json.loads: the object as a dict; raise RepeatedField if a name repeats."""
    obj = dict(pairs)
    if len(obj) != len(pairs):
        names = [k for k, _ in pairs]
        raise RepeatedField(next(k for i, k in enumerate(names) if k in names[:i]))
    return obj


def decode_with_lines(text: str) -> tuple[Any, dict[int, int]]:
    """Return (the document, id(object) -> the line of its opening brace); a repeated field names its line.

    Slow (the pure-Python scanner, which calls ``parse_object``; the C one does not): only run to name
    the lines of a fault already found. The ids are valid while the caller holds the document.
    """
    starts: dict[int, int] = {}
    decoder = json.JSONDecoder(object_pairs_hook=unrepeated)

    def line(offset: int) -> int:
        return text.count("\n", 0, offset) + 1

    def parse_object(s_and_end: tuple[str, int], *args: Any) -> tuple[Any, int]:
        begin = s_and_end[1] - 1  # s_and_end[1] is just past the brace
        try:
            obj, end = json.decoder.JSONObject(s_and_end, *args)
        except RepeatedField as exc:
            if exc.line is not None:  # an inner object's, already placed
                raise
            # The second `"field":` after the brace is the repeat, in a flat object such as a baseline entry.
            keys = list(re.finditer(re.escape(json.dumps(exc.field)) + r"\s*:", text[begin:]))
            raise RepeatedField(exc.field, line(begin + keys[1].start() if len(keys) > 1 else begin)) from None
        starts[id(obj)] = begin
        return obj, end

    decoder.parse_object = parse_object  # type: ignore[attr-defined]
    decoder.scan_once = json.scanner.py_make_scanner(decoder)  # type: ignore[attr-defined]
    doc = decoder.decode(text)
    return doc, {key: line(offset) for key, offset in starts.items()}
