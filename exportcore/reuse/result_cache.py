"""A persistent store of reuse donations: an unchanged (case, mode) is not re-checked in the next session.

The engine session's memory store proves within one process that a mode captured the same program as
an earlier one (structure, options, model state, constants, inputs and eager's answer by value:
exportcore.reuse.proof) and takes that mode's results for the steps that only run the program. This
module keeps those results on disk (exportcore.reuse.stores.DiskStore) under the same proof, plus
everything outside the process that could change an answer:
torch, pytest-export (its version and its source), hypothesis, sympy and Python versions. An
entry is a small JSON file named by the hash of the whole identity, so a lookup is one file
read; capture and eager always run first, since the identity is taken from what they produced.

Safe to share between processes (xdist workers, CI shards restoring the directory): entries are
written to a temporary file and renamed into place, and an entry that does not decode, carries
another format or another identity is ignored (never trusted) and removed. Bounded: the oldest
entries (by last use) go when the store holds more than ``max_entries``.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import os
import platform
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from exportcore.reuse.code_witnesses import Witness
from exportcore.codec import SchemaError, decode, encode, version
from exportcore.reuse.code_origins import TORCH_DEPENDENCIES
from exportcore.outcome import ExampleStats, Finding, GraphStats, ProgramError

__all__ = ["ResultCache", "CACHE_MODES", "FORMAT"]

#: Bumped whenever what an entry means changes: older entries are then foreign, i.e. ignored.
#: 2: entries name the code run beyond the examples (exportcore.reuse.code_witnesses).
#: 3: and an installed library's version where that code is the library's.
#: 4: and the environment variables it read (exportcore.reuse.environ_reads).
#: 5: and a witness's closure where a module global holds it (Witness.holder).
#: 6: witnesses are read again live through the paths that reached them (Witness.paths), by code object.
#: 7: the identity is the key of exportcore.reuse.proof.Proof (its named parts), not a joined string.
#: 8: and each program's measured error (Outcome.numerics): an older entry would serve a pass unmeasured.
FORMAT = 8
#: ``off``: neither read nor write; ``read``: take entries, write none (e.g. a PR job on a main
#: branch's cache); ``write``: check in full, then store; ``on``: both.
CACHE_MODES = ("off", "read", "write", "on")
MAX_ENTRIES = 4000


@dataclass
class Entry:
    """One cached walk: what its reusable steps found, and where it came from."""

    format: int = field(metadata=version(FORMAT))
    identity: str  # the whole key, kept to refuse a (vanishingly unlikely) hash collision
    mode: str
    run: str  # when and where the donating walk ran, named in the reusing outcome
    findings: dict[str, list[Finding]] = field(default_factory=dict)
    notes: dict[str, list[str]] = field(default_factory=dict)
    graph: GraphStats | None = None
    examples: ExampleStats | None = None
    #: functions the walk ran only beyond the examples: served only while each is unchanged
    witnesses: list[Witness] = field(default_factory=list)
    #: environment variables the walk read beyond the examples, by name: a digest of the value, None when
    #: unset; served only while each still has it
    environ: dict[str, str | None] = field(default_factory=dict)
    numerics: list[ProgramError] = field(default_factory=list)  # each program's measured error


class ResultCache:
    """A directory of entries; ``mode`` is one of CACHE_MODES."""

    def __init__(self, path: str | os.PathLike[str], mode: str = "on", max_entries: int = MAX_ENTRIES) -> None:
        if mode not in CACHE_MODES:
            raise ValueError(f"cache mode must be one of {', '.join(CACHE_MODES)}, got {mode!r}")
        self.path = Path(path)
        self.mode = mode
        self.max_entries = max_entries
        self._puts = 0
        self._next_listing = 1  # the put after which the store is listed (and trimmed) again

    @property
    def reads(self) -> bool:
        return self.mode in ("read", "on")

    @property
    def writes(self) -> bool:
        return self.mode in ("write", "on")

    def __repr__(self) -> str:
        return f"ResultCache({str(self.path)!r}, mode={self.mode!r})"

    def get(self, identity: str, kind: type[Any] | None = None) -> Any:
        """Return the entry (an Entry, or ``kind``) stored under ``identity``, or None (missing, unreadable,
        foreign or corrupt)."""
        if not self.reads:
            return None
        file = self._file(identity)
        try:
            data = json.loads(file.read_text(encoding="utf-8"))
            entry = decode(kind or Entry, data, "cache entry")
        except FileNotFoundError:
            return None
        except (OSError, ValueError, SchemaError, TypeError):
            self._discard(file)
            return None
        if entry.identity != identity:
            self._discard(file)
            return None
        try:
            os.utime(file)  # last use: what eviction orders by
        except OSError:
            pass
        return entry

    def put(self, identity: str, entry: Any) -> None:
        """Store ``entry`` atomically under ``identity``; a store that cannot be written is skipped."""
        if not self.writes:
            return
        file = self._file(identity)
        try:
            file.parent.mkdir(parents=True, exist_ok=True)
            text = json.dumps(encode(dataclasses.replace(entry, identity=identity), "cache entry"), sort_keys=True)
            fd, tmp = tempfile.mkstemp(prefix=".tmp-", dir=file.parent)
            try:
                with os.fdopen(fd, "w", encoding="utf-8") as out:
                    out.write(text)
                os.replace(tmp, file)
            except BaseException:
                Path(tmp).unlink(missing_ok=True)
                raise
        except OSError:
            return  # a read-only or full disk costs the next run time, never this run's verdict
        self._puts += 1
        if self._puts >= self._next_listing:
            self._evict()

    def entries(self) -> list[Path]:
        """Return the entry files, oldest use first."""
        files = [p for p in self.path.glob("*/*.json") if p.is_file()]
        return sorted(files, key=_mtime)

    def _file(self, identity: str) -> Path:
        name = hashlib.blake2b(identity.encode("utf-8", "surrogatepass"), digest_size=20).hexdigest()
        return self.path / name[:2] / f"{name}.json"

    def _evict(self) -> None:
        # Listing and stat-ing every entry on every put would cost a zoo run O(entries) per model;
        # trim a little below the bound instead and list again only once this process's own puts
        # could have filled the store (other processes' puts are caught at their next listing).
        files = self.entries()
        kept = len(files)
        if kept > self.max_entries:
            kept = self.max_entries - self.max_entries // 20
            for stale in files[: len(files) - kept]:
                self._discard(stale)
        self._next_listing = self._puts + max(1, self.max_entries - kept)

    @staticmethod
    def _discard(file: Path) -> None:
        try:
            file.unlink()
        except OSError:
            pass


#: Libraries besides torch whose code decides what a walk finds: hypothesis draws the shapes (another
#: version may draw other shapes from the same seed); sympy writes and reads back the symbolic sizes a
#: save/load round trip serializes; torch's other dependencies run under torch's code, eager's included
#: (exportcore.reuse.eager_code leaves their code out of what it records, since their versions are here).
LIBRARIES = ("hypothesis", *TORCH_DEPENDENCIES)


def environment() -> str:
    """Return what outside the process decides a walk's results: torch, the engine, LIBRARIES, Python, the machine.

    The engine is named by its source's digest, not only its version number: an edited check
    under an unchanged version (a development checkout) must not be served its old results.
    The machine is its OS, architecture and the CPU kernels torch dispatches to (AVX2, AVX512,
    SVE): a cache restored on another runner (x86 and arm64 share ``runner.os``) runs other
    kernels, with other numerics and other failures; torch's version string does not say so
    (``2.15.0`` on macOS and on a Linux arm64 wheel).
    """
    import torch

    return (f"torch {torch.__version__}; pytest-export {_dist_version('pytest-export')} ({_engine_digest()}); "
            f"{_library_versions()}; python {platform.python_version()}; "
            f"machine {platform.system()} {platform.machine()} cpu {_cpu_capability()}")


def _cpu_capability() -> str:
    import torch

    try:
        return str(torch.backends.cpu.get_cpu_capability())
    except Exception:  # noqa: BLE001 - a build without the query: the architecture above still names the machine
        return "unknown"


def run_label() -> str:
    """Return when and where this process runs, for ``reused_from``."""
    stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    return f"{stamp} pid {os.getpid()}"


def _dist_version(name: str) -> str:
    from importlib.metadata import PackageNotFoundError, version as dist_version

    try:
        return dist_version(name)
    except PackageNotFoundError:
        return "unknown"


@functools.lru_cache(maxsize=1)
def _library_versions() -> str:
    return "; ".join(f"{name} {_dist_version(name)}" for name in LIBRARIES)


@functools.lru_cache(maxsize=1)
def _engine_digest() -> str:
    root = Path(__file__).parents[1]  # the whole engine, exportcore/
    digest = hashlib.blake2b(digest_size=12)
    for file in sorted(root.rglob("*.py")):
        digest.update(file.relative_to(root).as_posix().encode())
        digest.update(file.read_bytes())
    return digest.hexdigest()


def _mtime(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:
        return 0.0
