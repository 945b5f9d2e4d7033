"""0/1 specialization: a dim declared dynamic whose example size is 0 or 1 is the example's fault.

torch.export treats example sizes 0 and 1 as constants, so any dynamic dim traced from such an
example comes out static, and torch then suggests pinning it (``batch = 1``). That pin "verifies"
trivially and keeps the mistake. The fix is the example: the same spec, exported from inputs
whose example-sized dims are 2.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from exportcore.diagnosis.categories import ZERO_ONE
from exportcore.shapes.form import Plain, SpecForm, zip_forms

if TYPE_CHECKING:
    from exportcore.diagnosis.explain.context import FailedRun as Run

__all__ = ["EXAMPLE_SIZES", "SIZE", "CASE", "example_sized_roots", "diagnose", "resized_examples", "pins_example_size"]

#: The example sizes torch.export specializes.
EXAMPLE_SIZES = (0, 1)
#: The smallest example size that stays dynamic.
SIZE = 2
#: The ExportDB case that shows it.
CASE = "example_size_one_specializes"
#: Failures a 0/1 example explains: the spec's dim came out static (constraints) or pinned (guards).
_SPECIALIZED = (("constraints", "torch.dynamic-shape"), ("capture", "torch.dynamic-shape"), ("guards", "guards"))


def example_sized_roots(run: Run) -> dict[str, int]:
    """Return root name -> example size for the declared dynamic roots traced from a 0/1 example.

    A ShapesCollection dim is unbacked (``keep01``): export keeps 1 in range, nothing specializes.
    A root whose declared max is below 2 has no example size that could stay dynamic.
    """
    spec = run.spec
    if spec is None:
        return {}
    return {
        name: root.example for name, root in spec.roots.items()
        if root.example in EXAMPLE_SIZES and not root.keep01 and (root.max is None or root.max >= SIZE)
    }


def diagnose(run: Run) -> bool:
    """Name the example as the cause of a specialization failure of a 0/1-sized dynamic dim; whether it did.

    The generic texts ("the model fixes batch to 1", "remove the code that specializes it") blame the
    model for what the example did.
    """
    failure = run.outcome.failure
    roots = example_sized_roots(run)
    if failure is None or not roots or (failure.stage, failure.category) not in _SPECIALIZED:
        return False
    failure.exportdb_case = CASE
    if ZERO_ONE in failure.hint:
        return True  # the classification said so already, next to what it said about other dims
    text = f"{failure.message}\n{failure.detail}"
    others = [name for name in run.spec.roots if name not in roots and re.search(rf"\b{re.escape(name)}\b", text)]
    axes = [f"{axis.key} ({axis.label or name}) is {axis.size}" for name in roots for axis in run.spec.axes_of(name)]
    hint = (f"the example's size for {', '.join(axes)}: {ZERO_ONE} (0/1 specialization), so the dim cannot stay"
            f" dynamic; use an example of size >= {SIZE} (declare it static only if the model really needs that size)")
    # the failure may name other dims too (torch lists every violated one): keep what was said about them
    failure.hint = f"{hint}; for {', '.join(others)}: {failure.hint}" if others and failure.hint else hint
    return True


def resized_examples(run: Run) -> tuple[tuple, dict, list[str]] | None:
    """Return (args, kwargs, what changed) with the 0/1-sized dynamic dims at size 2, or None.

    None when no declared dim has a 0/1 example or the inputs cannot be rebuilt at the new size.
    """
    from exportcore.shapes.solve import evaluate
    from exportcore.shapes.synth import synthesize

    roots = example_sized_roots(run)
    if not roots:
        return None
    assignment = dict(run.spec.example_assignment())
    assignment.update({name: SIZE for name in roots})
    try:
        shapes = run.spec.shapes_for(assignment)
        args, kwargs = synthesize(run.args, run.kwargs, shapes, seed=run.seed)
    except Exception:  # noqa: BLE001 - an input we cannot resize: no example fix, the plain explanation stands
        return None
    changes = [
        f"{axis.key} ({axis.label or name}): example size {axis.size} -> {evaluate(axis.expr, name, SIZE)}"
        " (change the example input)"
        for name in roots for axis in run.spec.axes_of(name)
    ]
    return args, kwargs, changes


def pins_example_size(before: SpecForm, after: SpecForm) -> bool:
    """Return whether ``after`` turns a declared dim of ``before`` into the static size 0 or 1."""
    return any(isinstance(new, Plain) and new.static and new.value in EXAMPLE_SIZES
               and not (isinstance(old, Plain) and isinstance(old.value, int) and old.value == new.value)
               for _, old, new in zip_forms(before.tree, after.tree))
