"""Pieces shared by the ``dppca`` subcommands: data input, privacy options, safe output."""

from __future__ import annotations

import argparse
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .._lazy import pandas as pd
from ..datasets import DATASETS, load_dataset
from ..kendall import default_m

__all__ = [
    "CLIError",
    "add_data_arguments",
    "add_design_arguments",
    "add_output_argument",
    "add_privacy_arguments",
    "add_ties_argument",
    "check_figure_path",
    "parse_int_list",
    "progress_for",
    "read_data",
    "read_design_input",
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
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)  # mkstemp makes 0600; give the usual file mode
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


# The CLI draws a progress bar when the pair sum is expected to take more than a couple
# of seconds on one core (measured with benchmarks/bench_balanced.py and bench_kendall.py:
# roughly 1e8 pairs/s for the exact design at p = 20, 1e7 pairs/s for the balanced one).
_BAR_PAIRS = {"exact": 2e8, "balanced": 2e7}


def add_design_arguments(parser: argparse.ArgumentParser) -> None:
    """``--design``, ``--m`` and ``--progress`` for subcommands built on the Kendall matrix."""
    parser.add_argument(
        "--design",
        choices=("exact", "balanced"),
        default="exact",
        help="pairs in the Kendall matrix: all of them (exact), or a random balanced design "
        "of n*m pairs for very large files (same privacy cost); with 'balanced' a CSV or "
        "Parquet file is read in chunks",
    )
    parser.add_argument(
        "--m",
        type=int,
        default=None,
        metavar="M",
        help="partners per row in the balanced design (default min(20, (n-1)//2))",
    )
    parser.add_argument(
        "--progress",
        choices=("auto", "always", "never"),
        default="auto",
        help="progress bar on stderr: only for long computations (auto), always or never",
    )


def read_design_input(args: argparse.Namespace) -> tuple[Any, tuple[str, ...]]:
    """The numeric data to analyse and its column names.

    With ``--design balanced`` and a file argument, the file is parsed in chunks
    straight into one float64 array (CSV, or Parquet with pyarrow), so no
    DataFrame of the whole table is ever held; otherwise :func:`read_data`.
    """
    if getattr(args, "design", "exact") != "balanced" or args.data is None:
        frame = numeric_part(read_data(args))
        return frame, tuple(str(c) for c in frame.columns)
    if args.dataset is not None:
        raise CLIError("give either DATA.csv or --dataset, not both.")
    path = Path(args.data)
    if not path.is_file():
        raise CLIError(f"data file {str(path)!r} does not exist or is not a file.")
    columns = None
    if args.columns:
        columns = [c.strip() for c in args.columns.split(",") if c.strip()]
    from .._io import read_numeric_file

    try:
        return read_numeric_file(path, columns)
    except pd.errors.EmptyDataError:
        raise CLIError(f"data file {str(path)!r} is empty.") from None
    except (pd.errors.ParserError, UnicodeDecodeError) as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise CLIError(f"data file {str(path)!r} is not a readable data file: {first}") from None
    except ImportError as exc:
        raise CLIError(str(exc)) from None


def progress_for(args: argparse.Namespace, n: int) -> Any:
    """The ``progress=`` value for the library: a stderr bar for long jobs, else None."""
    mode = getattr(args, "progress", "never")
    if mode == "never":
        return None
    if mode == "always":
        return True
    design = getattr(args, "design", "exact")
    if design == "balanced":
        m = args.m if args.m is not None else max(1, default_m(n))
        pairs = float(n) * m
    else:
        pairs = n * (n - 1) / 2.0
    return True if pairs >= _BAR_PAIRS[design] else None
