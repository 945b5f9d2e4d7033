"""The proof that a run is one already checked, and the stores that serve it."""
