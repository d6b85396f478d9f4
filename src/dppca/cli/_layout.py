"""A plain CSV file's layout (n, analysed columns) for ``--dry-run``, without pandas.

A dry run prices a release from public facts alone: the number of rows and the
names of the analysed columns. Importing pandas to learn them costs about half a
CPU-second, more than the rest of the command, so for a small, plain CSV file
(optionally gzipped) they are read here with the standard library. The file
must be one the full reader (:func:`dppca.core.reading.read_csv_checked` and
:func:`dppca.core.tables.tidy_table`) reads the same way beyond doubt: every
cell of a numeric column a plain decimal number, every cell of a left-out
column text that no reader takes for a number, no empty or missing-value
cell, no repeated or empty header name, and every row as long as the header.
Anything else (and any option that selects or rescales columns) returns None,
and the command reads the table as a release would, with its notes and errors.
tests/test_cli_dry_run.py checks that both ways print the same plan.
"""

from __future__ import annotations

import argparse
import csv
import gzip
import re
from pathlib import Path

from ..core.tables import left_out_note
from ._output import note

__all__ = ["quick_layout"]

#: Files above this size are read by pandas (parsing cell by cell here would be slower).
MAX_BYTES = 2_000_000

# A cell every CSV reader takes for the same finite number (no spaces, no inf or
# nan, no digit separators); integers of at most 15 digits, so int64 holds them.
_NUMBER = re.compile(r"[+-]?(?:\d{1,15}|\d*\.\d+|\d+\.\d*)(?:[eE][+-]?\d{1,2})?\Z")
# A cell that some reader could take for a number, a boolean or a missing value.
_AMBIGUOUS = re.compile(
    r"(?i)\A\s*(?:|[+-]?(?:inf(?:inity)?|nan)|n/?a|#n/?a.*|null|none|<na>|true|false|"
    r"[+-]?1\.#(?:ind|qnan)|#na)\s*\Z"
)


def quick_layout(args: argparse.Namespace) -> tuple[int, tuple[str, ...]] | None:
    """``(n, analysed column names)`` of the command's CSV file, or None to read it fully.

    Prints the note on left-out non-numeric columns that the full reader
    would print.
    """
    if (
        args.data is None
        or getattr(args, "dataset", None) is not None
        or getattr(args, "columns", None)
        or getattr(args, "exclude", None)
        or getattr(args, "scale", None) not in (None, "private")
        or (getattr(args, "sep", None) or ",") != ","
        or (getattr(args, "decimal", None) or ".") != "."
    ):
        return None
    path = Path(args.data)
    name = path.name.lower()
    try:
        if not path.is_file() or path.stat().st_size > MAX_BYTES:
            return None
        if name.endswith(".csv"):
            with open(path, newline="", encoding="utf-8") as fh:
                return _layout(fh)
        if name.endswith(".csv.gz"):
            with gzip.open(path, "rt", newline="", encoding="utf-8") as fh:
                return _layout(fh)
    except (OSError, UnicodeDecodeError, csv.Error, EOFError, ValueError):
        return None
    return None


def _layout(fh: object) -> tuple[int, tuple[str, ...]] | None:
    reader = csv.reader(fh)  # type: ignore[arg-type]
    header = next(reader, None)
    if not header or header[0].startswith("\ufeff"):
        return None
    names = tuple(header)
    if any(not c or c != c.strip() for c in names) or len(set(names)) != len(names):
        return None
    numeric = [True] * len(names)
    text = [True] * len(names)
    n = 0
    for row in reader:
        if not row:
            continue  # a blank line, which readers skip
        if len(row) != len(names):
            return None
        n += 1
        for j, cell in enumerate(row):
            if _NUMBER.match(cell):
                text[j] = False
            else:
                numeric[j] = False
                if _AMBIGUOUS.match(cell) or _parses(cell):
                    return None
    if n == 0 or not all(a or b for a, b in zip(numeric, text, strict=True)):
        return None
    kept = tuple(c for c, is_number in zip(names, numeric, strict=True) if is_number)
    left_out = tuple(c for c, is_number in zip(names, numeric, strict=True) if not is_number)
    if len(kept) < 2:
        return None  # the full reader explains the refusal
    if left_out:
        note(left_out_note(left_out))
    return n, kept


def _parses(cell: str) -> bool:
    try:
        float(cell.replace(",", "."))
    except ValueError:
        return False
    return True
