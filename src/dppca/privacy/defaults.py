"""Defaults of a dataset's total budget that the faces share.

The command line's ledger and the app give a table seen for the first time
the same default total delta, :func:`default_delta`, a function of the
public row count only.
"""

from __future__ import annotations

import math

__all__ = ["default_delta"]


def default_delta(n: int) -> float:
    """A conservative default delta for ``n`` rows: ``n ** -1.1`` rounded down.

    The value is rounded down to one significant digit, so it is always
    below ``1 / n`` (a delta near ``1 / n`` allows releasing a row outright).

    Examples
    --------
    >>> default_delta(5000)
    8e-05
    >>> default_delta(100)
    0.006
    """
    if n < 2:
        raise ValueError(f"n must be at least 2; got {n}.")
    target = float(n) ** -1.1
    exponent = math.floor(math.log10(target))
    digit = math.floor(target / 10.0**exponent)
    value = float(f"{digit}e{exponent}")
    while value > target:  # guard against rounding in the last digit
        digit -= 1
        value = float(f"{digit}e{exponent}") if digit > 0 else float(f"9e{exponent - 1}")
    return value
