"""Tight composition of privacy costs: exact where a closed form exists, PLD otherwise.

Gaussian parts are composed exactly (a composition of Gaussian mechanisms is
one Gaussian mechanism); with a few pure, (eps, delta) or Laplace parts
beside them, exactly as well, by mixing the Gaussian's privacy profile over
the other parts' privacy losses; anything larger with the privacy loss
distribution (PLD) accountant of ``dp-accounting``. These are the accountant's
internals: :mod:`dppca.privacy.tally` keeps a running summary of spent costs with
them, and :mod:`dppca.privacy.totals` states the totals.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from typing import Any

from ..core.lazy import scipy_optimize as optimize
from ..core.lazy import scipy_special as special
from ._normal import bracket_root
from .cost import _REL_SLACK, PrivacyCost
from .mechanisms import _analytic_delta

__all__: list[str] = []

# Width of the privacy-loss grid of the PLD accountant. The accountant rounds
# losses pessimistically (up), so a coarser grid only overstates eps; 1e-4
# composes a handful of parts in well under 0.1 s.
_PLD_GRID = 1e-4


def _event(leaf: PrivacyCost) -> tuple[Any, ...] | None:
    """A hashable description of one elementary release for the accountant."""
    if leaf.kind == "gaussian":
        return ("gaussian", leaf.noise_multiplier)
    if leaf.kind == "laplace":
        return ("laplace", leaf.noise_multiplier)
    if leaf.eps == 0 and leaf.delta == 0:
        return None  # releases nothing about the data
    if leaf.kind == "pure":
        return ("pure", leaf.eps)
    return ("approx", leaf.eps, leaf.delta)


def _claim_holds(leaf: PrivacyCost) -> bool:
    """Whether a noise part's recorded (eps, delta) is true of its noise.

    A record written with the classic calibration far above eps = 1 can claim
    less than its noise gives; then basic composition of the claims is no
    bound, and only the accountant's total (which reads the noise) is used.
    """
    if leaf.kind == "gaussian":
        z = leaf.noise_multiplier
        return _analytic_delta(z, leaf.eps) <= leaf.delta * (1 + 1e-9)  # type: ignore[arg-type]
    if leaf.kind == "laplace":
        return 1.0 / leaf.noise_multiplier <= leaf.eps * (1 + _REL_SLACK)  # type: ignore[operator]
    return True


def _gaussian_eps(mu: float, delta: float) -> float:
    """Smallest eps with the Gaussian mechanism of ``mu = sensitivity / sigma`` (eps, delta)-DP.

    The exact privacy profile (Balle and Wang 2018) is decreasing in eps. The
    root is bracketed to a width of ``1e-15 (1 + eps)`` and the upper end is
    returned, where the profile was evaluated to be at most ``delta``: the
    eps stated is never below the one the computed profile needs.
    """
    sigma = 1.0 / mu

    def excess(e: float) -> float:
        return _analytic_delta(sigma, e) - delta

    if excess(0.0) <= 0:
        return 0.0
    hi = 1.0
    while excess(hi) > 0:
        hi *= 2.0
    # excess(0) > 0 >= excess(hi): the end where excess <= 0 is the safe one
    _, eps = bracket_root(excess, 0.0, hi, xtol=1e-15, rtol=1e-15)
    return eps


# Exact composition of one merged Gaussian with a few pure, (eps, delta) and
# Laplace parts. Their dominating pairs are known: randomized response at eps
# for a pure part (two losses, +-eps), the same plus a loss of +inf with mass
# delta for an (eps, delta) part, and for Laplace noise with ``a = sensitivity
# / scale`` the losses +a (mass 1/2), -a (mass e^-a / 2) and a density
# e^((L - a) / 2) / 4 on (-a, a) (Gauss-Legendre nodes). The profile of the
# product pair is the mixture of the Gaussian profile shifted by each
# combination of the other losses, so it is computed in closed form up to the
# quadrature, whose error is checked by halving the nodes.
_EXACT_ATOMS_MAX = 200_000


# losses and their masses under P (arrays), and the mass of finite losses
_Atoms = tuple[Any, Any, float]


_LEGENDRE_NODES = 96


@functools.lru_cache(maxsize=4)
def _legendre(nodes: int) -> tuple[Any, Any]:
    import numpy as np

    return np.polynomial.legendre.leggauss(nodes)


def _loss_atoms(others: Sequence[tuple[Any, ...]], nodes: int) -> _Atoms | None:
    """Losses and masses (under P) of the non-Gaussian parts composed; mass of +inf."""
    import numpy as np

    losses, masses, keep = np.zeros(1), np.ones(1), 1.0
    x, w = _legendre(nodes)
    for e in others:
        if e[0] == "laplace":
            a = 1.0 / float(e[1])
            new_l = np.concatenate(([a, -a], a * x))
            new_m = np.concatenate(
                ([0.5, 0.5 * math.exp(-a)], a * w * 0.25 * np.exp(0.5 * a * (x - 1.0)))
            )
        else:
            eps_e = float(e[1])
            if e[0] == "approx":
                keep *= 1.0 - float(e[2])
            new_l = np.array([eps_e, -eps_e])
            new_m = np.array([1.0 / (1.0 + math.exp(-eps_e)), 1.0 / (1.0 + math.exp(eps_e))])
        losses = (losses[:, None] + new_l[None, :]).ravel()
        masses = (masses[:, None] * new_m[None, :]).ravel()
        if losses.size > _EXACT_ATOMS_MAX:
            return None
    return losses, masses, keep


def _exact_delta(mu: float, atoms: _Atoms, e: float) -> float:
    """Hockey-stick divergence at ``e`` of the Gaussian (``mu``) times the atoms' pair."""
    import numpy as np

    losses, masses, keep = atoms
    shifted = e - losses
    if mu > 0:
        la = special.log_ndtr(0.5 * mu - shifted / mu)
        lb = special.log_ndtr(-0.5 * mu - shifted / mu)
        with np.errstate(over="ignore", invalid="ignore"):
            g = np.exp(la) * -np.expm1(shifted + lb - la)
        g = np.where(np.isfinite(g), g, 0.0)
    else:
        g = -np.expm1(np.minimum(shifted, 0.0))
    return (1.0 - keep) + keep * float(np.dot(np.clip(g, 0.0, 1.0), masses))


