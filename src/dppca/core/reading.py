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
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TypedDict

import numpy as np
from numpy.typing import NDArray

from .lazy import pandas as pd
from .validation import check_unique_columns, is_numeric_dtype

__all__ = [
    "add_csv_arguments",
    "check_csv_layout",
    "csv_options",
    "raw_header",
    "read_csv_checked",
    "read_numeric_file",
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
    """Read the numeric ``columns`` (default all) of a CSV or Parquet file.

    Parameters
    ----------
    path : str or Path
        A CSV file with a header row, or a ``.parquet``/``.pq`` file (needs
        ``pyarrow``).
    columns : sequence of str, optional
        Columns to keep, in this order. Every kept column must be numeric.
    chunksize : int, default=200000
        Rows parsed at a time.
    sep, decimal : str, default "," and "."
        Field separator and decimal mark of a CSV file; a file that looks
        like another layout is refused (see :func:`check_csv_layout`).

    Returns
    -------
    data : ndarray of shape (n, p)
        C-contiguous float64; missing values become NaN (rejected later by the
        analysis, as for any other input).
    variables : tuple of str

    Raises
    ------
    ValueError
        Unknown columns, a file without rows.
    TypeError
        A non-numeric column (naming it, never quoting values).
    ImportError
        A Parquet file without ``pyarrow`` installed.
    """
    path = Path(path)
    if path.suffix.lower() in {".parquet", ".pq"}:
        return _read_parquet(path, columns, chunksize)
    check_csv_layout(path, sep, decimal)
    return _read_csv(path, columns, chunksize, sep=sep, decimal=decimal)


def _check_columns(available: Sequence[str], columns: Sequence[str] | None) -> list[str]:
    if columns is None:
        return [str(c) for c in available]
    missing = [c for c in columns if c not in available]
    if missing:
        raise ValueError(f"unknown column(s): {', '.join(missing)}.")
    return list(columns)


def _non_numeric(names: Sequence[str]) -> TypeError:
    shown = ", ".join(repr(c) for c in names[:5]) + (" ..." if len(names) > 5 else "")
    return TypeError(f"non-numeric column(s) {shown}; choose numeric columns.")


def _read_csv(
    path: Path, columns: Sequence[str] | None, chunksize: int, *, sep: str, decimal: str
) -> tuple[NDArray[np.float64], tuple[str, ...]]:
    check_unique_columns(raw_header(path, sep), f"data file {str(path)!r}")
    header = pd.read_csv(path, nrows=0, sep=sep).columns
    names = _check_columns([str(c) for c in header], columns)
    blocks: list[NDArray[np.float64]] = []
    with pd.read_csv(path, usecols=names, chunksize=chunksize, sep=sep, decimal=decimal) as reader:
        for frame in reader:
            frame = frame[names]
            if frame.shape[0] == 0:
                continue
            bad = [c for c in names if not is_numeric_dtype(frame[c].dtype)]
            if bad:
                raise _non_numeric(bad)
            blocks.append(frame.to_numpy(dtype=np.float64, na_value=np.nan))
            del frame
    n = sum(b.shape[0] for b in blocks)
    if n == 0:
        raise ValueError(f"data file {str(path)!r} has a header but no rows.")
    out = np.empty((n, len(names)), dtype=np.float64)
    blocks.reverse()
    row = 0
    while blocks:
        block = blocks.pop()
        out[row : row + block.shape[0]] = block
        row += block.shape[0]
        del block
    return out, tuple(names)


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
    path: Path, columns: Sequence[str] | None, chunksize: int
) -> tuple[NDArray[np.float64], tuple[str, ...]]:
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        raise ImportError(
            "reading Parquet files needs pyarrow; install it with pip install 'dppca[parquet]' "
            "or convert the file to CSV."
        ) from None
    handle = pq.ParquetFile(path)
    schema = handle.schema_arrow
    names = _check_columns(schema.names, columns)
    bad = [
        c
        for c in names
        if not (
            pa.types.is_integer(schema.field(c).type) or pa.types.is_floating(schema.field(c).type)
        )
    ]
    if bad:
        raise _non_numeric(bad)
    n = handle.metadata.num_rows
    if n == 0:
        raise ValueError(f"data file {str(path)!r} has no rows.")
    out = np.empty((n, len(names)), dtype=np.float64)
    row = 0
    for batch in handle.iter_batches(batch_size=chunksize, columns=names):
        size = batch.num_rows
        for j, name in enumerate(names):
            column = batch.column(name).to_numpy(zero_copy_only=False)
            out[row : row + size, j] = column
        row += size
    return out, tuple(names)


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
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=directory)
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
