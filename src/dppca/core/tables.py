"""The one rule for messy tables, applied by every face (library, command line, app).

What a table's columns and cells become before any analysis:

- **numbers** (integer and float columns, nullable ``Int64``/``Float64``
  included) are analysed as float64;
- **booleans** (``bool``, nullable ``boolean``, or an object column holding
  only ``True``/``False`` and missing cells, as a CSV column with gaps is
  read) are analysed as 0.0/1.0;
- **text read as numbers**: an object column (what pandas makes of a CSV
  column holding a stray ``?`` or ``n/a``) is analysed as numbers when at
  least half of its non-empty cells parse as numbers, and its cells that do
  not parse are missing values;
- **every other column** (text, ``string``, ``category``, dates, complex
  numbers) is left out, with a note naming it. A column the caller chose by
  name (``chosen=True``: ``--columns`` on the command line, the app's column
  list) is refused instead;
- **missing values** (NaN, None, ``pd.NA``, unparseable cells of a numeric
  column) in the analysed columns follow the ``missing`` rule
  (:func:`check_missing`): ``"refuse"`` (the default) stops with a message
  naming the option; ``"zero"`` keeps them as NaN cells, and every kernel
  then forms a pair's term from the coordinates present in both rows (a
  missing coordinate adds nothing) while ``n`` stays the number of rows read
  (see :func:`check_missing`).
  No row is ever dropped, so no count of complete rows is released. Infinite
  values are not missing: they are refused either way.

Which columns are numbers, booleans or text is decided from the dtypes and,
for object columns, by the half-of-the-cells rule above; only a column split
about evenly between numbers and text is decided by one cell (the privacy
page's "Missing values" section says so; declare the columns to rule it out).
The notes never quote a value.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
from numpy.typing import NDArray

from .lazy import is_dataframe, is_series
from .lazy import pandas as pd

__all__ = [
    "MISSING_OPTION",
    "MISSING_RULES",
    "TidyTable",
    "check_missing",
    "check_unique_columns",
    "column_kind",
    "complete_rows",
    "document_missing",
    "left_out_note",
    "missing_note",
    "refuse_missing",
    "tidy_table",
]

ColumnKind = Literal["number", "boolean", "text-number", "other"]
MissingRule = Literal["refuse", "zero"]

#: The values of the ``missing`` option (``--missing`` on the command line).
MISSING_RULES: tuple[str, ...] = ("refuse", "zero")

#: How the library names the option that analyses tables with missing values;
#: the command line and the app pass their own wording (``--missing zero``, a checkbox).
MISSING_OPTION = "pass missing='zero'"

#: Kept for callers of the old name.
DROPNA_OPTION = MISSING_OPTION

#: The ``missing`` paragraph of every release's docstring (one text, filled in by
#: :func:`document_missing` wherever a docstring says ``%(missing)s``).
MISSING_PARAMETER = """\
Missing values (NaN, None, pd.NA, or a cell of a numeric column that
does not parse as a number) in the analysed columns. ``"refuse"``
stops with an error naming this option. ``"zero"`` analyses the table
as it is: ``n`` stays the number of rows read (public), and a
coordinate missing in either row of a pair adds nothing to that pair's
term (a tie for Kendall's tau; a row with a gap has no score in a score
plot), so the noise, the cost and every released count are those of
the full table and no release depends on how many rows are complete
(proof: :func:`dppca.core.tables.check_missing`). The variances shrink
by about the share of present coordinates. ``dropna=True`` is the old
spelling of ``missing="zero"`` (it no longer drops rows).
Either way booleans are analysed as 0/1 and non-numeric columns are
left out with a ``DataWarning`` (:mod:`dppca.core.tables`)."""


def fill_docstring(func: Any, name: str, text: str) -> Any:
    """Replace ``%(name)s`` in ``func``'s docstring by ``text``, at the marker's indent."""
    doc = func.__doc__ or ""
    marker = f"%({name})s"
    at = doc.find(marker)
    if at >= 0:
        indent = doc[doc.rfind("\n", 0, at) + 1 : at]
        func.__doc__ = doc.replace(marker, text.replace("\n", "\n" + indent))
    return func


def document_missing(func: Any) -> Any:
    """Fill ``%(missing)s`` in ``func``'s docstring with :data:`MISSING_PARAMETER`."""
    return fill_docstring(func, "missing", MISSING_PARAMETER)


