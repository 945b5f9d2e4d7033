"""torch's other control-flow operators in eager (while_loop, map, scan): served on proof, re-checked after an edit.

Like torch.cond, each hands its body to dynamo even in eager (exportcore.reuse.traced_code): the code the
body reaches is read from dynamo's trace, not seen as frames, so these cases are served only when
that trace proves the same code ran, and an edit to a helper only the body reaches is seen.
"""

from __future__ import annotations

import pytest
import torch

from processes import last_lines

# Each body is given the whole input (rows dynamic, 2..64; a map or scan over a leading dimension of one).
OPERATORS = {
    "while_loop": '''
class Operator(torch.nn.Module):
    def forward(self, x):
        def cond_fn(i, t):
            return i < 2

        def body_fn(i, t):
            return i + 1, {body}(t)

        return torch._higher_order_ops.while_loop(cond_fn, body_fn, (torch.tensor(0), x))[1]
''',
    "map": '''
from torch._higher_order_ops.map import map as operator_map


class Operator(torch.nn.Module):
    def forward(self, x):
        return operator_map(lambda t: {body}(t), x.unsqueeze(0))[0]
''',
    "scan": '''
from torch._higher_order_ops.scan import scan


class Operator(torch.nn.Module):
    def forward(self, x):
        def step(carry, t):
            total = carry + {body}(t)
            return total, total.clone()  # an operator's outputs may not alias

        return scan(step, torch.zeros_like(x), x.unsqueeze(0))[1][0]
''',
}

# Eager's path past LIMIT rows differs from the one export traces; "scale" 2 is the same answer.
HELPER = '''
import torch

LIMIT = {limit}


def rows(t):
    if torch.compiler.is_exporting() or t.shape[0] <= LIMIT:
        return t * 2
    return t * {scale}
'''

needs_is_exporting = pytest.mark.skipif(not hasattr(torch.compiler, "is_exporting"),
                                        reason="torch.compiler.is_exporting is torch 2.7+")


_SESSION = '''
import sys
import torch
import exportcore
from torch.export import Dim
from exportcore.reuse.result_cache import ResultCache
from exportcore.reuse.session import EngineSession
import pte_helper
{model}

x = torch.randn(8, 3, generator=torch.Generator().manual_seed(0))
outcome = exportcore.check(Operator(), (x,), dynamic_shapes={{"x": {{0: Dim("n", min=2, max=64)}}}}, mode="strict",
                           case_id="case", session=EngineSession(ResultCache(sys.argv[1])))
print(outcome.status, outcome.reused_from, outcome.failure and outcome.failure.stage)
'''


@needs_is_exporting
@pytest.mark.parametrize("operator", sorted(OPERATORS))
def test_a_case_through_the_operator_is_served_and_checked_again_after_an_edit_only_its_body_reaches(
        tmp_path, operator) -> None:
    # Sessions are processes: neither the graph nor eager's answer on 8 rows changes with the edit; a
    # cold run of the edited helper fails at a drawn shape past LIMIT, so a warm run may not serve the pass.
    script = _SESSION.format(model=OPERATORS[operator].format(body="pte_helper.rows"))
    (tmp_path / "pte_helper.py").write_text(HELPER.format(limit=16, scale=2))
    cold, warm = last_lines(script, tmp_path, runs=2)
    assert cold == "passed None None", cold
    assert warm.startswith("passed cache: strict, "), warm
    (tmp_path / "pte_helper.py").write_text(HELPER.format(limit=16, scale=3))
    edited, = last_lines(script, tmp_path, runs=1)
    assert edited.startswith("failed None ") and edited.split()[-1] in ("numerics", "run"), edited