def _laplace_delta(a: float, atoms: _Atoms, e: float) -> float:
    """Hockey-stick divergence at ``e`` of a Laplace pair (``a``) times the atoms' pair.

    With ``c = e - l`` for an atom ``l``, the Laplace loss ``L`` contributes
    ``E[(1 - e^(c - L))_+]``: ``(1 - e^(c - a))_+ / 2`` from ``L = a``,
    ``e^-a (1 - e^(c + a))_+ / 2`` from ``L = -a`` and, from the density
    ``e^((L - a) / 2) / 4`` on ``(lo, a)`` with ``lo = max(c, -a)``,
    ``e^(-a/2) (e^(a/2) - e^(lo/2) - e^c (e^(-lo/2) - e^(-a/2))) / 2``.
    """
    import numpy as np

    losses, masses, keep = atoms
    c = e - losses
    with np.errstate(over="ignore", invalid="ignore"):
        top = 0.5 * -np.expm1(np.minimum(c - a, 0.0))
        bottom = 0.5 * math.exp(-a) * -np.expm1(np.minimum(c + a, 0.0))
        lo = np.clip(c, -a, a)
        middle = (
            0.5
            * math.exp(-a / 2)
            * (math.exp(a / 2) - np.exp(lo / 2) - np.exp(c) * (np.exp(-lo / 2) - math.exp(-a / 2)))
        )
    g = np.where(c < a, top + bottom + np.maximum(middle, 0.0), 0.0)
    g = np.where(np.isfinite(g), g, 0.0)
    return (1.0 - keep) + keep * float(np.dot(np.clip(g, 0.0, 1.0), masses))


