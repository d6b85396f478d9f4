"""Pieces shared by the ``dppca`` subcommands: data input, privacy options, safe output.

What the commands write (stderr messages, atomic files, tables, figures and
release files) lives in :mod:`dppca.cli._output`.
"""

from __future__ import annotations

import argparse
import math
import os
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal, overload

import numpy as np

from ..core.lazy import pandas as pd
from ..core.reading import add_csv_arguments
from ..core.tables import MISSING_RULES, tidy_table
from ..datasets import DATASETS, load_dataset
from ._ledger import read_table
from ._output import (
    note,
)
from ._reading import MISSING, read_chunked
from ._safety import CLIError

__all__ = [
    "add_data_arguments",
    "add_design_arguments",
    "add_privacy_arguments",
    "add_scale_argument",
    "add_ties_argument",
    "apply_scale",
    "build_options",
    "join_signed_values",
    "parse_int_list",
    "private_scale",
    "progress_for",
    "read_data",
    "read_design_input",
]


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
        help="comma-separated columns to analyse (default: all numeric columns; others are "
        "left out with a note)",
    )
    parser.add_argument(
        "--exclude",
        default=None,
        metavar="A,B,...",
        help="comma-separated columns to leave out (an ID column, for example)",
    )
    parser.add_argument(
        "--missing",
        choices=MISSING_RULES,
        default="refuse",
        help="missing values (empty cells, or cells of a numeric column that are not "
        "numbers): refuse them (default), or 'zero': a missing cell adds nothing to a pair's "
        "term, n stays the number of rows and the cost is unchanged",
    )
    parser.add_argument(  # the old spelling, kept working
        "--dropna",
        dest="missing",
        action="store_const",
        const="zero",
        help=argparse.SUPPRESS,
    )
    add_csv_arguments(parser)  # --sep, --decimal
    parser.set_defaults(default_dataset=default_dataset)


def add_privacy_arguments(parser: argparse.ArgumentParser, *, required: bool = True) -> None:
    """``--eps``, ``--delta``, ``--calibration`` and ``--seed``.

    With ``required=False`` the command checks ``--eps``/``--delta`` itself
    (``loading --directions`` spends nothing and needs neither).
    """
    parser.add_argument(
        "--eps", type=float, required=required, help="privacy parameter epsilon > 0"
    )
    parser.add_argument(
        "--delta", type=float, required=required, help="privacy parameter delta in (0, 1)"
    )
    parser.add_argument(
        "--calibration",
        choices=("analytic", "classic"),
        default="analytic",
        help="Gaussian noise calibration (analytic is exact for every eps)",
    )
    parser.add_argument(
        "--seed",
        type=int,
        default=None,
        help="seed for reproducible noise; a seed lets anyone who knows it remove the "
        "noise, so omit it (fresh OS entropy) for a release you publish",
    )


@overload
def parse_int_list(text: str, name: str, *, length: Literal[2]) -> tuple[int, int]: ...
@overload
def parse_int_list(text: str, name: str, *, length: int | None = None) -> tuple[int, ...]: ...
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
            frame = read_table(path, args)  # CSV, or Parquet (as --design balanced reads)
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
    excluded = _names(getattr(args, "exclude", None))
    if excluded:
        missing = [c for c in excluded if c not in frame.columns]
        if missing:
            raise CLIError(f"--exclude names unknown column(s): {', '.join(missing)}.")
        if any(c in keep for c in excluded):
            raise CLIError("--exclude names a column the command needs (the --groups column).")
        frame = frame.drop(columns=excluded)
    return frame


def _names(text: str | None) -> list[str]:
    return [c.strip() for c in text.split(",") if c.strip()] if text else []


