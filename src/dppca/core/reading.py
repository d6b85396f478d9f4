"""Reading large numeric tables into one float64 array, chunk by chunk.

What is streamed, honestly: the file is parsed in chunks, so the parser's
DataFrame never holds more than ``chunksize`` rows, but the result is the whole
numeric table in memory (n x p float64), because the balanced design needs
random access to the rows. Peak memory is about one copy of that array plus
one chunk: CSV chunks are kept as float64 blocks and copied one at a time into
the final array (each block is freed once copied); for Parquet the row count
is known from the file's metadata, so batches are written straight into the
final array.
"""

from __future__ import annotations

import argparse
import os
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TypedDict

import numpy as np
from numpy.typing import NDArray

from .lazy import pandas as pd
from .tables import (
    MISSING_OPTION,
    TidyTable,
    check_missing,
    check_unique_columns,
    left_out_note,
    refuse_missing,
    tidy_table,
)
from .tempfiles import new_temporary

__all__ = [
    "add_csv_arguments",
    "check_csv_layout",
    "csv_options",
    "raw_header",
    "read_csv_checked",
    "read_numeric_file",
    "read_table_file",
    "sniff_csv_layout",
]

# A field written with a decimal comma: 3,14 or -0,5 or 1.234,5 (no other commas).
_DECIMAL_COMMA = re.compile(r"^\s*\"?[-+]?\d{1,3}(?:[.\s]?\d{3})*,\d+(?:[eE][-+]?\d+)?\"?\s*$")
_SNIFF_BYTES = 64 * 1024


def add_csv_arguments(parser: argparse.ArgumentParser) -> None:
    """``--sep`` and ``--decimal``: how a CSV file writes its fields and numbers."""
    parser.add_argument(
        "--sep",
        default=",",
        metavar="CHAR",
        help="field separator of the CSV file (default ','; many European files use ';')",
    )
    parser.add_argument(
        "--decimal",
        default=".",
        choices=(".", ","),
        metavar="MARK",
        help="decimal mark of the numbers in the CSV file: '.' (default) or ','",
    )


class CSVOptions(TypedDict):
    """Keyword arguments of the CSV readers: the field separator and decimal mark."""

    sep: str
    decimal: str


def csv_options(args: Any) -> CSVOptions:
    """``pandas.read_csv`` options from ``--sep``/``--decimal`` (defaults if absent)."""
    sep = getattr(args, "sep", None) or ","
    decimal = getattr(args, "decimal", None) or "."
    if sep == "\\t":
        sep = "\t"
    if len(sep) != 1:
        raise ValueError(f"--sep must be one character such as ';'; got {sep!r}.")
    if sep == decimal:
        raise ValueError(f"--sep and --decimal must differ; both are {sep!r}.")
    return {"sep": sep, "decimal": decimal}


