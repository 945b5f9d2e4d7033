"""pytest-export: keep PyTorch models exportable with torch.export, inside pytest.

Importing this package (and the plugin) never imports torch.
"""

from __future__ import annotations

__version__ = "0.1.0"
