"""The result cache names the Python code eager ran: code only eager runs cannot go stale behind a warm run."""

from __future__ import annotations

import functools
import gc
import sys
from pathlib import Path

import pytest
import torch

from exportcore.eager_code import CodeRecord
from exportcore.result_cache import ResultCache
from processes import checked_twice
from sessions import check, reported_version, served, warmed, write_module

# Eager takes its own path under export's back (``is_compiling``), as transformers' code often does.
# Rows past LIMIT are summed in a second chunk; the "broken" edit forgets the first chunk's carry.
MODEL = '''
import torch

LIMIT = {limit}


def unused_helper():
    return {unused}


class Cumulative(torch.nn.Module):
    def forward(self, x):
        if torch.compiler.is_compiling():  # strict export traces with dynamo
            return x.cumsum(0)
        if x.shape[0] <= LIMIT:
            return x.cumsum(0)
        head = x[:LIMIT].cumsum(0)
        return torch.cat([head, x[LIMIT:].cumsum(0) + {carry}])
'''


def load(path: Path, limit: int = 16, carry: str = "head[-1]", unused: int = 0, comment: str = "") -> type:
    """Write the model's module (as a user edits it), import it afresh and return its class."""
    text = comment + MODEL.format(limit=limit, carry=carry, unused=unused)
    return write_module(path, text, "pte_edited_model").Cumulative


@pytest.fixture
def warm(tmp_path):
    """A cache holding the unedited model's pass, and the model's file."""
    return warmed(tmp_path, load)


def test_an_edit_to_code_only_eager_runs_is_checked_again(warm) -> None:
    # Neither the graph (export takes the other branch) nor eager's answer on 8 rows changes.
    cache, path = warm
    edited = check(cache, load(path, carry="0"))
    assert not served(edited)
    assert edited.status == "failed" and edited.failure.stage in ("numerics", "run")


def test_a_module_constant_eager_reads_is_part_of_its_code(warm) -> None:
    cache, path = warm
    edited = check(cache, load(path, limit=32))
    assert edited.status == "passed" and not served(edited)


def test_code_eager_did_not_run_and_comments_leave_the_entry(warm) -> None:
    cache, path = warm
    assert served(check(cache, load(path, unused=1, comment="# moved down a line\n")))


def test_a_profile_hook_in_use_means_nothing_is_proven(warm) -> None:
    # Recording needs the profile hook; a user's profiler keeps it, and the case runs in full.
    cache, path = warm

    def theirs(frame, event, arg):
        return None

    sys.setprofile(theirs)
    try:
        outcome = check(cache, load(path))
        assert sys.getprofile() is theirs
    finally:
        sys.setprofile(None)
    assert outcome.status == "passed" and not served(outcome)


def test_the_garbage_collectors_callbacks_are_not_the_models_code() -> None:
    # gc runs its callbacks (hypothesis registers one) whenever it triggers, inside whatever runs.
    from exportcore.eager_code import recorded

    def churn() -> None:  # enough reference cycles to start a collection
        for _ in range(5000):
            cycle: list = []
            cycle.append(cycle)

    _, quiet = recorded(churn)
    calls: list[str] = []

    def callback(phase: str, info: dict) -> None:
        calls.append(phase)

    gc.callbacks.append(callback)
    try:
        _, busy = recorded(churn)
        churn()  # outside a recording it does collect: the callback would have been recorded
    finally:
        gc.callbacks.remove(callback)
    assert calls and busy == quiet


SIZE_MATH = '''
class SizeMath(torch.nn.Module):
    def forward(self, x):
        scale = torch.sym_float(x.shape[0]) ** 0.5  # a plain function in the graph (torch.sym_float)
        return (x * 2) * scale
'''

BRANCHY = '''
class Branchy(torch.nn.Module):
    def forward(self, x):
        return torch.cond(x.sum() > 0, lambda t: t * 2, lambda t: t - 1, (x,))
'''


def test_size_math_is_served_in_a_new_process(tmp_path) -> None:
    # A function target's repr holds its address: it may not make every session a miss.
    lines = checked_twice(SIZE_MATH, "SizeMath", tmp_path)
    assert lines[0] == "passed None", lines[0]
    assert lines[1].startswith("passed cache: strict, "), lines[1]