def check_missing(missing: object, dropna: object = False) -> MissingRule:
    """``missing`` as ``"refuse"`` or ``"zero"``; ``dropna=True`` is the old ``"zero"``.

    Notes
    -----
    Privacy of ``missing="zero"``. Neighbouring tables have the same number
    n of rows (public) and differ in one row; the replaced row may gain or
    lose missing cells, so the number of complete rows is not public and no
    release may depend on it. Under this rule none does:

    * ``n`` (hence every noise scale, every cost, the bins of a score plot,
      the levels of every quantile scan) is the row count as read;
    * every pair sum (the spherical Kendall matrix, exact or balanced, and
      the scree's pair moments and scans) forms each pair's term from the
      difference with its coordinates missing in either row set to 0: for
      Kendall the unit vector of the present coordinates, or the zero term
      when no present coordinate differs. Such a term depends on the pair's
      two rows only and is as admissible as any other (a unit vector's outer
      product, or zero: ``||u u^T - w w^T||_F <= sqrt 2`` and ``||u u^T -
      0||_F = 1``; for the scree, any difference lands in the same
      sensitivity polytope, whose origin is a vertex). Replacing one row
      changes only the terms of the pairs that hold it, so the
      sensitivities are unchanged. Random pairings are drawn over all n
      rows, without the data;
    * Kendall's tau treats a missing cell as a tie in its column (sign 0), so
      every sign vector still has ``|s|^2 <= p``
      (:func:`dppca.releases.directions.tau.tau_sensitivity`);
    * quantile scans and choices aim at a rank out of the public number of
      values. A private scale counts a pair with a missing cell in its column
      as a zero difference, the score frame's half width a row without a
      score at distance 0 (maps of one pair or row each, so their proofs are
      unchanged); the frame's centre counts such a row as half a row below
      every edge, so each count still moves by at most one (the exponential
      mechanism's utilities keep sensitivity 1);
    * a row with a missing cell lands in no cell of a score histogram (one
      replaced row still moves at most two cells by one).

    (Zeroing the whole term of every pair with a missing cell would be as
    private, but with 5 % of the cells missing it keeps only 13 % of the
    pairs of a 20-column table: on ``gau`` at eps 1 its top-2 directions
    were at median sine 0.87 from the truth, against 0.12 for this rule and
    0.10 without gaps, ``benchmarks/bench_missing.py``.) Refusing (``"refuse"``) is itself
    data-dependent (the error says that some cell is missing), as any
    refusal of bad input is.
    """
    if isinstance(dropna, bool | np.bool_) and bool(dropna):
        if missing in (None, "refuse"):
            return "zero"
    elif not isinstance(dropna, bool | np.bool_):
        raise TypeError(f"dropna must be True or False; got {type(dropna).__name__}.")
    if missing is None:
        return "refuse"
    if not isinstance(missing, str) or missing not in MISSING_RULES:
        raise ValueError(
            f"missing must be 'refuse' or 'zero'; got {missing!r}. 'zero' analyses a table "
            "with missing values (a missing cell adds nothing to a pair's term)."
        )
    return "zero" if missing == "zero" else "refuse"


