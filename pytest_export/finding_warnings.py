"""One warning class per finding kind, so a project filters each on its own.

``filterwarnings = ignore::pytest_export.Size01AcceptedWarning`` silences one kind;
``ignore::pytest_export.ExportFindingWarning`` all of them. Only these warnings go through the
user's filters: torch's own warnings during an export are kept from them by the engine
(exportcore.pipeline.walk), so ``-W error`` cannot change what torch does. Torch-free.
"""

from __future__ import annotations

__all__ = [
    "ExportFindingWarning", "SpecializedWarning", "NarrowedWarning", "Size01AcceptedWarning",
    "DtypeAcceptedWarning", "RejectUnguardedWarning", "StateMissingWarning", "StateDiffersWarning",
    "NoShapeCheckedWarning", "LessPreciseWarning", "PythonStateWarning", "FINDING_WARNINGS", "warning_for",
]


class ExportFindingWarning(UserWarning):
    """Something torch.export let through that the user should know about (see --export-findings)."""


class SpecializedWarning(ExportFindingWarning):
    """Finding ``specialized``: a dim declared dynamic was exported static."""


class NarrowedWarning(ExportFindingWarning):
    """Finding ``narrowed``: a dim declared dynamic was exported with a narrower range."""


class Size01AcceptedWarning(ExportFindingWarning):
    """Finding ``size01_accepted``: sizes 0/1 pass the guards of a range starting at 2."""


class DtypeAcceptedWarning(ExportFindingWarning):
    """Finding ``dtype_accepted``: another float dtype runs silently."""


class RejectUnguardedWarning(ExportFindingWarning):
    """Finding ``reject_unguarded``: an out-of-spec shape runs without a guard error."""


class StateMissingWarning(ExportFindingWarning):
    """Finding ``state_missing``: a parameter or buffer of the model is missing from ep.module()."""


class StateDiffersWarning(ExportFindingWarning):
    """Finding ``state_differs``: ep.module()'s parameters or buffers differ from the model's."""


class NoShapeCheckedWarning(ExportFindingWarning):
    """Finding ``no_shape_checked``: no drawn shape could be checked."""


class LessPreciseWarning(ExportFindingWarning):
    """Finding ``less_precise``: a program (the decomposed one, typically) rounds further from float64 than eager."""


class PythonStateWarning(ExportFindingWarning):
    """Finding ``python_state``: eager's second call differs from the program's (Python state a forward changes)."""


#: Finding kind -> its warning class; a kind not listed warns as ExportFindingWarning.
FINDING_WARNINGS: dict[str, type[ExportFindingWarning]] = {
    "specialized": SpecializedWarning,
    "narrowed": NarrowedWarning,
    "size01_accepted": Size01AcceptedWarning,
    "dtype_accepted": DtypeAcceptedWarning,
    "reject_unguarded": RejectUnguardedWarning,
    "state_missing": StateMissingWarning,
    "state_differs": StateDiffersWarning,
    "no_shape_checked": NoShapeCheckedWarning,
    "less_precise": LessPreciseWarning,
    "python_state": PythonStateWarning,
}


def warning_for(kind: str) -> type[ExportFindingWarning]:
    """Return the warning class of a finding kind."""
    return FINDING_WARNINGS.get(kind, ExportFindingWarning)