def numeric_part(
    frame: pd.DataFrame,
    *,
    drop: tuple[str, ...] = (),
    chosen: bool = False,
    missing: str = "refuse",
) -> pd.DataFrame:
    """The columns to analyse, through the one rule for messy tables.

    :func:`dppca.core.tables.tidy_table` decides, as for the library and the app:
    booleans become 0/1, non-numeric columns are left out with a note on stderr
    (refused when named by ``--columns``, ``chosen=True``), and missing values are
    refused or, with ``--missing zero``, kept as NaN cells. The columns in ``drop``
    (the ``--groups`` column) are not analysed, so they drop no row. The result
    keeps the index of the rows kept. Column types are part of the table's
    layout, not of its values, so the notes reveal nothing private.
    """
    data = frame.drop(columns=[c for c in drop if c in frame.columns])
    try:
        table = tidy_table(
            data, missing=missing, chosen=chosen, min_cols=2, name="the table", option=MISSING
        )
    except TypeError as exc:
        raise CLIError(f"{exc} Choose the columns with --columns or --exclude.") from None
    for message in table.notes:
        note(message)
    return pd.DataFrame(table.data, columns=list(table.variables), index=data.index)


def add_ties_argument(parser: argparse.ArgumentParser) -> None:
    """``--ties``: what the private directions do with (almost) coinciding rows."""
    parser.add_argument(
        "--ties",
        choices=("zero", "error"),
        default="zero",
        help="duplicate rows (a difference that cannot be normalised): let them contribute "
        "nothing (default) or stop with an error (which reveals that duplicates exist)",
    )


# The CLI draws a progress bar when the pair sum is expected to take more than a couple
# of seconds on one core (measured with benchmarks/bench_balanced.py and bench_kendall.py:
# roughly 1e8 pairs/s for the exact design at p = 20, 1e7 pairs/s for the balanced one).
_BAR_PAIRS = {"exact": 2e8, "balanced": 2e7}


def add_design_arguments(parser: argparse.ArgumentParser, *, progress: bool = True) -> None:
    """``--design``, ``--m`` (and ``--progress``) for subcommands that release directions.

    ``--design`` left out is the library's rule
    (:func:`dppca.kernels.kendall.default_design`), as ``design=None``.
    """
    parser.add_argument(
        "--design",
        choices=("exact", "balanced"),
        default=None,
        help="pairs in the Kendall matrix: all of them (exact), or a random balanced design "
        "of n*m pairs for very large files (same privacy cost). Default: the library's "
        "rule, exact up to n(n-1)/2*p = 1e11 pair-columns, balanced above (--dry-run says "
        "which)"
        + (
            "; with an explicit 'balanced' a CSV or Parquet file is read in chunks"
            if progress
            else ""
        ),
    )
    parser.add_argument(
        "--m",
        type=int,
        default=None,
        metavar="M",
        help="partners per row in the balanced design (default min(20, (n-1)//2))",
    )
    if not progress:
        return
    parser.add_argument(
        "--progress",
        choices=("auto", "always", "never"),
        default="auto",
        help="progress bar on stderr: only for long computations (auto), always or never",
    )


def build_options(kind: str, args: argparse.Namespace, **settings: Any) -> Any:
    """The option objects of a release of ``kind``, built and checked once.

    A :class:`~dppca.core.options.PrivacyOptions` from the shared options
    (``--eps``, ``--delta``, ``--calibration``, ``--ties``, ``--accuracy``,
    ``--missing``) and ``settings``, then one object per option class of the
    kind's entry in :data:`dppca._kinds.KINDS` from ``settings`` and the pair
    design every command takes (``--design``, ``--m``); plans take
    these (``plan_x_options``) and never check them again, and steps that
    re-plan derive theirs with ``evolve``.
    """
    from .._kinds import load, release_kind
    from ..core.options import split_settings

    classes = [load(name) for name in release_kind(kind).options]
    shared = {"eps": args.eps, "delta": args.delta, "calibration": args.calibration}
    shared |= {"ties": getattr(args, "ties", "zero"), "accuracy": args.accuracy}
    shared |= {"missing": args.missing, "design": args.design, "m": args.m}
    return split_settings(f"dppca {kind}", {**shared, **settings}, *classes)


