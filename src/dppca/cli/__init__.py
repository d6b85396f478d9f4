"""The ``dppca`` command: one subcommand per job.

``main(argv)`` returns the exit status. Expected failures (bad options, bad
files, invalid privacy parameters) are reported as one line on stderr,
``dppca: error: ...``, with status 2; tables go to stdout. Output paths are
checked before any work; Ctrl+C ends with one line and status 130, SIGTERM
with one line and status 143, and neither leaves a temporary file behind. A
reader of stdout that stops early (``dppca loading ... | head``) is no error:
the table it cut short is dropped and the files are still written; a
command with nothing but printed output ends quietly with status 141.
"""

from __future__ import annotations

import argparse
import re
import sys
import warnings
from collections.abc import Sequence

from .._kinds import KINDS, load
from .._version import __version__
from ..core.exceptions import AccuracyWarning, DataWarning, PrivacyWarning
from . import _ledger, _safety, app
from ._common import join_signed_values
from ._output import stdout_closed
from ._safety import CLIError

__all__ = ["main"]

# Besides one subcommand per release kind (dppca._kinds): the app and the ledger.
_OTHER_COMMANDS = (app, _ledger)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="dppca",
        description="Differentially private PCA visualization.",
    )
    parser.add_argument("--version", action="version", version=f"dppca {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    subparsers.required = True
    for kind in KINDS.values():
        if kind.command is not None:
            load(kind.command).register(subparsers)
    for module in _OTHER_COMMANDS:
        module.register(subparsers)
    return parser


# ``name='value'`` in a library message, where ``--name`` is an option of the command.
_PYTHON_ARG = re.compile(r"\b([a-z][a-z0-9_]*)=(?:'([^'\s]*)'|\"([^\"\s]*)\")")
# ``or pass name=True``: a switch, ``--name`` (dropped if the command has none).
_PYTHON_FLAG = re.compile(r"(\s+or\s+)pass ([a-z][a-z0-9_]*)=True\b")


def shell_syntax(message: str, options: set[str] | frozenset[str] = frozenset()) -> str:
    """Rewrite Python-style hints (``calibration='analytic'``) as shell options.

    Only names that are options of the command being run (``--calibration``)
    are rewritten: ``pass calibration='analytic'`` becomes ``pass
    --calibration analytic`` and ``or pass allow_large_delta=True`` becomes
    ``or pass --allow-large-delta``, or is dropped when the command has no
    such switch; anything else is left as it is.
    """

    def swap(match: re.Match[str]) -> str:
        option = "--" + match.group(1).replace("_", "-")
        if option not in options:
            return match.group(0)
        value = next(g for g in match.groups()[1:] if g is not None)
        return f"{option} {value}"

    def switch(match: re.Match[str]) -> str:
        option = "--" + match.group(2).replace("_", "-")
        if option in options:
            return f"{match.group(1)}pass {option}"
        return ""  # the command has no such switch: drop the Python-only hint

    return _PYTHON_FLAG.sub(switch, _PYTHON_ARG.sub(swap, message))


_OPTIONS: set[str] = set()


def _show_warning(message, category, filename, lineno, file=None, line=None) -> None:
    if issubclass(category, DataWarning):  # a note about the table, as the commands write it
        print(f"dppca: {message}", file=sys.stderr)
        return
    label = "privacy warning" if issubclass(category, PrivacyWarning) else "warning"
    if issubclass(category, AccuracyWarning):
        label = "accuracy warning"
    print(f"dppca: {label}: {shell_syntax(str(message), _OPTIONS)}", file=sys.stderr)


def _option_strings(parser: argparse.ArgumentParser, command: str | None) -> set[str]:
    found: set[str] = set()
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction) and command in action.choices:
            found |= _option_strings(action.choices[command], None)
        found |= {s for s in action.option_strings if s.startswith("--")}
    return found


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the exit status."""
    parser = build_parser()
    words = join_signed_values(sys.argv[1:] if argv is None else argv)
    args = parser.parse_args(words)
    args.argv = list(words)  # for a report's Methods (command_line drops the seed)
    _OPTIONS.clear()
    _OPTIONS.update(_option_strings(parser, getattr(args, "command", None)))
    try:
        # The app's server stops on SIGTERM by itself; every other command cleans up.
        with _safety.guard(sigterm=args.command != "app"), warnings.catch_warnings():
            warnings.simplefilter("always", PrivacyWarning)
            warnings.simplefilter("always", AccuracyWarning)
            warnings.simplefilter("always", DataWarning)
            warnings.showwarning = _show_warning
            _safety.check_output_paths(args)
            status = int(args.func(args))
            sys.stdout.flush()  # here, where a reader gone early is handled
            return status
    except BrokenPipeError:  # stdout's reader stopped early (``| head``): no message
        stdout_closed()
        return 141  # 128 + SIGPIPE, as the shell reports a command ended by it
    except (CLIError, ValueError, TypeError, OSError) as exc:
        message = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        print(f"dppca: error: {shell_syntax(message, _OPTIONS)}", file=sys.stderr)
        return 2
    except MemoryError:
        print(
            "dppca: error: not enough memory for this job; use fewer bins, draws or "
            "rows (for example --design balanced), or fewer columns (each p x p "
            "matrix takes 8 p^2 bytes: 200 MB at p = 5000).",
            file=sys.stderr,
        )
        return 2
    except KeyboardInterrupt:
        print("dppca: interrupted; no partial output was left behind.", file=sys.stderr)
        return 130
    except _safety.Terminated:
        print("dppca: terminated; no partial output was left behind.", file=sys.stderr)
        return 143


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
