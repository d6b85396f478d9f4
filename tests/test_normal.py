"""The standard-library log-CDF and root finder behind the Gaussian calibration."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import optimize, special

from dppca.privacy._normal import brentq, fminbound, log_ndtr, log_ndtr_array
from dppca.privacy.mechanisms import _analytic_delta, analytic_multiplier


def test_log_ndtr_matches_scipy_in_both_tails():
    xs = np.concatenate([np.linspace(-60.0, 8.0, 6801), -np.logspace(-3, 4, 200)])
    ours = np.array([log_ndtr(float(x)) for x in xs])
    theirs = special.log_ndtr(xs)
    # both are a few ulps from the truth; 1e-13 relative leaves room for either
    np.testing.assert_allclose(ours, theirs, rtol=1e-13, atol=0)
    assert log_ndtr(-math.inf) == -math.inf and log_ndtr(math.inf) == 0.0


@pytest.mark.parametrize(
    "f", [lambda x: math.cos(x) - x, lambda x: x**3 - 2 * x - 5, lambda x: math.exp(x) - 10]
)
def test_brentq_takes_scipys_steps(f):
    tol = {"xtol": 1e-14, "rtol": 4 * np.finfo(float).eps}
    assert brentq(f, 0.0, 3.0, **tol) == optimize.brentq(f, 0.0, 3.0, **tol)


def test_brentq_refuses_a_bracket_without_a_sign_change():
    with pytest.raises(ValueError, match="signs"):
        brentq(lambda x: x * x + 1, -1.0, 1.0)


@pytest.mark.parametrize("eps", [1e-3, 0.1, 1.0, 5.0, 50.0])
@pytest.mark.parametrize("delta", [1e-12, 1e-6, 1e-2])
def test_calibration_agrees_with_scipys_and_meets_delta(eps, delta):
    def scipy_delta(sigma: float) -> float:
        la = special.log_ndtr(0.5 / sigma - eps * sigma)
        lb = special.log_ndtr(-0.5 / sigma - eps * sigma)
        return math.exp(la) * -math.expm1(eps + lb - la)

    sigma = analytic_multiplier(eps, delta)
    assert _analytic_delta(sigma, eps) <= delta
    # the root of scipy's profile: the same sigma to the root finder's tolerance
    root = math.exp(
        optimize.brentq(
            lambda s: scipy_delta(math.exp(s)) - delta, math.log(1e-12), math.log(sigma) + 1
        )
    )
    assert sigma == pytest.approx(root, rel=1e-11)
    assert scipy_delta(sigma) <= delta * (1 + 1e-12)


@pytest.mark.parametrize(
    ("f", "bounds"),
    [
        (lambda x, a: (x - a) ** 2, (-3.0, 5.0)),
        (lambda x, a: math.exp(x) * a + math.exp(-2 * x), (0.0, 4.0)),
        (lambda x, a: abs(math.sin(3 * x)) + a, (0.5, 2.5)),
    ],
)
def test_fminbound_takes_scipys_steps(f, bounds):
    xatol = 1e-12 * max(1.0, bounds[1])
    theirs = optimize.minimize_scalar(
        f, bounds=bounds, args=(0.3,), method="bounded", options={"xatol": xatol}
    )
    assert fminbound(f, *bounds, args=(0.3,), xatol=xatol) == (theirs.x, theirs.fun)


def test_log_ndtr_array_keeps_the_shape():
    x = np.array([[-50.0, -2.0], [0.0, 3.0]])
    np.testing.assert_allclose(log_ndtr_array(x), special.log_ndtr(x), rtol=1e-13)
