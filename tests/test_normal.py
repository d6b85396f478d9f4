"""The standard-library log-CDF, root finder and minimiser behind the privacy maths."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import optimize, special

import dppca.privacy.accounting  # noqa: F401  (loads the privacy package in its usual order)
from dppca.privacy._normal import bracket_root, golden_min, log_ndtr, log_ndtr_array
from dppca.privacy.composition import _gaussian_eps
from dppca.privacy.mechanisms import _analytic_delta, analytic_multiplier

EPS64 = float(np.finfo(float).eps)


def test_log_ndtr_matches_scipy_in_both_tails():
    xs = np.concatenate([np.linspace(-60.0, 8.0, 6801), -np.logspace(-3, 4, 200)])
    ours = np.array([log_ndtr(float(x)) for x in xs])
    theirs = special.log_ndtr(xs)
    # both are a few ulps from the truth; 1e-13 relative leaves room for either
    np.testing.assert_allclose(ours, theirs, rtol=1e-13, atol=0)
    assert log_ndtr(-math.inf) == -math.inf and log_ndtr(math.inf) == 0.0


# (f, its exact root in [0, 3], how far the computed sign change may sit from it).
# The last is the rounding of f near the root over |f'|: a few ulps of f's terms
# (cos, x^3, exp are within 1 ulp) over a slope >= 1.7; (x - 1)^5 and the step have
# exactly the right sign everywhere, so their computed sign change is the root.
ROOTS = [
    (lambda x: math.cos(x) - x, 0.7390851332151607, 8 * EPS64),  # the Dottie number
    (lambda x: x**3 - 2 * x - 5, 2.0945514815423265, 8 * EPS64),  # Wallis's cubic
    (lambda x: math.exp(x) - 10, math.log(10.0), 8 * EPS64),
    (lambda x: (x - 1) ** 5, 1.0, 0.0),  # flat at the root: regula falsi alone crawls
    (lambda x: 1.0 if x < 2.5 else -1.0, 2.5, 0.0),  # not continuous: bisection only
]
XTOL, RTOL = 1e-14, 4 * EPS64


def _bound(above: float, below: float) -> float:
    """The stopping rule's width: a bracket no wider, or one with no float inside."""
    return max(
        XTOL + RTOL * min(abs(above), abs(below)), abs(math.nextafter(below, above) - below)
    )


@pytest.mark.parametrize(("f", "root", "fuzz"), ROOTS)
@pytest.mark.parametrize("flip", [False, True])
def test_bracket_root_ends_bracket_the_root_within_the_tolerance(f, root, fuzz, flip):
    g = (lambda x: -f(x)) if flip else f  # either sign order of the ends
    above, below = bracket_root(g, 0.0, 3.0, xtol=XTOL, rtol=RTOL)
    assert g(above) > 0 >= g(below)
    width = abs(above - below)
    assert width <= _bound(above, below)
    assert abs(below - root) <= width + fuzz and abs(above - root) <= width + fuzz


@pytest.mark.parametrize(("f", "root", "fuzz"), ROOTS[:3])
def test_bracket_root_agrees_with_scipy_within_both_tolerances(f, root, fuzz):
    above, below = bracket_root(f, 0.0, 3.0, xtol=XTOL, rtol=RTOL)
    theirs = optimize.brentq(f, 0.0, 3.0, xtol=XTOL, rtol=RTOL)
    # ours is within our width of the computed sign change, scipy's within
    # xtol + rtol |x| of it (its documented guarantee)
    assert abs(below - theirs) <= _bound(above, below) + XTOL + RTOL * abs(theirs) + fuzz


@pytest.mark.parametrize(("f", "root", "fuzz"), ROOTS)
def test_bracket_root_needs_at_most_three_times_the_bisection_steps(f, root, fuzz):
    calls = []

    def counted(x: float) -> float:
        calls.append(x)
        return f(x)

    bracket_root(counted, 0.0, 3.0, xtol=XTOL, rtol=RTOL)
    # bisection halves the width 3 -> XTOL in ceil(log2(3 / XTOL)) = 49 steps;
    # every three steps here halve it at least once, plus the two end values
    assert len(calls) <= 3 * math.ceil(math.log2(3.0 / XTOL)) + 3 + 2


