"""Checks of single values: booleans, integers, real numbers in an interval, choices.

The building blocks of the other checks (:mod:`dppca.core.data_checks`,
:mod:`dppca.core.score_checks`, :mod:`dppca.core.validation` and the option
objects of :mod:`dppca.core.options`). Each returns the normalised value or
raises a ``TypeError`` or ``ValueError`` naming the argument, the
requirement and what was received.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Sequence
from typing import TypeVar, cast

import numpy as np

__all__ = [
    "check_bool",
    "check_choice",
    "check_nonnegative_int",
    "check_open_unit",
    "check_positive_float",
    "check_positive_int",
    "check_real",
    "type_name",
]


def type_name(value: object) -> str:
    """The name of a value's type, as messages show it."""
    return type(value).__name__


def check_bool(value: object, name: str) -> bool:
    """Return ``value`` if it is True or False (numpy booleans too); 0, 1 or "yes" are refused."""
    if not isinstance(value, bool | np.bool_):
        raise TypeError(f"{name} must be True or False; got {type_name(value)} {value!r}.")
    return bool(value)


def check_positive_int(value: object, name: str) -> int:
    """Return ``value`` as an int, requiring an integer >= 1 (bool is refused)."""
    return _check_int(value, name, 1)


def check_nonnegative_int(value: object, name: str) -> int:
    """Return ``value`` as an int, requiring an integer >= 0 (bool is refused)."""
    return _check_int(value, name, 0)


def _check_int(value: object, name: str, low: int) -> int:
    """Return ``value`` as an int, requiring an integer >= ``low`` (bool is refused)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an integer; got {type_name(value)} {value!r}.")
    if value < low:
        raise ValueError(f"{name} must be an integer >= {low}; got {value!r}.")
    return int(value)


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
        raise TypeError(f"{name} must be a real number; got {type_name(value)} {value!r}.")
    v = float(value)
    too_low = v <= low if low_open else v < low
    too_high = v >= high if high_open else v > high
    if not math.isfinite(v) or too_low or too_high:
        requirement = _interval_text(low, high, low_open, high_open)
        raise ValueError(f"{name} must be {requirement}; got {value!r}.")
    return v


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


_Choice = TypeVar("_Choice", bound=str)


def check_choice(value: object, name: str, choices: Sequence[_Choice]) -> _Choice:
    """Return ``value`` if it is one of ``choices`` (strings).

    Typed by its choices: assigned to a ``Literal`` variable, the result has
    that type (the value is one of the choices once this returns).
    """
    if not isinstance(value, str) or value not in choices:
        options = ", ".join(repr(c) for c in choices)
        raise ValueError(f"{name} must be one of {options}; got {value!r}.")
    return cast(_Choice, value)
