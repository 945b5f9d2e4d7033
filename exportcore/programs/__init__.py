"""The programs under test: how each runs, how it is compared with eager."""
