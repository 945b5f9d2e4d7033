"""Every closed set of words a result may hold, in one place: the codec enforces them (exportcore.codec.one_of).

A stage, finding kind, status or verdict spelled anywhere else is a typo waiting to reach a report:
writers and readers import the tuples from here, the result dataclasses (exportcore.outcome,
pytest_export.results.records) carry them as ``one_of`` field metadata, and the codec refuses a
value outside them on encode and on decode, naming the field. Adding a value is one line here
(with its reason) and, where a reader words it, that reader. Pure Python: no torch, no pytest.
"""

from __future__ import annotations

__all__ = [
    "STATUSES", "VERDICTS", "EXPORTABLE", "SOURCES", "STAGES", "CATEGORIES", "ENGINE_CATEGORIES",
    "TARGET_CATEGORIES", "FINDING_KINDS", "SEVERITIES", "FIX_STATUSES", "CELLS", "DIM_KINDS",
]

#: The engine's word for one (case, mode) (Outcome.status).
STATUSES = (
    "passed",  # every enabled check held
    "failed",  # the model runs in eager but export or a check failed
    "error",  # the case itself is broken (eager failure, bad input): the user's to fix, not torch's
    "timeout",  # stopped at --export-timeout (or an outer pytest-timeout)
    "crashed",  # its process died; the journal or the controller wrote the record
    "skipped",  # not checked (a missing device or target runtime)
)

#: Pytest's final word on one (case, mode) (Record.verdict): the statuses plus what expectations make of them.
VERDICTS = (
    "passed", "failed",
    "xfailed",  # failed as expected (expect=, pytest.mark.xfail, a known failure of the baseline)
    "xpassed",  # expected to fail and exported: the expectation is stale
    "unstable",  # --export-repeat: the runs' statuses differ (neither pass nor fail; its test fails)
    "error", "timeout", "crashed", "skipped",
)

#: Verdicts meaning "the model exported and behaved": xpassed exported too, its test fails only
#: because an expectation is stale.
EXPORTABLE = ("passed", "xpassed")

#: Who made a record (Record.source).
SOURCES = (
    "marker",  # one record per pytest test (a mode of an exportable test)
    "fixture",  # one per export_check() call: several may share a test
)

#: Pipeline stages in execution order; a failure names exactly one of them (Failure.stage).
STAGES = (
    "input",  # validating the user's case (args, dynamic_shapes, mode, an inputs factory)
    "eager",  # eager reference run
    "capture",  # torch.export.export
    "constraints",  # constraint solving (dynamic shape violations)
    "decompose",  # run_decompositions() to core ATen
    "serialize",  # torch.export.save / load round trip
    "module",  # ExportedProgram.module()
    "run",  # calling the exported module
    "numerics",  # outputs differ from eager
    "training",  # gradients / buffer mutations differ from eager
    "guards",  # accept / reject checks on concrete shapes
    "state",  # parameter / buffer parity
    "lower",  # a target: lowering / compiling the exported program (exportcore.targets)
    "load",  # a target: loading the artifact in its runtime
    "test",  # the export passed; the test failed on something else (a hook, a fixture, a warnings filter)
)

