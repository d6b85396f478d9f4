"""Privacy cost records, tight composition and a budget ledger.

Every release records a :class:`PrivacyCost`. A cost that also says which
noise it carries (``kind`` with ``sensitivity`` and ``sigma`` or ``scale``)
can be composed tightly: Gaussian parts exactly (a composition of Gaussian
mechanisms is one Gaussian mechanism); with a few pure, (eps, delta) or
Laplace parts beside them, exactly as well, by mixing the Gaussian's privacy
profile over the other parts' privacy losses (their dominating pairs are known
in closed form); anything larger with the privacy loss distribution (PLD)
accountant of ``dp-accounting`` (Google's differential privacy library), which
also checks the closed form in the tests. Records without noise fields are treated as generic
(eps, delta)-DP events, so old records keep their basic-composition meaning.
Basic composition (adding eps and delta) stays available as the upper bound.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ._lazy import pandas as pd
from ._lazy import scipy_optimize as optimize
from ._lazy import scipy_special as special
from ._validation import check_delta, check_eps
from .exceptions import BudgetExceededError
from .mechanisms import _analytic_delta, analytic_gaussian_sigma

__all__ = [
    "Budget",
    "CalibratedPart",
    "NoisePart",
    "PrivacyCost",
    "basic_total",
    "calibrate_noise",
    "compose",
    "compose_tight",
    "scale_to_tight",
    "tight_factor",
    "tight_total",
]

_KINDS = ("gaussian", "laplace", "pure", "composed")
# Width of the privacy-loss grid of the PLD accountant. The accountant rounds
# losses pessimistically (up), so a coarser grid only overstates eps; 1e-4
# composes a handful of parts in well under 0.1 s.
_PLD_GRID = 1e-4


def _owner(name: str) -> str:
    return (
        "'laplace'"
        if name == "scale"
        else "'gaussian'"
        if name == "sigma"
        else "'gaussian' or 'laplace'"
    )


# Floating-point slack when comparing sums of costs with a budget: a split of
# eps into parts that add back up to eps must not be refused for rounding.
_REL_SLACK = 1e-9


@dataclass(frozen=True)
class PrivacyCost:
    """The (eps, delta) price of one release.

    Parameters
    ----------
    eps : float
        Privacy loss parameter, >= 0.
    delta : float
        Failure probability, in [0, 1).
    mechanism : str
        Short name of the mechanism, for example ``"gaussian (classic)"``.
    released : str
        What was made public, for example ``"noisy spherical Kendall matrix (20 x 20)"``.
    parts : tuple of PrivacyCost, default=()
        For a composed cost, the costs it is made of.
    kind : {"gaussian", "laplace", "pure", "composed"} or None, default=None
        Keyword only. The elementary mechanism, for tight composition:
        ``"gaussian"`` (needs ``sensitivity``, its L2 sensitivity, and
        ``sigma``), ``"laplace"`` (needs ``sensitivity``, its L1 sensitivity,
        and ``scale``), ``"pure"`` (any eps-DP mechanism, such as the
        exponential mechanism or an above-threshold scan; ``delta`` must be
        0) or ``"composed"`` (a cost made of ``parts``). None (the default,
        and every record written before these fields existed) means a generic
        (eps, delta)-DP release.
    sensitivity, sigma, scale : float or None, default=None
        Keyword only. The noise of a Gaussian (``sigma``) or Laplace
        (``scale``) part and the sensitivity it was calibrated to, all under
        replacement of one row.
    multiplier : float or None, default=None
        Keyword only. For a Gaussian or Laplace part whose sensitivity is set
        at run time by an earlier private output (a privately chosen clip
        level, say) while the noise is always ``multiplier`` times that
        sensitivity: the noise multiplier (``sigma / sensitivity`` or
        ``scale / sensitivity``), fixed and public before any data are read.
        Such a part is, given the earlier outputs, a Gaussian (Laplace)
        mechanism with this multiplier, so adaptive composition treats it as
        one. Give either ``multiplier`` or ``sensitivity`` with ``sigma``
        (``scale``); with all of them they must agree.

    Notes
    -----
    ``eps`` and ``delta`` are the guarantee the release claims. For a noise
    kind they must be true of the noise (for a Gaussian part, the exact privacy
    profile at ``sigma / sensitivity``); the tight accountant reads the noise
    itself, so it never relies on them.
    """

    eps: float
    delta: float
    mechanism: str
    released: str
    parts: tuple[PrivacyCost, ...] = field(default=())
    kind: str | None = field(default=None, kw_only=True)
    sensitivity: float | None = field(default=None, kw_only=True)
    sigma: float | None = field(default=None, kw_only=True)
    scale: float | None = field(default=None, kw_only=True)
    multiplier: float | None = field(default=None, kw_only=True)

    def __post_init__(self) -> None:
        if not (math.isfinite(self.eps) and self.eps >= 0):
            raise ValueError(f"eps must be finite and >= 0; got {self.eps!r}.")
        if not (math.isfinite(self.delta) and 0 <= self.delta < 1):
            raise ValueError(f"delta must be in [0, 1); got {self.delta!r}.")
        kind = self.kind
        if kind is not None and kind not in _KINDS:
            raise ValueError(f"kind must be one of {_KINDS} or None; got {kind!r}.")
        needs = {"gaussian": ("sensitivity", "sigma"), "laplace": ("sensitivity", "scale")}
        mult = self.multiplier
        relative = False  # noise known only relative to a run-time sensitivity
        if mult is not None:
            if kind not in needs:
                raise ValueError(
                    f"multiplier applies to kind 'gaussian' or 'laplace'; got kind={kind!r}."
                )
            if not (math.isfinite(mult) and mult > 0):
                raise ValueError(f"multiplier must be finite and > 0; got {mult!r}.")
            given = [getattr(self, name) for name in needs[kind]]
            relative = given == [None, None]
            if not relative and (
                None in given or not math.isclose(given[1] / given[0], mult, rel_tol=1e-9)
            ):
                raise ValueError(
                    f"a {kind} cost with multiplier needs both or neither of "
                    f"{' and '.join(needs[kind])}, agreeing with it; got {given!r}."
                )
        for name in ("sensitivity", "sigma", "scale"):
            value = getattr(self, name)
            if name in needs.get(kind or "", ()):
                if relative:
                    continue
                if value is None or not (math.isfinite(value) and value > 0):
                    raise ValueError(f"a {kind} cost needs {name} finite and > 0; got {value!r}.")
            elif value is not None:
                raise ValueError(f"{name} applies to kind {_owner(name)}; got kind={kind!r}.")
        if kind == "pure" and self.delta != 0:
            raise ValueError(f"a pure cost has delta = 0; got {self.delta!r}.")
        if kind == "composed" and not self.parts:
            raise ValueError("a composed cost needs its parts.")

    @property
    def noise_multiplier(self) -> float | None:
        """Noise scale over sensitivity (``sigma`` or ``scale``), None if not recorded."""
        if self.multiplier is not None:
            return self.multiplier
        if self.kind == "gaussian":
            return self.sigma / self.sensitivity  # type: ignore[operator]
        if self.kind == "laplace":
            return self.scale / self.sensitivity  # type: ignore[operator]
        return None

    def __add__(self, other: PrivacyCost) -> PrivacyCost:
        if not isinstance(other, PrivacyCost):
            return NotImplemented
        return compose([self, other])

    def leaves(self) -> tuple[PrivacyCost, ...]:
        """Return the elementary costs this one is made of (itself if it has no parts)."""
        if not self.parts:
            return (self,)
        return tuple(leaf for part in self.parts for leaf in part.leaves())

    def to_frame(self) -> pd.DataFrame:
        """One row per elementary release: what was released, mechanism, eps, delta."""
        rows = [
            {"released": c.released, "mechanism": c.mechanism, "eps": c.eps, "delta": c.delta}
            for c in self.leaves()
        ]
        return pd.DataFrame(rows, columns=["released", "mechanism", "eps", "delta"])

    def __str__(self) -> str:
        return f"(eps={self.eps:.6g}, delta={self.delta:.6g})"


def compose(
    costs: Iterable[PrivacyCost], *, released: str | None = None, mechanism: str = "composition"
) -> PrivacyCost:
    """Add privacy costs by basic (sequential) composition.

    Parameters
    ----------
    costs : iterable of PrivacyCost
        The costs of releases made from the same data.
    released : str, optional
        A description of the combined release; by default the parts' descriptions.
    mechanism : str, default="composition"

    Returns
    -------
    PrivacyCost
        With ``eps`` and ``delta`` the sums of the parts' values.
    """
    parts = tuple(costs)
    if not parts:
        raise ValueError("compose needs at least one PrivacyCost.")
    if len(parts) == 1 and released is None:
        return parts[0]
    eps = math.fsum(c.eps for c in parts)
    delta = math.fsum(c.delta for c in parts)
    if released is None:
        released = "; ".join(c.released for c in parts)
    return PrivacyCost(eps, delta, mechanism, released, parts)


def basic_total(costs: Iterable[PrivacyCost]) -> tuple[float, float]:
    """Total (eps, delta) of ``costs`` by basic composition: the sums of their claims."""
    costs = tuple(costs)
    return math.fsum(c.eps for c in costs), math.fsum(c.delta for c in costs)


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

    The exact privacy profile (Balle and Wang 2018) is decreasing in eps; the
    root is nudged upward until the profile is at most ``delta``.
    """
    sigma = 1.0 / mu

    def excess(e: float) -> float:
        return _analytic_delta(sigma, e) - delta

    if excess(0.0) <= 0:
        return 0.0
    hi = 1.0
    while excess(hi) > 0:
        hi *= 2.0
    eps = optimize.brentq(excess, 0.0, hi, xtol=1e-15, rtol=1e-15)
    while excess(eps) > 0:
        eps = eps * (1 + 1e-14) + 1e-300
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
    from dp_accounting.pld import common
    from dp_accounting.pld import privacy_loss_distribution as pld

    # The grid grows with the size of the losses, so large totals stay fast:
    # the pessimistic rounding adds at most one grid step per part, a relative
    # error of about 1e-4 / 2 per part at most.
    size = 5.0 * math.sqrt(mu2) + math.fsum(
        1.0 / float(e[1]) if e[0] == "laplace" else float(e[1]) for e in others
    )
    grid = _PLD_GRID * max(1.0, size / 2.0)
    total = None
    if mu2 > 0:
        total = pld.from_gaussian_mechanism(
            standard_deviation=1.0 / math.sqrt(mu2), value_discretization_interval=grid
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
    return float(total.get_epsilon_for_delta(delta))  # type: ignore[union-attr]


def tight_total(costs: Iterable[PrivacyCost], delta: float) -> tuple[float, float]:
    """The (eps, delta) of ``costs`` composed tightly, at a target ``delta``.

    Parameters
    ----------
    costs : iterable of PrivacyCost
        Releases made from the same data (composed costs are opened into
        their elementary parts).
    delta : float
        Target delta of the total, in (0, 1).

    Returns
    -------
    (eps, delta) : tuple of float
        The smallest eps the accountant proves at ``delta`` (``inf`` when the
        parts' own deltas already exceed it). When every part's claim is true
        of its noise and the claims' deltas add up to at most ``delta``, the
        basic total is a valid bound too and the smaller of the two is
        returned, so the tight total never exceeds the basic one there.

    Notes
    -----
    Elementary parts are read by ``kind``: Gaussian parts by their noise
    multiplier ``sigma / sensitivity`` (composed exactly), Laplace parts by
    ``scale / sensitivity``, pure parts as (eps, 0)-DP and records without a
    kind as (eps, delta)-DP; beside the Gaussian, a few of them are composed
    in closed form and more through the PLD accountant of ``dp-accounting``.
    A Laplace record stands for noise on a vector of any length with that L1
    sensitivity: the one-dimensional pair dominates it. Results are cached,
    so pricing the same ledger again is free.

    Examples
    --------
    >>> from dppca import PrivacyCost, tight_total
    >>> g = PrivacyCost(0.5, 1e-6, "gaussian", "a", kind="gaussian", sensitivity=1.0,
    ...                 sigma=9.0)
    >>> eps, delta = tight_total([g, g, g, g], 1e-5)
    >>> round(eps, 4)  # basic composition: 2.0 at delta 4e-6
    0.8142
    """
    delta = check_delta(delta)
    costs = tuple(costs)
    leaves = [leaf for c in costs for leaf in c.leaves()]
    events = tuple(sorted((e for e in map(_event, leaves) if e is not None), key=repr))
    eps = _tight_eps(events, delta) if events else 0.0
    basic_eps, basic_delta = basic_total(costs)
    if basic_delta <= delta * (1 + _REL_SLACK) and all(map(_claim_holds, leaves)):
        eps = min(eps, basic_eps)
    return eps, delta


def compose_tight(
    costs: Iterable[PrivacyCost],
    delta: float,
    *,
    released: str | None = None,
    mechanism: str = "tight composition (PLD accountant)",
) -> PrivacyCost:
    """Compose ``costs`` tightly into one ``PrivacyCost`` with the given ``delta``.

    The result has ``kind="composed"``, ``eps`` from :func:`tight_total` and the
    costs as its parts; :func:`basic_total` of its parts gives the basic bound.

    Raises
    ------
    ValueError
        If no finite eps exists at this ``delta`` (the parts' deltas exceed it).
    """
    parts = tuple(costs)
    if not parts:
        raise ValueError("compose_tight needs at least one PrivacyCost.")
    eps, delta = tight_total(parts, delta)
    if not math.isfinite(eps):
        raise ValueError(
            f"the parts' own deltas exceed delta={delta:g}, so no finite eps bounds their "
            "composition; pass a larger delta."
        )
    if released is None:
        released = "; ".join(c.released for c in parts)
    return PrivacyCost(eps, delta, mechanism, released, parts, kind="composed")


# --------------------------------------------------------------------------- calibration


@dataclass(frozen=True)
class NoisePart:
    """One part of a release to calibrate with :func:`calibrate_noise`.

    Parameters
    ----------
    kind : {"gaussian", "laplace", "pure"}
    weight : float, default=1.0
        Relative share of the privacy budget (> 0); shares are normalised.
    sensitivity : float or None
        L2 sensitivity of a Gaussian part, L1 sensitivity of a Laplace part;
        None for a pure part.
    """

    kind: str
    weight: float = 1.0
    sensitivity: float | None = None

    def __post_init__(self) -> None:
        if self.kind not in ("gaussian", "laplace", "pure"):
            raise ValueError(f"kind must be 'gaussian', 'laplace' or 'pure'; got {self.kind!r}.")
        if not (math.isfinite(self.weight) and self.weight > 0):
            raise ValueError(f"weight must be finite and > 0; got {self.weight!r}.")
        sens = self.sensitivity
        if self.kind == "pure":
            if sens is not None:
                raise ValueError("a pure part takes no sensitivity; it is calibrated by eps.")
        elif sens is None or not (math.isfinite(sens) and sens > 0):
            raise ValueError(f"a {self.kind} part needs sensitivity finite and > 0; got {sens!r}.")


@dataclass(frozen=True)
class CalibratedPart:
    """A calibrated part: its claim (eps, delta) and its noise.

    ``sigma`` is set for a Gaussian part, ``scale`` for a Laplace one; a pure
    part is run at ``eps``. Build its record with :meth:`to_cost`.
    """

    kind: str
    weight: float
    sensitivity: float | None
    eps: float
    delta: float
    sigma: float | None = None
    scale: float | None = None

    def to_cost(self, released: str, mechanism: str | None = None) -> PrivacyCost:
        """The :class:`PrivacyCost` record of this part."""
        return PrivacyCost(
            self.eps, self.delta, mechanism or self.kind, released,
            kind=self.kind, sensitivity=self.sensitivity, sigma=self.sigma, scale=self.scale,
        )  # fmt: skip


def _as_part(part: NoisePart | Mapping[str, object]) -> NoisePart:
    if isinstance(part, NoisePart):
        return part
    if isinstance(part, Mapping):
        return NoisePart(**part)  # type: ignore[arg-type]
    raise TypeError(
        f"each part must be a NoisePart or a mapping such as {{'kind': 'gaussian', "
        f"'sensitivity': 0.1, 'weight': 1}}; got {type(part).__name__}."
    )


def _parts_at(parts: Sequence[NoisePart], t: float, delta: float) -> tuple[CalibratedPart, ...]:
    """Each part at eps share ``t * weight``: Gaussians calibrated alone at (that, delta)."""
    out = []
    for part in parts:
        e = t * part.weight
        if part.kind == "gaussian":
            sigma = analytic_gaussian_sigma(part.sensitivity, e, delta)  # type: ignore[arg-type]
            out.append(CalibratedPart("gaussian", part.weight, part.sensitivity, e, delta, sigma))
        elif part.kind == "laplace":
            scale = part.sensitivity / e  # type: ignore[operator]
            out.append(
                CalibratedPart("laplace", part.weight, part.sensitivity, e, 0.0, scale=scale)
            )
        else:
            out.append(CalibratedPart("pure", part.weight, None, e, 0.0))
    return tuple(out)


def _total_at(parts: Sequence[NoisePart], t: float, delta: float) -> float:
    costs = [c.to_cost("part") for c in _parts_at(parts, t, delta)]
    return tight_total(costs, delta)[0]


def calibrate_noise(
    parts: Sequence[NoisePart | Mapping[str, object]], eps: float, delta: float
) -> tuple[CalibratedPart, ...]:
    """Noise for several parts of one release so that their TIGHT total is (eps, delta).

    Parameters
    ----------
    parts : sequence of NoisePart or mappings with the same keys
        For example ``[{"kind": "gaussian", "sensitivity": 2.8e-4, "weight": 0.2},
        {"kind": "pure", "weight": 0.2}, {"kind": "gaussian", "sensitivity": 1.414,
        "weight": 0.6}]``.
    eps : float
        Total eps, > 0.
    delta : float
        Total delta, in (0, 1).

    Returns
    -------
    tuple of CalibratedPart
        In the order of ``parts``. Part ``i`` gets the eps share ``t * w_i``
        (``w`` the normalised weights): a pure part runs at that eps, a Laplace
        part gets ``scale = sensitivity / (t w_i)``, and a Gaussian part the
        analytic Gaussian sigma it would get alone at ``(t w_i, delta)``, so its
        record ``(t w_i, delta)`` is true of its noise. ``t`` is the largest
        factor (to a relative 1e-10 in ``log t``) whose tight total at ``delta``
        is at most ``eps``. With several parts ``t`` is typically well above 1
        (1.37 for two equal Gaussians at (1, 1e-5)): every part gets more eps,
        so less noise, than a basic split would give it.

    Notes
    -----
    Privacy: data-free. A single Gaussian part gets exactly
    :func:`~dppca.mechanisms.analytic_gaussian_sigma` at (eps, delta), and a
    single pure or Laplace part the whole eps. Gaussian parts alone are
    composed exactly; with other parts the PLD accountant rounds
    pessimistically, so the total is met from below.

    Examples
    --------
    >>> from dppca.accounting import calibrate_noise
    >>> a, b = calibrate_noise([{"kind": "gaussian", "sensitivity": 1.0}] * 2, 1.0, 1e-5)
    >>> round(a.sigma, 4), round(a.eps, 4)
    (5.2759, 0.6841)
    """
    eps = check_eps(eps)
    delta = check_delta(delta)
    specs = [_as_part(p) for p in parts]
    if not specs:
        raise ValueError("calibrate_noise needs at least one part.")
    total_w = math.fsum(p.weight for p in specs)
    specs = [NoisePart(p.kind, p.weight / total_w, p.sensitivity) for p in specs]
    if len(specs) == 1:
        return _parts_at(specs, eps, delta)

    def gap(log_t: float) -> float:
        return _total_at(specs, math.exp(log_t), delta) - eps

    step = math.log(2.0)
    if gap(0.0) > 0:  # bracket the root by doubling: gap(lo) <= 0 < gap(hi)
        lo, hi = -step, 0.0
        while gap(lo) > 0:
            lo, hi = lo - step, lo
    else:
        lo, hi = 0.0, step
        while gap(hi) <= 0:
            lo, hi = hi, hi + step
    log_t = optimize.brentq(gap, lo, hi, xtol=1e-10, rtol=1e-10)
    while gap(log_t) > 0:
        log_t -= 1e-10
    return _parts_at(specs, math.exp(log_t), delta)


def _shares_at(shares: tuple[tuple[str, float, float], ...], t: float) -> list[PrivacyCost]:
    out = []
    for kind, e, d in shares:
        if kind == "gaussian":
            z = analytic_gaussian_sigma(1.0, t * e, d)
            out.append(PrivacyCost(t * e, d, kind, "part", kind=kind, multiplier=z))
        elif kind == "laplace":
            out.append(PrivacyCost(t * e, 0.0, kind, "part", kind=kind, multiplier=1 / (t * e)))
        elif kind == "pure":
            out.append(PrivacyCost(t * e, 0.0, kind, "part", kind=kind))
        else:
            out.append(PrivacyCost(t * e, d, kind, "part"))
    return out


@functools.lru_cache(maxsize=1024)
def tight_factor(shares: tuple[tuple[str, float, float], ...], eps: float, delta: float) -> float:
    """The factor by which a basic split's eps shares can grow under tight composition.

    Parameters
    ----------
    shares : tuple of (kind, eps_i, delta_i)
        A basic split of ``(eps, delta)``: ``eps_i`` add up to at most ``eps``
        and ``delta_i`` to at most ``delta``. ``kind`` is ``"gaussian"`` (noise
        from the analytic calibration at ``(t eps_i, delta_i)``), ``"laplace"``
        (scale ``sensitivity / (t eps_i)``), ``"pure"`` (an ``t eps_i``-DP
        part) or ``"approx"`` (a generic ``(t eps_i, delta_i)`` part).
    eps, delta : float
        The total the tight composition must meet.

    Returns
    -------
    float
        The largest ``t >= 1`` (to a relative 1e-12) whose parts, each at
        ``(t eps_i, delta_i)``, have :func:`tight_total` at most ``eps`` at
        ``delta``. Every part then has at least its basic share of eps, so no
        more noise than the basic split, and the deltas are unchanged.

    Notes
    -----
    Data-free and cached by its (public) arguments. ``t = 1`` always
    qualifies: there the claims add up to ``(eps, delta)`` by basic
    composition, which :func:`tight_total` never exceeds.

    Examples
    --------
    >>> from dppca.accounting import tight_factor
    >>> t = tight_factor((("gaussian", 0.5, 5e-6), ("gaussian", 0.5, 5e-6)), 1.0, 1e-5)
    >>> round(t, 4)
    1.433
    """

    def gap(log_t: float) -> float:
        return tight_total(_shares_at(shares, math.exp(log_t)), delta)[0] - eps

    if gap(0.0) >= 0:
        return 1.0
    step = math.log(1.5)
    lo, hi = 0.0, step
    while gap(hi) <= 0:
        lo, hi = hi, hi + step
        if hi > 50:  # a part that costs nothing at any eps; cannot happen for real parts
            return 1.0
    log_t = optimize.brentq(gap, lo, hi, xtol=1e-11, rtol=1e-11)
    while log_t > 0 and gap(log_t) > 0:
        log_t -= 1e-12
    return math.exp(max(log_t, 0.0))


def _share_of(leaf: PrivacyCost) -> tuple[str, float, float]:
    if leaf.kind in ("gaussian", "laplace", "pure"):
        return (leaf.kind, leaf.eps, leaf.delta)
    return ("approx", leaf.eps, leaf.delta)


def scale_to_tight(
    build: Callable[[float], Sequence[PrivacyCost]], eps: float, delta: float
) -> tuple[float, tuple[PrivacyCost, ...]]:
    """Scale a release's basic split up until its tight total is ``(eps, delta)``.

    Parameters
    ----------
    build : callable
        ``build(t)`` returns the release's parts with every eps share
        multiplied by ``t`` and the deltas unchanged; ``build(1.0)`` is a
        basic split of ``(eps, delta)``. Gaussian parts must be calibrated
        analytically at their recorded ``(eps, delta)`` and Laplace parts
        with ``scale = sensitivity / eps``.
    eps, delta : float
        The total the call is charged.

    Returns
    -------
    t : float
        :func:`tight_factor` of the basic split (>= 1).
    parts : tuple of PrivacyCost
        ``build(t)``, whose :func:`tight_total` at ``delta`` is at most ``eps``
        (checked; equal to it up to the root finder's tolerance).
    """
    basic = tuple(build(1.0))
    shares = tuple(_share_of(leaf) for c in basic for leaf in c.leaves())
    t = tight_factor(shares, eps, delta)
    parts = tuple(build(t)) if t != 1.0 else basic
    total = tight_total(parts, delta)[0]
    if total > eps * (1 + _REL_SLACK):  # a part not built as the docstring asks
        raise RuntimeError(f"tight total {total!r} exceeds eps={eps!r} after scaling.")
    return t, parts


class Budget:
    """A privacy budget for one dataset, kept as a ledger.

    Call :meth:`check` before a release touches the data and :meth:`spend`
    once it is made. The budget decides by the tight total: everything in the
    ledger composed by :func:`tight_total` at the budget's own ``delta``.

    Parameters
    ----------
    eps : float
        Total epsilon available, > 0.
    delta : float
        Total delta available, in (0, 1).

    Notes
    -----
    Two totals are kept. :attr:`spent` is basic composition (the sums of the
    ledger's eps and delta), as before; :attr:`spent_tight` is the tight total,
    never larger where the records' claims hold. A cost is accepted when the
    tight total with it stays within ``eps``, so a ledger may hold more than
    basic composition would allow. :attr:`remaining` gives eps left by the
    tight total and delta left by basic composition: a cost within both
    always fits.

    Examples
    --------
    >>> from dppca import Budget, PrivacyCost
    >>> budget = Budget(eps=1.0, delta=1e-5)
    >>> budget.spend(PrivacyCost(0.5, 5e-6, "gaussian (classic)", "directions"))
    >>> budget.spent
    (0.5, 5e-06)
    >>> [round(x, 6) for x in budget.remaining]  # the tight total uses the unspent delta
    [0.500008, 5e-06]
    """

    def __init__(self, eps: float, delta: float) -> None:
        self.eps = check_eps(eps)
        self.delta = check_delta(delta)
        self._ledger: list[PrivacyCost] = []

    @property
    def ledger(self) -> tuple[PrivacyCost, ...]:
        """The costs spent so far, in order."""
        return tuple(self._ledger)

    @property
    def spent(self) -> tuple[float, float]:
        """Total (eps, delta) spent so far by basic composition (the upper bound)."""
        return basic_total(self._ledger)

    @property
    def spent_tight(self) -> tuple[float, float]:
        """Tight total (eps, delta) spent so far, at the budget's delta ((0, 0) when empty)."""
        if not self._ledger:
            return 0.0, 0.0
        return tight_total(self._ledger, self.delta)

    @property
    def remaining(self) -> tuple[float, float]:
        """Eps left by the tight total and delta left by basic composition (never negative)."""
        eps_spent = self.spent_tight[0]
        delta_spent = self.spent[1]
        return max(self.eps - eps_spent, 0.0), max(self.delta - delta_spent, 0.0)

    def can_afford(self, cost: PrivacyCost) -> bool:
        """Whether the tight total with ``cost`` added stays within the budget."""
        eps_total, _ = tight_total([*self._ledger, cost], self.delta)
        return eps_total <= self.eps * (1 + _REL_SLACK)

    def check(self, cost: PrivacyCost) -> None:
        """Raise ``BudgetExceededError`` if ``cost`` does not fit in what remains."""
        if not self.can_afford(cost):
            eps_left, delta_left = self.remaining
            eps_total, _ = tight_total([*self._ledger, cost], self.delta)
            raise BudgetExceededError(
                f"this release costs {cost} but only (eps={eps_left:.6g}, "
                f"delta={delta_left:.6g}) remains of the budget (eps={self.eps:g}, "
                f"delta={self.delta:g}); with it the tight total would be "
                f"eps={eps_total:.6g} at delta={self.delta:g}. Reuse an existing release "
                "or lower its cost."
            )

    def spend(self, cost: PrivacyCost) -> None:
        """Record ``cost`` in the ledger, refusing it if it would overspend."""
        if not isinstance(cost, PrivacyCost):
            raise TypeError(f"cost must be a PrivacyCost; got {type(cost).__name__}.")
        self.check(cost)
        self._ledger.append(cost)

    def to_frame(self) -> pd.DataFrame:
        """The ledger as a table, one row per elementary release."""
        frames = [c.to_frame() for c in self._ledger]
        if not frames:
            return pd.DataFrame(columns=["released", "mechanism", "eps", "delta"])
        return pd.concat(frames, ignore_index=True)

    def __repr__(self) -> str:
        eps_spent, delta_spent = self.spent
        return (
            f"Budget(eps={self.eps:g}, delta={self.delta:g}, spent_eps={eps_spent:.6g}, "
            f"spent_delta={delta_spent:.6g}, spent_eps_tight={self.spent_tight[0]:.6g}, "
            f"releases={len(self._ledger)})"
        )
