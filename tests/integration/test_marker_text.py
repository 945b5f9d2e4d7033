"""Any text a model's exception carries (lone surrogates, terminal escapes, NUL) reaches every report safely."""

from __future__ import annotations

import json
import re

import pytest

# Plugin machinery (options, ids, terminal text, warnings filters): the same on any torch, so .ci/run's
# oldest-torch step leaves it out.
pytestmark = pytest.mark.machinery


RUNS = {"serial": (), "xdist": ("-p", "xdist", "-n", "2", "-p", "no:benchmark")}

TESTS = r'''
    import os
    import pytest
    import torch
    from models import lin_case

    class OpensAFile(torch.nn.Module):
        def forward(self, x):
            # os.fsdecode of non-UTF-8 bytes gives a lone surrogate, which UTF-8 cannot encode.
            raise RuntimeError("cannot open " + os.fsdecode(b"/data/caf\xe9.bin") + " \x1b[31mred\x1b[0m \x00\x07")

    @pytest.mark.exportable(modes=["non_strict"])
    def test_bad_path():
        return OpensAFile(), (torch.ones(3),)

    @pytest.mark.exportable(modes=["non_strict"], checks=["numerics"])
    def test_fine():
        return lin_case()
'''


@pytest.mark.parametrize("run", list(RUNS))
def test_unencodable_exception_text_is_sanitised_once_and_every_report_is_written(project, run):
    project.makepyfile(test_m=TESTS)
    result = project.runpytest("-p", "no:cacheprovider", "--export-report=r.json",
                                          "--export-report=r.html", "--export-report=r.md", *RUNS[run])
    result.assert_outcomes(passed=1, errors=1)  # eager itself fails: an error
    assert "INTERNALERROR" not in result.stdout.str() + result.stderr.str()
    report = json.loads((project.path / "r.json").read_text(encoding="utf-8"))
    message = next(r for r in report["records"] if "bad_path" in r["case"])["outcome"]["failure"]["message"]
    assert message.startswith("cannot open /data/caf\\udce9.bin")
    for name in ("r.html", "r.md"):
        text = (project.path / name).read_text(encoding="utf-8")
        assert "caf\\udce9.bin" in text
        assert not re.search(r"[\x00-\x08\x0b-\x1f\x7f]", text), name
    # The terminal failure text carries no raw escapes or NUL either.
    result.stdout.fnmatch_lines(["*RuntimeError: cannot open /data/caf\\udce9.bin red \\x00\\x07"])
