"""What older torch releases do with the ExportDB cases, where it differs from the catalog.

Measured by running ``pytest exportdb/ --export-report=db-X.json`` on torch 2.6, 2.8 and 2.10 and
comparing with the catalog's expectations (recorded on torch 2.14); regenerate the same way when
a release is added. Each entry is ``(case, mode): [(until, outcome...), ...]``: the case had that
outcome on every release before ``until``. A change listed "at 2.8" happened in 2.7 or 2.8, one
"at 2.14" somewhere after 2.10. The matrix runs of 23 Nov (every release 2.6-2.15) moved
map_over_leading_dim and tensor_grad_hook[strict] to 2.11, and torch_check_on_value and
user_class_context_manager[strict] to 2.13 (2.12 still fails them, 2.13 passes); on 2.8 and 2.9
closure_over_tensor[strict], tensor_attribute_assignment[non_strict, training] and
tensor_identity_via_data_ptr[strict] still fail as on 2.6, so their change is at 2.10; 2.9 alone
fails checkpointed_block[strict] (torch.operator) and frozen_submodule[training]; twelve outcomes
listed "at 2.8" already hold on 2.7 (2.7.1 run of 23 Nov; 2.6 keeps the older one). Outcomes: ``("passes",)``, ``("fails", category, stage)``,
``("skip", why)`` (the case cannot run on that torch at all).
"""

from __future__ import annotations

