"""Every input check of the package, in one place.

Each ``check_*`` function either returns the normalised value or raises a
``TypeError``/``ValueError`` whose message names the argument, states the
requirement and what was received, and where possible the fix. Messages never
quote data values.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ._lazy import is_dataframe, is_series
from ._lazy import pandas as pd
from ._typing import RandomStateLike

__all__ = [
    "check_bool",
    "check_calibration",
    "check_choice",
    "check_components",
    "check_data",
    "check_delta",
    "check_design",
    "check_design_m",
    "check_eps",
    "check_k",
    "check_nonnegative_int",
    "check_open_unit",
    "check_pc_list",
    "check_positive_float",
    "check_positive_int",
    "check_random_state",
    "check_real",
    "check_ties",
    "check_variable_names",
]


def _type_name(value: object) -> str:
    return type(value).__name__


def check_eps(eps: object, name: str = "eps") -> float:
    """Return ``eps`` as a float, requiring a finite number > 0."""
    return check_real(eps, name, low=0.0, low_open=True)


def check_delta(delta: object, name: str = "delta") -> float:
    """Return ``delta`` as a float, requiring 0 < delta < 1."""
    return check_real(delta, name, low=0.0, high=1.0, low_open=True, high_open=True)


def check_positive_int(value: object, name: str) -> int:
    """Return ``value`` as an int, requiring an integer >= 1 (bool is refused)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an integer; got {_type_name(value)} {value!r}.")
    if value < 1:
        raise ValueError(f"{name} must be an integer >= 1; got {value!r}.")
    return int(value)


