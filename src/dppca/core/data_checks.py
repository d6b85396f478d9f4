"""Checks of data tables: the table itself, its column names, bounds and derived matrices.

:func:`check_data` turns an array or a DataFrame into a fresh float64 array
and its variable names, refusing what cannot be analysed (non-numeric or
repeated columns, too few rows or columns, NaN or infinite values); the
other checks cover the variables a caller names, the public bounds of the
data and a matrix computed from them. As everywhere in dppca, messages name
the argument and the requirement and never quote a data value. Split out of
:mod:`dppca.core.validation`, which re-exports every name here.
"""

from __future__ import annotations

import numbers
from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .lazy import is_dataframe, is_series
from .lazy import pandas as pd

__all__ = [
    "apply_bounds",
    "check_bounds",
    "check_data",
    "check_finite_matrix",
    "check_unique_columns",
    "check_variable_names",
    "is_numeric_dtype",
]


def is_numeric_dtype(dtype: Any) -> bool:
    """Whether a column of this dtype can be analysed: real numbers only.

    The one rule for numeric columns, used by :func:`check_data`, the file
    readers, the command line and the app: integers and floats are in, booleans
    (categories, not measurements) and complex numbers (no order, no Kendall
    sign) are out.
    """
    return (
        pd.api.types.is_numeric_dtype(dtype)
        and not pd.api.types.is_bool_dtype(dtype)
        and not pd.api.types.is_complex_dtype(dtype)
    )


def check_data(
    X: object, *, name: str = "X", min_rows: int = 2, min_cols: int = 1, copy: bool = True
) -> tuple[NDArray[np.float64], tuple[str, ...]]:
    """Validate a data table and return a fresh float64 copy and the variable names.

    Parameters
    ----------
    X : array-like of shape (n, p) or pandas.DataFrame
        Numeric data. DataFrame column names become the variable names; for
        arrays they are ``V1, ..., Vp``.
    name : str, default="X"
        The argument name used in error messages.
    min_rows, min_cols : int
        The smallest accepted number of rows and columns.
    copy : bool, default=True
        With False, a C-contiguous float64 array is used as it is (no copy);
        the caller must then only read the result. For large tables.

    Returns
    -------
    data : ndarray of shape (n, p)
        A C-contiguous float64 copy; the caller's object is never modified.
    variables : tuple of str
        One label per column.
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
    if is_dataframe(X):
        data, variables = _frame_data(X, name)
    else:
        data = _array_data(X, name, copy)
        variables = tuple(f"V{j + 1}" for j in range(data.shape[1]))
    _check_table_size(data, name, min_rows, min_cols)
    _check_finite_values(data, variables, name)
    return np.ascontiguousarray(data), variables


def _frame_data(X: Any, name: str) -> tuple[NDArray[np.float64], tuple[str, ...]]:
    """A DataFrame's values as a float64 copy and its column names; numeric columns only."""
    check_unique_columns(list(X.columns), name)
    bad = [str(c) for c in X.columns if not is_numeric_dtype(X[c].dtype)]
    if bad:
        shown = ", ".join(repr(c) for c in bad[:5]) + (" ..." if len(bad) > 5 else "")
        raise TypeError(
            f"{name} must have only numeric columns; non-numeric: {shown}. "
            "Drop or encode them first."
        )
    variables = tuple(str(c) for c in X.columns)
    try:
        data = X.to_numpy(dtype=np.float64, na_value=np.nan, copy=True)
    except (TypeError, ValueError) as exc:  # pragma: no cover - exotic extension dtypes
        raise TypeError(f"{name} could not be converted to float64: {exc}") from None
    return data, variables


