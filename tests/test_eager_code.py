"""The result cache names the Python code eager ran: code only eager runs cannot go stale behind a warm run."""

from __future__ import annotations

import functools
import gc
import sys
from pathlib import Path

import pytest
import torch

from exportcore.reuse.eager_code import CodeRecord
from exportcore.reuse.result_cache import ResultCache
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
    from exportcore.reuse.eager_code import recorded

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


def test_control_flow_in_eager_is_served_in_a_new_process(tmp_path) -> None:
    # torch.cond compiles its branches even in eager: dynamo traces them instead of running them. The
    # record reads what it traced from dynamo's translators (exportcore.reuse.traced_code), so a later
    # session proves the same code ran.
    lines = checked_twice(BRANCHY, "Branchy", tmp_path)
    assert lines[0] == "passed None", lines[0]
    assert lines[1].startswith("passed cache: strict, "), lines[1]


# A branch's helper in a module of its own, which no frame of eager's shows (dynamo traces it), and
# whose eager path differs from export's past LIMIT rows; the "broken" edit forgets the carry.
BRANCH_HELPER = '''
import torch

LIMIT = {limit}


def rows(x):
    if torch.compiler.is_exporting() or x.shape[0] <= LIMIT:
        return x.cumsum(0)
    head = x[:LIMIT].cumsum(0)
    return torch.cat([head, x[LIMIT:].cumsum(0) + {carry}])
'''

BRANCH_MODEL = '''
import torch
import pte_branch_helper


class Branch(torch.nn.Module):
    def forward(self, x):
        return torch.cond(x.sum() > -1e9, pte_branch_helper.rows, lambda t: -t, (x,))
'''

needs_is_exporting = pytest.mark.skipif(not hasattr(torch.compiler, "is_exporting"),
                                        reason="torch.compiler.is_exporting is torch 2.7+")


@needs_is_exporting
@pytest.mark.parametrize("edit", ["carry", "limit"])
def test_an_edit_to_code_a_conds_branch_reaches_is_checked_again(tmp_path, edit) -> None:
    # Neither the graph (export takes the other path) nor eager's answer on 8 rows changes; a cold run
    # of the edited helper fails at a drawn shape past its LIMIT, so a warm run may not serve the pass.
    def load(limit: int = 16, carry: str = "head[-1]") -> type:
        text = BRANCH_HELPER.format(limit=limit, carry=carry)
        sys.modules["pte_branch_helper"] = write_module(tmp_path / "pte_branch_helper.py", text, "pte_branch_helper")
        return write_module(tmp_path / "pte_branch_model.py", BRANCH_MODEL, "pte_branch_model").Branch

    # the broken carry lies past 1000 rows, which no drawn shape reaches, until LIMIT comes down to 20
    before = {"limit": 1000, "carry": "0"} if edit == "limit" else {}
    after = {"limit": 20, "carry": "0"} if edit == "limit" else {"carry": "0"}
    try:
        cache = ResultCache(tmp_path / "cache")
        assert check(cache, load(**before)).status == "passed"
        assert served(check(cache, load(**before)))
        edited = check(cache, load(**after))
        assert not served(edited)
        assert edited.status == "failed" and edited.failure.stage in ("numerics", "run"), edited.failure
    finally:
        sys.modules.pop("pte_branch_helper", None)


CONSTANT_HELPER = '''
import torch

LIMIT = 16


@torch._dynamo.assume_constant_result
def carry_scale():
    return {scale}


def rows(x):
    if torch.compiler.is_exporting() or x.shape[0] <= LIMIT:
        return x.cumsum(0)
    head = x[:LIMIT].cumsum(0)
    return torch.cat([head, x[LIMIT:].cumsum(0) + head[-1] * carry_scale()])
'''


@needs_is_exporting
def test_an_edit_to_a_function_dynamo_runs_while_it_traces_a_branch_is_checked_again(tmp_path) -> None:
    # assume_constant_result: dynamo calls the function while it traces (a frame inside its compile)
    # and keeps the answer; past LIMIT only, so a drawn shape's trace is the only one that runs it
    # (module names of its own: dynamo keeps the modules a trace imported in torch's globals, so the
    # same name reloaded by another test in this process could hand eager the other test's module)
    def load(scale: str) -> type:
        text = CONSTANT_HELPER.format(scale=scale)
        sys.modules["pte_constant_helper"] = write_module(tmp_path / "pte_constant_helper.py", text,
                                                          "pte_constant_helper")
        model = BRANCH_MODEL.replace("pte_branch_helper", "pte_constant_helper")
        return write_module(tmp_path / "pte_constant_model.py", model, "pte_constant_model").Branch

    try:
        cache = ResultCache(tmp_path / "cache")
        assert check(cache, load("1.0")).status == "passed"
        assert served(check(cache, load("1.0")))
        edited = check(cache, load("0.0"))
        assert not served(edited)
        assert edited.status == "failed" and edited.failure.stage in ("numerics", "run"), edited.failure
    finally:
        sys.modules.pop("pte_constant_helper", None)


@torch._dynamo.allow_in_graph
def _compiles_inside(x: torch.Tensor) -> torch.Tensor:
    return _compiled_helper(x)


@torch.compile(backend="eager", dynamic=True)
def _compiled_helper(x: torch.Tensor) -> torch.Tensor:
    return x.cumsum(0) * 1.0


