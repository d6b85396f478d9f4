"""What the commands write: stderr messages, atomic files, tables, figures, release files.

Standard output carries only the result table; notes, costs and the names of
files written go to stderr. Every file is written beside its target and moved
into place once complete (:func:`write_atomically`).
"""

from __future__ import annotations

import argparse
import os
import shlex
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .._csv import formula_safe
from ..core.lazy import pandas as pd
from ..core.tempfiles import new_temporary
from . import _safety
from ._safety import CLIError

if TYPE_CHECKING:
    from ..releases.engine import ReleasePlan

__all__ = [
    "add_output_argument",
    "add_release_arguments",
    "add_table_argument",
    "check_figure_path",
    "check_release_path",
    "check_table_path",
    "command_line",
    "cost_table",
    "emit_table",
    "forecast_line",
    "info",
    "load_directions",
    "meaning_line",
    "note",
    "print_plan",
    "report_cost",
    "save_figure",
    "save_release_file",
    "stdout_closed",
    "write_atomically",
    "write_stdout",
]


def note(message: str) -> None:
    """A message for the user on stderr (stdout carries only the result table)."""
    print(f"dppca: {message}", file=sys.stderr)


def info(message: str) -> None:
    """A plain line on stderr: cost lines, files written."""
    print(message, file=sys.stderr)


def write_atomically(path: str | os.PathLike[str], write: Callable[[str], None]) -> None:
    """Call ``write(tmp_path)`` and move the file into place only once it is complete.

    The temporary file sits beside the target so that ``os.replace`` is atomic;
    on any failure it is removed and an existing target is left untouched.
    """
    target = Path(path)
    directory = target.parent if str(target.parent) else Path(".")
    if not directory.is_dir():
        raise CLIError(f"output directory {str(directory)!r} does not exist.")
    # Leftovers of a writer killed with SIGKILL are removed first (core.tempfiles).
    fd, tmp = new_temporary(target, suffix=target.suffix or ".tmp")
    os.close(fd)
    _safety.track(tmp)  # removed even if SIGTERM or Ctrl+C stops the process meanwhile
    try:
        write(tmp)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)  # mkstemp makes 0600; give the usual file mode
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    finally:
        _safety.untrack(tmp)


def save_figure(fig, path: str) -> None:
    """Save ``fig`` atomically; the format follows the extension (png, svg, pdf)."""
    suffix = check_figure_path(path)
    write_atomically(path, lambda tmp: fig.savefig(tmp, format=suffix, bbox_inches="tight"))


def add_output_argument(parser: argparse.ArgumentParser, *, required: bool, help: str) -> None:
    """``--out FILE``, a figure file whose extension picks the format."""
    parser.add_argument("--out", required=required, default=None, metavar="FILE", help=help)


def check_figure_path(path: str) -> str:
    """The format of a figure file (png, svg or pdf), from its extension.

    Call it before the release, so a typo in the name spends no budget.
    """
    suffix = Path(path).suffix.lower().lstrip(".")
    if suffix not in {"png", "svg", "pdf"}:
        raise CLIError(f"--out must end in .png, .svg or .pdf; got {path!r}.")
    return suffix


def add_table_argument(parser: argparse.ArgumentParser) -> None:
    """``--table FILE.csv``: also write the printed table to a file."""
    parser.add_argument(
        "--table",
        default=None,
        metavar="FILE.csv",
        help="also write the result table to FILE.csv (it is always printed as CSV on stdout)",
    )


def check_table_path(args: argparse.Namespace) -> None:
    """Fail before the release if ``--table`` cannot be written."""
    path = getattr(args, "table", None)
    if path is None:
        return
    directory = Path(path).parent
    if str(directory) and not directory.is_dir():
        raise CLIError(f"output directory {str(directory)!r} does not exist.")


