"""Rules for what torch itself cannot trace: data-dependent values, operators, mutation, higher-order ops."""

from __future__ import annotations

import re
import traceback as tb_module

from exportcore.diagnosis.categories.facts import Facts, torch_hint, what_torch_said
from exportcore.diagnosis.sources import exception_chain, is_user_file

__all__ = ["DATA_DEPENDENT_NAMES", "data_dependent", "host_randomness", "torch_generator", "concrete_sizes_only",
           "operator", "mutation", "higher_order", "fake_runtime", "spec_violation", "raw_data"]


DATA_DEPENDENT_NAMES = {"GuardOnDataDependentSymNode", "DataDependentOutputException", "DynamicOutputShapeException"}


def data_dependent(f: Facts) -> tuple[str, ...] | None:
    branching = "data-dependent branching" in f.low
    if not (
        branching
        or f.names & DATA_DEPENDENT_NAMES
        or f.error_type in ("ANTI_PATTERN", "DYNAMIC_CONTROL_FLOW")
        or "data-dependent expression" in f.low
    ):
        return None
    inside = _torch_module_frame(f)
    if inside is not None:
        return ("data-dependent", _torch_module_hint(f, *inside), "", "")
    code = f.code
    if code.startswith("assert"):
        hint = ("Replace the `assert` on a tensor value with torch._check(...) on a Python value, or move it out"
                " of forward")
    elif branching or re.match(r"(el)?if\b|while\b", code) or re.search(r"\bif\b.*\belse\b", code):
        hint = ("Replace the Python `if` on a tensor value with torch.cond(pred, true_fn, false_fn, (x,)),"
                " or torch.where for an elementwise choice")
    else:
        hint = ("Tell export what the data-dependent value satisfies with torch._check(...) (e.g. n = t.item();"
                " torch._check(n >= 0)), or use torch.cond if it picks a branch")
    return ("data-dependent", hint)


_FRAME = re.compile(r'File "([^"]+)", line (\d+)')


_NN_MODULE = re.compile(r"[/\\]torch[/\\]nn[/\\]modules[/\\](\w+)\.py$")


def _torch_module_frame(f: Facts) -> tuple[str, int] | None:
    """Return (file, line) when the deepest frame that is the user's or a torch.nn module's is torch's:
    the value export cannot trace is read by torch's own layer (as configured), not by the model's code."""
    traced = f.text.partition("from user code:")[2]  # strict: dynamo lists the traced frames there
    if traced:
        frames = [(file, int(line)) for file, line in _FRAME.findall(traced)]
    else:  # the raised frames only, innermost cause first: a message may quote the user's line at its end
        frames = [(fs.filename, fs.lineno or 0) for e in reversed(exception_chain(f.exc))
                  for fs in tb_module.extract_tb(e.__traceback__)]
    for file, line in reversed(frames):
        found = _NN_MODULE.search(file)
        if found and found.group(1) != "module":  # module.py is only the call machinery
            return file, int(line)
        if is_user_file(file):
            return None
    return None


def _torch_module_hint(f: Facts, file: str, line: int) -> str:
    import linecache

    module = _NN_MODULE.search(file).group(1)  # type: ignore[union-attr]
    code = linecache.getline(file, line).strip()
    where = f"torch.nn's {module}.py:{line}" + (f" (`{code}`)" if code else "")
    if "num_batches_tracked" in code:
        # BatchNorm(momentum=None) keeps a cumulative average: 1 / num_batches_tracked, read as a Python float
        return (f"{where}: a BatchNorm with momentum=None averages by 1 / num_batches_tracked, a Python float read"
                " from a buffer, which training export cannot trace; give it a momentum (e.g. 0.1), or export"
                " it in eval mode")
    return (f"{where} reads a tensor value as a Python number, which export cannot trace: the layer as"
            " configured does not export in this mode; configure it differently or keep it out of the exported"
            " module")


