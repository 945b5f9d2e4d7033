"""Command line: ``python -m pytest_export merge a.json b.json -o report.html [--baseline base.json]``
and ``python -m pytest_export recover reports/export.json`` (a killed session's report from its journal)
and ``python -m pytest_export explain REPORT.json [CASE[MODE]]`` (re-run one failing case, explained)
and ``python -m pytest_export diff OLD.json NEW.json [-o diff.html -o diff.md]``
and ``python -m pytest_export ledger build|diff ...`` (the exportability ledger, its pages and drift).

One module per subcommand in pytest_export.cli (its ``add_parser`` and ``run``, exit statuses in its
docstring); this only dispatches. Imports neither pytest nor torch.
"""

from __future__ import annotations

import argparse
import sys
from typing import Sequence

from pytest_export.cli import diff, explain, ledger, merge, recover

__all__ = ["main"]

#: Subcommand -> its module, in the order ``--help`` lists them.
COMMANDS = {"merge": merge, "recover": recover, "explain": explain, "diff": diff,
            "ledger": ledger}


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m pytest_export", description="pytest-export tools")
    sub = parser.add_subparsers(dest="command", required=True)
    for command in COMMANDS.values():
        command.add_parser(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line and return its exit status."""
    args = _parser().parse_args(argv)
    return COMMANDS[args.command].run(args)


if __name__ == "__main__":
    sys.exit(main())