def write_stdout(write: Callable[[Any], object]) -> None:
    """``write(sys.stdout)``, then flush; a reader gone early is not an error.

    A command piped into ``head`` (or anything that stops reading) finds
    stdout closed: the rest of its output (files, figures, the ledger's
    charge) is still made, and what it prints goes nowhere
    (:func:`stdout_closed`).
    """
    try:
        write(sys.stdout)
        sys.stdout.flush()
    except BrokenPipeError:
        stdout_closed()


def stdout_closed() -> None:
    """Point stdout at the null device after its reader closed the pipe.

    What is left in the buffer, and whatever is printed later, is dropped
    quietly instead of failing again (at exit, as well).
    """
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, sys.stdout.fileno())
    finally:
        os.close(devnull)


def emit_table(args: argparse.Namespace, table: pd.DataFrame, *, index: bool = True) -> None:
    """Print ``table`` as CSV on stdout, and write it to ``--table`` if given.

    Text cells that a spreadsheet would run as a formula (column names and
    labels from the user's file starting with = + - @, tab or CR) are
    prefixed with ``'``; numbers stay numbers (:func:`dppca._csv.formula_safe`).
    """
    table = formula_safe(table, index=index)
    write_stdout(lambda out: table.to_csv(out, index=index))
    path = getattr(args, "table", None)
    if path is not None:
        write_atomically(path, lambda tmp: table.to_csv(tmp, index=index))
        info(f"wrote {path}")


def add_release_arguments(parser: argparse.ArgumentParser, *, reuse: bool) -> None:
    """``--save-release FILE`` and, with ``reuse``, ``--directions FILE``."""
    parser.add_argument(
        "--save-release",
        default=None,
        metavar="FILE.json",
        help="also save the private release to FILE.json (the released values, cost, n, "
        "column names and a fingerprint of the data; never the seed). The fingerprint is "
        "a hash of the data: keep the file for your own records",
    )
    if reuse:
        parser.add_argument(
            "--directions",
            default=None,
            metavar="FILE.json",
            help="reuse the private directions saved by 'dppca directions --save-release' "
            "on the same data and columns: no new direction cost",
        )


def check_release_path(args: argparse.Namespace) -> None:
    """Fail before the release if ``--save-release`` cannot be written."""
    path = getattr(args, "save_release", None)
    if path is None:
        return
    directory = Path(path).parent
    if str(directory) and not directory.is_dir():
        raise CLIError(f"output directory {str(directory)!r} does not exist.")
    for given in (getattr(args, "data", None), getattr(args, "directions", None)):
        if given is not None and Path(given).resolve() == Path(path).resolve():
            raise CLIError(f"--save-release would overwrite an input file: {path!r}.")


def load_directions(args: argparse.Namespace, data: Any, variables: tuple[str, ...]) -> Any:
    """The DirectionsResult of ``--directions FILE`` checked against the data, or None.

    With data, the file is reused at no new cost only if the ledger holds it
    (it was saved with ``--save-release`` from a release charged there);
    otherwise its stated cost is charged now as an unrecorded release, or
    the command is refused. With ``data=None`` nothing is checked (a release
    drawn without its data).
    """
    path = getattr(args, "directions", None)
    if path is None:
        return None
    from ..release_io import load_release
    from ..releases.directions.result import DirectionsResult

    if not Path(path).is_file():
        raise CLIError(f"--directions file {path!r} does not exist or is not a file.")
    try:
        columns = list(variables) if data is not None else None
        result = load_release(path, kind=DirectionsResult, data=data, columns=columns)
        if data is not None:  # a file the ledger does not hold is charged now
            from ..release_io import account_reuse, check_tag
            from ._ledger_budget import ledger_budget

            paid_by = getattr(args, "paid_by", None)
            budget = ledger_budget(args, data, variables, kind="reused release (unrecorded)")
            args.paid_by = paid_by  # this budget pays for no new release
            # a file tagged by this ledger must be as it was saved (a forged cost is refused)
            verified = budget is not None and check_tag(path, budget)
            if budget is not None and account_reuse(result, budget, source=str(path)):
                info(f"--directions: {path} was not in the ledger; charged its cost {result.cost}")
                if not verified:
                    info(
                        "--directions: the file carries no tag of this ledger, so its cost "
                        "is charged as the file states it, unverified."
                    )
        return result
    except ValueError as exc:
        raise CLIError(f"--directions: {exc}") from None


