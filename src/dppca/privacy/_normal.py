"""The standard normal's log-CDF, a root finder and a minimiser, without scipy.

The Gaussian mechanism's calibration (:mod:`dppca.privacy.mechanisms`), the
accountant's inversion of a Gaussian profile (:mod:`dppca.privacy.composition`)
and the trade-off curve (:mod:`dppca.privacy.tradeoff`) need three small
numerical tools. scipy has all of them, but loading ``scipy.special`` and
``scipy.optimize`` takes about a CPU-second, more than a whole ``--dry-run``
or ledger query; the versions here load nothing beyond :mod:`math` and numpy.

:func:`log_ndtr`
    ``log Phi(x)`` from :func:`math.erfc`. For ``x >= -1`` the upper tail
    ``Q = erfc(x / sqrt 2) / 2`` is at most 0.85 and ``log1p(-Q)`` keeps the
    digits of a ``Phi`` close to 1; below, ``Phi(x) = erfc(-x / sqrt 2) / 2``
    is a small number computed without cancellation, and its log is taken
    directly. Below ``x = -20`` (``erfc`` underflows near ``x = -38``), ``log Phi``
    is the log of the normal density over ``-x`` plus the log of the
    asymptotic series ``1 - 1/x^2 + 3/x^4 - ...``, summed until its terms
    vanish against the total. The tests compare it with scipy's to 1e-13
    relative.
:func:`bracket_root`
    Shrinks a bracket around a sign change, alternating regula falsi steps
    (with the Illinois down-weighting of a stuck end) and plain bisection, and
    returns both ends of the final bracket. Callers inverting a privacy
    profile return the end at which the privacy condition was evaluated and
    held, so the condition holds at the value they return, as computed, and
    the other end (within the tolerance) is where it failed.
:func:`golden_min`
    Golden-section search for the minimum of a unimodal function, returning
    the best point it evaluated.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.typing import NDArray

__all__ = ["bracket_root", "golden_min", "log_ndtr", "log_ndtr_array"]

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


def bracket_root(
    f: Callable[[float], float],
    a: float,
    b: float,
    *,
    xtol: float,
    rtol: float,
    maxiter: int = 6400,
) -> tuple[float, float]:
    """Shrink ``[a, b]`` around a sign change of ``f``; return ``(above, below)``.

    Parameters
    ----------
    f : callable
        ``f(x) -> float``; ``f > 0`` at one of ``a``, ``b`` and ``f <= 0`` at
        the other (either order).
    a, b : float
        The ends of the starting bracket.
    xtol, rtol : float
        The search stops once the bracket is at most
        ``xtol + rtol * min(|above|, |below|)`` wide, or when no float lies
        strictly between its ends.
    maxiter : int, default=6400
        A guard only: the loop ends by itself (see Notes), within
        ``3 * 2100 + 3`` steps even from the widest bracket of doubles down to
        adjacent floats.

    Returns
    -------
    above, below : float
        The ends of the final bracket: ``f(above) > 0 >= f(below)``, both
        values computed by ``f`` itself. For a continuous ``f`` a root lies
        between them, so each is within the bracket width of it. ``below`` is
        the end where ``f <= 0`` held when evaluated.

    Raises
    ------
    ValueError
        When ``f`` is not ``> 0`` at one end and ``<= 0`` at the other, or
        returns NaN.
    RuntimeError
        When ``maxiter`` steps do not reach the tolerance (not with the
        default).

    Notes
    -----
    Each step evaluates ``f`` at one point strictly inside the bracket and
    keeps the half that still changes sign, so the bracket shrinks at every
    step and, as there are finitely many floats, the loop ends. The point is
    the regula falsi estimate (where the chord between the ends crosses
    zero) when that lies strictly inside and the two previous steps together
    at least halved the bracket; otherwise it is the midpoint (so the first
    step bisects). Hence every three consecutive steps at least halve the
    bracket (up to the rounding of the midpoint), and the count of steps is
    at most about three times that of pure bisection,
    ``3 log2(|b - a| / tol) + 3``. When the same end is kept twice in a row,
    its value in the chord is halved (the Illinois rule), which stops
    regula falsi from creeping towards the root from one side only.
    """
    fa, fb = float(f(a)), float(f(b))
    if fa > 0 and fb <= 0:
        above, f_above, below, f_below = float(a), fa, float(b), fb
    elif fb > 0 and fa <= 0:
        above, f_above, below, f_below = float(b), fb, float(a), fa
    else:
        raise ValueError(
            "f must be > 0 at one end of the bracket and <= 0 at the other; "
            f"got f({a!r}) = {fa!r} and f({b!r}) = {fb!r}."
        )
    last_kept = ""  # which end the previous step kept: "above", "below" or neither
    width = one_ago = two_ago = abs(below - above)  # bracket widths, now and before
    for _ in range(maxiter):
        if width <= xtol + rtol * min(abs(above), abs(below)):
            return above, below
        mid = 0.5 * above + 0.5 * below
        lo, hi = min(above, below), max(above, below)
        if not lo < mid < hi:
            return above, below  # adjacent floats: the bracket cannot shrink
        x = mid
        if width <= 0.5 * two_ago and f_below != f_above:
            chord = above - f_above * (below - above) / (f_below - f_above)
            if lo < chord < hi:  # also False for an inf or NaN from overflow
                x = chord
        fx = float(f(x))
        if math.isnan(fx):
            raise ValueError(f"f returned NaN at {x!r}.")
        if fx > 0:
            above, f_above = x, fx
            if last_kept == "below":
                f_below *= 0.5
            last_kept = "below"
        else:
            below, f_below = x, fx
            if last_kept == "above":
                f_above *= 0.5
            last_kept = "above"
        width, one_ago, two_ago = abs(below - above), width, one_ago
    raise RuntimeError(f"bracket_root did not reach the tolerance in {maxiter} steps.")


_INV_GOLDEN = (math.sqrt(5.0) - 1.0) / 2.0  # 1 / golden ratio, about 0.618


def golden_min(
    f: Callable[..., float],
    lo: float,
    hi: float,
    *,
    args: tuple[Any, ...] = (),
    xatol: float,
    maxiter: int = 500,
) -> tuple[float, float]:
    """``(x, f(x))`` at the lowest value a golden-section search on ``[lo, hi]`` finds.

    Parameters
    ----------
    f : callable
        ``f(x, *args) -> float``.
    lo, hi : float
        The interval, ``lo < hi``; its ends are not evaluated.
    args : tuple, default=()
        Extra arguments for ``f``.
    xatol : float
        The search stops once the interval kept is at most ``xatol`` wide (or
        stops shrinking in floating point).
    maxiter : int, default=500
        At most this many evaluations after the first two.

    Returns
    -------
    x, fx : float
        The evaluated point with the lowest value, and that value.

    Notes
    -----
    Two inner points split ``[a, b]`` at fractions ``0.382`` and ``0.618``;
    the side beyond the worse one is dropped and the kept inner point is one
    of the two inner points of the new interval, so each step costs one
    evaluation and shrinks the interval by the factor 0.618. For a unimodal
    ``f`` the minimiser stays in ``[a, b]``, so it is within ``xatol`` of the
    returned ``x`` at the end (an interior minimiser; one at an end of
    ``[lo, hi]`` is approached to within ``xatol``). Whatever ``f``, the
    returned value is one ``f`` actually took.
    """
    a, b = float(lo), float(hi)
    c, d = b - _INV_GOLDEN * (b - a), a + _INV_GOLDEN * (b - a)
    fc, fd = float(f(c, *args)), float(f(d, *args))
    best_x, best_f = (c, fc) if fc <= fd else (d, fd)
    for _ in range(maxiter):
        width = b - a
        if width <= xatol:
            break
        if fc <= fd:  # a minimiser lies in [a, d]
            b, d, fd = d, c, fc
            c = b - _INV_GOLDEN * (b - a)
            fc = float(f(c, *args))
            x, fx = c, fc
        else:  # a minimiser lies in [c, b]
            a, c, fc = c, d, fd
            d = a + _INV_GOLDEN * (b - a)
            fd = float(f(d, *args))
            x, fx = d, fd
        if fx < best_f:
            best_x, best_f = x, fx
        if not b - a < width:
            break  # the interval no longer shrinks in floating point
    return best_x, best_f