OLDER: dict[tuple[str, str], list[tuple[str, ...]]] = {
    # Measured on every release 2.6 to 2.13 (pytest exportdb/test_exportdb.py -k NAME), so these
    # "at" versions are exact: 2.13 stopped guarding a strided stack's size parity.
    ('round_on_size', 'strict'): [('2.8', 'fails', 'python.data-structure', 'capture')],
    ('floor_on_size', 'strict'): [('2.8', 'fails', 'python.data-structure', 'capture')],
    ('conv_output_size_guard', 'strict'): [('2.13', 'fails', 'torch.dynamic-shape', 'constraints')],
    ('conv_output_size_min_raised', 'strict'): [('2.13', 'fails', 'torch.dynamic-shape', 'constraints')],
    ('conv_output_size_min_raised', 'non_strict'): [('2.13', 'fails', 'torch.dynamic-shape', 'constraints')],
    ('conv_output_size_min_raised', 'training'): [('2.13', 'fails', 'torch.dynamic-shape', 'constraints')],
    ('hash_of_tensor', 'strict'): [('2.13', 'fails', 'python.builtin', 'capture')],
    ('autocast_region', 'strict'): [('2.8', 'passes')],
    ('checkpoint_skipped_when_exporting', 'non_strict'): [('2.8', 'skip', "eager refuses it on this torch: module 'torch.compiler' has no attribute 'is_exporting'")],
    ('checkpoint_skipped_when_exporting', 'strict'): [('2.8', 'skip', "eager refuses it on this torch: module 'torch.compiler' has no attribute 'is_exporting'")],
    ('checkpoint_skipped_when_exporting', 'training'): [('2.8', 'skip', "eager refuses it on this torch: module 'torch.compiler' has no attribute 'is_exporting'")],
    ('checkpointed_block', 'strict'): [('2.9', 'passes'), ('2.10', 'fails', 'torch.operator', 'capture')],
    # torch 2.9's save/load gives a frozen (requires_grad=False) weight requires_grad=True: the reloaded
    # program computes a gradient eager does not (measured on 2.8, 2.9, 2.10).
    ('frozen_submodule', 'training'): [('2.9', 'passes'), ('2.10', 'fails', 'numerics', 'training')],
    ('closure_over_tensor', 'strict'): [('2.10', 'fails', 'python.closure', 'capture')],
    ('cond_branch_mutates_operand', 'non_strict'): [('2.7', 'passes'), ('2.8', 'fails', 'decomposition', 'decompose'), ('2.14', 'skip', "eager refuses it on this torch: Cond doesn't work unless it is captured completely with torch.compile. Scroll up to find out what causes the g")],
    ('cond_branch_mutates_operand', 'strict'): [('2.7', 'passes'), ('2.8', 'fails', 'decomposition', 'decompose'), ('2.14', 'skip', "eager refuses it on this torch: Cond doesn't work unless it is captured completely with torch.compile. Scroll up to find out what causes the g")],
    ('cond_branches_different_shapes', 'non_strict'): [('2.8', 'skip', "eager refuses it on this torch: Expect branches to return tensors with same metadata but find pair[0] differ in 'shape: torch.Size([2, 3]) vs ")],
    ('cond_branches_different_shapes', 'strict'): [('2.8', 'skip', "eager refuses it on this torch: Expect branches to return tensors with same metadata but find pair[0] differ in 'shape: torch.Size([2, 3]) vs ")],
    ('cond_branches_different_shapes', 'training'): [('2.8', 'skip', "eager refuses it on this torch: Expect branches to return tensors with same metadata but find pair[0] differ in 'shape: torch.Size([2, 3]) vs ")],
    ('contextlib_contextmanager', 'strict'): [('2.7', 'fails', 'internal', 'capture'), ('2.8', 'passes')],
    ('data_attribute_assignment', 'non_strict'): [('2.7', 'fails', 'serialization', 'serialize'), ('2.8', 'fails', 'numerics', 'numerics')],
    ('data_attribute_assignment', 'training'): [('2.7', 'fails', 'serialization', 'serialize'), ('2.8', 'fails', 'numerics', 'training')],
    ('dataclass_registered', 'non_strict'): [('2.7', 'fails', 'internal', 'run'), ('2.8', 'passes')],
    ('dataclass_registered', 'strict'): [('2.7', 'fails', 'internal', 'run'), ('2.8', 'passes')],
    ('dataclass_registered', 'training'): [('2.7', 'fails', 'internal', 'run'), ('2.8', 'passes')],
    ('forward_hook_on_root', 'strict'): [('2.10', 'fails', 'python.assert', 'capture')],
    ('hook_collects_activations', 'non_strict'): [('2.10', 'fails', 'internal', 'capture')],
    ('hook_collects_activations', 'training'): [('2.10', 'fails', 'internal', 'capture')],
    ('int_argument_dynamic', 'non_strict'): [('2.8', 'fails', 'torch.dynamic-shape', 'input')],
    ('int_argument_dynamic', 'strict'): [('2.8', 'fails', 'torch.dynamic-shape', 'input')],
    ('int_argument_dynamic', 'training'): [('2.8', 'fails', 'torch.dynamic-shape', 'input')],
    ('is_exporting_branch', 'non_strict'): [('2.8', 'skip', "eager refuses it on this torch: module 'torch.compiler' has no attribute 'is_exporting'")],
    ('is_exporting_branch', 'strict'): [('2.8', 'skip', "eager refuses it on this torch: module 'torch.compiler' has no attribute 'is_exporting'")],
    ('is_exporting_branch', 'training'): [('2.8', 'skip', "eager refuses it on this torch: module 'torch.compiler' has no attribute 'is_exporting'")],
    ('item_as_size', 'non_strict'): [('2.10', 'fails', 'data-dependent', 'capture')],
    ('item_as_size', 'strict'): [('2.10', 'fails', 'data-dependent', 'capture')],
    ('item_as_size', 'training'): [('2.10', 'fails', 'data-dependent', 'capture')],
    ('map_over_leading_dim', 'non_strict'): [('2.11', 'fails', 'torch.dynamic-shape', 'constraints')],
    ('map_over_leading_dim', 'strict'): [('2.8', 'fails', 'guards', 'guards'), ('2.11', 'fails', 'torch.dynamic-shape', 'constraints')],
    ('map_over_leading_dim', 'training'): [('2.11', 'fails', 'torch.dynamic-shape', 'constraints')],
    ('map_with_extra_operand', 'non_strict'): [('2.8', 'fails', 'serialization', 'serialize')],
    ('map_with_extra_operand', 'training'): [('2.8', 'fails', 'serialization', 'serialize')],
    ('split_at_item_index', 'non_strict'): [('2.8', 'fails', 'data-dependent', 'capture')],
    ('split_at_item_index', 'strict'): [('2.8', 'fails', 'data-dependent', 'capture')],
    ('split_at_item_index', 'training'): [('2.8', 'fails', 'data-dependent', 'capture')],
    ('tensor_attribute_assignment', 'non_strict'): [('2.10', 'fails', 'torch.mutation', 'capture')],
    ('tensor_attribute_assignment', 'strict'): [('2.10', 'fails', 'torch.mutation', 'capture')],
    ('tensor_attribute_assignment', 'training'): [('2.10', 'fails', 'torch.mutation', 'capture')],
    ('tensor_grad_hook', 'strict'): [('2.11', 'fails', 'internal', 'capture')],
    ('tensor_identity_via_data_ptr', 'non_strict'): [('2.8', 'fails', 'numerics', 'numerics')],
    ('tensor_identity_via_data_ptr', 'strict'): [('2.10', 'fails', 'python.builtin', 'capture')],
    ('tensor_identity_via_data_ptr', 'training'): [('2.8', 'fails', 'numerics', 'numerics')],
    ('tolist_as_index', 'non_strict'): [('2.10', 'fails', 'data-dependent', 'capture')],
    ('tolist_as_index', 'strict'): [('2.10', 'fails', 'data-dependent', 'capture')],
    ('tolist_as_index', 'training'): [('2.10', 'fails', 'data-dependent', 'capture')],
    ('torch_check_on_value', 'non_strict'): [('2.13', 'fails', 'internal', 'capture')],
    ('torch_check_on_value', 'strict'): [('2.13', 'fails', 'internal', 'capture')],
    ('torch_check_on_value', 'training'): [('2.13', 'fails', 'internal', 'capture')],
    ('unbacked_reshape', 'non_strict'): [('2.8', 'fails', 'data-dependent', 'capture')],
    ('unbacked_reshape', 'strict'): [('2.8', 'fails', 'torch.dynamic-shape', 'constraints')],
    ('unbacked_reshape', 'training'): [('2.8', 'fails', 'data-dependent', 'capture')],
    ('unbacked_reshape_checked', 'non_strict'): [('2.8', 'fails', 'data-dependent', 'capture')],
    ('unbacked_reshape_checked', 'strict'): [('2.8', 'fails', 'torch.dynamic-shape', 'constraints')],
    ('unbacked_reshape_checked', 'training'): [('2.8', 'fails', 'data-dependent', 'capture')],
    ('user_class_context_manager', 'strict'): [('2.7', 'fails', 'python.context-manager', 'capture'), ('2.8', 'fails', 'python.builtin', 'capture'), ('2.13', 'fails', 'python.builtin', 'capture')],
    ('while_loop_counter', 'non_strict'): [('2.7', 'fails', 'torch.operator', 'capture'), ('2.8', 'passes')],
    ('while_loop_counter', 'strict'): [('2.7', 'fails', 'internal', 'run'), ('2.8', 'passes')],
    ('while_loop_counter', 'training'): [('2.7', 'fails', 'torch.operator', 'capture'), ('2.8', 'passes')],
}
