"""One ledger record: the verdict of one (case, mode) on one torch version, and its JSON line.

A record keeps what a reader of the published pages and of a drift page needs, and nothing a report
already holds in full (graphs, tracebacks): the verdict, the failing stage and category with its
ExportDB case, each declared dim's outcome in its short form, the measured error, the export time,
the repro command and the first-seen and last-changed dates. Empty fields are left out of the line,
so the ledger of a registry stays a few hundred bytes a record.
"""

from __future__ import annotations

import json
import shlex
from dataclasses import asdict, dataclass, field, fields

from exportcore.diagnosis.explain.rescue import rescue_applies
from pytest_export.rendering.rescue import rescue_of, rescue_phrase
from pytest_export.results.records import Record, failure_of

__all__ = ["LedgerError", "LedgerRow", "repro_command", "row_of", "state_of"]

ZOO = "zoo/"
#: the rescue phrase of a failure no export option is about (exportcore.diagnosis.explain.rescue.rescue_applies)
NOT_A_SIZE_FAILURE = "no size option applies"


class LedgerError(ValueError):
    """A ledger file is unreadable or a line is not a record; the message names the file, line and field."""


@dataclass
class LedgerRow:
    case: str
    mode: str
    verdict: str
    first_seen: str  # YYYY-MM-DD: the first run that had this (case, mode) on this torch
    last_changed: str  # YYYY-MM-DD: the first run since which verdict, stage and category are the same
    repro: str = ""
    stage: str = ""
    category: str = ""
    exportdb: str = ""  # the ExportDB case of the failure's category
    skip: str = ""  # why it was skipped
    dims: list[str] = field(default_factory=list)  # DimOutcome.short() per declared dynamic dim
    error: float | None = None  # the worst measured error of any program, as a fraction of the tolerance
    export_s: float | None = None  # torch.export.export's own time (the capture stage)
    seconds: float | None = None  # the whole result's time
    inputs: str = ""  # the zoo's note on the inputs and dynamic dims it inferred
    #: a failing result's option rescue: "rescued by X (verified)", "no option rescues", NOT_A_SIZE_FAILURE
    #: ("" where a size failure's run did not record one: it predates the rescue)
    rescue: str = ""

    @property
    def key(self) -> tuple[str, str]:
        return (self.case, self.mode)

    def to_line(self) -> str:
        """Return the record as one JSON line (keys sorted, empty fields left out)."""
        data = {k: v for k, v in asdict(self).items() if v not in ("", None, [])}
        return json.dumps(data, sort_keys=True, ensure_ascii=False)

    @classmethod
    def from_line(cls, text: str, where: str) -> LedgerRow:
        """Rebuild a record from its line; raise LedgerError naming ``where`` and the field."""
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise LedgerError(f"{where}: not JSON ({exc.msg})") from None
        if not isinstance(data, dict):
            raise LedgerError(f"{where}: a record must be a JSON object")
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise LedgerError(f"{where}: unknown field {unknown[0]!r}")
        for name in ("case", "mode", "verdict", "first_seen", "last_changed"):
            if not isinstance(data.get(name), str) or not data[name]:
                raise LedgerError(f"{where}: field {name!r} must be a non-empty string")
        for name in ("error", "export_s", "seconds"):
            if data.get(name) is not None and not isinstance(data[name], (int, float)):
                raise LedgerError(f"{where}: field {name!r} must be a number")
        if not isinstance(data.get("dims", []), list):
            raise LedgerError(f"{where}: field 'dims' must be a list")
        return cls(**data)


def state_of(row: LedgerRow) -> tuple[str, str, str]:
    """What a change of resets ``last_changed``: the verdict and where and why it failed (not the numbers)."""
    return (row.verdict, row.stage, row.category)


def repro_command(case: str, mode: str, test: str) -> str:
    """Return the command that re-checks one (case, mode): a zoo spec, else the test's own node id."""
    if case.startswith(ZOO) and case.count("/") >= 2:
        family, model = case[len(ZOO):].split("/", 1)
        return f"pytest --export-model={shlex.quote(f'{family}:{model}')} --export-modes={mode}"
    return f"pytest {shlex.quote(test)}"


def _significant(value: float) -> float:
    return float(f"{value:.4g}")


def row_of(record: Record, date: str) -> LedgerRow:
    """Return the ledger record of a report's record, first seen and last changed on ``date``."""
    outcome, failure = record.outcome, failure_of(record)
    row = LedgerRow(record.case, record.mode, record.verdict, date, date,
                    repro=repro_command(record.case, record.mode, record.test), seconds=round(record.duration, 2))
    if record.verdict == "skipped":
        row.skip = failure.message if failure else _skip_note(record)
    elif failure is not None and record.verdict not in ("passed", "xpassed"):
        row.stage, row.category, row.exportdb = failure.stage, failure.category, failure.exportdb_case or ""
    if outcome is None:
        return row
    row.dims = [dim.short() for dim in outcome.dims]
    if outcome.numerics:
        row.error = _significant(max(p.worst_fraction for p in outcome.numerics))
    if "capture" in outcome.timings:
        row.export_s = round(outcome.timings["capture"], 2)
    row.inputs = next((n.split(": ", 1)[-1] for n in outcome.notes if n.startswith("zoo ")), "")
    rescue = rescue_of(outcome)
    if rescue is not None and row.stage:
        row.rescue = rescue_phrase(rescue, tried=False)
    elif row.stage and not rescue_applies(row.stage, row.category):
        row.rescue = NOT_A_SIZE_FAILURE  # a decomposition, a runtime, numerics: no export option is about it
    return row


def _skip_note(record: Record) -> str:
    # A zoo model over the size budget is skipped before any export: its reason is the outcome's note.
    notes = record.outcome.notes if record.outcome is not None else []
    text = next((n[len("Skipped: "):] for n in notes if n.startswith("Skipped: ")), "skipped")
    model = record.case[len(ZOO):] + ": "
    return text[len(model):] if text.startswith(model) else text

