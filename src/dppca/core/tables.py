"""The one rule for messy tables, applied by every face (library, command line, app).

What a table's columns and cells become before any analysis:

- **numbers** (integer and float columns, nullable ``Int64``/``Float64``
  included) are analysed as float64;
- **booleans** (``bool``, nullable ``boolean``, or an object column holding
  only ``True``/``False`` and missing cells, as a CSV column with gaps is
  read) are analysed as 0.0/1.0;
- **every other column** (text, ``string``, ``category``, dates, complex
  numbers) is left out, with a note naming it. A column the caller chose by
  name (``chosen=True``: ``--columns`` on the command line, the app's column
  list) is refused instead, since the caller asked for it;
- **missing values** (NaN, None, ``pd.NA``) in the analysed columns are
  refused, with a message naming the option that handles them, unless
  ``dropna=True``: then the rows with a missing value in an analysed column
  are dropped, and the count of the complete rows is treated as public (it is
  the ``n`` every plan is priced with). Infinite values are not missing:
  they are refused either way.

Columns that are not analysed (a group column taken out first, a text column
left out) never cause a row to be dropped. Which columns are numbers,
booleans or text is a fact of the table's layout (its schema), as public as
the column names, so the notes may state it; they never quote a value.
"""

from __future__ import annotations

import numbers
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
from numpy.typing import NDArray

from .lazy import is_dataframe, is_series
from .lazy import pandas as pd

__all__ = [
    "TidyTable",
    "check_unique_columns",
    "column_kind",
    "drop_missing",
    "left_out_note",
    "missing_note",
    "tidy_table",
]

ColumnKind = Literal["number", "boolean", "other"]

#: How the library names the option that drops incomplete rows; the command
#: line and the app pass their own wording (``pass --dropna``, a checkbox).
DROPNA_OPTION = "pass dropna=True"


def column_kind(column: Any) -> ColumnKind:
    """Whether a pandas column is analysed as a number, as a 0/1 boolean, or left out."""
    dtype = column.dtype
    api = pd.api.types
    if api.is_bool_dtype(dtype):
        return "boolean"
    if api.is_numeric_dtype(dtype) and not api.is_complex_dtype(dtype):
        return "number"
    if api.is_object_dtype(dtype):
        present = column[column.notna()]
        if len(present) and present.map(lambda v: isinstance(v, bool | np.bool_)).all():
            return "boolean"
        # Integers beyond int64 (pandas keeps them as Python ints) are numbers.
        if len(present) and present.map(_is_real).all():
            return "number"
    return "other"


def _is_real(value: object) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool | np.bool_)


def check_unique_columns(columns: Sequence[object], name: str = "X") -> None:
    """Refuse repeated column names (a table with two columns called 'a' is ambiguous)."""
    seen: set[str] = set()
    repeated = []
    for c in columns:
        key = str(c)
        if key in seen and key not in repeated:
            repeated.append(key)
        seen.add(key)
    if repeated:
        raise ValueError(
            f"{name} has repeated column names ({_shown(repeated)}); rename them first."
        )


def _shown(names: list[str] | tuple[str, ...]) -> str:
    return ", ".join(repr(c) for c in names[:5]) + (" ..." if len(names) > 5 else "")


def left_out_note(names: tuple[str, ...]) -> str:
    """The note for non-numeric columns left out of the analysis."""
    return (
        f"left out non-numeric column(s) {_shown(names)} (text, categories or other "
        "non-numbers); encode them as numbers to analyse them."
    )


def missing_note(n_kept: int) -> str:
    """The note for incomplete rows dropped on request.

    It states the count of complete rows only (treated as public), not how
    many rows were dropped: that count is a statistic of the data.
    """
    return (
        f"kept the {n_kept} complete rows (rows with a missing value in an analysed column "
        "were dropped); that count is treated as public: it is the n of the release."
    )


def drop_missing(
    data: NDArray[np.float64],
    variables: tuple[str, ...],
    *,
    dropna: bool,
    name: str = "X",
    option: str = DROPNA_OPTION,
) -> tuple[NDArray[np.float64], NDArray[np.bool_] | None]:
    """Refuse missing values (NaN) or, with ``dropna``, drop the rows holding one.

    Returns the data (the same array when nothing is dropped) and the mask of
    the rows kept (None when all are). The refusal names the columns with a
    gap and the option that handles them, never a value or a row.
    """
    missing = np.isnan(data)
    if not missing.any():
        return data, None
    if not dropna:
        cols = [variables[j] for j in np.flatnonzero(missing.any(axis=0))]
        raise ValueError(
            f"{name} has missing values (NaN, None or pd.NA) in column(s) {_shown(cols)}; "
            f"impute them, or {option} to analyse the complete rows only (their count is "
            "then treated as public: it becomes the n of the release)."
        )
    kept: NDArray[np.bool_] = np.asarray(~missing.any(axis=1), dtype=np.bool_)
    return np.ascontiguousarray(data[kept]), kept