def column_kind(column: Any, *, chosen: bool = False) -> ColumnKind:
    """Whether a pandas column is analysed as a number, a 0/1 boolean, or left out.

    ``"text-number"`` is an object column (or pandas' inferred ``str``) read as
    numbers, its unparseable cells missing values: at least half of its
    non-empty cells parse as numbers. ``chosen`` is accepted for the callers
    that know it; the rule is the same (a chosen column that fails it is
    refused by :func:`tidy_table` rather than left out).
    """
    dtype = column.dtype
    api = pd.api.types
    if api.is_bool_dtype(dtype):
        return "boolean"
    if api.is_numeric_dtype(dtype) and not api.is_complex_dtype(dtype):
        return "number"
    if api.is_object_dtype(dtype) or _inferred_text(dtype):
        present = column[column.notna()]
        if len(present) and present.map(lambda v: isinstance(v, bool | np.bool_)).all():
            return "boolean"
        if len(present):
            parsed = _parse_numbers(present)
            if 2 * int(np.count_nonzero(~np.isnan(parsed))) >= len(present):
                return "text-number"
    return "other"


def _inferred_text(dtype: Any) -> bool:
    """pandas' default text dtype (``str``, missing as NaN): what a reader inferred.

    pandas 3 reads a CSV column of text as ``str``; the ``string`` dtype (missing
    as ``pd.NA``), like ``category``, is one a user declares, and stays text.
    """
    return isinstance(dtype, pd.StringDtype) and not isinstance(dtype.na_value, type(pd.NA))


def _parse_numbers(column: Any) -> NDArray[np.float64]:
    """An object column's cells as float64; cells that are not numbers become NaN.

    Booleans are not numbers here; text is parsed as a number (``" 3.5"``),
    and anything else (``"?"``, ``"n/a"``, dates) is NaN.
    """

    def one(v: Any) -> float:
        if isinstance(v, bool | np.bool_) or v is None:
            return math.nan
        if isinstance(v, numbers.Real):
            return float(v)
        if isinstance(v, str):
            try:
                return float(v.strip())
            except ValueError:
                return math.nan
        return math.nan

    return np.fromiter((one(v) for v in column), dtype=np.float64, count=len(column))


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


def missing_note(columns: tuple[str, ...]) -> str:
    """The refusal's list of the columns with a gap (no note is given under ``"zero"``).

    Under ``missing="zero"`` the rule says nothing about the missing cells:
    which columns have one, like how many rows are incomplete, is a statistic
    of the data, and a note would reach the page of a report.
    """
    return f"column(s) {_shown(list(columns))}"


def refuse_missing(
    data: NDArray[np.float64],
    variables: tuple[str, ...],
    *,
    missing: str,
    name: str = "X",
    option: str = MISSING_OPTION,
) -> tuple[str, ...]:
    """Refuse missing values (NaN) unless ``missing="zero"``; the columns with a gap.

    Under ``"zero"`` the NaN cells stay in ``data`` for the kernels. The
    refusal names the columns with a gap and the option, never a value or a row.
    """
    gaps = np.isnan(data).any(axis=0)
    if not gaps.any():
        return ()
    cols = tuple(variables[j] for j in np.flatnonzero(gaps))
    if missing != "zero":
        raise ValueError(
            f"{name} has missing values (NaN, None, pd.NA or cells that are not numbers) "
            f"in {missing_note(cols)}; impute them, or {option} to analyse the "
            "table with each missing cell adding nothing to its pairs' terms (n stays the "
            "number of rows)."
        )
    return cols


def complete_rows(data: NDArray[np.float64]) -> NDArray[np.bool_] | None:
    """Mask of the rows without a missing cell, or None when every row is complete.

    For kernels and non-private comparisons only: the mask (and its count) is
    never part of a release.
    """
    incomplete = np.isnan(data).any(axis=1)
    if not incomplete.any():
        return None
    return np.asarray(~incomplete, dtype=np.bool_)


