"""Run one script in fresh Python processes, one after another: how a later session sees an earlier one's cache."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path


def session_env() -> dict[str, str]:
    """The environment for a pytest run started as a user starts one: none of this run's own pytest variables.

    Inherited from an outer xdist worker, PYTEST_XDIST_WORKER makes the inner session take itself
    for a worker (never supervised; the outer worker its controller, its Ctrl-C target), and
    PYTEST_ADDOPTS this run's own options.
    """
    return {k: v for k, v in os.environ.items()
            if k not in ("PYTEST_ADDOPTS", "PYTEST_CURRENT_TEST") and not k.startswith("PYTEST_XDIST_")}


def last_lines(script: str, tmp_path: Path, *, runs: int = 2, random_hashes: bool = False) -> list[str]:
    """Run ``script`` (given the cache folder as argv[1]) ``runs`` times; return each run's last line of output.

    ``random_hashes``: str hashes differ between the processes, as by default (PYTHONHASHSEED unset).
    """
    path = tmp_path / "session.py"
    path.write_text(textwrap.dedent(script))
    root = Path(__file__).resolve().parents[1]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(root), os.environ.get("PYTHONPATH")]))}
    if random_hashes:
        env.pop("PYTHONHASHSEED", None)
    done = [subprocess.run([sys.executable, str(path), str(tmp_path / "cache")], capture_output=True, text=True,
                           env=env, timeout=600, check=False) for _ in range(runs)]
    return [run.stdout.strip().splitlines()[-1] if run.stdout.strip() else run.stderr[-2000:] for run in done]


_CHECK = '''
import sys
import torch
import exportcore
from torch.export import Dim
from exportcore.reuse.result_cache import ResultCache
from exportcore.reuse.session import EngineSession
{model}

x = torch.randn(8, 3, generator=torch.Generator().manual_seed(0))
outcome = exportcore.check({name}(), (x,), dynamic_shapes={{"x": {{0: Dim("n", min=2, max=64)}}}}, mode="strict",
                           case_id="case", session=EngineSession(ResultCache(sys.argv[1])))
print(outcome.status, outcome.reused_from)
'''


def checked_twice(model: str, name: str, tmp_path: Path) -> list[str]:
    """Check class ``name`` of ``model`` (source) on 8 rows, rows dynamic, strict, in two fresh processes.

    Return each process's "status reused_from": a later session reading the earlier one's result cache.
    """
    return last_lines(_CHECK.format(model=textwrap.dedent(model), name=name), tmp_path)