def read_design_input(args: argparse.Namespace) -> tuple[Any, tuple[str, ...]]:
    """The numeric data to analyse and its column names.

    With ``--design balanced`` and a file argument, the file is parsed in chunks
    straight into one float64 array (CSV, or Parquet with pyarrow), so no
    DataFrame of the whole table is ever held; otherwise :func:`read_data`.
    """
    if getattr(args, "design", "exact") != "balanced" or args.data is None:
        frame = numeric_part(read_data(args), chosen=bool(args.columns), missing=args.missing)
        return frame, tuple(str(c) for c in frame.columns)
    if args.dataset is not None:
        raise CLIError("give either DATA.csv or --dataset, not both.")
    path = Path(args.data)
    if not path.is_file():
        raise CLIError(f"data file {str(path)!r} does not exist or is not a file.")
    columns = None
    if args.columns:
        columns = [c.strip() for c in args.columns.split(",") if c.strip()]
    excluded = _names(getattr(args, "exclude", None))
    if excluded:
        if columns is None:
            try:
                columns = [str(c) for c in pd.read_csv(path, nrows=0).columns]
            except (ValueError, UnicodeDecodeError):
                raise CLIError(
                    "--exclude with --design balanced needs a CSV file; name the columns "
                    "with --columns instead."
                ) from None
        missing = [c for c in excluded if c not in columns]
        if missing:
            raise CLIError(f"--exclude names unknown column(s): {', '.join(missing)}.")
        columns = [c for c in columns if c not in excluded]
    return read_chunked(args, path, columns)


def progress_for(args: argparse.Namespace, n: int, p: int) -> Any:
    """The ``progress=`` value for the library: a stderr bar for long jobs, else None."""
    from ..core.validation import default_m
    from ..kernels.kendall import default_design

    mode = getattr(args, "progress", "never")
    if mode == "never":
        return None
    if mode == "always":
        return True
    rule = default_design(n, p) if getattr(args, "estimator", "kendall") == "kendall" else "exact"
    design = getattr(args, "design", None) or rule
    if design == "balanced":
        m = args.m if args.m is not None else max(1, default_m(n))
        pairs = float(n) * m
    else:
        pairs = n * (n - 1) / 2.0
    return True if pairs >= _BAR_PAIRS[design] else None


# --------------------------------------------------------------------------- scales


def add_scale_argument(parser: argparse.ArgumentParser) -> None:
    """``--scale S1,S2,...``: public per-column scales, or ``private``."""
    parser.add_argument(
        "--scale",
        default=None,
        metavar="S1,S2,...|private",
        help="public per-column scales to divide the data by before the analysis (one "
        "positive number per analysed column; choose them without looking at the data, "
        "never sample standard deviations), or 'private' to release the scales "
        "privately from half of --eps",
    )


def private_scale(args: argparse.Namespace) -> Literal["private"] | None:
    """``"private"`` when ``--scale private`` was given, else None."""
    return "private" if getattr(args, "scale", None) == "private" else None


def parse_scales(text: str, columns: list[str]) -> np.ndarray:
    """``--scale`` as an array with one positive value per analysed column."""
    try:
        values = np.array([float(part) for part in text.split(",")])
    except ValueError:
        raise CLIError(
            f"--scale must be comma-separated positive numbers; got {text!r}."
        ) from None
    if values.size != len(columns):
        raise CLIError(
            f"--scale needs one value per analysed column ({len(columns)}); got {values.size}."
        )
    if not all(math.isfinite(v) and v > 0 for v in values):
        raise CLIError("--scale values must be finite and > 0.")
    return values


def apply_scale(args: argparse.Namespace, data: Any, variables: tuple[str, ...]) -> Any:
    """The data divided by the public ``--scale`` values (unchanged without the option).

    ``--scale private`` leaves the data as they are: the command's plan
    releases the scales.
    """
    if getattr(args, "scale", None) in (None, "private"):
        return data
    return data / parse_scales(args.scale, list(variables))


# --------------------------------------------------------------------------- bounds