@pytest.mark.parametrize(("f", "root", "fuzz"), ROOTS[1:3])
def test_bracket_root_is_fast_on_smooth_simple_roots(f, root, fuzz):
    calls = []

    def counted(x: float) -> float:
        calls.append(x)
        return f(x)

    bracket_root(counted, 0.0, 3.0, xtol=XTOL, rtol=RTOL)
    # the Illinois step closes in superlinearly: 11 and 13 calls here, against
    # about 60 for plain regula falsi and 51 for bisection
    assert len(calls) <= 20


def test_bracket_root_refuses_a_bracket_without_a_sign_change():
    with pytest.raises(ValueError, match="> 0 at one end"):
        bracket_root(lambda x: x * x + 1, -1.0, 1.0, xtol=XTOL, rtol=RTOL)
    with pytest.raises(ValueError, match="> 0 at one end"):
        bracket_root(lambda x: math.nan, -1.0, 1.0, xtol=XTOL, rtol=RTOL)


CALIBRATIONS = [(e, d) for e in (1e-3, 0.1, 1.0, 5.0, 50.0) for d in (1e-12, 1e-6, 1e-2)]


def _profile_noise(sigma: float, eps: float) -> float:
    """A bound on the relative rounding error of ``_analytic_delta(sigma, eps)``.

    delta = e^la (-expm1(u)) with u = eps + lb - la; la and lb are a few ulps
    of themselves off, so u is off by about 8 ulp (|la| + |lb| + eps), which
    -expm1(u) turns into a relative error of that times e^u / |expm1(u)|
    (large where the two terms nearly cancel); exp and expm1 add a few ulps.
    Within this band the computed profile need not be monotone, so a root
    finder can only locate its crossing to within it.
    """
    la = log_ndtr(0.5 / sigma - eps * sigma)
    lb = log_ndtr(-0.5 / sigma - eps * sigma)
    u = eps + lb - la
    return 8 * EPS64 * (abs(la) + abs(lb) + eps) * math.exp(u) / abs(math.expm1(u)) + 8 * EPS64


def _log_slope(fun, x: float) -> float:
    """|d log fun / d x| by a central difference; halved so it errs low."""
    h = 1e-4 * max(1.0, abs(x))
    return abs(math.log(fun(x + h)) - math.log(fun(x - h))) / (2 * h) / 2


@pytest.mark.parametrize(("eps", "delta"), CALIBRATIONS)
def test_calibration_is_safe_and_within_the_tolerance_of_the_root(eps, delta):
    sigma = analytic_multiplier(eps, delta)
    # safe: the exact profile, evaluated at the returned float, meets delta
    assert _analytic_delta(sigma, eps) <= delta
    # tight: scipy's root of the same profile in log(sigma). Ours is within
    # our stopping width of a computed crossing, scipy's within its xtol +
    # rtol |x|, and computed crossings lie within the profile's noise band
    # (relative noise over the profile's log-slope) of each other.
    log_sigma = math.log(sigma)
    theirs = optimize.brentq(
        lambda s: _analytic_delta(math.exp(s), eps) - delta,
        math.log(1e-12),
        log_sigma + 1,
        xtol=XTOL,
        rtol=RTOL,
    )
    width = 1e-14 + 4 * EPS64 * abs(log_sigma)
    band = _profile_noise(sigma, eps) / _log_slope(
        lambda s: _analytic_delta(math.exp(s), eps), log_sigma
    )
    assert abs(log_sigma - theirs) <= width + XTOL + RTOL * abs(theirs) + band + 2 * EPS64


@pytest.mark.parametrize(("eps", "delta"), CALIBRATIONS)
def test_accountant_eps_of_a_gaussian_is_safe_and_tight(eps, delta):
    sigma = analytic_multiplier(eps, delta)
    got = _gaussian_eps(1.0 / sigma, delta)
    # safe: the profile at the returned eps, exactly evaluated, meets delta
    assert _analytic_delta(sigma, got) <= delta
    # tight: as for sigma above, against scipy's root in eps; our stopping
    # width there is 1e-15 (1 + eps)
    theirs = optimize.brentq(
        lambda e: _analytic_delta(sigma, e) - delta, 0.0, 2 * eps + 1, xtol=1e-15, rtol=RTOL
    )
    band = _profile_noise(sigma, got) / _log_slope(lambda e: _analytic_delta(sigma, e), got)
    assert abs(got - theirs) <= 1e-15 * (1 + got) + 1e-15 + RTOL * theirs + band
    # and the round trip gives back eps: sigma sits within 2e-14 relative
    # above the smallest valid scale, which moves eps by far less than 1e-10
    assert got == pytest.approx(eps, rel=1e-10)


