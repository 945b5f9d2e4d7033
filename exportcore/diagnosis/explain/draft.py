"""Every issue in one pass: torch.export.draft_export on a failing case, its report read and its logs removed.

draft_export keeps its report in the private ``ep._report`` and writes a log file per call to
``$TMPDIR/export_$USER`` that nothing removes; here the logs go to a private directory
(torch's DTRACE variable) that is deleted afterwards. The draft program itself is dropped:
it is never a verdict.
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import shutil
import tempfile
from typing import TYPE_CHECKING, Any, Iterator

from exportcore.diagnosis.explain.context import reset
from exportcore.outcome import DraftIssue

if TYPE_CHECKING:
    from exportcore.diagnosis.explain.context import FailedRun as Run

__all__ = ["draft_issues", "available"]

_MAX_ISSUES = 20
_UNBACKED = re.compile(r"\bu\d+\b")  # torch's symbols for data-dependent values
_HINT = re.compile(r"DimHint\((AUTO|DYNAMIC|STATIC)(?:, )?")
_MESSAGE_MAX = 300


def available() -> bool:
    """Return whether this torch has torch.export.draft_export."""
    import torch

    return hasattr(torch.export, "draft_export")


def draft_issues(run: Run) -> tuple[list[DraftIssue], list[str]]:
    """Return the issues draft_export finds for the case (deduplicated), and notes."""
    import torch

    from exportcore.programs.execute import clone_tree

    args, kwargs = clone_tree((run.args, run.kwargs))
    reset(run)
    try:
        with _private_logs(), _quiet():
            # Non-strict whatever the mode: draft_export gives up at dynamo's first graph break.
            ep = torch.export.draft_export(run.model, args, kwargs or None, dynamic_shapes=run.dynamic_shapes,
                                           strict=False)
    except Exception as exc:  # noqa: BLE001 - draft_export gives up on some failures; the verdict stands
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        return [], [f"draft_export could not run: {type(exc).__name__}: {first[:200]}"]
    finally:
        reset(run)
    report = getattr(ep, "_report", None)
    if report is None:
        return [], ["draft_export returned no report (torch changed its private ep._report)"]
    issues: list[DraftIssue] = []
    seen: set[tuple[str, str, str]] = set()
    names = _filenames(report)
    for failure in getattr(report, "failures", []):
        issue = _issue(failure, names)
        key = (issue.kind, issue.location, issue.message)
        # A guard on a data-dependent value restates the data-dependent error reported at the same line.
        echo = (issue.kind == "GUARD_ADDED" and _UNBACKED.search(issue.message) is not None
                and any(i.location == issue.location for i in issues))
        if key not in seen and not echo:
            seen.add(key)
            issues.append(issue)
    notes = [f"{len(issues) - _MAX_ISSUES} more draft_export issues not listed"] if len(issues) > _MAX_ISSUES else []
    if not issues:
        notes.append("draft_export (non-strict tracing) found no issue: what fails is specific to the real "
                     f"export's {'strict (TorchDynamo) capture' if run.mode.strict else 'settings'}")
    return issues[:_MAX_ISSUES], notes


def _filenames(report: Any) -> dict[Any, str]:
    # torch logs each file name once per process (an intern table); later reports lack the earlier names.
    names: dict[Any, str] = {}
    try:
        from torch._logging.structured import INTERN_TABLE

        names.update({index: name for name, index in INTERN_TABLE.items()})
    except ImportError:  # pragma: no cover - older torch: the report's own table only
        pass
    names.update(getattr(report, "str_to_filename", {}) or {})
    return names


def _issue(failure: Any, names: dict[Any, str]) -> DraftIssue:
    data = getattr(failure, "data", {}) or {}
    kind = str(getattr(getattr(failure, "failure_type", None), "name", failure.failure_type))
    location, code = _user_frame(data.get("user_stack") or [], names)
    if kind == "DATA_DEPENDENT_ERROR":
        message = f"could not decide {data.get('expr')} from traced values"
        suggestion = ("torch.cond (or torch.where) for a branch on a tensor value; torch._check on the value "
                      "(e.g. torch._check(n >= 0)) for a size computed from it")
    elif kind == "GUARD_ADDED":
        expr = str(data.get("expr"))
        for symbol, source in sorted((data.get("symbol_to_sources") or {}).items(), key=lambda kv: -len(kv[0])):
            expr = re.sub(rf"\b{re.escape(symbol)}\b", str(source), expr)
        message = f"guard added: {expr}"
        new = data.get("new_dynamic_shapes")
        suggestion = _HINT.sub(r"Dim.\1(", f"dynamic_shapes = {new}").replace("()", "") if new is not None else ""
    elif kind in ("MISSING_FAKE_KERNEL", "MISMATCHED_FAKE_KERNEL"):
        op = data.get("op", "?")
        message = f"{kind.lower().replace('_', ' ')} for {op}"
        suggestion = f"register a fake kernel for {op} (torch.library.register_fake)"
    else:
        message, suggestion = str(data.get("expr", kind)), ""
    return DraftIssue(kind=kind, message=message[:_MESSAGE_MAX], location=location, code=code,
                      suggestion=suggestion[:_MESSAGE_MAX])


def _user_frame(stack: list[Any], names: dict[Any, str]) -> tuple[str, str]:
    # The last frame outside torch is the user's line.
    for frame in reversed(stack):
        filename = names.get(frame.get("filename"), str(frame.get("filename", "")))
        if f"{os.sep}torch{os.sep}" in filename:
            continue
        return f"{filename}:{frame.get('line')}", str(frame.get("loc", "")).strip()
    return "", ""


@contextlib.contextmanager
def _private_logs() -> Iterator[None]:
    import torch._logging._internal as internal

    var = getattr(internal, "DTRACE_ENV_VAR", "TORCH_DTRACE")
    folder = tempfile.mkdtemp(prefix="pytest-export-draft-")
    previous = os.environ.get(var)
    os.environ[var] = folder
    try:
        yield
    finally:
        if previous is None:
            os.environ.pop(var, None)
        else:
            os.environ[var] = previous
        for handler in list(logging.getLogger("torch.__trace").handlers):
            if getattr(handler, "root_dir", None) == folder:  # pragma: no cover - torch removes its own
                logging.getLogger("torch.__trace").removeHandler(handler)
        shutil.rmtree(folder, ignore_errors=True)


@contextlib.contextmanager
def _quiet() -> Iterator[None]:
    # draft_export logs its whole report as warnings; the report is read from ep._report instead.
    loggers = [logging.getLogger(n) for n in ("torch.export._draft_export", "torch.fx.experimental.symbolic_shapes")]
    levels = [lg.level for lg in loggers]
    for lg in loggers:
        lg.setLevel(logging.ERROR)
    try:
        yield
    finally:
        for lg, level in zip(loggers, levels):
            lg.setLevel(level)
