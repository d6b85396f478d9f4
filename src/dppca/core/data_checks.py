"""Checks of data tables: the table itself, its column names, bounds and derived matrices.

:func:`check_data` turns an array or a DataFrame into a fresh float64 array
and its variable names through the one rule for messy tables
(:mod:`dppca.core.tables`: booleans as 0/1, non-numeric columns left out
with a note, missing values refused or kept for the zero-term rule), and
refuses too few rows or columns and infinite values; the
other checks cover the variables a caller names, the public bounds of the
data and a matrix computed from them. As everywhere in dppca, messages name
the argument and the requirement and never quote a data value.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .lazy import is_dataframe
from .lazy import pandas as pd
from .tables import TidyTable, document_missing, tidy_table
from .warnings import warn_data

__all__ = [
    "apply_bounds",
    "check_bounds",
    "check_data",
    "check_finite_matrix",
    "check_finite_values",
    "check_grouped_data",
    "check_table",
    "check_variable_names",
    "is_numeric_dtype",
]


def is_numeric_dtype(dtype: Any) -> bool:
    """Whether a column of this dtype holds real numbers (integers or floats).

    Booleans (analysed as 0/1 by the rule of :func:`dppca.core.tables.column_kind`)
    and complex numbers (no order, no Kendall sign) are not numbers here.
    """
    return (
        pd.api.types.is_numeric_dtype(dtype)
        and not pd.api.types.is_bool_dtype(dtype)
        and not pd.api.types.is_complex_dtype(dtype)
    )


@document_missing
def check_data(
    X: object,
    *,
    min_rows: int = 2,
    min_cols: int = 1,
    copy: bool = True,
    missing: str = "refuse",
) -> tuple[NDArray[np.float64], tuple[str, ...]]:
    """Validate a data table and return a fresh float64 copy and the variable names.

    The table goes through the one rule for messy tables
    (:func:`dppca.core.tables.tidy_table`): booleans become 0/1, non-numeric
    columns are left out with a :class:`~dppca.core.exceptions.DataWarning`,
    missing values are refused or, with ``missing="zero"``, kept as NaN cells
    for the kernels (with a ``DataWarning`` naming their columns).

    Parameters
    ----------
    X : array-like of shape (n, p) or pandas.DataFrame
        Numeric data. DataFrame column names become the variable names; for
        arrays they are ``V1, ..., Vp``.
    min_rows, min_cols : int
        The smallest accepted number of rows (every row read) and analysed columns.
    copy : bool, default=True
        With False, a C-contiguous float64 array is used as it is (no copy);
        the caller must then only read the result. For large tables.
    missing : {"refuse", "zero"}, default="refuse"
        %(missing)s

    Returns
    -------
    data : ndarray of shape (n, p)
        A C-contiguous float64 copy; the caller's object is never modified.
    variables : tuple of str
        One label per column.
    """
    table = check_table(X, min_rows=min_rows, min_cols=min_cols, copy=copy, missing=missing)
    return table.data, table.variables


def check_table(
    X: object,
    *,
    min_rows: int = 2,
    min_cols: int = 1,
    copy: bool = True,
    missing: str = "refuse",
) -> TidyTable:
    """:func:`check_data` keeping the rule's whole outcome (left-out columns, notes)."""
    table = tidy_table(X, missing=missing, min_cols=min_cols, copy=copy)
    _check_table_size(table.data, "X", min_rows, min_cols)
    check_finite_values(table.data, table.variables, "X")
    for message in table.notes:
        warn_data(message)
    return table


def check_grouped_data(
    X: object, labels: Any, *, min_cols: int = 1, missing: str = "refuse"
) -> tuple[NDArray[np.float64], tuple[str, ...], Any]:
    """:func:`check_data` of the features, with the group labels of the rows.

    The labels are not analysed: a missing label is the group release's
    rule, and ``labels`` not aligned with the rows are returned as they are
    for the caller's own check.
    """
    table = check_table(X, min_cols=min_cols, missing=missing)
    return table.data, table.variables, table.rows(labels)


def _check_table_size(data: NDArray[np.float64], name: str, min_rows: int, min_cols: int) -> None:
    n, p = data.shape
    if n < min_rows:
        raise ValueError(f"{name} must have at least {min_rows} rows; got {n}.")
    if p < min_cols:
        raise ValueError(f"{name} must have at least {min_cols} column(s); got {p}.")


def check_finite_values(data: NDArray[np.float64], variables: tuple[str, ...], name: str) -> None:
    """Refuse infinities (missing values, NaN, were handled by the rule), naming their columns."""
    if np.isinf(data).any():
        cols = np.flatnonzero(np.isinf(data).any(axis=0))
        shown = ", ".join(repr(variables[j]) for j in cols[:5]) + (" ..." if len(cols) > 5 else "")
        raise ValueError(
            f"{name} contains infinite values (columns {shown}); clip them to public bounds "
            "or remove those rows before the analysis."
        )


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
