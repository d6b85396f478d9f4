"""The ``dppca`` command: one subcommand per job.

``main(argv)`` returns the exit status. Expected failures (bad options, bad
files, invalid privacy parameters) are reported as one line on stderr,
``dppca: error: ...``, with status 2; tables go to stdout. Output paths are
checked before any work; Ctrl+C ends with one line and status 130, SIGTERM
with one line and status 143, and neither leaves a temporary file behind.
"""

from __future__ import annotations

import argparse
import sys
import warnings
from collections.abc import Sequence

from .. import __version__
from ..exceptions import PrivacyWarning
from . import _ledger, _safety, app, directions, loading, score, scree
from ._common import CLIError

__all__ = ["main"]

_SUBCOMMANDS = [directions, loading, scree, score, app, _ledger]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="dppca",
        description="Differentially private PCA visualization.",
    )
    parser.add_argument("--version", action="version", version=f"dppca {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    subparsers.required = True
    for module in _SUBCOMMANDS:
        module.register(subparsers)
    return parser


def _show_warning(message, category, filename, lineno, file=None, line=None) -> None:
    label = "privacy warning" if issubclass(category, PrivacyWarning) else "warning"
    print(f"dppca: {label}: {message}", file=sys.stderr)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        # The app's server stops on SIGTERM by itself; every other command cleans up.
        with _safety.guard(sigterm=args.command != "app"), warnings.catch_warnings():
            warnings.simplefilter("always", PrivacyWarning)
            warnings.showwarning = _show_warning
            _safety.check_output_paths(args)
            return int(args.func(args))
    except (CLIError, ValueError, TypeError, OSError) as exc:
        message = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        print(f"dppca: error: {message}", file=sys.stderr)
        return 2
    except MemoryError:
        print("dppca: error: not enough memory for this job; use fewer bins, draws or "
              "rows (for example --design balanced).", file=sys.stderr)  # fmt: skip
        return 2
    except KeyboardInterrupt:
        print("dppca: interrupted; no partial output was left behind.", file=sys.stderr)
        return 130
    except _safety.Terminated:
        print("dppca: terminated; no partial output was left behind.", file=sys.stderr)
        return 143


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