def test_control_flow_in_eager_is_checked_in_full_in_every_session(tmp_path) -> None:
    # torch.cond compiles its branches even in eager: dynamo traces them instead of running them, so
    # no record shows the code a branch reaches, and an edit only shapes past the examples take would
    # be served the old verdict (a torch.compile'd helper alike). Nothing is proven: it runs in full.
    lines = checked_twice(BRANCHY, "Branchy", tmp_path)
    assert lines == ["passed None", "passed None"], lines


def test_dynamo_traced_code_leaves_no_proof_and_disabled_code_is_recorded() -> None:
    from exportcore.eager_code import recorded

    def helper(x):
        return x.cumsum(0)

    @torch.compile(backend="eager", dynamic=True)
    def compiled(x):
        return helper(x) * 1.0

    @torch._dynamo.disable
    def disabled(x):
        return helper(x) + 1

    x = torch.randn(8, 3)
    assert recorded(functools.partial(compiled, x))[1] is None
    assert recorded(functools.partial(compiled, x))[1] is None  # a later call runs the compiled code
    record = CodeRecord()
    record.run(functools.partial(disabled, x))
    assert record.complete and {code.co_name for code, _, _ in record.seen.values()} >= {"disabled", "helper"}


def test_torchs_dependencies_are_named_by_their_versions_not_recorded() -> None:
    # torch calls into them lazily (typing_extensions on 2.6 at the first backward of a process): a
    # first eager run would record code the next finds cached, and each session's first case miss.
    import sympy

    from exportcore.eager_code import recorded
    from exportcore.result_cache import environment

    def body(use: bool) -> None:
        if use:
            sympy.Integer(3) + sympy.Symbol("n")

    _, without = recorded(functools.partial(body, False))
    _, with_sympy = recorded(functools.partial(body, True))
    assert with_sympy == without
    assert f"sympy {sympy.__version__}" in environment() and "typing_extensions " in environment()


def test_an_installed_librarys_version_is_part_of_the_code_eager_ran() -> None:
    # Its native kernels (torchvision's, torch_scatter's) change with its version, maybe with every
    # line of its Python the same; the user's own code is named by source, never looked up.
    torchvision = pytest.importorskip("torchvision")
    from exportcore import eager_code

    model = torchvision.ops.FrozenBatchNorm2d(4).eval()  # its forward is torchvision's own Python
    x = torch.randn(1, 4, 2, 2)
    call = functools.partial(model, x)  # one callable: a second lambda would be other source
    _, before = eager_code.recorded(call)
    with reported_version("torchvision", "0.0.0+rebuilt"):
        _, upgraded = eager_code.recorded(call)
    assert before is not None and upgraded is not None and before != upgraded


def test_only_installed_libraries_are_named_by_version() -> None:
    import importlib.metadata

    torchvision = pytest.importorskip("torchvision")
    from exportcore.eager_code import distribution

    assert distribution(torchvision.ops.FrozenBatchNorm2d.forward.__code__.co_filename) == \
        f"torchvision=={importlib.metadata.version('torchvision')}"
    # the user's own code is named by its source; torch's by the version the identity already holds
    assert distribution(__file__) is None and distribution(torch.__file__) is None


def test_a_library_named_otherwise_than_its_package_is_named_by_its_distribution() -> None:
    # PIL is installed as pillow (torchvision requires it): its version is found all the same.
    import importlib.metadata

    image = pytest.importorskip("PIL.Image")
    from exportcore.eager_code import distribution

    owner = importlib.metadata.packages_distributions()["PIL"][0]
    assert distribution(image.__file__) == f"{owner}=={importlib.metadata.version(owner)}"


def make_chunked(limit: int) -> type:
    """A model class from a factory: ``limit`` lives in forward's closure, not in the module or the model."""

    class Chunked(torch.nn.Module):
        def forward(self, x):
            if torch.compiler.is_compiling():
                return x.cumsum(0)
            if x.shape[0] <= limit:
                return x.cumsum(0)
            return torch.cat([x[:limit].cumsum(0), x[limit:].cumsum(0)])  # forgets the first chunk's carry

    return Chunked


def test_a_closure_value_eager_reads_is_part_of_its_code(tmp_path) -> None:
    cache = ResultCache(tmp_path / "cache")
    assert check(cache, make_chunked(1000)).status == "passed"
    assert served(check(cache, make_chunked(1000)))
    edited = check(cache, make_chunked(16))
    assert not served(edited) and edited.status == "failed"