def check_nonnegative_int(value: object, name: str) -> int:
    """Return ``value`` as an int, requiring an integer >= 0 (bool is refused)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an integer; got {_type_name(value)} {value!r}.")
    if value < 0:
        raise ValueError(f"{name} must be an integer >= 0; got {value!r}.")
    return int(value)


def check_choice(value: object, name: str, choices: Sequence[str]) -> str:
    """Return ``value`` if it is one of ``choices`` (strings)."""
    if not isinstance(value, str) or value not in choices:
        options = ", ".join(repr(c) for c in choices)
        raise ValueError(f"{name} must be one of {options}; got {value!r}.")
    return value


def check_calibration(calibration: object) -> str:
    """Return the Gaussian calibration name, ``"classic"`` or ``"analytic"``."""
    return check_choice(calibration, "calibration", ("classic", "analytic"))


def check_ties(ties: object) -> str:
    """Return the ``ties`` option, ``"error"`` or ``"zero"``."""
    return check_choice(ties, "ties", ("error", "zero"))


def check_k(k: object, p: int, name: str = "k") -> int:
    """Return the number of components: ``None`` means all ``p``."""
    if k is None:
        return p
    if isinstance(k, bool) or not isinstance(k, numbers.Integral):
        raise TypeError(f"{name} must be an integer or None; got {_type_name(k)} {k!r}.")
    if not 1 <= k <= p:
        raise ValueError(f"{name} must be an integer in [1, p] = [1, {p}]; got {k!r}.")
    return int(k)


def check_components(components: object, p: int, name: str = "components") -> tuple[int, int]:
    """Return a pair of distinct 1-based PC numbers, each in ``1..p``."""
    if isinstance(components, str | bytes) or not isinstance(components, Sequence | np.ndarray):
        raise TypeError(
            f"{name} must be a pair of PC numbers such as (1, 2); got {_type_name(components)}."
        )
    items = list(components)
    if len(items) != 2:
        raise ValueError(f"{name} must hold exactly two PC numbers; got {len(items)}.")
    out = []
    for c in items:
        if isinstance(c, bool) or not isinstance(c, numbers.Integral):
            raise TypeError(f"{name} must hold integers (PCs are numbered from 1); got {c!r}.")
        if not 1 <= c <= p:
            raise ValueError(f"{name} must lie in [1, {p}] (PCs are numbered from 1); got {c!r}.")
        out.append(int(c))
    if out[0] == out[1]:
        raise ValueError(f"{name} must name two different PCs; got ({out[0]}, {out[1]}).")
    return out[0], out[1]


def check_random_state(random_state: RandomStateLike) -> np.random.Generator:
    """Resolve ``random_state`` into a ``numpy.random.Generator``.

    ``None`` draws fresh entropy from the operating system; an integer seeds a
    new generator; a ``Generator`` is used as it is (and advanced).
    """
    if random_state is None:
        return np.random.default_rng()
    if isinstance(random_state, np.random.Generator):
        return random_state
    if isinstance(random_state, numbers.Integral) and not isinstance(random_state, bool):
        return np.random.default_rng(check_nonnegative_int(random_state, "random_state"))
    raise TypeError(
        "random_state must be None, an int or a numpy.random.Generator; "
        f"got {_type_name(random_state)}."
    )


def _is_numeric_dtype(dtype: Any) -> bool:
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
    if is_dataframe(X):
        bad = [str(c) for c in X.columns if not _is_numeric_dtype(X[c].dtype)]
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
    else:
        if X is None or isinstance(X, str | bytes | numbers.Number):
            raise TypeError(
                f"{name} must be a 2-D array or a pandas DataFrame; got {_type_name(X)}."
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
            data = np.array(arr, dtype=np.float64, order="C", copy=True)
        else:
            data = np.asarray(arr, dtype=np.float64, order="C")
        variables = tuple(f"V{j + 1}" for j in range(data.shape[1]))
    n, p = data.shape
    if n < min_rows:
        raise ValueError(f"{name} must have at least {min_rows} rows; got {n}.")
    if p < min_cols:
        raise ValueError(f"{name} must have at least {min_cols} column(s); got {p}.")
    if not np.isfinite(data).all():
        cols = np.flatnonzero(~np.isfinite(data).all(axis=0))
        shown = ", ".join(repr(variables[j]) for j in cols[:5]) + (" ..." if len(cols) > 5 else "")
        raise ValueError(
            f"{name} contains NaN or infinite values (columns {shown}); "
            "remove or impute them before the analysis."
        )
    return np.ascontiguousarray(data), variables


def check_positive_float(value: object, name: str) -> float:
    """Return ``value`` as a float, requiring a finite number > 0."""
    return check_real(value, name, low=0.0, low_open=True)


def check_open_unit(value: object, name: str) -> float:
    """Return ``value`` as a float, requiring 0 < value < 1."""
    return check_real(value, name, low=0.0, high=1.0, low_open=True, high_open=True)


def check_real(
    value: object,
    name: str,
    *,
    low: float = -math.inf,
    high: float = math.inf,
    low_open: bool = False,
    high_open: bool = False,
) -> float:
    """Return ``value`` as a finite float in the interval from ``low`` to ``high``.

    The one checker of real numbers: the others are thin wrappers. ``low_open``
    and ``high_open`` exclude the end points; an infinite end means no bound.
    Booleans, NaN and infinities are refused, numpy scalars are welcome.
    """
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number; got {_type_name(value)} {value!r}.")
    v = float(value)
    too_low = v <= low if low_open else v < low
    too_high = v >= high if high_open else v > high
    if not math.isfinite(v) or too_low or too_high:
        requirement = _interval_text(low, high, low_open, high_open)
        raise ValueError(f"{name} must be {requirement}; got {value!r}.")
    return v


def check_pc_list(components: object, k: int, name: str = "components") -> tuple[int, ...]:
    """Return a non-empty tuple of distinct 1-based PC numbers, each in ``1..k``."""
    if isinstance(components, str | bytes) or not isinstance(components, Sequence | np.ndarray):
        raise TypeError(
            f"{name} must be a sequence of PC numbers such as [1, 2, 3]; "
            f"got {_type_name(components)}."
        )
    items = list(components)
    if not items:
        raise ValueError(f"{name} must name at least one PC.")
    out = []
    for c in items:
        if isinstance(c, bool) or not isinstance(c, numbers.Integral):
            raise TypeError(f"{name} must hold integers (PCs are numbered from 1); got {c!r}.")
        if not 1 <= c <= k:
            raise ValueError(f"{name} must lie in [1, {k}] (PCs are numbered from 1); got {c!r}.")
        out.append(int(c))
    if len(set(out)) != len(out):
        raise ValueError(f"{name} must not repeat a PC; got {tuple(out)}.")
    return tuple(out)


def check_variable_names(
    variables: object, available: Sequence[str], name: str = "variables"
) -> tuple[str, ...]:
    """Return the requested variable labels, each one of ``available``, without repeats."""
    if isinstance(variables, str):
        variables = [variables]
    if not isinstance(variables, Sequence | np.ndarray | pd.Index):
        raise TypeError(f"{name} must be a list of variable names; got {_type_name(variables)}.")
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


def _interval_text(low: float, high: float, low_open: bool, high_open: bool) -> str:
    """``"finite and > 0"``, ``"in the open interval (0, 1)"``, ``"finite and in [0, 1)"``."""
    if math.isinf(low) and math.isinf(high):
        return "finite"
    if math.isinf(high):
        return f"finite and {'>' if low_open else '>='} {low:g}"
    if math.isinf(low):
        return f"finite and {'<' if high_open else '<='} {high:g}"
    if low_open and high_open:
        return f"in the open interval ({low:g}, {high:g})"
    left, right = "(" if low_open else "[", ")" if high_open else "]"
    return f"finite and in {left}{low:g}, {high:g}{right}"


def check_bool(value: object, name: str) -> bool:
    """Return ``value`` if it is True or False (numpy booleans too); 0, 1 or "yes" are refused."""
    if not isinstance(value, bool | np.bool_):
        raise TypeError(f"{name} must be True or False; got {_type_name(value)} {value!r}.")
    return bool(value)


def check_design(design: object) -> str:
    """Return the pair design of the spherical Kendall matrix, ``"exact"`` or ``"balanced"``."""
    return check_choice(design, "design", ("exact", "balanced"))


def check_design_m(m: object, n: int) -> int:
    """Return the partners per row of the balanced design; None gives the default.

    ``m`` must satisfy ``1 <= m <= (n - 1) // 2`` so that no pair occurs twice
    (``n`` is public, so quoting it is safe).
    """
    top = (n - 1) // 2
    if top < 1:
        raise ValueError(f"design='balanced' needs at least 3 rows; got n={n}.")
    if m is None:
        from .kendall import default_m

        return default_m(n)
    m = check_positive_int(m, "m")
    if m > top:
        raise ValueError(
            f"m must be an integer in [1, (n - 1) // 2] = [1, {top}] so that no pair of "
            f"rows repeats; got {m}."
        )
    return m
