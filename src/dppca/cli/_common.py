"""Pieces shared by the ``dppca`` subcommands: data input, privacy options, safe output."""

from __future__ import annotations

import argparse
import os
import tempfile
from collections.abc import Callable
from pathlib import Path

import pandas as pd

from ..datasets import DATASETS, load_dataset

__all__ = [
    "CLIError",
    "add_data_arguments",
    "add_output_argument",
    "add_privacy_arguments",
    "add_ties_argument",
    "check_figure_path",
    "parse_int_list",
    "read_data",
    "write_atomically",
]


class CLIError(Exception):
    """An expected failure: reported as one line on stderr, exit status 2."""


def add_data_arguments(parser: argparse.ArgumentParser, *, default_dataset: str = "gau") -> None:
    """DATA.csv positional, ``--dataset`` and ``--columns``."""
    parser.add_argument(
        "data",
        nargs="?",
        metavar="DATA.csv",
        help=f"a CSV file with a header row; default: the bundled '{default_dataset}' dataset",
    )
    parser.add_argument(
        "--dataset",
        choices=sorted(DATASETS),
        default=None,
        help=f"a bundled dataset instead of a file (default {default_dataset})",
    )
    parser.add_argument(
        "--columns",
        default=None,
        metavar="A,B,...",
        help="comma-separated columns to analyse (default: all columns, which must be numeric)",
    )
    parser.set_defaults(default_dataset=default_dataset)


def add_privacy_arguments(parser: argparse.ArgumentParser) -> None:
    """``--eps``, ``--delta``, ``--calibration`` and ``--seed``."""
    parser.add_argument("--eps", type=float, required=True, help="privacy parameter epsilon > 0")
    parser.add_argument(
        "--delta", type=float, required=True, help="privacy parameter delta in (0, 1)"
    )
    parser.add_argument(
        "--calibration",
        choices=("classic", "analytic"),
        default="classic",
        help="Gaussian noise calibration (analytic is exact for every eps)",
    )
    parser.add_argument(
        "--seed",
        type=int,
        default=None,
        help="seed for reproducible noise; a seed lets anyone who knows it remove the "
        "noise, so omit it (fresh OS entropy) for a release you publish",
    )


def parse_int_list(text: str, name: str, *, length: int | None = None) -> tuple[int, ...]:
    """Parse ``"1,2"`` into ``(1, 2)``, with a one-line error naming the option."""
    try:
        values = tuple(int(part) for part in text.split(","))
    except ValueError:
        raise CLIError(
            f"{name} must be comma-separated integers such as 1,2; got {text!r}."
        ) from None
    if length is not None and len(values) != length:
        raise CLIError(f"{name} must hold {length} integers; got {text!r}.")
    return values


def read_data(args: argparse.Namespace, *, keep: tuple[str, ...] = ()) -> pd.DataFrame:
    """The table named on the command line, restricted to ``--columns`` (plus ``keep``)."""
    if args.data is not None and args.dataset is not None:
        raise CLIError("give either DATA.csv or --dataset, not both.")
    if args.data is None:
        frame = load_dataset(args.dataset or args.default_dataset)
    else:
        path = Path(args.data)
        if not path.is_file():
            raise CLIError(f"data file {str(path)!r} does not exist or is not a file.")
        try:
            frame = pd.read_csv(path)
        except pd.errors.EmptyDataError:
            raise CLIError(f"data file {str(path)!r} is empty.") from None
        except (pd.errors.ParserError, UnicodeDecodeError) as exc:
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise CLIError(
                f"data file {str(path)!r} is not a readable CSV file: {first}"
            ) from None
        if frame.shape[0] == 0:
            raise CLIError(f"data file {str(path)!r} has a header but no rows.")
    if args.columns:
        wanted = [c.strip() for c in args.columns.split(",") if c.strip()]
        missing = [c for c in wanted if c not in frame.columns]
        if missing:
            raise CLIError(f"--columns names unknown column(s): {', '.join(missing)}.")
        frame = frame[[*wanted, *[c for c in keep if c not in wanted]]]
    return frame


def numeric_part(frame: pd.DataFrame, *, drop: tuple[str, ...] = ()) -> pd.DataFrame:
    """The columns to analyse, with a clear error if any is not numeric."""
    data = frame.drop(columns=[c for c in drop if c in frame.columns])
    bad = [
        str(c)
        for c in data.columns
        if not pd.api.types.is_numeric_dtype(data[c]) or pd.api.types.is_bool_dtype(data[c])
    ]
    if bad:
        raise CLIError(
            f"non-numeric column(s) {', '.join(bad)}; choose numeric columns with --columns."
        )
    return data


def write_atomically(path: str | os.PathLike[str], write: Callable[[str], None]) -> None:
    """Call ``write(tmp_path)`` and move the file into place only once it is complete.

    The temporary file sits beside the target so that ``os.replace`` is atomic;
    on any failure it is removed and an existing target is left untouched.
    """
    target = Path(path)
    directory = target.parent if str(target.parent) else Path(".")
    if not directory.is_dir():
        raise CLIError(f"output directory {str(directory)!r} does not exist.")
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=target.suffix, dir=directory)
    os.close(fd)
    try:
        write(tmp)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def save_figure(fig, path: str) -> None:
    """Save ``fig`` atomically; the format follows the extension (png, svg, pdf)."""
    suffix = check_figure_path(path)
    write_atomically(path, lambda tmp: fig.savefig(tmp, format=suffix, bbox_inches="tight"))


def add_ties_argument(parser: argparse.ArgumentParser) -> None:
    """``--ties``: what the private directions do with (almost) coinciding rows."""
    parser.add_argument(
        "--ties",
        choices=("error", "zero"),
        default="error",
        help="rows closer than 1.5e-8: stop with an error, or let them contribute nothing",
    )


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
