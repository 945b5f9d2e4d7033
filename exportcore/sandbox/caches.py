"""Per-process compile cache directories, so parallel workers never share one.

torch.export itself writes no compile cache, but modes that compile (AOTInductor, a
``torch.compile`` check added through ``pytest_export_modes``) write to
``TORCHINDUCTOR_CACHE_DIR`` (default ``<tmp>/torchinductor_<user>``, also the root of
Triton's cache) and ``TRITON_CACHE_DIR``. Workers that share one race on the same
files and see each other's half-written entries; one directory per worker keeps them
apart and still reuses the cache between runs (worker names are stable: gw0, gw1, ...).

No torch import here: this runs in a worker's pytest_configure, before torch loads.
"""

from __future__ import annotations

import getpass
import os
import re
import tempfile
from typing import MutableMapping

__all__ = ["default_inductor_cache_dir", "use_worker_cache_dirs"]

def default_inductor_cache_dir() -> str:
    """Return the directory inductor uses when TORCHINDUCTOR_CACHE_DIR is unset (as torch computes it)."""
    try:
        user = getpass.getuser()
    except (KeyError, ModuleNotFoundError, OSError):
        getuid = getattr(os, "getuid", None)
        user = f"uid_{getuid()}" if callable(getuid) else "unknown_user"
    return os.path.join(tempfile.gettempdir(), "torchinductor_" + re.sub(r'[\\/:*?"<>|]', "_", user))


def use_worker_cache_dirs(worker: str, environ: MutableMapping[str, str] | None = None) -> dict[str, str]:
    """Point this process's compile caches at ``<cache dir>/<worker>``; return the variables set.

    TORCHINDUCTOR_CACHE_DIR is always set (Triton's cache lives under it unless the user
    names one); TRITON_CACHE_DIR only when the user set it. Calling it twice is harmless.
    """
    if not isinstance(worker, str) or not re.fullmatch(r"[A-Za-z0-9_.-]+", worker):
        raise ValueError(f"worker must be a plain name such as 'gw0', got {worker!r}")
    env = os.environ if environ is None else environ
    bases = {"TORCHINDUCTOR_CACHE_DIR": env.get("TORCHINDUCTOR_CACHE_DIR") or default_inductor_cache_dir()}
    if env.get("TRITON_CACHE_DIR"):
        bases["TRITON_CACHE_DIR"] = env["TRITON_CACHE_DIR"]
    chosen: dict[str, str] = {}
    for name, base in bases.items():
        base = os.path.abspath(base)
        chosen[name] = base if os.path.basename(base) == worker else os.path.join(base, worker)
        env[name] = chosen[name]
    return chosen