@dataclass(frozen=True, eq=False, repr=False)
class TidyTable:
    """A table after the rule: the analysed columns as float64, complete rows only.

    Attributes
    ----------
    data : ndarray of shape (n, p)
        C-contiguous float64 (booleans as 0/1); the caller's object is untouched
        unless it was already such an array and ``copy=False`` was asked.
    variables : tuple of str
        The analysed columns, in the table's order.
    kept : ndarray of bool or None
        Which rows of the table as read were kept (None: all of them).
    left_out : tuple of str
        Non-numeric columns left out.
    n_read : int
        Rows of the table as read.
    notes : tuple of str
        What the rule did, worded for the user (the same on every face).
    """

    data: NDArray[np.float64]
    variables: tuple[str, ...]
    kept: NDArray[np.bool_] | None
    left_out: tuple[str, ...]
    n_read: int
    notes: tuple[str, ...]

    @property
    def n(self) -> int:
        """Rows analysed (the complete rows with ``dropna=True``)."""
        return int(self.data.shape[0])

    def rows(self, values: Any) -> Any:
        """One entry per kept row of a sequence aligned with the table's rows (labels)."""
        if values is None or self.kept is None:
            return values
        arr = values if isinstance(values, np.ndarray) else np.asarray(values, dtype=object)
        if arr.ndim != 1 or arr.shape[0] != self.kept.shape[0]:
            return values  # not aligned: the caller's own check reports it
        return arr[self.kept]


def tidy_table(
    X: object,
    *,
    dropna: bool = False,
    chosen: bool = False,
    min_cols: int = 1,
    name: str = "X",
    option: str = DROPNA_OPTION,
    copy: bool = True,
) -> TidyTable:
    """Apply the rule (see the module docstring) to an array or a DataFrame.

    Parameters
    ----------
    X : array-like of shape (n, p) or pandas.DataFrame
        The table. Arrays must hold real numbers or booleans.
    dropna : bool, default=False
        Drop the rows with a missing value in an analysed column instead of
        refusing them; the count of complete rows is then treated as public.
    chosen : bool, default=False
        The columns were chosen by name: refuse a non-numeric one instead of
        leaving it out.
    min_cols : int, default=1
        Fewest analysed columns; with fewer, the refusal names the left-out ones.
    name : str, default="X"
        The table's name in error messages.
    option : str, default="pass dropna=True"
        How the refusal of missing values tells the user to drop incomplete rows.
    copy : bool, default=True
        With False, a C-contiguous float64 array without gaps is used as it is.

    Returns
    -------
    TidyTable
    """
    if is_series(X):
        raise TypeError(
            f"{name} must be two-dimensional; got a pandas Series. "
            "Use series.to_frame() for a single variable."
        )
    if isinstance(X, np.ma.MaskedArray):
        raise TypeError(
            f"{name} is a masked array, whose mask would be ignored; drop the masked rows "
            f"first, for example {name}[~{name}.mask.any(axis=1)].data."
        )
    left_out: tuple[str, ...] = ()
    if is_dataframe(X):
        data, variables, left_out = _frame_numbers(X, name, chosen, min_cols)
    else:
        data = _array_numbers(X, name, copy)
        variables = tuple(f"V{j + 1}" for j in range(data.shape[1]))
    n_read = int(data.shape[0])
    data, kept = drop_missing(data, variables, dropna=dropna, name=name, option=option)
    notes = []
    if left_out:
        notes.append(left_out_note(left_out))
    if kept is not None:
        notes.append(missing_note(int(data.shape[0])))
    return TidyTable(np.ascontiguousarray(data), variables, kept, left_out, n_read, tuple(notes))


def _frame_numbers(
    X: Any, name: str, chosen: bool, min_cols: int
) -> tuple[NDArray[np.float64], tuple[str, ...], tuple[str, ...]]:
    """A DataFrame's analysed columns as one float64 copy, their names and the left-out ones."""
    check_unique_columns(list(X.columns), name)
    kinds = {str(c): column_kind(X[c]) for c in X.columns}
    other = tuple(c for c, kind in kinds.items() if kind == "other")
    if other and (chosen or len(kinds) - len(other) < min_cols):
        need = "numbers in every chosen column" if chosen else f"{min_cols} numeric column(s)"
        raise TypeError(
            f"{name} has non-numeric column(s) {_shown(other)} (text, categories or other "
            f"non-numbers) and the analysis needs {need}; choose numeric columns, or "
            "encode them as numbers first."
        )
    keep = [c for c in X.columns if kinds[str(c)] != "other"]
    frame = X[keep]
    booleans = [c for c in keep if kinds[str(c)] == "boolean" and frame[c].dtype == object]
    if booleans:
        frame = frame.astype({c: "boolean" for c in booleans})
    try:
        data = frame.to_numpy(dtype=np.float64, na_value=np.nan, copy=True)
    except (TypeError, ValueError) as exc:  # pragma: no cover - exotic extension dtypes
        raise TypeError(f"{name} could not be converted to float64: {exc}") from None
    return np.ascontiguousarray(data), tuple(str(c) for c in keep), other


def _array_numbers(X: object, name: str, copy: bool) -> NDArray[np.float64]:
    """An array-like of real numbers (or booleans) as a 2-D C-ordered float64 array."""
    if X is None or isinstance(X, str | bytes | numbers.Number):
        raise TypeError(
            f"{name} must be a 2-D array or a pandas DataFrame; got {type(X).__name__}."
        )
    arr = np.asarray(X)
    if arr.dtype == object or not (
        np.issubdtype(arr.dtype, np.integer)
        or np.issubdtype(arr.dtype, np.floating)
        or arr.dtype == np.bool_
    ):
        raise TypeError(
            f"{name} must hold real numbers (integer or float); got dtype {arr.dtype}."
        )
    if arr.ndim != 2:
        raise ValueError(
            f"{name} must be two-dimensional (rows are observations); got {arr.ndim} "
            "dimension(s). Use X.reshape(-1, 1) for a single variable."
        )
    if copy:
        return np.array(arr, dtype=np.float64, order="C", copy=True)
    return np.asarray(arr, dtype=np.float64, order="C")
