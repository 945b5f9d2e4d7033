"""ExportDB cases, one module per category; builders import torch lazily."""