#: numpy's global RNG draws on the host at every call: neither traced nor reproducible.
_HOST_RANDOM = re.compile(r"\b(np|numpy)\.random\b")


def host_randomness(f: Facts) -> tuple[str, ...] | None:
    if not (_HOST_RANDOM.search(f.code) or "randomstate" in f.low or "numpy.random" in f.low):
        return None
    return ("torch.dynamic-value", "forward draws from numpy.random: export cannot trace a host RNG draw (strict"
            " sees a value known only at run time, non-strict bakes one draw in as a constant); draw with"
            " torch's RNG (torch.rand, seeded), or pass the random values in as an input", "", "")


def torch_generator(f: Facts) -> tuple[str, ...] | None:
    said = what_torch_said(f.text)
    if "TorchDynamoException" not in f.names:
        return None
    if not (re.search(r"variable\(generator\)", said) or re.search(r"torch\.Generator\(|\bgenerator=", f.code)):
        return None
    return ("python.object-model", "Strict export (TorchDynamo) cannot trace a torch.Generator (generator=...):"
            " draw from torch's global RNG (seeded with torch.manual_seed outside forward), or export with"
            " strict=False, which traces the draws", "", "")


_CONCRETE_ONLY = re.compile(r"expected to contain only concrete integers|found symbolic symint at index")


def concrete_sizes_only(f: Facts) -> tuple[str, ...] | None:
    """A dynamic size reached a kernel that takes concrete sizes only (no SymInt support at that dispatch key).

    Before the fake-kernel rule, which reads any fake-tensor failure as a custom op's wrong fake kernel:
    here no custom op is involved. The usual case: ``torch.rand(x.shape, generator=g)`` in non-strict,
    whose generator overload has no symbolic-size kernel.
    """
    if f.stage != "capture" or not _CONCRETE_ONLY.search(f.low):
        return None
    if re.search(r"\bgenerator\s*=", f.code) or re.search(r"\.generator\b|randn?\.generator|generator=", f.low):
        return ("torch.dynamic-shape", "A random draw from a torch.Generator (torch.rand/randn/randint(...,"
                " generator=...)) cannot take a dynamic size: torch has no kernel for a symbolic size with a"
                " generator. Draw at the largest declared size and slice it (torch.rand((MAX, n), generator=g)"
                "[: x.shape[0]]), draw from torch's seeded global RNG (no generator=), or pass the noise in as an"
                " input", "", "")
    return ("torch.dynamic-shape", "A dynamic size reached an op whose kernel takes concrete sizes only (no"
            " symbolic-size support at that dispatch key): compute that size-dependent part with other ops, or"
            " keep the dim static (Dim.STATIC) where the model allows", "", "")


_MISSING_FAKE = re.compile(r"no fake impl|fake impl registered|does not support running with fake tensors"
                           r"|unsupported operator: |meta kernel")


def operator(f: Facts) -> tuple[str, ...] | None:
    if "UnsupportedOperatorException" in f.names or _MISSING_FAKE.search(f.low):
        op = re.search(r"CustomOpDef\((\w+)::(\w+)\)|unsupported operator: (\w+)\.(\w+)|^(\w+)\.(\w+)\.\w+$",
                       f.text, re.M)
        name = "::".join(g for g in op.groups() if g) if op else "<ns>::<op>"
        return ("torch.operator", f"Register a fake kernel for the custom op: @torch.library.register_fake(\"{name}\")"
                " returning empty tensors with the output shapes/dtypes")
    return None


