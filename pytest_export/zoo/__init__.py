"""Zero-code zoo cases: ``--export-model SPEC`` collects a model library's models as exportable items.

The specs, builders and input inference are exportcore.zoo (no pytest); this package is their pytest side:
options (pytest_export.zoo.options), the collector and items (pytest_export.zoo.items), the hooks
(pytest_export.zoo.plugin). Importing it does not import torch or any zoo package.
"""
