"""Where a function's code comes from: its source block, and whether a version names it (torch's, an installed library's).

The result cache names the user's own code by its source and everything else by a version its
identity holds: torch, its dependencies, the standard library and this engine by theirs (left out
of every record), an installed library (torchvision, transformers) by its distribution's.
"""

from __future__ import annotations

import functools
import inspect
import linecache
import os
import site
import sysconfig
import tokenize

__all__ = ["TORCH_DEPENDENCIES", "HARNESS", "source_block", "versioned", "distribution", "harness", "roots"]

#: torch's own dependencies (and numpy, which it calls when present), left out like torch: the
#: identity names their versions (exportcore.reuse.result_cache.LIBRARIES). torch calls into them lazily,
#: so the first eager run of a process runs code of theirs the next finds cached (typing_extensions
#: on torch 2.6, the first backward): recording it made the first training case of every session a miss.
#: tqdm: torch.fx's Interpreter opens a (disabled) progress bar on every run, run_decompositions' too.
TORCH_DEPENDENCIES = ("typing_extensions", "sympy", "mpmath", "filelock", "jinja2", "markupsafe", "networkx",
                      "fsspec", "numpy", "optree", "triton", "setuptools", "tqdm")


def source_block(filename: str, line: int) -> str | None:
    """The source block of the function that starts at ``line`` of ``filename``, None without one."""
    try:
        stamp = os.stat(filename).st_mtime_ns
    except OSError:
        return None
    from exportcore.sandbox.session_caches import active

    session = active()
    key = (filename, line)
    kept = session.sources.get(key)
    if kept is not None and kept[0] == stamp:
        return kept[1]
    if stamp != session.stamps.get(filename):  # edited since linecache read it (a session that edits a model)
        linecache.checkcache(filename)
        session.stamps[filename] = stamp
    lines = linecache.getlines(filename)
    if not 0 < line <= len(lines):
        return None
    try:
        block = "".join(inspect.getblock(lines[line - 1:]))
    except (IndentationError, SyntaxError, tokenize.TokenError):
        return None
    session.sources[key] = (stamp, block)
    return block


def versioned(filename: str) -> bool:
    """Whether code in ``filename`` is named by a version the identity holds: torch's, the stdlib's, the engine's."""
    versioned, installed, stdlib, _ = roots()
    if filename.startswith(versioned):
        return True
    # site-packages may sit inside the stdlib's folder (a Python without a virtualenv): libraries there
    # (transformers, timm, torchvision) are versioned by nothing the identity holds.
    return filename.startswith(stdlib) and not filename.startswith(installed)


#: the test harness's own packages: their callbacks (a log capture handler, hypothesis's gc callback) run
#: wherever the process happens to be, never as the model's code
HARNESS = frozenset({"_pytest", "pytest", "pluggy", "hypothesis", "_hypothesis_pytestplugin", "xdist", "execnet",
                     "coverage", "pytest_cov"})


def harness(filename: str) -> bool:
    """Whether ``filename`` is an installed file of the test harness (HARNESS): pytest's, hypothesis's, xdist's."""
    _, installed, _, _ = roots()
    for folder in installed:
        if filename.startswith(folder):
            return filename[len(folder):].split(os.sep, 1)[0].removesuffix(".py") in HARNESS
    return False


def distribution(filename: str) -> str | None:
    """``name==version`` of the installed distribution ``filename`` belongs to (by its top-level package), or None."""
    _, installed, _, _ = roots()
    for folder in installed:
        if filename.startswith(folder) and not versioned(filename):
            top = filename[len(folder):].split(os.sep, 1)[0]
            return _top_level_version(top.removesuffix(".py"))
    return None


@functools.lru_cache(maxsize=None)
def _top_level_version(top: str) -> str | None:
    # The distribution named like its package (torchvision, transformers, timm, torch_scatter) first; a
    # package named otherwise (PIL: pillow, cv2: opencv-python, sklearn: scikit-learn) through the table
    # of every installed distribution's packages, read once per process and only when needed (0.1-0.2 s).
    from importlib.metadata import PackageNotFoundError, version

    try:
        return f"{top}=={version(top)}"
    except (PackageNotFoundError, ValueError):
        pass
    found = []
    for name in sorted(set(_owners().get(top, ()))):  # several for a namespace package (google)
        try:
            found.append(f"{name}=={version(name)}")
        except (PackageNotFoundError, ValueError):
            continue
    return ",".join(found) or None


@functools.lru_cache(maxsize=1)
def _owners() -> dict[str, list[str]]:
    from importlib.metadata import packages_distributions

    try:
        return dict(packages_distributions())
    except Exception:  # noqa: BLE001 - a broken installed distribution's metadata: no name for these
        return {}


def _location(name: str) -> str:
    """Where top-level package ``name`` lives (its folder, or its file for a single module), "" if nowhere."""
    import importlib.util

    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return ""
    if spec is None:
        return ""
    if spec.submodule_search_locations:
        return os.path.join(os.path.abspath(list(spec.submodule_search_locations)[0]), "")
    return os.path.abspath(spec.origin) if spec.origin and os.path.isabs(spec.origin) else ""


@functools.lru_cache(maxsize=1)
def roots() -> tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...], tuple[str, ...]]:
    """Return the folders (versioned: torch's, its dependencies', the engine's; installed; stdlib; machinery)."""
    import torch

    def folders(*paths: str) -> tuple[str, ...]:
        return tuple(sorted({os.path.join(os.path.abspath(p), "") for p in paths if p}))

    torch_root = os.path.dirname(os.path.abspath(torch.__file__))
    siblings = [os.path.join(os.path.dirname(torch_root), name) for name in ("functorch", "torchgen")]
    dependencies = tuple(sorted(found for found in map(_location, TORCH_DEPENDENCIES) if found))
    versioned = folders(torch_root, *siblings, os.path.dirname(os.path.dirname(os.path.abspath(__file__)))) + dependencies + (
        "<frozen ",)
    paths = sysconfig.get_paths()
    installed = folders(paths["purelib"], paths["platlib"], *site.getsitepackages(), site.getusersitepackages())
    # "<frozen importlib": the import system calls the finders installed on sys.meta_path
    machinery = folders(os.path.join(torch_root, "_dynamo"), os.path.join(torch_root, "_inductor")) + (
        "<frozen importlib",)
    return versioned, installed, folders(paths["stdlib"], paths["platstdlib"]), machinery