#: What torch cannot export, aligned with ExportDB's tags (exportcore.diagnosis.categories' rules pick one).
ENGINE_CATEGORIES = (
    "python.control-flow",  # if/while on a tensor's value
    "python.data-structure",  # an input or output structure export cannot flatten (an unregistered class)
    "python.builtin",  # a Python builtin strict export cannot trace (id(), data_ptr(), ...)
    "python.context-manager",  # a with-block strict export cannot trace
    "python.object-model",  # objects strict export cannot trace (a torch.Generator, custom classes)
    "python.closure",  # a tensor captured from outside forward
    "python.assert",  # a Python assert on tensor data
    "python.standard-library",  # a stdlib module strict export cannot trace (random, time, ...)
    "torch.dynamic-shape",  # a declared-dynamic dim torch specialized or could not keep symbolic
    "torch.dynamic-value",  # a value export cannot trace (a host RNG draw, a tensor read as a number)
    "torch.operator",  # an operator without a fake/meta kernel or with a wrong one
    "torch.mutation",  # in-place changes, aliasing, buffers written in forward
    "torch.escape-hatch",  # code that leaves the traced world (torch.compiler.disable, .numpy())
    "torch.cond",  # a torch.cond export refuses (branches that differ or mutate an operand)
    "torch.map",  # a control-flow map export refuses
    "data-dependent",  # a guard on data (unbacked symbols)
    "eager",  # the model fails in eager: its own bug, not export's
    "numerics",  # a program's outputs differ from eager's
    "guards",  # a program accepts what it should reject, or rejects a declared shape
    "serialization",  # torch.export.save / load failed or changed the program
    "decomposition",  # run_decompositions() failed
    "internal",  # torch or pytest-export failed on its own; the message is verbatim
)

#: A target runtime's failures in its own terms (exportcore.targets.failures).
TARGET_CATEGORIES = (
    "target.operator",  # an operator the backend cannot convert or lower (named)
    "target.dynamic-shape",  # the backend cannot keep a dimension symbolic
    "target.dtype",  # a dtype the backend does not support
    "target.toolchain",  # the C++ compiler or the runtime's build failed
    "target.internal",  # the backend's own error, verbatim
    "target.unavailable",  # the target's extra or compiler is missing (a skip)
)

#: Failure.category: every category a writer of this project uses.
CATEGORIES = ENGINE_CATEGORIES + TARGET_CATEGORIES + (
    "input",  # the case's inputs, spec or factory are wrong, or its result key is taken
    "device",  # the requested device is not available (a skip)
    "timeout",  # the case ran past its time limit
    "crashed",  # the process running the case died
    "test",  # the export passed; the test failed on something else
    "drift",  # an ExportDB case's documented finding is no longer reported by this torch
)

#: Finding.kind: something torch let through or changed that the user should know about.
FINDING_KINDS = (
    "specialized",  # a dim declared dynamic was exported static
    "narrowed",  # a dim declared dynamic was exported with a narrower range
    "size01_accepted",  # sizes 0/1 pass the guards of a range starting at 2
    "dtype_accepted",  # another float dtype runs silently
    "reject_unguarded",  # an out-of-spec shape runs without a guard error
    "state_missing",  # a parameter or buffer of the model is missing from ep.module()
    "state_differs",  # ep.module()'s parameters or buffers differ from the model's
    "no_shape_checked",  # no drawn shape could be checked
    "less_precise",  # a program rounds further from float64 than eager
    "python_state",  # eager's next call differs: a forward changes Python state the program does not carry
)

#: Finding.severity: "error" under --export-findings=error, where a finding fails the case.
SEVERITIES = ("warning", "error")

#: SpecFix.status. verified: the corrected spec exports and its accept/reject checks pass; suggested: it did not.
FIX_STATUSES = ("verified", "suggested")


#: What one program did with one input, a cell of a target column's shapes table (Outcome.shape_table).
CELLS = (
    "accepted",  # ran it (and matched eager where compared)
    "rejected",  # refused it at its own input checks (a guard, the runtime's shape check)
    "wrong result",  # ran it and differs from eager
    "error",  # raised something other than a rejection
)


#: What one declared dynamic dim became in one program (Outcome.dims, exportcore.checks.dynamism).
DIM_KINDS = (
    "dynamic",  # the program takes the declared range (from 2: torch specializes sizes 0 and 1)
    "narrowed",  # the program takes a narrower range than declared
    "specialized",  # the program takes one size only
    "related",  # the program ties it to another dim (a = b, s1 = 2*s0)
    "unbounded",  # the program accepts sizes past the declared range
    "unknown",  # no program to read it from (the capture failed for another reason)
)