@pytest.mark.parametrize(("eps", "delta"), CALIBRATIONS)
def test_calibration_meets_delta_under_scipys_profile(eps, delta):
    def scipy_delta(sigma: float) -> float:
        la = special.log_ndtr(0.5 / sigma - eps * sigma)
        lb = special.log_ndtr(-0.5 / sigma - eps * sigma)
        return math.exp(la) * -math.expm1(eps + lb - la)

    sigma = analytic_multiplier(eps, delta)
    # The two profiles differ by the log_ndtr rounding amplified by the
    # cancellation in 1 - e^(eps + lb - la): measured at most 7e-12 relative
    # on this grid (eps = 1e-3, delta = 1e-6); 1e-10 leaves room.
    assert scipy_delta(sigma) <= delta * (1 + 1e-10)


# (f, bounds, exact minimiser, f'' there or None for a kink). Values near the
# minimum carry a rounding noise of a few ulps of f*; where f is smooth the
# comparisons cannot see x closer than sqrt(2 noise / f''), so the tolerance on
# x is xatol plus that, and on f(x) the noise plus f'' xatol^2 / 2.
MINIMA = [
    (lambda x, a: (x - a) ** 2, (-3.0, 5.0), 0.3, 2.0),
    (
        lambda x, a: math.exp(x) * a + math.exp(-2 * x),
        (0.0, 4.0),
        math.log(2.0 / 0.3) / 3.0,
        0.3 * (2.0 / 0.3) ** (1 / 3) + 4.0 * (2.0 / 0.3) ** (-2 / 3),
    ),
    (lambda x, a: abs(math.sin(3 * x)) + a, (0.5, 1.5), math.pi / 3, None),
]


@pytest.mark.parametrize(("f", "bounds", "xmin", "curv"), MINIMA)
def test_golden_min_finds_the_minimum_within_the_tolerance(f, bounds, xmin, curv):
    xatol = 1e-12 * max(1.0, bounds[1])  # as the trade-off curve asks
    x, fx = golden_min(f, *bounds, args=(0.3,), xatol=xatol)
    fmin = f(xmin, 0.3)
    noise = 8 * EPS64 * max(1.0, abs(fmin))
    if curv is None:  # |sin 3x| has slope 3 beside its kink and no flat part
        xtol, ftol = xatol, 3 * xatol + noise
    else:
        xtol, ftol = xatol + math.sqrt(2 * noise / curv), noise + curv * xatol**2 / 2
    assert fx == f(x, 0.3)  # the value is one f took
    assert abs(x - xmin) <= xtol
    assert fx - fmin <= ftol
    theirs = optimize.minimize_scalar(
        f, bounds=bounds, args=(0.3,), method="bounded", options={"xatol": xatol}
    )
    # scipy's bounded Brent stops at about sqrt(eps) |x| + xatol, and then
    # sits within that of the minimiser (plus the same noise)
    scipy_xtol = xtol + 2 * (1.5e-8 * abs(theirs.x) + xatol)
    slope = 3.0 if curv is None else curv * scipy_xtol
    assert abs(x - theirs.x) <= xtol + scipy_xtol
    assert abs(fx - theirs.fun) <= ftol + slope * scipy_xtol + noise


def test_golden_min_returns_the_best_point_even_when_not_unimodal():
    # two dips; whichever the search follows, the value returned is one f
    # took and no larger than any it saw at its first two points
    seen: list[tuple[float, float]] = []

    def f(x: float) -> float:
        y = min((x - 1) ** 2, (x - 4) ** 2 + 0.5)
        seen.append((x, y))
        return y

    x, fx = golden_min(f, 0.0, 5.0, xatol=1e-9)
    assert (x, fx) in seen and fx == min(y for _, y in seen)
    assert abs(x - 1.0) <= 1e-4 or abs(x - 4.0) <= 1e-4


def test_log_ndtr_array_keeps_the_shape():
    x = np.array([[-50.0, -2.0], [0.0, 3.0]])
    np.testing.assert_allclose(log_ndtr_array(x), special.log_ndtr(x), rtol=1e-13)
