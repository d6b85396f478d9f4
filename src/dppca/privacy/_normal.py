"""The standard normal's log-CDF and Brent's root finder, in the standard library alone.

The calibration of the Gaussian mechanism (:mod:`dppca.privacy.mechanisms`)
needs only ``log Phi`` and a bracketing root finder. scipy provides both, but
importing ``scipy.special`` and ``scipy.optimize`` costs about a CPU-second,
more than the rest of a ``--dry-run`` or a ledger query; these two functions
cost nothing to import.

:func:`brentq` is a line-by-line port of scipy's ``brentq`` (Brent 1973, as in
scipy/optimize/Zeros/brentq.c): given the same function values it takes the
same steps and returns the same float. :func:`log_ndtr` follows the split of
scipy's ``log_ndtr`` (``log1p(-Phi(-x))`` above ``x = -1``, the log of the
lower tail below) with :func:`math.erfc`, and the asymptotic series of
``Phi`` below ``x = -20``; it agrees with scipy's to about 1e-15 relative
(tests/test_normal.py).
"""

from __future__ import annotations

import math
from collections.abc import Callable

__all__ = ["brentq", "log_ndtr"]

_SQRT1_2 = math.sqrt(0.5)
_HALF_LOG_2PI = 0.5 * math.log(2.0 * math.pi)


def log_ndtr(x: float) -> float:
    """``log(Phi(x))`` for the standard normal CDF ``Phi``, accurate in both tails."""
    if math.isnan(x):
        return math.nan
    if x >= -1.0:
        return math.log1p(-0.5 * math.erfc(x * _SQRT1_2))
    if x > -20.0:
        return math.log(0.5 * math.erfc(-x * _SQRT1_2))
    # Phi(x) = phi(x) / (-x) * (1 - 1/x^2 + 3/x^4 - 15/x^6 + ...): an asymptotic
    # series whose terms shrink while (2k - 1) < x^2, far past double precision here.
    if math.isinf(x):
        return -math.inf
    x2 = x * x
    total, term, k = 1.0, 1.0, 1
    while True:
        term *= -(2 * k - 1) / x2
        if total + term == total:
            break
        total += term
        k += 1
    return -0.5 * x2 - math.log(-x) - _HALF_LOG_2PI + math.log(total)


def brentq(
    f: Callable[[float], float],
    a: float,
    b: float,
    *,
    xtol: float = 2e-12,
    rtol: float = 4 * 2.220446049250313e-16,
    maxiter: int = 100,
) -> float:
    """A root of ``f`` in ``[a, b]`` (``f(a)`` and ``f(b)`` of opposite signs), as scipy's.

    Raises
    ------
    ValueError
        When ``f(a)`` and ``f(b)`` have the same sign.
    RuntimeError
        When ``maxiter`` steps do not converge.
    """
    xtol, rtol = float(xtol), float(rtol)
    xpre, xcur = float(a), float(b)
    xblk = fblk = spre = scur = 0.0
    fpre, fcur = float(f(xpre)), float(f(xcur))
    if fpre == 0:
        return xpre
    if fcur == 0:
        return xcur
    if math.copysign(1.0, fpre) == math.copysign(1.0, fcur):
        raise ValueError("f(a) and f(b) must have different signs")
    for _ in range(maxiter):
        if fpre != 0 and fcur != 0 and math.copysign(1.0, fpre) != math.copysign(1.0, fcur):
            xblk, fblk = xpre, fpre
            spre = scur = xcur - xpre
        if abs(fblk) < abs(fcur):
            xpre, xcur, xblk = xcur, xblk, xcur
            fpre, fcur, fblk = fcur, fblk, fcur
        delta = (xtol + rtol * abs(xcur)) / 2
        sbis = (xblk - xcur) / 2
        if fcur == 0 or abs(sbis) < delta:
            return xcur
        if abs(spre) > delta and abs(fcur) < abs(fpre):
            if xpre == xblk:  # interpolate
                stry = _div(-fcur * (xcur - xpre), fcur - fpre)
            else:  # extrapolate
                dpre = _div(fpre - fcur, xpre - xcur)
                dblk = _div(fblk - fcur, xblk - xcur)
                stry = _div(-fcur * (fblk * dblk - fpre * dpre), dblk * dpre * (fblk - fpre))
            if 2 * abs(stry) < min(abs(spre), 3 * abs(sbis) - delta):
                spre, scur = scur, stry  # a good short step
            else:
                spre = scur = sbis  # bisect
        else:
            spre = scur = sbis  # bisect
        xpre, fpre = xcur, fcur
        xcur += scur if abs(scur) > delta else (delta if sbis > 0 else -delta)
        fcur = float(f(xcur))
    raise RuntimeError(f"brentq did not converge in {maxiter} iterations")


def _div(a: float, b: float) -> float:
    """``a / b`` as C computes it: a zero ``b`` gives an infinity or NaN, not an error."""
    if b != 0:
        return a / b
    if a == 0 or math.isnan(a):
        return math.nan
    return math.copysign(math.inf, a) * math.copysign(1.0, b)
