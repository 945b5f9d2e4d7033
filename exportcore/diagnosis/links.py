"""Link a classified failure to the nearest ExportDB case: the one that shows it and its rewrite.

A table of (exception type, message pattern, stages) -> case name, written against the
messages torch 2.14 produces (and the older forms of 2.6-2.9 where they differ) for the cases in exportdb/ (tests/test_links.py checks every
name exists and the classic failures pick the right case). exportcore must not import
exportdb, so the table holds names only. Torch-free.
"""

from __future__ import annotations

import re
from typing import NamedTuple

__all__ = ["Link", "LINKS", "CATEGORY_FALLBACK", "nearest_case", "linked_names"]


class Link(NamedTuple):
    exc_type: str  # regex matched against the start of the exception type ("" = any)
    message: str  # regex searched in the first message line
    stages: tuple[str, ...]  # stages the link applies to (() = any)
    case: str


_CAPTURE = ("capture", "constraints", "input")

#: First match wins: specific messages before generic ones.
LINKS: tuple[Link, ...] = (
    # data-dependent control flow and sizes
    Link("Unsupported", r"Data-dependent branching", _CAPTURE, "if_on_tensor_value"),
    Link("", r"data-dependent expression Eq\(u\d+, 1\)", _CAPTURE, "if_on_tensor_value"),
    # torch 2.6-2.9: a size from .item() is checked against 0 (split, narrow) before it is used
    Link("", r"guard on data-dependent expression Eq\(u\d+, 0\)", _CAPTURE, "item_dependent_split_count"),
    Link("", r"guard on data-dependent expression u\d+ [<>]=? ", _CAPTURE, "nonzero_count_branch"),
    Link("", r"specialized integer from data-dependent expression u\d+\.?(\s|$)", _CAPTURE,
         "python_loop_over_item_count"),
    Link("", r"specialized integer from data-dependent expression", _CAPTURE, "item_dependent_split_count"),
    Link("", r"guard on data-dependent expression", _CAPTURE, "if_on_tensor_value"),
    # dynamic shape constraint violations
    # "... specialized it to be a constant (4)"; torch 2.6-2.8: "... was inferred to be a constant (4)"
    Link("", r"(specialized it|was inferred) to be a constant \([01]\)", _CAPTURE, "example_size_one_specializes"),
    Link("", r"marked \w+ as dynamic but your code specialized it to be a constant|was inferred to be a constant",
         _CAPTURE, "reshape_specializes_dim"),
    Link("", r"must always be equal", _CAPTURE, "unrelated_dims_must_be_equal"),
    Link("", r"must always be related to", _CAPTURE, "undeclared_derived_relation"),
    # size arithmetic: the shape of the violated guard says which code made it
    Link("", r"satisfy the generated guard .*\bround\(", _CAPTURE, "round_on_size"),
    Link("", r"satisfy the generated guard .*\b(math\.)?(floor|ceil|trunc)\(", _CAPTURE, "floor_on_size"),
    Link("", r"satisfy the generated guard .*\(1 \+ .*//.*\) != 1", _CAPTURE, "conv_output_size_guard"),
    Link("", r"satisfy the generated guard .*//", _CAPTURE, "floordiv_on_size"),
    Link("", r"Not all values of .* satisfy the generated guard", _CAPTURE, "range_narrowed_by_check"),
    # operators and fake kernels
    Link("", r"no fake impl registered|making fake tensor call|does not support running with fake tensors",
         (), "custom_op_missing_fake"),
    Link("UnsupportedOperatorException", r"", (), "custom_op_missing_fake"),
    Link("", r"\.numpy\(\) is not supported", (), "numpy_roundtrip"),
    # Python features strict (dynamo) does not trace
    Link("", r"Unsupported context manager|BEFORE_WITH \w+Variable", (), "lock_context_manager"),
    Link("", r"builtin operator `id`|\bid\(\)", (), "tensor_identity_via_data_ptr"),
    Link("", r"Data pointer comparison|Cannot access data pointer|DataPtrVariable", (), "tensor_identity_via_data_ptr"),
    Link("", r"Failed to trace builtin operator|^builtin: open\b", (), "open_file_in_forward"),
    Link("", r"torch\.compiler\.disable|_dynamo\.disable|Skip calling .*disable", (), "dynamo_disable_in_strict"),
    Link("", r"Higher order ops do not support input mutation", (), "cond_branch_mutates_operand"),
    Link("", r"_checkpoint_context_fn", (), "checkpointed_block"),
    Link("", r"backwards? hooks require compiled autograd", (), "backward_hook_on_submodule"),
    # pytree inputs and outputs
    Link("", r"not supported or pytree-flattenable|Unsupported input type", (), "dataclass_unregistered"),
    Link("", r"in output, which is not a known type|unrecognized type .* at output", (),
         "custom_class_output_unregistered"),
    Link("", r"TreeSpec of namedtuple class", ("serialize",), "namedtuple_without_serialized_name"),
    Link("", r"No registered serialization name|serialized_type_name", ("serialize",),
         "dataclass_without_serialized_name"),
    # mutation and state
    Link("", r"set_ on a graph input", (), "data_attribute_assignment"),
    Link("", r"tensor attribute .* was assigned during export|Mutating module attribute", (),
         "tensor_attribute_assignment"),
    # later stages
    Link("", r"wrap_with_set_grad_enabled", ("serialize",), "set_grad_enabled_false"),
    Link("", r"dtype mismatch", ("decompose",), "autocast_region"),
    Link("", r"grads\[", ("training",), "autograd_function_custom_backward"),
    Link("", r"Guard failed: 1 \+ .*//.* != 1", ("guards",), "conv_output_size_guard"),
    # a guard pinning an input size to 0 or 1 comes from an example of that size (eager ran it)
    Link("", r"Guard failed: \S+ == [01]\b", ("guards",), "example_size_one_specializes"),
    Link("", r"specializ", ("guards",), "dim_auto_specializes_silently"),
)

#: When no message pattern matches: the case that best introduces the category.
CATEGORY_FALLBACK: dict[str, str] = {
    "data-dependent": "if_on_tensor_value",
    "torch.dynamic-shape": "reshape_specializes_dim",
    "torch.operator": "custom_op_missing_fake",
    "python.context-manager": "lock_context_manager",
    "python.builtin": "open_file_in_forward",
    "python.data-structure": "dataclass_unregistered",
    "python.control-flow": "if_on_tensor_value",
    "torch.cond": "cond_branch_mutates_operand",
    "torch.mutation": "buffer_copy_state",
    "torch.escape-hatch": "dynamo_disable_in_strict",
    "python.assert": "assert_on_tensor_value",
}

_COMPILED = tuple((re.compile(link.exc_type), re.compile(link.message), link) for link in LINKS)


def nearest_case(exc_type: str, message: str, stage: str, category: str) -> str | None:
    """Return the name of the ExportDB case that best explains this failure, or None."""
    exc_type, message = exc_type or "", message or ""
    for type_re, message_re, link in _COMPILED:
        if link.stages and stage not in link.stages:
            continue
        if type_re.match(exc_type) and message_re.search(message):
            return link.case
    return CATEGORY_FALLBACK.get(category)


def linked_names() -> set[str]:
    """Return every case name the table can produce (for consistency tests)."""
    return {link.case for link in LINKS} | set(CATEGORY_FALLBACK.values())