@dataclass(frozen=True, eq=False, repr=False)
class TidyTable:
    """A table after the rule: the analysed columns as float64, every row read.

    Attributes
    ----------
    data : ndarray of shape (n, p)
        C-contiguous float64 (booleans as 0/1; NaN for a missing cell under
        ``missing="zero"``); the caller's object is untouched unless it was
        already such an array and ``copy=False`` was asked.
    variables : tuple of str
        The analysed columns, in the table's order.
    kept : None
        Always None: no row is dropped (kept for callers of the old rule).
    left_out : tuple of str
        Non-numeric columns left out.
    n_read : int
        Rows of the table as read (``n``).
    notes : tuple of str
        What the rule did, worded for the user (the same on every face).
    """

    data: NDArray[np.float64]
    variables: tuple[str, ...]
    kept: None
    left_out: tuple[str, ...]
    n_read: int
    notes: tuple[str, ...]

    @property
    def n(self) -> int:
        """Rows analysed: every row read."""
        return int(self.data.shape[0])

    def rows(self, values: Any) -> Any:
        """A sequence aligned with the table's rows (labels), as it is: no row is dropped."""
        return values


def tidy_table(
    X: object,
    *,
    missing: str = "refuse",
    chosen: bool = False,
    min_cols: int = 1,
    name: str = "X",
    option: str = MISSING_OPTION,
    copy: bool = True,
) -> TidyTable:
    """Apply the rule (see the module docstring) to an array or a DataFrame.

    Parameters
    ----------
    X : array-like of shape (n, p) or pandas.DataFrame
        The table. Arrays must hold real numbers or booleans.
    missing : {"refuse", "zero"}, default="refuse"
        Refuse missing values in an analysed column, or keep them as NaN
        cells for the kernels' zero-term rule (:func:`check_missing`).
    chosen : bool, default=False
        The columns were chosen by name: refuse a non-numeric one instead of
        leaving it out.
    min_cols : int, default=1
        Fewest analysed columns; with fewer, the refusal names the left-out ones.
    name : str, default="X"
        The table's name in error messages.
    option : str, default="pass missing='zero'"
        How the refusal of missing values names the option that analyses them.
    copy : bool, default=True
        With False, a C-contiguous float64 array is used as it is.

    Returns
    -------
    TidyTable
    """
    missing = check_missing(missing)
    if is_series(X):
        raise TypeError(
            f"{name} must be two-dimensional; got a pandas Series. "
            "Use series.to_frame() for a single variable."
        )
    if isinstance(X, np.ma.MaskedArray):
        raise TypeError(
            f"{name} is a masked array, whose mask would be ignored; pass "
            f"{name}.filled(numpy.nan) with missing='zero', or drop the masked rows first."
        )
    left_out: tuple[str, ...] = ()
    if is_dataframe(X):
        data, variables, left_out = _frame_numbers(X, name, chosen, min_cols)
    else:
        data = _array_numbers(X, name, copy)
        variables = tuple(f"V{j + 1}" for j in range(data.shape[1]))
    n_read = int(data.shape[0])
    gaps = refuse_missing(data, variables, missing=missing, name=name, option=option)
    notes = []
    if left_out:
        notes.append(left_out_note(left_out))
    del gaps  # under "zero": nothing about the missing cells is noted (see missing_note)
    return TidyTable(np.ascontiguousarray(data), variables, None, left_out, n_read, tuple(notes))


def _frame_numbers(
    X: Any, name: str, chosen: bool, min_cols: int
) -> tuple[NDArray[np.float64], tuple[str, ...], tuple[str, ...]]:
    """A DataFrame's analysed columns as one float64 copy, their names and the left-out ones."""
    check_unique_columns(list(X.columns), name)
    kinds = {str(c): column_kind(X[c], chosen=chosen) for c in X.columns}
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
    texts = [c for c in keep if kinds[str(c)] == "text-number"]
    if booleans or texts:
        frame = frame.astype({c: "boolean" for c in booleans})
        for c in texts:  # frame is a fresh copy (astype)
            frame[c] = _parse_numbers(frame[c])
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