def test_a_compile_that_a_conds_compiled_branch_starts_leaves_no_proof() -> None:
    # the record watches torch's operator, not a compile a kernel or an allow_in_graph function
    # starts from inside it: dynamo traces that one unseen, as it does a top-level torch.compile
    record = CodeRecord()
    record.run(functools.partial(torch.cond, torch.tensor(True), _compiles_inside, lambda t: -t,
                                 (torch.randn(4, 3),)))
    assert not record.complete


def test_dynamo_does_not_compile_the_records_own_hook() -> None:
    # a profile function is called inside the compiled region like any frame: torch 2.15 compiled it
    # (guarded on the event's name, with the operators' recompile limit off)
    from torch._C._dynamo.eval_frame import _debug_get_cache_entry_list

    from exportcore.reuse import eager_code

    hook = next(code for code in eager_code._Calls._hook.__code__.co_consts if getattr(code, "co_name", "") == "profile")
    record = CodeRecord()
    record.run(functools.partial(torch.cond, torch.tensor(True), lambda t: t * 2, lambda t: -t, (torch.randn(4, 3),)))
    assert record.complete and _debug_get_cache_entry_list(hook) == []


def test_what_a_conds_branches_reach_is_recorded_with_closures_and_again_in_each_recording() -> None:
    from exportcore.reuse.eager_code import recorded

    def helper(x):
        return x.cumsum(0)

    def scaled(factor):
        def branch(x):
            return helper(x) * factor
        return branch

    def model(factor):
        branch = scaled(factor)
        return lambda x: torch.cond(x.sum() > 0, branch, lambda t: -t, (x,))

    x = torch.randn(8, 3)
    twice = functools.partial(model(2), x)
    record = CodeRecord()
    record.run(twice)
    assert record.complete and {"helper", "branch"} <= {code.co_name for code, _, _ in record.seen.values()}
    # a second recording runs what dynamo compiled in the first: it traces again, so it is proven again
    digests = [recorded(twice)[1] for _ in range(2)]
    assert digests[0] is not None and digests[0] == digests[1]
    thrice = functools.partial(model(3), x)
    assert recorded(thrice)[1] not in (None, digests[0])  # the branch's closure, by value


def test_dynamo_traced_code_leaves_no_proof_and_disabled_code_is_recorded() -> None:
    from exportcore.reuse.eager_code import recorded

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


def test_a_conds_compiled_code_from_outside_the_record_is_traced_again_where_the_record_sees_it() -> None:
    # Dynamo's cache for torch.cond is one for the whole process. An entry an unrecorded call traced
    # (another case, a probe) must not serve a recorded call: the code it ran would go unnamed.
    def long_rows(x):
        return x.cumsum(0)

    def branch(x):
        if x.shape[0] > 4:
            return long_rows(x)
        return x * 2

    def model(x):
        return torch.cond(x.sum() > -1e9, branch, lambda t: -t, (x,))

    examples = CodeRecord()
    examples.run(functools.partial(model, torch.randn(2, 3)))
    later = CodeRecord(after=examples)
    model(torch.randn(8, 3))  # unrecorded: its trace reached long_rows
    later.run(functools.partial(model, torch.randn(8, 3)))
    assert later.complete and "long_rows" in {code.co_name for code, _, _ in later.seen.values()}
    assert "long_rows" not in {code.co_name for code, _, _ in examples.seen.values()}


@torch.library.custom_op("pte_traced::rows", mutates_args=())
def _rows_kernel(x: torch.Tensor) -> torch.Tensor:
    return x.cumsum(0)


@_rows_kernel.register_fake
def _(x: torch.Tensor) -> torch.Tensor:
    return torch.empty_like(x)


@torch._dynamo.allow_in_graph
def _in_graph(x: torch.Tensor) -> torch.Tensor:
    return x.cumsum(0)


@pytest.mark.parametrize("call, name", [(_rows_kernel, "_rows_kernel"), (_in_graph, "_in_graph")],
                         ids=["custom-op-kernel", "allow-in-graph"])
def test_the_models_code_a_conds_compiled_graph_calls_is_recorded(call, name) -> None:
    # Dynamo keeps a custom op (and a function allow_in_graph names) whole in its graph: its Python
    # runs as a frame of its own when the compiled branch runs, inside torch's compile wrapper, where
    # the calls dynamo makes while it traces (a logging handler, a dataclass's __eq__) are not the model's
    def branch(x):
        return call(x) * 2

    record = CodeRecord()
    record.run(functools.partial(torch.cond, torch.tensor(True), branch, lambda t: -t, (torch.randn(4, 3),)))
    assert record.complete and {"branch", name} <= {code.co_name for code, _, _ in record.seen.values()}


def test_torchs_dependencies_are_named_by_their_versions_not_recorded() -> None:
    # torch calls into them lazily (typing_extensions on 2.6 at the first backward of a process): a
    # first eager run would record code the next finds cached, and each session's first case miss.
    import sympy

    from exportcore.reuse.eager_code import recorded
    from exportcore.reuse.result_cache import environment

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
    from exportcore.reuse import eager_code

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
    from exportcore.reuse.code_origins import distribution

    assert distribution(torchvision.ops.FrozenBatchNorm2d.forward.__code__.co_filename) == \
        f"torchvision=={importlib.metadata.version('torchvision')}"
    # the user's own code is named by its source; torch's by the version the identity already holds
    assert distribution(__file__) is None and distribution(torch.__file__) is None


def test_a_library_named_otherwise_than_its_package_is_named_by_its_distribution() -> None:
    # PIL is installed as pillow (torchvision requires it): its version is found all the same.
    import importlib.metadata

    image = pytest.importorskip("PIL.Image")
    from exportcore.reuse.code_origins import distribution

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
