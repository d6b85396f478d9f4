"""CSV text that a spreadsheet cannot run: formula-like text cells escaped.

A cell whose text starts with ``=``, ``+``, ``-``, ``@``, a tab or a
carriage return is read by spreadsheet programs as a formula (OWASP "CSV
injection"); column names and labels come from the user's files, so every
table dppca writes as CSV (the app's downloads, the command line's output)
prefixes such text with ``'``. Numbers are left as numbers: ``-0.25`` in a
numeric column stays ``-0.25``.
"""

from __future__ import annotations

from typing import Any

from .core.lazy import pandas as pd

__all__ = ["formula_safe"]

_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def _escape_cell(value: Any) -> Any:
    if isinstance(value, str) and value.startswith(_FORMULA_START):
        return "'" + value
    return value


def formula_safe(frame: pd.DataFrame, *, index: bool = True) -> pd.DataFrame:
    """A copy of ``frame`` whose text cells, column names and (with ``index``)
    index entries cannot be read as spreadsheet formulas."""
    out = frame.copy()
    out.columns = [_escape_cell(str(c)) for c in out.columns]
    if index:
        names = [None if n is None else _escape_cell(str(n)) for n in out.index.names]
        if isinstance(out.index, pd.MultiIndex):
            out.index = pd.MultiIndex.from_tuples(
                [tuple(_escape_cell(v) for v in key) for key in out.index], names=names
            )
        else:
            out.index = pd.Index([_escape_cell(i) for i in out.index], name=names[0])
    for col in out.columns:
        if out[col].dtype == object or pd.api.types.is_string_dtype(out[col].dtype):
            out[col] = out[col].map(_escape_cell)
    return out
