"""Compare eager outputs with exported-program outputs, leaf by leaf.

Walks nested tuples, lists, dicts (HF ``ModelOutput`` included), namedtuples,
torch struct sequences (``torch.return_types.max``), dataclasses and
torch-pytree-registered classes, and reports the first leaf that differs, by its
pytree path (``output[0]['logits']``, ``output.hidden[1]``).

Default tolerances per dtype (``rtol``, ``atol``), a little looser than
``torch.testing`` for float32 because decompositions and the exported graph
reorder floating point math (fused vs. unfused ops, different reductions):

=================  ========  ========
dtype              rtol      atol
=================  ========  ========
float64/complex128 1e-7      1e-7
float32/complex64  1e-4      1e-5
float16            1e-3      1e-5
bfloat16           1.6e-2    1e-5
other floats (fp8) 1.25e-1   1e-3
Python float       1e-4      1e-5   (usually a ``.item()`` of a float32 value)
=================  ========  ========

Each leaf compared can be measured on the way (exportcore.compare.measure): its largest
absolute and relative error and the fraction of its tolerance budget it used, on passes too.

Integers, bools and strings compare exactly. NaN equals NaN when the positions
agree; +inf/-inf must agree exactly. A tolerance the caller passes replaces the
default for every floating leaf; passing only one of them keeps the default for
the other.

Importing this module does not import torch.
"""

from __future__ import annotations

from exportcore.compare.measure import UNBOUNDED, LeafError, Meter
from exportcore.compare.rounding import ROUNDING_FACTOR, Rounding, compare_with_reference
from exportcore.compare.tolerances import MISMATCH_KINDS, Mismatch, default_tolerances, tolerance_problem
from exportcore.compare.tree import compare

__all__ = [
    "LeafError", "Meter", "Mismatch", "MISMATCH_KINDS", "ROUNDING_FACTOR", "UNBOUNDED", "Rounding", "compare",
    "compare_with_reference", "default_tolerances", "tolerance_problem",
]
