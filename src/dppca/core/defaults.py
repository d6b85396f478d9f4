"""The default total delta of a table, a function of its public row count.

It lives in the bottom layer so that input checks can name it in their
messages; the command line's ledger and the app give a table seen for the
first time this total delta.
"""

from __future__ import annotations

import math

__all__ = ["default_delta"]


def default_delta(n: int) -> float:
    """The default total delta of a new table of ``n`` rows: ``min(1e-6, 1 / (10 n^1.5))``,
    rounded down to one significant digit.

    Far below ``1 / n``: a mechanism may fail with probability delta, and one
    that publishes each row with probability delta exposes ``n delta`` people
    on average; this rule keeps ``n delta`` at most ``1 / (10 sqrt(n))`` (at
    most 0.03 from n = 10 up, 1e-3 at n = 1000), and never above 1e-6. The
    command line and the app use it for a table's first total unless the
    data holder declares one (``--budget-delta``).

    Examples
    --------
    >>> default_delta(5000)
    2e-07
    >>> default_delta(100)
    1e-06
    """
    if n < 2:
        raise ValueError(f"n must be at least 2; got {n}.")
    target = min(1e-6, 1.0 / (10.0 * float(n) ** 1.5))
    exponent = math.floor(math.log10(target))
    digit = math.floor(target / 10.0**exponent)
    value = float(f"{digit}e{exponent}")
    while value > target:  # guard against rounding in the last digit
        digit -= 1
        value = float(f"{digit}e{exponent}") if digit > 0 else float(f"9e{exponent - 1}")
    return value