def sniff_csv_layout(path: str | os.PathLike[str]) -> tuple[str, str]:
    """Guess ``(sep, decimal)`` of a CSV file from its first lines.

    Returns ``(";", ",")`` for the European layout (semicolons between fields,
    decimal commas), ``(";", ".")`` for semicolons with decimal points, and
    ``(",", ".")`` otherwise. Only the header and a few lines are looked at.
    """
    with open(path, "rb") as fh:
        head = fh.read(_SNIFF_BYTES).decode("utf-8", errors="replace")
    lines = [line for line in head.splitlines()[:21] if line.strip()]
    if not lines:
        return ",", "."
    header, rows = lines[0], lines[1:]
    semicolons = header.count(";")
    if semicolons == 0 or header.count(",") >= semicolons:
        return ",", "."
    fields = [f for row in rows for f in row.split(";")]
    commas = sum(bool(_DECIMAL_COMMA.match(f)) for f in fields)
    return ";", "," if fields and commas >= max(1, len(fields) // 4) else "."


def check_csv_layout(path: str | Path, sep: str = ",", decimal: str = ".") -> None:
    """Refuse, with the options that would read it, a CSV file whose layout is not
    the one given (for example a European file read with the default ``,``)."""
    guess_sep, guess_decimal = sniff_csv_layout(path)
    if sep == "," and guess_sep == ";":
        hint = "--sep ';'" + (" --decimal ','" if guess_decimal == "," else "")
        raise ValueError(
            f"data file {str(path)!r} looks semicolon-separated"
            + (" with decimal commas" if guess_decimal == "," else "")
            + f"; read it with {hint}."
        )
    if sep == ";" and decimal == "." and guess_decimal == ",":
        raise ValueError(
            f"data file {str(path)!r} seems to write numbers with decimal commas; "
            "read it with --decimal ','."
        )


_DEFAULT_CHUNK = 200_000


def read_numeric_file(
    path: str | Path,
    columns: Sequence[str] | None = None,
    *,
    chunksize: int = _DEFAULT_CHUNK,
    sep: str = ",",
    decimal: str = ".",
) -> tuple[NDArray[np.float64], tuple[str, ...]]:
    """Read the ``columns`` (default all) of a CSV or Parquet file as numbers.

    :func:`read_table_file` without dropping rows and without its notes:
    missing values are refused, booleans become 0/1, and a non-numeric
    column is refused if named in ``columns`` and left out otherwise.

    Returns
    -------
    data : ndarray of shape (n, p)
        C-contiguous float64.
    variables : tuple of str
    """
    table = read_table_file(path, columns, chunksize=chunksize, sep=sep, decimal=decimal)
    return table.data, table.variables


def read_table_file(
    path: str | Path,
    columns: Sequence[str] | None = None,
    *,
    chunksize: int = _DEFAULT_CHUNK,
    sep: str = ",",
    decimal: str = ".",
    missing: str = "refuse",
    option: str = MISSING_OPTION,
    dropna: bool = False,
) -> TidyTable:
    """Read a CSV or Parquet file in chunks through the one rule for messy tables.

    Parameters
    ----------
    path : str or Path
        A CSV file with a header row, or a ``.parquet``/``.pq`` file (needs
        ``pyarrow``).
    columns : sequence of str, optional
        Columns to keep, in this order; each must be numeric or boolean.
        Without it, non-numeric columns are left out with a note.
    chunksize : int, default=200000
        Rows parsed at a time.
    sep, decimal : str, default "," and "."
        Field separator and decimal mark of a CSV file; a file that looks
        like another layout is refused (see :func:`check_csv_layout`).
    missing : {"refuse", "zero"}, default="refuse"
        Refuse missing values in a kept column, or keep them as NaN cells for
        the zero-term rule (:func:`dppca.core.tables.check_missing`).
    option : str
        How the refusal of missing values names the option that analyses them.
    dropna : bool, default=False
        The old spelling of ``missing="zero"``.

    Returns
    -------
    TidyTable
        The data (C-contiguous float64, booleans as 0/1), the names, the notes.

    Raises
    ------
    ValueError
        Unknown columns, a file without rows, missing values under ``"refuse"``,
        column types that differ between chunks of a CSV file.
    TypeError
        A non-numeric column named in ``columns`` (naming it, never quoting values).
    ImportError
        A Parquet file without ``pyarrow`` installed.
    """
    path = Path(path)
    missing = check_missing(missing, dropna)
    if path.suffix.lower() in {".parquet", ".pq"}:
        return _read_parquet(path, columns, chunksize, missing=missing, option=option)
    check_csv_layout(path, sep, decimal)
    return _read_csv(
        path, columns, chunksize, sep=sep, decimal=decimal, missing=missing, option=option
    )


def _check_columns(available: Sequence[str], columns: Sequence[str] | None) -> list[str]:
    if columns is None:
        return [str(c) for c in available]
    missing = [c for c in columns if c not in available]
    if missing:
        raise ValueError(f"unknown column(s): {', '.join(missing)}.")
    return list(columns)


def _assemble(blocks: list[NDArray[np.float64]], p: int, path: Path) -> NDArray[np.float64]:
    """One C-contiguous array from the chunks' blocks, freeing each once copied."""
    n = sum(b.shape[0] for b in blocks)
    if n == 0:
        raise ValueError(f"data file {str(path)!r} has a header but no rows.")
    out = np.empty((n, p), dtype=np.float64)
    blocks.reverse()
    row = 0
    while blocks:
        block = blocks.pop()
        out[row : row + block.shape[0]] = block
        row += block.shape[0]
        del block
    return out


def _finish(
    data: NDArray[np.float64], names: tuple[str, ...], left_out: tuple[str, ...]
) -> TidyTable:
    """The file's table and the notes of the rule (no row is ever dropped)."""
    notes = [left_out_note(left_out)] if left_out else []
    return TidyTable(data, names, None, left_out, int(data.shape[0]), tuple(notes))


def _read_csv(
    path: Path,
    columns: Sequence[str] | None,
    chunksize: int,
    *,
    sep: str,
    decimal: str,
    missing: str,
    option: str,
) -> TidyTable:
    name = f"data file {str(path)!r}"
    check_unique_columns(raw_header(path, sep), name)
    header = pd.read_csv(path, nrows=0, sep=sep).columns
    wanted = _check_columns([str(c) for c in header], columns)
    blocks: list[NDArray[np.float64]] = []
    names: tuple[str, ...] | None = None
    left_out: tuple[str, ...] = ()
    # A column with no value in a chunk is read as numbers whatever it holds
    # elsewhere: it takes its kind from the first chunk that has a value in it.
    undecided: set[str] = set()
    with pd.read_csv(
        path, usecols=wanted, chunksize=chunksize, sep=sep, decimal=decimal
    ) as reader:
        for frame in reader:
            frame = frame[wanted]
            if frame.shape[0] == 0:
                continue
            numbers = set() if names is None else set(names)
            blank = {c for c in frame.columns if c not in numbers and frame[c].isna().all()}
            if names is None:
                undecided = set(blank)
            part = tidy_table(
                frame.drop(columns=sorted(blank)),
                missing=missing,
                chosen=columns is not None,
                min_cols=0,
                name=name,
                option=option,
            )
            if names is not None:
                _check_same_kinds(part, names, left_out, undecided, name, missing, option)
                left_out = (*left_out, *(c for c in part.left_out if c not in left_out))
                undecided -= {*part.variables, *part.left_out}
            else:
                names, left_out = part.variables, part.left_out
            blocks.append(part.data)
            del frame, part
    if names is None:
        raise ValueError(f"{name} has a header but no rows.")
    if undecided:  # no value in the whole file: every row misses one
        _refuse_blank(sorted(undecided), name, missing, option)
    return _finish(_assemble(blocks, len(names), path), names, left_out)


def _check_same_kinds(
    part: TidyTable,
    names: tuple[str, ...],
    left_out: tuple[str, ...],
    undecided: set[str],
    name: str,
    missing: str,
    option: str,
) -> None:
    """A later chunk must give every column the kind the earlier chunks gave it.

    A column blank in the earlier chunks (``undecided``) may turn out to be
    text (left out from the start); as numbers, its blank rows were missing
    values all along, which a chunked read cannot add to the earlier chunks.
    """
    late = [c for c in part.variables if c in undecided]
    if late:
        _refuse_blank(late, name, missing, option)
    if part.variables != names or not set(part.left_out) <= {*left_out, *undecided}:
        raise ValueError(
            f"{name} has column(s) whose type changes within the file (numbers in "
            "some rows, text in others); fix their values or leave them out."
        )


def _refuse_blank(columns: Sequence[str], name: str, missing: str, option: str) -> None:
    """Refuse numeric columns that are blank over whole chunks of a chunked read."""
    shown = ", ".join(repr(c) for c in columns)
    if missing != "zero":
        raise ValueError(
            f"{name} has missing values (NaN, None, pd.NA or cells that are not numbers) "
            f"in column(s) {shown}; impute them, or {option} to analyse the table with "
            "each missing cell adding nothing to its pairs' terms."
        )
    raise ValueError(
        f"{name} has column(s) {shown} with no value in its first rows; read it in one "
        "piece (the exact design) or leave them out with the column choice."
    )


def raw_header(path: str | os.PathLike[str], sep: str) -> list[str]:
    """The header's names as written (pandas renames a repeated ``a`` to ``a.1``)."""
    import csv

    with open(path, newline="", encoding="utf-8", errors="replace") as fh:
        return [name.strip() for name in next(csv.reader(fh, delimiter=sep), [])]


def read_csv_checked(path: str | Path, *, sep: str = ",", decimal: str = ".") -> pd.DataFrame:
    """``pandas.read_csv`` with the layout check and repeated column names refused."""
    check_csv_layout(path, sep, decimal)
    check_unique_columns(raw_header(path, sep), f"data file {str(path)!r}")
    return pd.read_csv(path, sep=sep, decimal=decimal)


def _read_parquet(
    path: Path, columns: Sequence[str] | None, chunksize: int, *, missing: str, option: str
) -> TidyTable:
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        raise ImportError(
            "reading Parquet files needs pyarrow; install it with pip install 'dppca[parquet]' "
            "or convert the file to CSV."
        ) from None
    name = f"data file {str(path)!r}"
    handle = pq.ParquetFile(path)
    schema = handle.schema_arrow
    wanted = _check_columns(schema.names, columns)
    types = {c: schema.field(c).type for c in wanted}
    kinds = (pa.types.is_integer, pa.types.is_floating, pa.types.is_boolean)
    numbers = [c for c in wanted if any(is_kind(types[c]) for is_kind in kinds)]
    other = tuple(c for c in wanted if c not in numbers)
    if other and columns is not None:
        raise TypeError(
            f"{name} has non-numeric column(s) {', '.join(map(repr, other))} (text, categories "
            "or other non-numbers); choose numeric columns, or encode them as numbers first."
        )
    n = handle.metadata.num_rows
    if n == 0:
        raise ValueError(f"{name} has no rows.")
    out = np.empty((n, len(numbers)), dtype=np.float64)
    row = 0
    for batch in handle.iter_batches(batch_size=chunksize, columns=numbers):
        block = np.empty((batch.num_rows, len(numbers)), dtype=np.float64)
        for j, c in enumerate(numbers):  # booleans as 0/1, missing cells as NaN
            block[:, j] = batch.column(c).cast(pa.float64()).to_numpy(zero_copy_only=False)
        refuse_missing(block, tuple(numbers), missing=missing, name=name, option=option)
        out[row : row + block.shape[0]] = block
        row += block.shape[0]
    return _finish(out[:row], tuple(numbers), other)


def write_text_atomically(path: str | os.PathLike[str], text: str) -> Path:
    """Write ``text`` to ``path`` so that a reader never sees a partial file.

    The text goes to a temporary file beside the target, which is then moved
    into place with ``os.replace`` (atomic); on any failure it is removed and
    an existing target is left untouched. The file gets the usual mode
    (``mkstemp`` would leave it readable by its owner only).
    """
    target = Path(path)
    directory = target.parent if str(target.parent) else Path(".")
    if not directory.is_dir():
        raise ValueError(f"output directory {str(directory)!r} does not exist.")
    fd, tmp = new_temporary(target)  # removes what a killed writer left first
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return target
