"""Zoo-scale reporting: pass rates per family and mode lead the terminal summary, Markdown and HTML; skips apart."""

from __future__ import annotations

from pytest_export.results.report import build_report
from pytest_export.rendering.html import render_html
from pytest_export.rendering.markdown import render_markdown
from pytest_export.rendering.summary import summary_lines
from pytest_export.rendering.zoo_rates import causes, family_of, rate_lines, rates
from tests.report_factory import make_record

RECORDS = [
    make_record("zoo/timm/test_vit", "strict", "failed", category="torch.dynamic-shape", stage="constraints"),
    make_record("zoo/timm/test_vit", "non_strict"),
    make_record("zoo/timm/test_resnet", "strict"),
    make_record("zoo/timm/test_resnet", "non_strict"),
    make_record("zoo/hf/bert", "strict", "failed", category="torch.dynamic-shape", stage="constraints"),
    make_record("zoo/hf/bert", "non_strict", "error", category="input", stage="input"),
    make_record("zoo/torchvision/vgg19", "strict", "skipped"),
    make_record("zoo/torchvision/vgg19", "non_strict", "skipped"),
    make_record("tests/test_m.py::test_mlp", "strict"),  # not a zoo case: not in the rates
]


def test_rates_per_family_and_mode_count_skips_apart() -> None:
    assert family_of("zoo/hf/bert@AutoModelForCausalLM") == "hf" and family_of("tests/t.py::test_x") is None
    table = rates(RECORDS, ("strict", "non_strict"))
    assert table is not None and list(table.rows) == ["hf", "timm", "torchvision", "all families"]
    models, cells = table.rows["timm"]
    assert models == 2 and cells["strict"].text() == "1/2 50%" and cells["non_strict"].text() == "2/2 100%"
    assert table.rows["torchvision"][1]["strict"].text() == "– (+1 skipped)"  # skipped is neither pass nor fail
    assert table.rows["all families"][0] == 4 and table.rows["all families"][1]["strict"].text() == "1/3 33% (+1 skipped)"
    ranked = causes(RECORDS)
    assert [(c.category, c.count, c.examples) for c in ranked] == [
        ("torch.dynamic-shape", 2, ["timm/test_vit", "hf/bert"]), ("input", 1, ["hf/bert"])]


def test_the_rates_lead_every_rendering() -> None:
    lines = summary_lines(RECORDS, ("strict", "non_strict"))
    assert lines[0].startswith("zoo pass rates") and lines.index("zoo failure causes:") < len(rate_lines(RECORDS))
    report = build_report(RECORDS)
    md = render_markdown(report)
    assert md.index("### Zoo pass rates") < md.index("| case |")
    assert "| torchvision | 1 | – (+1 skipped) | – (+1 skipped) |" in md
    page = render_html(report)
    assert page.index('id="zoo"') < page.index('id="failures"') < page.index('id="matrix"')


def test_no_zoo_records_no_section() -> None:
    plain = [make_record("tests/test_m.py::test_mlp", "strict")]
    assert rate_lines(plain) == [] and "Zoo" not in render_markdown(build_report(plain))
