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

from collections.abc import Sequence
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from ._lazy import pandas as pd
from ._validation import _is_numeric_dtype

__all__ = ["read_numeric_file"]

_DEFAULT_CHUNK = 200_000


def read_numeric_file(
    path: str | Path,
    columns: Sequence[str] | None = None,
    *,
    chunksize: int = _DEFAULT_CHUNK,
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
    return _read_csv(path, columns, chunksize)


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
    path: Path, columns: Sequence[str] | None, chunksize: int
) -> tuple[NDArray[np.float64], tuple[str, ...]]:
    header = pd.read_csv(path, nrows=0).columns
    names = _check_columns([str(c) for c in header], columns)
    blocks: list[NDArray[np.float64]] = []
    with pd.read_csv(path, usecols=names, chunksize=chunksize) as reader:
        for frame in reader:
            frame = frame[names]
            if frame.shape[0] == 0:
                continue
            bad = [c for c in names if not _is_numeric_dtype(frame[c].dtype)]
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
