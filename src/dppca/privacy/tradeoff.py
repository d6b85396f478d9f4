"""What a release's eps means: the best test an attacker can run against it.

Differential privacy bounds how well anyone who sees a release can tell two
neighbouring tables apart (the table with a given person's row and the same
table with that row replaced). Seen as a hypothesis test, every test with
false-alarm rate (type I error) ``alpha`` has power (the chance to detect the
person) at most ``1 - f(alpha)``, where ``f`` is the release's trade-off
function (Dong, Roth and Su 2022). This module computes that bound for a
:class:`~dppca.privacy.accounting.PrivacyCost` from the noise its parts carry,
and states it in a sentence.

The bound is read off the tight privacy profile ``delta(eps)`` of the
composed release (the same profile the accountant of
:mod:`dppca.privacy.composition` inverts): for every ``eps >= 0``, an
``(eps, delta(eps))``-DP release allows power at most
``min(1, e^eps alpha + delta(eps), 1 - e^-eps (1 - alpha - delta(eps)))``, and
the infimum over ``eps`` is the exact trade-off of the dominating pair
(Dong, Roth and Su 2022, Proposition 2.12). For one Gaussian mechanism it is
the Gaussian-DP curve ``Phi(Phi^-1(alpha) + mu)`` with
``mu = sensitivity / sigma``; for a pure eps-DP part,
``min(1, e^eps alpha, 1 - e^-eps (1 - alpha))``.

References
----------
Dong, J., Roth, A. and Su, W. J. (2022). Gaussian differential privacy.
Journal of the Royal Statistical Society B 84(1), 3-37.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ._normal import golden_min, log_ndtr_array
from .composition import (
    _LEGENDRE_NODES,
    _composed_pld,
    _event,
    _exact_delta,
    _laplace_delta,
    _loss_atoms,
)
from .cost import PrivacyCost

__all__ = [
    "attacker_power",
    "attacker_sentence",
    "percent_text",
    "privacy_profile",
    "tradeoff_curve",
]

Profile = Callable[[NDArray[np.float64]], NDArray[np.float64]]

# Relative agreement asked of the Laplace quadrature (96 against 48 nodes)
# before the closed-form profile is trusted; otherwise the PLD accountant.
_QUADRATURE_TOL = 1e-9


def _events(cost: PrivacyCost | Iterable[PrivacyCost]) -> tuple[tuple[Any, ...], ...]:
    costs = (cost,) if isinstance(cost, PrivacyCost) else tuple(cost)
    for c in costs:
        if not isinstance(c, PrivacyCost):
            raise TypeError(
                f"cost must be a PrivacyCost or an iterable of them; got {type(c).__name__}."
            )
    leaves = [leaf for c in costs for leaf in c.leaves()]
    return tuple(sorted((e for e in map(_event, leaves) if e is not None), key=repr))


def _gaussian_profile(mu: float) -> Profile:
    """Exact profile of the Gaussian mechanism with ``mu = sensitivity / sigma``."""

    def delta(eps: NDArray[np.float64]) -> NDArray[np.float64]:
        la = log_ndtr_array(0.5 * mu - eps / mu)
        lb = log_ndtr_array(-0.5 * mu - eps / mu)
        with np.errstate(over="ignore", invalid="ignore"):
            d = np.exp(la) * -np.expm1(eps + lb - la)
        return np.clip(np.where(np.isfinite(d), d, 0.0), 0.0, 1.0)

    return delta


def _pld_profile(mu: float, others: list[tuple[Any, ...]]) -> Profile:
    """Profile from the PLD accountant of dp-accounting (pessimistic: never below the truth)."""
    total = _composed_pld(mu, others)

    def delta(eps: NDArray[np.float64]) -> NDArray[np.float64]:
        d = np.atleast_1d(np.asarray(total.get_delta_for_epsilon(list(map(float, eps)))))
        return np.clip(d.astype(np.float64), 0.0, 1.0)

    delta.slow = True  # type: ignore[attr-defined]  # one call costs ~0.1 s: tabulate
    return delta


def _mixed_profile(mu: float, others: list[tuple[Any, ...]]) -> Profile | None:
    """Closed-form profile of a Gaussian mixed over a few other parts' losses, or None."""
    laplace = [e for e in others if e[0] == "laplace"]
    if len(laplace) > 2 or (len(laplace) > 1 and mu <= 0):
        return None
    closed = bool(laplace) and mu <= 0
    kept = [e for e in others if e[0] != "laplace"] if closed else others
    atoms = _loss_atoms(kept, 2 if closed else _LEGENDRE_NODES)
    if atoms is None:
        return None
    coarse = _loss_atoms(others, _LEGENDRE_NODES // 2) if laplace and not closed else None
    a = 1.0 / float(laplace[0][1]) if closed else 0.0

    def one(e: float, which: Any) -> float:
        if closed:
            return _laplace_delta(a, which, e)
        return _exact_delta(mu, which, e)

    def delta(eps: NDArray[np.float64]) -> NDArray[np.float64]:
        return np.array([one(float(e), atoms) for e in eps], dtype=np.float64)

    if coarse is not None:
        probe = np.linspace(0.0, 5.0 * mu + 2.0 * a + 10.0, 9)
        fine = delta(probe)
        rough = np.array([_exact_delta(mu, coarse, float(e)) for e in probe])
        if np.max(np.abs(fine - rough)) > _QUADRATURE_TOL:
            return None
    return delta


@functools.lru_cache(maxsize=256)
def _cached_powers(events: tuple[tuple[Any, ...], ...], alphas: tuple[float, ...]) -> Any:
    """Powers for a release's events (sorted, hashable): the same ledger is priced once."""
    powers = _powers(_profile_of(events), np.array(alphas, dtype=np.float64))
    powers.setflags(write=False)
    return powers


def _profile_of(events: tuple[tuple[Any, ...], ...]) -> Profile:
    mu = math.sqrt(math.fsum(1.0 / float(e[1]) ** 2 for e in events if e[0] == "gaussian"))
    others = [e for e in events if e[0] != "gaussian"]
    if not others:
        if mu == 0:
            return lambda eps: np.zeros(np.shape(eps))
        return _gaussian_profile(mu)
    return _mixed_profile(mu, others) or _pld_profile(mu, others)


def privacy_profile(cost: PrivacyCost | Iterable[PrivacyCost]) -> Profile:
    """The tight privacy profile ``eps -> delta(eps)`` of a release's noise.

    Parameters
    ----------
    cost : PrivacyCost or iterable of PrivacyCost
        The release (a composed cost is opened into its parts); several costs
        are composed, as releases made from the same table.

    Returns
    -------
    callable
        Maps an array of ``eps >= 0`` to the smallest ``delta`` for which the
        composed release is ``(eps, delta)``-DP. Gaussian parts are merged
        exactly; with a few pure, Laplace or generic parts beside them, the
        profile is the Gaussian's mixed over their losses (closed form); with
        more, the PLD accountant of ``dp-accounting`` (whose rounding can only
        overstate delta).
    """
    return _profile_of(_events(cost))


def _upper_end(profile: Profile) -> float:
    """An eps beyond which the profile no longer falls (by more than 1e-13)."""
    hi = 1.0
    while hi < 1e4:
        lo_d, hi_d = profile(np.array([hi, 2.0 * hi]))
        if lo_d - hi_d <= 1e-13:
            return 2.0 * hi
        hi *= 2.0
    return hi


def _powers(profile: Profile, alphas: NDArray[np.float64]) -> NDArray[np.float64]:
    """Upper bounds on power at each false-alarm rate, inf over eps by golden section."""
    hi = _upper_end(profile)
    slow = getattr(profile, "slow", False)
    if slow:
        # Each grid point is a valid bound; 4000 points in one call leave an
        # error of second order in the spacing (below 1e-6 here), upward only.
        grid = np.linspace(0.0, hi, 4001)
    else:
        grid = np.concatenate(([0.0], np.geomspace(1e-4, hi, 400)))
    deltas = profile(grid)

    def branch1(e: float, alpha: float) -> float:
        return math.exp(e) * alpha + float(profile(np.array([e]))[0])

    def branch2(e: float, alpha: float) -> float:
        return 1.0 - math.exp(-e) * (1.0 - alpha - float(profile(np.array([e]))[0]))

    out = np.empty(alphas.shape)
    for i, alpha in enumerate(alphas):
        if alpha >= 1.0:
            out[i] = 1.0
            continue
        best = 1.0
        values = (
            np.exp(grid) * alpha + deltas,
            1.0 - np.exp(-grid) * (1.0 - alpha - deltas),
        )
        for fun, vals in zip((branch1, branch2), values, strict=True):
            j = int(np.argmin(vals))
            best = min(best, float(vals[j]))
            lo, up = grid[max(j - 1, 0)], grid[min(j + 1, grid.size - 1)]
            if up > lo and not slow:
                _, low = golden_min(fun, lo, up, args=(alpha,), xatol=1e-12 * max(1.0, up))
                best = min(best, low)
        out[i] = max(alpha, min(1.0, best))
    return out


def _check_alphas(alphas: ArrayLike) -> NDArray[np.float64]:
    a = np.asarray(alphas, dtype=np.float64)
    if a.size == 0 or not np.all(np.isfinite(a)) or np.any((a < 0) | (a > 1)):
        raise ValueError("alphas must be finite false-alarm rates in [0, 1].")
    return a


def tradeoff_curve(
    cost: PrivacyCost | Iterable[PrivacyCost], alphas: ArrayLike
) -> NDArray[np.float64]:
    """Most power any membership test can have against a release, per false-alarm rate.

    Parameters
    ----------
    cost : PrivacyCost or iterable of PrivacyCost
        The release; several costs are composed.
    alphas : array_like
        False-alarm rates (type I errors) in [0, 1].

    Returns
    -------
    ndarray
        Same shape as ``alphas``: ``1 - f(alpha)`` for the release's exact
        trade-off function ``f``, the largest chance that a test deciding
        whether a given person's row is in the table detects it while
        wrongly accusing at rate ``alpha``. At least ``alpha`` (a coin can do
        that); 1 would mean no protection.

    Notes
    -----
    Computed from the privacy profile of the parts' noise
    (:func:`privacy_profile`) as the infimum over ``eps`` of
    ``min(1, e^eps alpha + delta(eps), 1 - e^-eps (1 - alpha - delta(eps)))``,
    a grid search refined by golden-section search. Every ``eps`` gives a valid
    bound, so the result can only err upward (less privacy than true), by
    far less than 1e-6 for the releases dppca makes. Post-processing only:
    nothing here reads data.

    Examples
    --------
    >>> from dppca.privacy.accounting import PrivacyCost
    >>> g = PrivacyCost(1.0, 1e-6, "gaussian", "x", kind="gaussian", sensitivity=1.0, sigma=2.0)
    >>> tradeoff_curve(g, [0.01, 0.05]).round(4)  # Phi(Phi^-1(alpha) + 0.5)
    array([0.0339, 0.1261])
    """
    a = _check_alphas(alphas)
    flat = _cached_powers(_events(cost), tuple(map(float, a.ravel())))
    return np.array(flat).reshape(a.shape)


def attacker_power(cost: PrivacyCost | Iterable[PrivacyCost], alpha: float = 0.01) -> float:
    """The largest detection rate of a membership test at false-alarm rate ``alpha``."""
    (power,) = tradeoff_curve(cost, [alpha])
    return float(power)


def percent_text(x: float, *, up: bool) -> str:
    """``x`` as a percentage with three significant digits, rounded up or to nearest."""
    v = 100.0 * x
    if v == 0:
        return "0%"
    digits = 2 - math.floor(math.log10(abs(v)))
    if up:
        v = math.ceil(v * 10**digits - 1e-9) / 10**digits
    text = f"{v:.{max(digits, 0)}f}".rstrip("0").rstrip(".") if digits > 0 else f"{v:.0f}"
    return f"{text}%"


def attacker_sentence(
    cost: PrivacyCost | Iterable[PrivacyCost] | None, alpha: float = 0.01
) -> str:
    """One sentence saying what the release's privacy guarantee means to an attacker.

    Parameters
    ----------
    cost : PrivacyCost, iterable of PrivacyCost or None
        The release (several costs are composed); None for a non-private result.
    alpha : float, default=0.01
        The attacker's false-alarm rate, in (0, 1).

    Returns
    -------
    str
        For example "An attacker testing whether a given person is in the
        table, at a 1% false-alarm rate, detects them at most 9.3% of the
        time (100% would mean no protection)." The percentage is
        :func:`attacker_power` rounded up to three significant digits.

    Examples
    --------
    >>> from dppca.privacy.accounting import PrivacyCost
    >>> g = PrivacyCost(1.0, 1e-6, "gaussian", "x", kind="gaussian", sensitivity=1.0, sigma=1.0)
    >>> attacker_sentence(g)
    'An attacker testing whether a given person is in the table, at a 1% false-alarm rate, \
detects them at most 9.24% of the time (100% would mean no protection).'
    """
    if not (isinstance(alpha, (int, float)) and 0 < alpha < 1):
        raise ValueError(f"alpha must be a false-alarm rate in (0, 1); got {alpha!r}.")
    if cost is None:
        return (
            "This result is not private: an attacker can learn about any person in the table "
            "from it without limit."
        )
    power = attacker_power(cost, alpha)
    return (
        "An attacker testing whether a given person is in the table, at a "
        f"{percent_text(alpha, up=False)} false-alarm rate, detects them at most "
        f"{percent_text(power, up=True)} of the time (100% would mean no protection)."
    )