def save_release_file(
    args: argparse.Namespace,
    result: Any,
    data: Any,
    variables: tuple[str, ...],
) -> None:
    """Write ``--save-release`` if asked, dropping non-private comparison parts with a note.

    A loading drawn from ``--directions`` is recorded as reusing them (no new cost).
    """
    path = getattr(args, "save_release", None)
    if path is None:
        return
    from ..release_io import save_release

    drop = not getattr(result, "private", True)
    save_release(
        result,
        path,
        data=data,
        columns=list(variables),
        drop_nonprivate=drop,
        reused_directions=getattr(args, "directions", None) is not None,
        budget=getattr(args, "paid_by", None),
    )
    info(f"wrote {path}" + (" (without the non-private comparison)" if drop else ""))


def print_plan(plan: ReleasePlan, *, design_named: bool = False) -> int:
    """``--dry-run``: the cost and the forecast on stdout; nothing was released.

    ``design_named``: ``--design`` was given, so the design is not called the default.
    """
    from ..privacy.tradeoff import attacker_sentence
    from ..releases.forecast import time_lines

    print(f"privacy cost (not spent): {plan.cost}")
    print(f"what it would mean: {attacker_sentence(plan.cost)}")
    print(cost_table(plan.cost))
    print(plan.forecast.summary())
    for line in time_lines(plan, named=design_named):  # data-free: n, p and the settings
        print(line)
    return 0


def cost_table(cost: Any) -> str:
    """The cost's parts as an aligned text table (released, mechanism, eps, delta).

    The rows of :meth:`~dppca.privacy.cost.PrivacyCost.to_frame`, laid out
    without pandas (a ``--dry-run`` does not import it): every column
    right-aligned, numbers in ``%g`` form.
    """
    header = ("released", "mechanism", "eps", "delta")
    rows = [header] + [
        (str(c.released), str(c.mechanism), f"{c.eps:g}", f"{c.delta:g}") for c in cost.leaves()
    ]
    widths = [max(len(row[j]) for row in rows) for j in range(len(header))]
    return "\n".join(
        " ".join(cell.rjust(width) for cell, width in zip(row, widths, strict=True))
        for row in rows
    )


def forecast_line(args: argparse.Namespace, result: Any) -> None:
    """After the warning of ``--accuracy warn``, one stderr line saying the release went ahead.

    Nothing is added with ``--accuracy ignore`` (the caller asked for silence) or
    when the forecast found no problem; ``--dry-run`` prints the whole forecast.
    """
    forecast = getattr(result, "forecast", None)
    if getattr(args, "accuracy", "warn") != "warn":
        return
    if forecast is not None and not forecast.ok:
        info("the forecast made before this release found it likely inaccurate (see above)")


def meaning_line(cost: Any) -> None:
    """What the cost means to a membership attacker, on stderr (one sentence)."""
    from ..privacy.tradeoff import attacker_sentence

    info(f"what this means: {attacker_sentence(cost)}")


def command_line(args: argparse.Namespace) -> str | None:
    """The command as typed, for a report's Methods: no seed, input files by base name."""
    argv = getattr(args, "argv", None)
    if argv is None:
        return None
    shown: list[str] = []
    skip = False
    for word in argv:
        if skip:
            skip = False
            continue
        if word == "--seed":
            skip = True
            continue
        if word.startswith("--seed="):
            continue
        shown.append(os.path.basename(word) if os.sep in word else word)
    return " ".join(["dppca", *map(shlex.quote, shown)])


def report_cost(args: argparse.Namespace, result: Any, reused: Any) -> None:
    """The release's cost on stderr: the total, what it means, reuse, the parts."""
    info(f"privacy cost: {result.cost}")
    meaning_line(result.cost)
    if reused is not None:
        info(f"(directions reused from {args.directions}: no new direction cost)")
    info(result.cost.to_frame().to_string(index=False))