def _exact_eps(mu: float, others: Sequence[tuple[Any, ...]], delta: float) -> float | None:
    """Tight eps at ``delta`` of a Gaussian (``mu``, 0 for none) composed with ``others``.

    None when the closed form does not apply (too many combinations, or
    Laplace parts without a Gaussian to smooth the quadrature, or a
    quadrature error that matters); the caller then uses the PLD accountant.
    """
    laplace = sum(e[0] == "laplace" for e in others)
    if laplace > 2 or (laplace > 1 and mu <= 0):
        return None
    closed = bool(laplace) and mu <= 0  # one Laplace part, no Gaussian: in closed form
    kept = [e for e in others if e[0] != "laplace"] if closed else others
    found = _loss_atoms(kept, 2 if closed else _LEGENDRE_NODES)
    if found is None:
        return None
    atoms: _Atoms = found
    if 1.0 - atoms[2] >= delta:
        return math.inf
    if closed:
        (lap,) = [e for e in others if e[0] == "laplace"]
        a = 1.0 / float(lap[1])
        laplace = 0  # no quadrature to check

    def excess(e: float) -> float:
        if closed:
            return _laplace_delta(a, atoms, e) - delta
        return _exact_delta(mu, atoms, e) - delta

    if excess(0.0) <= 0:
        return 0.0
    hi = 1.0
    while excess(hi) > 0:
        hi *= 2.0
        if hi > 1e6:
            return None
    eps = optimize.brentq(excess, 0.0, hi, xtol=1e-14, rtol=1e-14)
    while excess(eps) > 0:
        eps = eps * (1 + 1e-13) + 1e-300
    if laplace:
        coarse = _loss_atoms(others, _LEGENDRE_NODES // 2)
        if abs(_exact_delta(mu, coarse, eps) - delta) > 1e-7 * delta:  # type: ignore[arg-type]
            return None
    return float(eps)


@functools.lru_cache(maxsize=4096)
def _tight_eps(events: tuple[tuple[Any, ...], ...], delta: float) -> float:
    """Tight eps at ``delta`` of the composition of ``events`` (sorted, hashable).

    Gaussian events are merged exactly first: composing Gaussian mechanisms with
    ``mu_i = sensitivity_i / sigma_i`` is equivalent to one with
    ``mu = sqrt(sum mu_i^2)`` (Dong, Roth and Su 2022, Corollary 3.3), whose
    profile is known in closed form. With nothing else that is the answer.
    With up to two Laplace parts and any few pure or (eps, delta) parts, the
    composed profile is the Gaussian profile mixed over their losses
    (:func:`_exact_eps`): exact, continuous in the parts' noise (so a split
    can be scaled to meet a total precisely) and fast. Otherwise the merged
    Gaussian, the Laplace parts and the (eps, delta) parts are composed as
    privacy loss distributions with pessimistic rounding (Doroshenko et al.
    2022) and the eps for ``delta`` is read off.
    """
    mu2 = math.fsum(1.0 / float(e[1]) ** 2 for e in events if e[0] == "gaussian")
    others = [e for e in events if e[0] != "gaussian"]
    if not others:
        return _gaussian_eps(math.sqrt(mu2), delta) if mu2 > 0 else 0.0
    exact = _exact_eps(math.sqrt(mu2), others, delta)
    if exact is not None:
        return exact
    return float(_composed_pld(math.sqrt(mu2), others).get_epsilon_for_delta(delta))


def _composed_pld(mu: float, others: Sequence[tuple[Any, ...]]) -> Any:
    """The privacy loss distribution of a Gaussian of ``mu`` and the ``others`` events.

    Pessimistic rounding (never below the true loss). The grid grows with the
    size of the losses, so large totals stay fast: the rounding adds at most one
    grid step per part, a relative error of about 1e-4 / 2 per part at most.
    """
    from dp_accounting.pld import common
    from dp_accounting.pld import privacy_loss_distribution as pld

    size = 5.0 * mu + math.fsum(
        1.0 / float(e[1]) if e[0] == "laplace" else float(e[1]) for e in others
    )
    grid = _PLD_GRID * max(1.0, size / 2.0)
    total = None
    if mu > 0:
        total = pld.from_gaussian_mechanism(
            standard_deviation=1.0 / mu, value_discretization_interval=grid
        )
    for e in others:
        if e[0] == "laplace":
            part = pld.from_laplace_mechanism(
                parameter=float(e[1]), value_discretization_interval=grid
            )
        else:
            eps_e, delta_e = float(e[1]), float(e[2]) if e[0] == "approx" else 0.0
            part = pld.from_privacy_parameters(
                common.DifferentialPrivacyParameters(eps_e, delta_e),
                value_discretization_interval=grid,
            )
        total = part if total is None else total.compose(part)
    assert total is not None
    return total