def _array_data(X: object, name: str, copy: bool) -> NDArray[np.float64]:
    """An array-like of real numbers as a two-dimensional C-ordered float64 array."""
    if X is None or isinstance(X, str | bytes | numbers.Number):
        raise TypeError(
            f"{name} must be a 2-D array or a pandas DataFrame; got {type(X).__name__}."
        )
    arr = np.asarray(X)
    if arr.dtype == object or not (
        np.issubdtype(arr.dtype, np.integer) or np.issubdtype(arr.dtype, np.floating)
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


def _check_table_size(data: NDArray[np.float64], name: str, min_rows: int, min_cols: int) -> None:
    n, p = data.shape
    if n < min_rows:
        raise ValueError(f"{name} must have at least {min_rows} rows; got {n}.")
    if p < min_cols:
        raise ValueError(f"{name} must have at least {min_cols} column(s); got {p}.")


def _check_finite_values(data: NDArray[np.float64], variables: tuple[str, ...], name: str) -> None:
    """Refuse NaN and infinities, naming the columns that hold them (never the values)."""
    if not np.isfinite(data).all():
        cols = np.flatnonzero(~np.isfinite(data).all(axis=0))
        shown = ", ".join(repr(variables[j]) for j in cols[:5]) + (" ..." if len(cols) > 5 else "")
        raise ValueError(
            f"{name} contains NaN or infinite values (columns {shown}); "
            "remove or impute them before the analysis."
        )


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
        shown = ", ".join(repr(c) for c in repeated[:5]) + (" ..." if len(repeated) > 5 else "")
        raise ValueError(f"{name} has repeated column names ({shown}); rename them first.")


def check_variable_names(
    variables: object, available: Sequence[str], name: str = "variables"
) -> tuple[str, ...]:
    """Return the requested variable labels, each one of ``available``, without repeats."""
    if isinstance(variables, str):
        variables = [variables]
    if not isinstance(variables, Sequence | np.ndarray | pd.Index):
        raise TypeError(
            f"{name} must be a list of variable names; got {type(variables).__name__}."
        )
    items = [str(v) for v in variables]
    if not items:
        raise ValueError(f"{name} must name at least one variable.")
    unknown = [v for v in items if v not in available]
    if unknown:
        shown = ", ".join(repr(v) for v in unknown[:5]) + (" ..." if len(unknown) > 5 else "")
        raise ValueError(f"{name} names unknown variable(s) {shown}; known: the data's columns.")
    if len(set(items)) != len(items):
        raise ValueError(f"{name} must not repeat a variable.")
    return tuple(items)


def check_finite_matrix(matrix: NDArray[np.float64], name: str = "matrix") -> None:
    """Refuse a matrix with NaN or infinite entries before an eigendecomposition.

    Such a matrix comes from data whose products overflow (values near 1e154
    or beyond); its eigenvectors would be garbage.
    """
    if not np.isfinite(matrix).all():
        raise ValueError(
            f"the {name} has infinite or NaN entries (the data are too large in magnitude "
            "for float64 products); rescale the columns by public constants first."
        )


def check_bounds(
    bounds: object, variables: Sequence[str]
) -> tuple[NDArray[np.float64], NDArray[np.float64]] | None:
    """Return public per-variable bounds as ``(lower, upper)`` arrays, or None.

    Parameters
    ----------
    bounds : None, (float, float), array-like of shape (p, 2), mapping or DataFrame
        The public data domain. A pair applies to every variable; an array has
        one ``(lower, upper)`` row per variable in column order; a mapping
        ``{variable: (lower, upper)}`` or a DataFrame with columns ``lower`` and
        ``upper`` (index, or a ``variable`` column, naming the variables) must
        name every analysed variable and nothing else.
    variables : sequence of str
        The analysed variables, in column order.

    Notes
    -----
    Bounds must come from public knowledge (a codebook, units, an instrument's
    range), never from the data: bounds read off the data (its minimum and
    maximum) are themselves an unaccounted release.
    """
    if bounds is None:
        return None
    p = len(variables)
    hint = (
        "pass (lower, upper) for all variables, a (p, 2) array, or a mapping "
        "{variable: (lower, upper)} naming every variable"
    )
    if is_dataframe(bounds):
        frame = bounds.set_index("variable") if "variable" in bounds.columns else bounds
        missing = {"lower", "upper"} - {str(c) for c in frame.columns}
        if missing:
            raise ValueError(f"bounds needs columns 'lower' and 'upper'; {hint}.")
        bounds = {
            str(k): (lo, hi)
            for k, lo, hi in zip(frame.index, frame["lower"], frame["upper"], strict=True)
        }
    if isinstance(bounds, dict):
        bounds = {str(k): v for k, v in bounds.items()}
        names = list(bounds)
        unknown = [k for k in names if k not in variables]
        absent = [v for v in variables if v not in names]
        if unknown or absent:
            parts = []
            if absent:
                parts.append("no bounds for " + ", ".join(repr(v) for v in absent[:5]))
            if unknown:
                parts.append("unknown variables " + ", ".join(repr(v) for v in unknown[:5]))
            raise ValueError(f"bounds must name every analysed variable: {'; '.join(parts)}.")
        rows: Any = [bounds[v] for v in variables]
    else:
        rows = bounds
    try:
        arr = np.array(rows, dtype=np.float64)
    except (TypeError, ValueError):
        raise TypeError(f"bounds must hold real numbers; {hint}.") from None
    if arr.shape == (2,):
        arr = np.tile(arr, (p, 1))
    if arr.shape != (p, 2):
        raise ValueError(f"bounds must give (lower, upper) for each of the {p} variables; {hint}.")
    lower, upper = np.ascontiguousarray(arr[:, 0]), np.ascontiguousarray(arr[:, 1])
    if not (np.isfinite(lower).all() and np.isfinite(upper).all()):
        raise ValueError("bounds must be finite numbers.")
    bad = np.flatnonzero(~(lower < upper))
    if bad.size:
        raise ValueError(
            f"bounds need lower < upper for every variable; not so for {variables[bad[0]]!r}."
        )
    if not np.isfinite(upper - lower).all():
        raise ValueError("bounds are too wide: upper - lower overflows float64.")
    return lower, upper


def apply_bounds(
    data: NDArray[np.float64], bounds: tuple[NDArray[np.float64], NDArray[np.float64]] | None
) -> NDArray[np.float64]:
    """Clip each column of ``data`` (in place) to its public bounds; a row-wise map.

    Clipping is applied to every row on its own, so neighbouring datasets stay
    neighbours and every sensitivity argument holds for the clipped data.
    """
    if bounds is not None:
        np.clip(data, bounds[0], bounds[1], out=data)
    return data