def add_accuracy_arguments(parser: argparse.ArgumentParser) -> None:
    """``--bounds``, ``--accuracy`` and ``--dry-run``: public domains and the forecast."""
    parser.add_argument(
        "--bounds",
        default=None,
        metavar="FILE.csv|SPEC",
        help="public data domain: a CSV file with columns variable,lower,upper, or inline "
        "'lo:hi' for every column or 'name=lo:hi,name=lo:hi' naming every analysed column. "
        "Values outside are clipped to it. Take bounds from a codebook or the units, never "
        "from the data (in the data's own units: before --scale)",
    )
    parser.add_argument(
        "--accuracy",
        choices=("warn", "error", "ignore"),
        default="warn",
        help="when the data-free forecast says the picture would be noise: warn and release "
        "(default), refuse before reading the data's values (error), or say nothing",
    )
    parser.add_argument(
        "--dry-run",
        action="store_true",
        help="print the cost and the accuracy forecast only; nothing is released or spent",
    )


# Options whose value may start with a minus sign (a negative lower bound).
_SIGNED_OPTIONS = frozenset({"--bounds"})
_NEGATIVE = re.compile(r"-[0-9.]")


def join_signed_values(argv: Sequence[str]) -> list[str]:
    """``--bounds -20:20`` as ``--bounds=-20:20``.

    argparse reads a word starting with ``-`` as an option unless it is a
    plain negative number, so ``-20:20`` would be refused; a value that
    starts with a minus sign and a digit is joined to its option first.
    """
    out: list[str] = []
    words = list(argv)
    i = 0
    while i < len(words):
        word = words[i]
        if word in _SIGNED_OPTIONS and i + 1 < len(words) and _NEGATIVE.match(words[i + 1]):
            out.append(f"{word}={words[i + 1]}")
            i += 2
            continue
        out.append(word)
        i += 1
    return out


def _parse_interval(text: str, where: str) -> tuple[float, float]:
    try:
        lo, hi = (float(v) for v in text.split(":"))
    except ValueError:
        raise CLIError(f"--bounds: {where} must be lower:upper numbers; got {text!r}.") from None
    return lo, hi


def read_bounds(args: argparse.Namespace, variables: tuple[str, ...]) -> Any:
    """``--bounds`` as a mapping {variable: (lower, upper)} in the analysed units, or None.

    The bounds are given in the data's own units; with ``--scale`` they are divided
    by the same public scales as the data.
    """
    spec = getattr(args, "bounds", None)
    if spec is None:
        return None
    if os.path.exists(spec) or spec.lower().endswith(".csv"):
        try:
            frame = pd.read_csv(spec)
        except (OSError, ValueError) as exc:
            raise CLIError(f"--bounds file could not be read: {exc}") from None
        missing = {"variable", "lower", "upper"} - set(frame.columns)
        if missing:
            raise CLIError("--bounds file needs the columns variable, lower, upper.")
        repeated = sorted({str(v) for v in frame["variable"][frame["variable"].duplicated()]})
        if repeated:
            raise CLIError(
                f"--bounds file names {', '.join(map(repr, repeated))} more than once; give "
                "each variable one row."
            )
        try:
            bounds = {
                str(v): (float(lo), float(hi))
                for v, lo, hi in zip(
                    frame["variable"], frame["lower"], frame["upper"], strict=True
                )
            }
        except (TypeError, ValueError):
            raise CLIError("--bounds file: lower and upper must be numbers.") from None
        bounds = {v: b for v, b in bounds.items() if v in variables} or bounds
    elif "=" in spec:
        bounds = {}
        for item in spec.split(","):
            name, _, interval = item.partition("=")
            if name.strip() in bounds:
                raise CLIError(f"--bounds names {name.strip()!r} twice; give each variable once.")
            bounds[name.strip()] = _parse_interval(interval.strip(), repr(name.strip()))
    else:
        lo, hi = _parse_interval(spec.strip(), "the interval")
        bounds = {v: (lo, hi) for v in variables}
    if getattr(args, "scale", None) not in (None, "private"):
        scales = dict(zip(variables, parse_scales(args.scale, list(variables)), strict=True))
        bounds = {
            v: (lo / scales.get(v, 1.0), hi / scales.get(v, 1.0)) for v, (lo, hi) in bounds.items()
        }
    return bounds
