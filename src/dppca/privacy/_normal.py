"""The standard normal's log-CDF and Brent's root finder and minimiser, without scipy.

The calibration of the Gaussian mechanism (:mod:`dppca.privacy.mechanisms`)
needs only ``log Phi`` and a bracketing root finder. scipy provides both, but
importing ``scipy.special`` and ``scipy.optimize`` costs about a CPU-second,
more than the rest of a ``--dry-run`` or a ledger query; these two functions
cost nothing to import.

:func:`brentq` is a line-by-line port of scipy's ``brentq`` (Brent 1973, as in
scipy/optimize/Zeros/brentq.c): given the same function values it takes the
same steps and returns the same float; :func:`fminbound` is likewise scipy's
bounded Brent minimiser (``minimize_scalar(method="bounded")``).
:func:`log_ndtr` follows the split of scipy's ``log_ndtr``
(``log1p(-Phi(-x))`` above ``x = -1``, the log of the lower tail below) with
:func:`math.erfc`, and the asymptotic series of ``Phi`` below ``x = -20``; it
agrees with scipy's to about 1e-15 relative (tests/test_normal.py).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.typing import NDArray

__all__ = ["brentq", "fminbound", "log_ndtr", "log_ndtr_array"]

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


def log_ndtr_array(x: Any) -> NDArray[np.float64]:
    """:func:`log_ndtr` elementwise, for the short arrays of a privacy profile."""
    values = np.asarray(x, dtype=np.float64)
    return np.array([log_ndtr(v) for v in values.ravel().tolist()]).reshape(values.shape)


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


def _sign(x: float) -> float:
    return 0.0 if x == 0 else math.copysign(1.0, x)


def fminbound(
    f: Callable[..., float],
    lo: float,
    hi: float,
    *,
    args: tuple[Any, ...] = (),
    xatol: float = 1e-5,
    maxiter: int = 500,
) -> tuple[float, float]:
    """``(x, f(x))`` at a local minimum of ``f`` on ``[lo, hi]``, as scipy's bounded method.

    A port of scipy's ``_minimize_scalar_bounded`` (Brent's golden-section
    search with parabolic steps): the same function values give the same
    steps and the same result.
    """
    sqrt_eps = math.sqrt(2.2e-16)
    golden_mean = 0.5 * (3.0 - math.sqrt(5.0))
    a, b = float(lo), float(hi)
    fulc = a + golden_mean * (b - a)
    nfc, xf = fulc, fulc
    rat = e = 0.0
    x = xf
    fx = float(f(x, *args))
    num = 1
    ffulc = fnfc = fx
    xm = 0.5 * (a + b)
    tol1 = sqrt_eps * abs(xf) + xatol / 3.0
    tol2 = 2.0 * tol1
    while abs(xf - xm) > (tol2 - 0.5 * (b - a)):
        golden = True
        if abs(e) > tol1:  # try a parabolic fit
            golden = False
            r = (xf - nfc) * (fx - ffulc)
            q = (xf - fulc) * (fx - fnfc)
            p = (xf - fulc) * q - (xf - nfc) * r
            q = 2.0 * (q - r)
            if q > 0.0:
                p = -p
            q = abs(q)
            r = e
            e = rat
            if abs(p) < abs(0.5 * q * r) and p > q * (a - xf) and p < q * (b - xf):
                rat = (p + 0.0) / q
                x = xf + rat
                if (x - a) < tol2 or (b - x) < tol2:
                    rat = tol1 * (_sign(xm - xf) + float(xm - xf == 0))
            else:
                golden = True
        if golden:  # a golden-section step
            e = a - xf if xf >= xm else b - xf
            rat = golden_mean * e
        x = xf + (_sign(rat) + float(rat == 0)) * max(abs(rat), tol1)
        fu = float(f(x, *args))
        num += 1
        if fu <= fx:
            if x >= xf:
                a = xf
            else:
                b = xf
            fulc, ffulc = nfc, fnfc
            nfc, fnfc = xf, fx
            xf, fx = x, fu
        else:
            if x < xf:
                a = x
            else:
                b = x
            if (fu <= fnfc) or (nfc == xf):
                fulc, ffulc = nfc, fnfc
                nfc, fnfc = x, fu
            elif (fu <= ffulc) or (fulc == xf) or (fulc == nfc):
                fulc, ffulc = x, fu
        xm = 0.5 * (a + b)
        tol1 = sqrt_eps * abs(xf) + xatol / 3.0
        tol2 = 2.0 * tol1
        if num >= maxiter:
            break
    return xf, fx
