"""Link a classified failure to the nearest ExportDB case (filled in by the ExportDB work)."""

from __future__ import annotations

__all__ = ["nearest_case"]


def nearest_case(exc_type: str, message: str, stage: str, category: str) -> str | None:
    """Return the name of the ExportDB case that best explains this failure, or None."""
    return None
