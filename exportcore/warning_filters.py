"""torch's warnings during an export see the user's filters, but never as errors.

Under ``-W error`` or ``filterwarnings = error`` a warning torch emits while it traces (strict
export of a model that calls ``time.perf_counter``, a deprecation inside a decomposition) would
become an exception inside torch and change what torch does: a model that exports would fail
at capture. The user's filters are meant for their code and for the plugin's own findings,
which are warned after the engine returns. Torch-free.
"""

from __future__ import annotations

import contextlib
import warnings
from typing import Iterator

__all__ = ["torch_warnings"]


@contextlib.contextmanager
def torch_warnings() -> Iterator[None]:
    """Run the block with the current filters, every "error" action turned into "default".

    "ignore" and "always" filters stay as the user wrote them (an ignored torch warning stays
    ignored); the previous filters come back when the block ends.
    """
    with warnings.catch_warnings():
        current = list(warnings.filters)
        if any(action == "error" for action, *_ in current):
            warnings.resetwarnings()
            for action, message, category, module, lineno in current:
                warnings.filterwarnings(
                    "default" if action == "error" else action,
                    message=getattr(message, "pattern", message) or "",
                    category=category,
                    module=getattr(module, "pattern", module) or "",
                    lineno=lineno,
                    append=True,
                )
        yield
