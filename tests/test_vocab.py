"""The closed vocabularies (exportcore.vocab): the codec enforces them, and every writer stays inside them."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

from exportcore import vocab

from exportcore.diagnosis import failures
from exportcore.codec import SchemaError
from exportcore.outcome import Failure, Finding, Outcome, SpecFix
from pytest_export.results.records import Record

ROOT = Path(__file__).resolve().parents[1]
#: Where results are written: the engine, the plugin and the catalog.
WRITERS = [p for pkg in ("exportcore", "pytest_export", "exportdb") for p in sorted((ROOT / pkg).rglob("*.py"))]


def _outcome(**failure) -> Outcome:
    fields = {"stage": "capture", "category": "torch.operator", "exc_type": "E", "message": "m", **failure}
    return Outcome(case_id="c", mode="strict", status="failed", failure=Failure(**fields))


# --- the codec refuses a word outside the vocabulary, on encode and on decode, naming the field --------------


@pytest.mark.parametrize("make, path", [
    (lambda: _outcome(stage="lowering"), r"outcome\.failure\.stage must be one of \('input', .*got 'lowering'"),
    (lambda: Outcome(case_id="c", mode="m", status="broken"), r"outcome\.status must be one of"),
    (lambda: Outcome(case_id="c", mode="m", findings=[Finding("specialised", "warning", "m")]),
     r"outcome\.findings\[0\]\.kind must be one of"),
    (lambda: Outcome(case_id="c", mode="m", findings=[Finding("specialized", "fatal", "m")]),
     r"outcome\.findings\[0\]\.severity must be one of \('warning', 'error'\)"),
])
def test_an_outcome_with_a_word_outside_the_vocabulary_is_refused_when_written(make, path):
    outcome = make()
    with pytest.raises(SchemaError, match=path):
        outcome.to_dict()


def test_a_record_with_a_word_outside_the_vocabulary_is_refused_naming_the_field():
    with pytest.raises(SchemaError, match=r"^record\.verdict must be one of"):
        Record.make("t.py::test_x[strict]", "t.py::test_x", "strict", "flaky", None)
    record = Record.make("t.py::test_x[strict]", "t.py::test_x", "strict", "failed", _outcome())
    record.source = "hook"  # changed after it was made: the next writer refuses it
    with pytest.raises(SchemaError, match=r"^record\.source must be one of \('marker', 'fixture'\)"):
        record.to_dict()
    doc = Record.make("t", "t", "strict", "failed", _outcome()).to_dict()
    doc["outcome"]["failure"]["stage"] = "setup"
    with pytest.raises(SchemaError, match=r"^records\[2\]\.outcome\.failure\.stage must be one of"):
        Record.from_dict(doc, "records[2]")


def test_a_plugin_mode_keeps_its_own_categories():
    # pytest_export_run lets a plugin's own mode report categories the engine does not know
    # (tests/integration/test_hooks.py: "aoti"): the codec leaves Failure.category open.
    record = Record.make("t.py::test_x[aoti]", "t.py::test_x", "aoti", "failed", _outcome(category="aoti"))
    assert Record.from_dict(json.loads(json.dumps(record.to_dict()))).outcome.failure.category == "aoti"


def test_the_old_names_are_the_vocabulary():
    import exportcore.diagnosis.categories
    import exportcore.outcome
    from pytest_export.results import records

    assert exportcore.outcome.STAGES is vocab.STAGES and exportcore.outcome.STATUSES is vocab.STATUSES
    assert exportcore.outcome.FIX_STATUSES is vocab.FIX_STATUSES
    assert exportcore.diagnosis.categories.CATEGORIES is vocab.CATEGORIES
    assert records.VERDICTS is vocab.VERDICTS and records.SOURCES is vocab.SOURCES
    assert records.EXPORTABLE is vocab.EXPORTABLE
    assert set(vocab.STATUSES) <= set(vocab.VERDICTS) and set(vocab.EXPORTABLE) <= set(vocab.VERDICTS)
    for words in (vocab.STATUSES, vocab.VERDICTS, vocab.STAGES, vocab.CATEGORIES, vocab.FINDING_KINDS):
        assert len(set(words)) == len(words)


def test_the_vocabulary_imports_neither_torch_nor_pytest():
    code = "import sys, exportcore.vocab; print(sorted({'torch', 'pytest'} & set(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    assert out.stdout.strip() == "[]"


# --- every writer stays inside the vocabulary (the codec leaves categories open, so this is their check) -------


def _literals(tree: ast.AST, path: Path) -> list[tuple[str, str, int]]:
    """Return (what, word, line) for each literal a writer puts in a result: a stage, a category, a finding kind."""
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            name = getattr(node.func, "id", None) or getattr(node.func, "attr", None)
            for kw in node.keywords:
                if isinstance(kw.value, ast.Constant) and isinstance(kw.value.value, str):
                    if kw.arg in ("stage", "category") or (kw.arg in ("kind", "severity") and name == "Finding"):
                        out.append((kw.arg, kw.value.value, node.lineno))
            if name == "finding" and node.args and isinstance(node.args[0], ast.Constant):
                out.append(("kind", node.args[0].value, node.lineno))  # ctx.finding(kind, message)
            if name == "stage" and node.args and isinstance(node.args[0], ast.Constant):
                out.append(("stage", node.args[0].value, node.lineno))  # clock.stage(name): a timeout names it
        elif isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant):
            if any(getattr(t, "id", None) == "category" for t in node.targets):
                out.append(("category", node.value.value, node.lineno))
        elif (isinstance(node, ast.Return) and path.parent.name == "categories" and isinstance(node.value, ast.Tuple)
              and node.value.elts and isinstance(node.value.elts[0], ast.Constant)):
            out.append(("category", node.value.elts[0].value, node.lineno))  # a rule's (category, hint, ...)
    return out


def test_every_stage_category_and_finding_kind_a_writer_spells_is_in_the_vocabulary():
    closed = {"stage": vocab.STAGES, "category": vocab.CATEGORIES, "kind": vocab.FINDING_KINDS,
              "severity": vocab.SEVERITIES}
    seen: dict[str, set[str]] = {k: set() for k in closed}
    wrong = []
    for path in WRITERS:
        for what, word, line in _literals(ast.parse(path.read_text(), str(path)), path):
            seen[what].add(word)
            if word not in closed[what]:
                wrong.append(f"{path.relative_to(ROOT)}:{line}: {what} {word!r}")
    assert wrong == []
    # The walk does find the writers (a refactor that hides them from it would make this test vacuous).
    assert {"constraints", "lower", "test"} <= seen["stage"]
    assert {"data-dependent", "target.operator", "timeout", "drift"} <= seen["category"]
    assert {"specialized", "less_precise", "no_shape_checked"} <= seen["kind"]


def test_the_engine_tables_of_words_are_in_the_vocabulary():
    from exportcore.diagnosis.categories import vocab as categories_vocab
    from exportcore.targets import failures as target_failures
    from pytest_export.finding_warnings import FINDING_WARNINGS

    assert set(target_failures._HINTS) <= set(vocab.TARGET_CATEGORIES)
    for stage, category in failures._FINDING_STAGES.values():
        assert stage in vocab.STAGES and category in vocab.CATEGORIES
    assert set(failures._FINDING_STAGES) <= set(vocab.FINDING_KINDS)
    assert set(FINDING_WARNINGS) == set(vocab.FINDING_KINDS)  # one warning class per kind
    assert categories_vocab.CATEGORIES is vocab.CATEGORIES


def test_every_failure_factory_writes_an_encodable_failure():
    made = [
        failures.case_timeout("capture", "too slow"),
        failures.finding_error(Finding("state_missing", "error", "m")),
        failures.finding_error(Finding("specialized", "error", "m")),
        failures.case_not_checked("TypeError", "bad args"),
        failures.case_not_checked("RuntimeError", "bug", category="internal"),
    ]
    for name in dir(failures):
        factory = getattr(failures, name)
        if callable(factory) and getattr(factory, "__module__", "") == failures.__name__ and not name.startswith("_"):
            made += _try_factory(factory)
    made = [f for f in made if isinstance(f, Failure)]
    assert len(made) > 10
    for failure in made:
        encoded = Outcome(case_id="c", mode="strict", status="failed", failure=failure).to_dict()
        assert encoded["failure"]["category"] in vocab.CATEGORIES, failure


def _try_factory(factory) -> list[Failure]:
    """Call a factory with plain stand-ins for its arguments (those it cannot take are skipped)."""
    import inspect

    params = [p for p in inspect.signature(factory).parameters.values() if p.default is p.empty
              and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    out = []
    for stage in ("guards", "numerics", "run", "state", "training"):
        stand_ins = {"stage": stage, "message": "m", "detail": "d", "shapes": {}, "exportdb_case": None,
                     "reason": "r", "exc_type": "E", "text": "t", "label": "reloaded", "state": stage == "state",
                     "finding": Finding("specialized", "error", "m"), "hint": "h", "missing": ["specialized"]}
        try:
            out.append(factory(*[stand_ins.get(p.name, "x") for p in params]))
        except Exception:  # noqa: BLE001 - a factory wanting richer arguments is covered by the walk above
            continue
    return out


def test_a_spec_fix_status_is_closed_too():
    with pytest.raises(SchemaError, match=r"fix\.status must be one of \('verified', 'suggested'\)"):
        from exportcore.codec import encode

        encode(SpecFix(status="maybe", dynamic_shapes="{}"), "fix")


def test_an_outcome_a_plugin_hook_wrote_off_the_vocabulary_becomes_an_error_record_naming_the_field():
    # Raised from Record.make, it would end the session inside pytest's hooks (INTERNALERROR, no report).
    record = Record.make("t.py::test_x[strict]", "t.py::test_x", "strict", "failed", _outcome(stage="compile"))
    assert record.verdict == "error" and record.outcome.status == "error"
    assert record.outcome.failure.category == "internal"
    assert "record.outcome.failure.stage must be one of" in record.outcome.failure.message
    assert "got 'compile'" in record.outcome.failure.message
    with pytest.raises(SchemaError, match=r"^record\.verdict"):  # the caller's own words stay this project's bug
        Record.make("t.py::test_x[strict]", "t.py::test_x", "strict", "flaky", _outcome(stage="compile"))