def mutation(f: Facts) -> tuple[str, ...] | None:
    if "needed for gradient computation has been modified by an inplace operation" in f.low:
        # The exported training graph writes a mutated buffer back in place, after forward used it:
        # a tensor autograd saved for backward changed (eager ran the same code without complaint).
        return ("torch.mutation", "A buffer (a step counter, a cache) is updated in place and also used by the"
                " differentiated computation; autograd saved it and the exported program's write-back changed it."
                " Use a copy in the computation (n = self.n.clone() after the update) or update the buffer"
                " under torch.no_grad() after using it")
    if "leaf variable that requires grad is being used in an in-place" in f.low:
        return ("torch.mutation", "Do the in-place update of the parameter under torch.no_grad(), or keep the"
                " state in a buffer (register_buffer) instead")
    # Only what torch said, not its hints: dynamo hints mention mutation for unrelated graph breaks.
    said = what_torch_said(f.text)
    # "is not a Python constant or its mutation check fails" (torch 2.10-2.13, comparing with a
    # logging.Logger's name) is about a constant, not a mutation.
    said = said.replace("its mutation check fails", "")
    if f.error_type == "UNSUPPORTED_ALIASED_MUTATED_DYNAMIC_INPUTS" or re.search(
        r"inplace view on a graph input|mutat", said
    ):
        if "higher order op" in f.low:
            return None  # a torch.cond branch mutating its input: the torch.cond rule explains it
        return ("torch.mutation", "Use an out-of-place op instead of mutating an input or attribute in place"
                " (x = x.reshape(...) rather than x.resize_(...)), or keep mutable state in a registered buffer")
    return None


def higher_order(f: Facts) -> tuple[str, ...] | None:
    said = what_torch_said(f.text)
    if not (
        f.names & {"UncapturedHigherOrderOpError", "CondOpArgsMismatchError"}
        or "higher order op" in f.low
        or re.search(r"torch\.cond|torch\.map|\bmap_impl\b", said)  # e.g. branches' outputs differ
    ):
        return None
    if re.search(r"torch\.cond|\bcond\b|condop", f.low):
        category = "torch.cond"
    elif re.search(r"torch\.map|\bmap_impl\b", f.low):
        category = "torch.map"
    else:
        category = "torch.operator"  # while_loop, scan, ...: no ExportDB tag of their own
    if "aliasing" in f.low:
        hint = "Return x.clone() instead of an input (or a view of it) from the branch function"
    elif "mutation" in f.low:
        hint = "Do not mutate inputs inside the branch functions; compute and return new tensors instead"
    elif re.search(r"same (structure|shape|dim|dtype|metadata)|mismatch", f.low):
        hint = "Make every branch return the same structure, shapes and dtypes"
    else:
        hint = torch_hint(f.text) or "Make the branch functions pure tensor code that export can trace"
    return (category, hint)


def fake_runtime(f: Facts) -> tuple[str, ...] | None:
    """TorchRuntimeError, or a plain error from fake-tensor propagation during capture (eager already ran)."""
    through_fake = f.stage == "capture" and re.search(
        r"torch/_subclasses/fake_tensor\.py|torch/_meta_registrations\.py|torch/_refs/", f.tb
    )
    if "TorchRuntimeError" in f.names or through_fake:
        return ("torch.operator", "Eager runs but fake-tensor tracing fails: an op's fake/meta kernel disagrees"
                " with its real kernel - check torch.library.register_fake kernels return the real output shapes")
    return None


def spec_violation(f: Facts) -> tuple[str, ...] | None:
    if "SpecViolationError" in f.names:
        category = "torch.operator" if "operator" in f.low else "internal"
        return (category, "The exported graph is not valid export IR: make custom ops torch.library ops with a"
                " fake kernel, or report the torch bug with this reproducer")
    return None


def raw_data(f: Facts) -> tuple[str, ...] | None:
    if not re.search(r"cannot access data pointer of tensor|\.numpy\(\) is not supported", f.low):
        return None
    if re.search(r'[/\\]copy\.py"', f.tb):
        return ("python.standard-library", "Do not copy.deepcopy tensors inside forward; use t.clone() instead")
    return ("torch.operator", "Code in forward reads raw tensor data (data_ptr, .numpy(), a C extension): wrap it"
            " in a torch.library custom op with a fake kernel, or replace it with torch ops")
