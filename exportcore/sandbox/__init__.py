"""Snapshot and restore: global torch state, the model's state, and what torch leaves behind."""
