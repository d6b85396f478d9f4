"""Noise for the parts of one release, calibrated so that their tight total meets a budget.

:func:`calibrate_noise` spreads (eps, delta) over weighted Gaussian, Laplace
and pure parts; :func:`tight_factor` and :func:`scale_to_tight` scale up a
basic split of a release until its tight total (:func:`~dppca.privacy.accounting.tight_total`)
is the budget. Everything here is data-free.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from ..core.lazy import scipy_optimize as optimize
from ..core.validation import check_delta, check_eps
from .cost import _REL_SLACK, PrivacyCost
from .mechanisms import analytic_gaussian_sigma, analytic_multiplier
from .totals import tight_total

__all__ = ["CalibratedPart", "NoisePart", "calibrate_noise", "scale_to_tight", "tight_factor"]


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
            self.eps,
            self.delta,
            mechanism or self.kind,
            released,
            kind=self.kind,
            sensitivity=self.sensitivity,
            sigma=self.sigma,
            scale=self.scale,
        )


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
    :func:`~dppca.privacy.mechanisms.analytic_gaussian_sigma` at (eps, delta), and a
    single pure or Laplace part the whole eps. Gaussian parts alone are
    composed exactly; with other parts the PLD accountant rounds
    pessimistically, so the total is met from below.

    Examples
    --------
    >>> from dppca.privacy.calibration import calibrate_noise
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
            z = analytic_multiplier(t * e, d)  # shares checked once by the caller
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
    >>> from dppca.privacy.calibration import tight_factor
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
