"""pytest-export: keep PyTorch models exportable with torch.export, inside pytest.

Importing this package (and the plugin) never imports torch.
"""

from __future__ import annotations

from pytest_export.finding_warnings import (
    DtypeAcceptedWarning,
    ExportFindingWarning,
    LessPreciseWarning,
    NarrowedWarning,
    NoShapeCheckedWarning,
    PythonStateWarning,
    RejectUnguardedWarning,
    Size01AcceptedWarning,
    SpecializedWarning,
    StateDiffersWarning,
    StateMissingWarning,
)

__version__ = "0.1.0"

#: Warning classes a filterwarnings entry can name (pytest_export.Size01AcceptedWarning, ...).
__all__ = [
    "__version__", "ExportFindingWarning", "SpecializedWarning", "NarrowedWarning", "Size01AcceptedWarning",
    "DtypeAcceptedWarning", "RejectUnguardedWarning", "StateMissingWarning", "StateDiffersWarning",
    "NoShapeCheckedWarning", "LessPreciseWarning", "PythonStateWarning",
]
