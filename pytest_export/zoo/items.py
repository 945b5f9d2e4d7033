"""Zoo models as pytest items: ``zoo/<family>`` collectors under the session, one item per (model, column).

An item is the same kind of thing as a marker test's parametrized item: it carries the exportable marker
and a callspec whose last id is its mode, so the mode and case id, xdist's case scheduling, the records,
reports, gate, baseline and shards treat it as one; its run goes through pytest_export.runner.run_exportable.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any, Iterator

import pytest

from pytest_export.marker import MARKER, MODE_PARAM, ExportSpec, ModeParam
from pytest_export.session_state import plugin_session
from pytest_export.zoo.options import zoo_options

if TYPE_CHECKING:
    from exportcore.columns import Column
    from exportcore.zoo import ZooCase, ZooEntry

__all__ = ["ZooCallSpec", "ZooFamily", "ZooItem", "zoo_collectors"]

PREFIX = "zoo"


@dataclasses.dataclass
class ZooCallSpec:
    """What pytest-export reads of a callspec: the mode parameter, the ids (mode last), no marks."""

    params: dict[str, Any]
    _idlist: list[str]
    marks: tuple = ()
    #: pytest's fixture ordering reads each parameter's scope: the mode is function-scoped, like a marker test's.
    _arg2scope: dict[str, Any] = dataclasses.field(default_factory=lambda: {MODE_PARAM: "function"})

    @property
    def id(self) -> str:
        return "-".join(self._idlist)


def zoo_collectors(session: pytest.Session) -> list[ZooFamily]:
    """Return one collector per zoo family the session's specs name (none without --export-model)."""
    specs = zoo_options(session.config).specs
    if not specs:
        return []
    from exportcore.zoo import ZooSpecError, expand

    try:
        entries = expand(specs)
    except ZooSpecError as exc:
        raise pytest.UsageError(f"--export-model: {exc}") from None
    families: dict[str, list[ZooEntry]] = {}
    for entry in entries:
        families.setdefault(entry.family, []).append(entry)
    return [ZooFamily.from_parent(session, name=f"{PREFIX}/{family}", nodeid=f"{PREFIX}/{family}", entries=found)
            for family, found in families.items()]


class ZooFamily(pytest.Collector):
    """The models of one zoo family (torchvision, timm, hf, a factory's module)."""

    def __init__(self, *, entries: list[ZooEntry], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.entries = entries

    def collect(self) -> Iterator[ZooItem]:
        options = plugin_session(self.config).options
        for entry in self.entries:
            for column in options.columns_for(None, None, None):
                yield ZooItem.from_parent(self, name=f"{entry.name}[{column.label}]",
                                          nodeid=f"{self.nodeid}/{entry.name}[{column.label}]", entry=entry,
                                          column=column)

    def reportinfo(self) -> tuple[Any, int, str]:
        return self.path, 0, self.nodeid  # a line number: item.warn() needs one


class ZooItem(pytest.Item):
    """One zoo model in one mode (or target column)."""

    cls = None  # no test class (pytest's fixture ordering asks, having seen a callspec)

    def __init__(self, *, entry: ZooEntry, column: Column, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.entry = entry
        self.column = column
        self.callspec = ZooCallSpec({MODE_PARAM: ModeParam(column, ExportSpec())}, [column.label])
        self.add_marker(getattr(pytest.mark, MARKER)())
        self.extra_keyword_matches.update({entry.family, entry.name, *([entry.group] if entry.group else [])})
        #: What was inferred and why, for the outcome's notes (set when the model is built).
        self.zoo_note = ""

    def runtest(self) -> None:
        from exportcore.sandbox.isolation import globals_restored

        # The build is inside the isolation too: what a factory sets (set_default_dtype, a seed, a backend
        # flag) holds for its own case and is put back after it, never leaking into the models after it.
        with globals_restored():
            self._run()

    def _run(self) -> None:
        from pytest_export.runner import run_exportable

        column = self.column
        case = self._build()
        why = case.unsupported_modes.get(column.name)
        if why:
            pytest.skip(f"{self.entry.zoo_id} {column.label}: {why}")
        from exportcore.case import Case

        result = Case(model=case.model, args=case.args, kwargs=case.kwargs, dynamic_shapes=case.dynamic_shapes)
        try:
            run_exportable(self, result, column, ExportSpec(), plugin_session(self.config).options)
        except pytest.fail.Exception as exc:
            headline = getattr(exc, "headline", None)  # runner.ExportCheckFailed: a failure's report
            full = self.config.get_verbosity() > 0 or self.config.getoption("tbstyle", "auto") == "long"
            if headline is None or full:
                raise
            from pytest_export.runner import ExportCheckFailed

            # A zoo run checks dozens of models: one line each in pytest's FAILURES section (the rates and
            # causes above say the rest). The record was made before the raise: the reports keep the whole text.
            raise ExportCheckFailed(f"{headline} (whole report: -v, or --export-report)", headline) from None

    def _build(self) -> ZooCase:
        from exportcore.zoo import ZooSkip, ZooSpecError, build

        zoo = zoo_options(self.config)
        try:
            from pytest_export.runner import call_bounded

            case = call_bounded(self, self.column, ExportSpec(), plugin_session(self.config).options,
                                f"building {self.entry.zoo_id}", lambda: build(self.entry, zoo.max_params))
        except ZooSkip as exc:
            pytest.skip(str(exc))
        except ZooSpecError as exc:
            pytest.fail(f"{self.nodeid}: {exc}", pytrace=False)
        replaced = self.ihook.pytest_export_zoo_case(config=self.config, entry=self.entry, case=case)
        if replaced is not None:
            case = replaced
            case.note = case.note or "the pytest_export_zoo_case hook's case"
        how = zoo.shapes_for(self.entry.zoo_id)
        if how != "inferred":
            case = _override(case, how)
        self.zoo_note = f"zoo {self.entry.zoo_id}: {case.note}"
        return case

    def reportinfo(self) -> tuple[Any, int, str]:
        return self.path, 0, self.nodeid  # a line number: item.warn() needs one


def _override(case: ZooCase, how: str) -> ZooCase:
    """Return ``case`` with its dynamic dims replaced as an --export-model-shapes rule says."""
    if how == "static" or case.dynamic_shapes is None:
        return dataclasses.replace(case, dynamic_shapes=None,
                                   note=f"{case.note}; --export-model-shapes: static (no dynamic dims)")
    from exportcore.zoo.building import batch_only

    return dataclasses.replace(case, dynamic_shapes=batch_only(case.dynamic_shapes),
                               note=f"{case.note}; --export-model-shapes: batch only (dim 0 of each input)")

