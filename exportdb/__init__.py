"""ExportDB: a categorized, executable database of torch.export cases.

Each case is a small program showing one Python/PyTorch feature, its expected result per
export mode (strict, non_strict, training), the failure category when unsupported and the
case that shows the supported rewrite. Importing this package does not import torch::

    from exportdb import all_cases, get
    case = get("if_on_tensor_value")
    print(case.expect, case.rewrite)

``python -m exportdb list`` prints the catalog, ``python -m exportdb docs -o DIR`` renders it,
and ``pytest --pyargs exportdb -n 2`` checks every expectation against the installed torch.
"""

from __future__ import annotations

from exportdb.registry import (
    CATEGORIES,
    MODES,
    PASS,
    TAGS,
    ExportCase,
    Fails,
    Pass,
    all_cases,
    by_category,
    by_tag,
    case,
    get,
    validate,
)

__all__ = [
    "CATEGORIES", "MODES", "PASS", "TAGS", "ExportCase", "Fails", "Pass",
    "all_cases", "by_category", "by_tag", "case", "get", "validate",
]
