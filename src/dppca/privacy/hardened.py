"""The hardened samplers: OpenDP's exact discrete noise on a fine grid.

Used by :mod:`dppca.privacy.mechanisms` for unseeded releases (a generator flagged
``hardened``) when OpenDP is installed. Only the four OpenDP modules the
samplers need are imported (:func:`load_opendp`), on the first hardened draw:
``opendp.prelude`` would also load OpenDP's scikit-learn extras, about a
second of CPU for nothing. Each call draws one vector of values in one
OpenDP call, on the grid of :func:`grid_exponent`, at the scale times
``1 + SCALE_SLACK``; :func:`add_noise` proves that this keeps the calibrated
guarantee, and checks OpenDP's own certificate of it on every new
measurement.
"""

from __future__ import annotations

import functools
import math
from typing import Any

import numpy as np
from numpy.typing import NDArray

__all__ = [
    "GRID_BITS",
    "MAX_NOISE_RATIO",
    "SCALE_SLACK",
    "add_noise",
    "check_noise_ratio",
    "grid_exponent",
    "load_opendp",
    "measurement",
]

#: The hardened samplers' grid is at most ``scale / (count 2^GRID_BITS)``.
GRID_BITS = 68
#: The hardened samplers draw at ``scale * (1 + SCALE_SLACK)``: it covers the
#: rounding to the grid and the lattice (see :func:`add_noise`).
SCALE_SLACK = 2.0**-20
#: The largest noise scale, in units of the sensitivity, that the proof of
#: :func:`add_noise` covers; calibrations refuse a larger one.
MAX_NOISE_RATIO = 2.0**40


class _OpenDP:
    """The OpenDP names the samplers use (hashable, for the measurement cache)."""

    def __init__(self, **names: Any) -> None:
        self.__dict__.update(names)


@functools.lru_cache(maxsize=1)
def load_opendp() -> Any:
    """The OpenDP names the samplers use, from their own modules (raises ImportError).

    ``opendp.mod`` (feature flags), ``opendp.domains``, ``opendp.metrics`` and
    ``opendp.measurements``: about 0.13 s of imports, against 1.95 s for
    ``opendp.prelude``, which also loads OpenDP's scikit-learn extras.
    """
    from opendp import domains, measurements, metrics, mod

    return _OpenDP(
        mod=mod,
        vector_domain=domains.vector_domain,
        atom_domain=domains.atom_domain,
        l1_distance=metrics.l1_distance,
        l2_distance=metrics.l2_distance,
        make_gaussian=measurements.make_gaussian,
        make_laplace=measurements.make_laplace,
    )


def check_noise_ratio(sigma: float, sensitivity: float) -> float:
    """``sigma``, or a ValueError when it exceeds ``MAX_NOISE_RATIO`` times ``sensitivity``.

    Beyond ``2^40`` sensitivities the grid's rounding is no longer covered by
    the scale's slack (:func:`add_noise`); such a release (eps about 1e-12)
    is noise alone, so it is refused before any data are read. Public inputs
    only.
    """
    if sigma > MAX_NOISE_RATIO * sensitivity:
        raise ValueError(
            f"eps is too small: the noise scale {sigma:.3g} is more than 2^40 times the "
            f"sensitivity {sensitivity:.3g}, beyond what the hardened sampler's proof "
            "covers (and such a release would be noise alone); raise eps or delta."
        )
    return sigma


def grid_exponent(kind: str, scale: float, count: int) -> int:
    """The samplers' grid ``2^k``: at most ``scale / (count 2^GRID_BITS)``.

    A function of the public scale and of ``count``, which must be public too
    (the number of values a call may hold, not how many it happens to hold:
    see :func:`add_noise`). ``kind`` ("gaussian" or "laplace") is accepted
    for the callers' symmetry; both use the same rule.
    """
    return math.floor(math.log2(scale / (max(count, 1) * 2.0**GRID_BITS)))


@functools.lru_cache(maxsize=64)
def measurement(dp: Any, kind: str, scale: float, count: int, grid_count: int) -> object:
    """OpenDP's vector Gaussian or Laplace measurement on ``count`` floats at ``scale``.

    ``make_gaussian`` and ``make_laplace`` need OpenDP's ``"contrib"`` feature
    (their proofs have not finished OpenDP's vetting process). It is turned on
    only while the measurement is built and restored afterwards, so the
    caller's own OpenDP settings are left as they were. ``"floating-point"``
    (OpenDP's flag for samplers open to floating-point attacks) is never
    enabled. The samplers round the input to the grid ``2^k`` of
    :func:`grid_exponent` (from ``grid_count``) and add exact discrete noise
    on it (discrete Gaussian or discrete Laplace on the integers, scale
    ``scale / 2^k``), drawn from the operating system's randomness; with the
    domain's size given, a coarser grid than OpenDP's default (``2^-1074``)
    is allowed, which makes a draw several times faster
    (benchmarks/bench_noise.py).

    Before it is returned, OpenDP's certificate is checked against the
    calibration (:func:`certified`): a measurement whose privacy map says
    more than the calibrated mechanism's raises an AssertionError.
    """
    mod = dp.mod
    had_contrib = "contrib" in mod.GLOBAL_FEATURES
    mod.enable_features("contrib")
    try:
        domain = dp.vector_domain(dp.atom_domain(T=float, nan=False), size=count)
        k = grid_exponent(kind, scale, grid_count)
        if kind == "gaussian":
            made = dp.make_gaussian(domain, dp.l2_distance(T=float), scale=scale, k=k)
        else:
            made = dp.make_laplace(domain, dp.l1_distance(T=float), scale=scale, k=k)
    finally:
        if not had_contrib:
            mod.disable_features("contrib")
    assert certified(made, kind, scale / (1.0 + SCALE_SLACK)), "OpenDP's map exceeds the claim"
    return made


def certified(made: Any, kind: str, scale: float) -> bool:
    """Whether OpenDP's privacy map is within the calibration at every covered sensitivity.

    The calibrated mechanism adds continuous noise of ``scale`` to a
    statistic of sensitivity ``D >= scale / MAX_NOISE_RATIO``; its zCDP is
    ``rho(D) = D^2 / (2 scale^2)`` (Gaussian) and its pure epsilon ``D /
    scale`` (Laplace). OpenDP's map ``made.map(D)`` certifies the drawn
    measurement, rounding to the grid included. Both sides are of the form
    ``(D + r)^a / c`` with the grid's rounding ``r`` fixed, so the ratio
    ``map(D) / calibrated(D)`` is largest at the smallest ``D``: checking
    ``D = scale / MAX_NOISE_RATIO`` and ``D = scale`` covers them all.
    """
    for d in (scale / MAX_NOISE_RATIO, scale):
        claim = d * d / (2.0 * scale * scale) if kind == "gaussian" else d / scale
        if not float(made.map(d)) <= claim:
            return False
    return True


def add_noise(
    dp: Any,
    kind: str,
    value: NDArray[np.float64],
    scale: float,
    *,
    grid_count: int | None = None,
) -> NDArray[np.float64]:
    """``value`` plus OpenDP noise of ``scale`` in every entry (same shape).

    ``grid_count`` (default: the number of entries) is the public count the
    grid is chosen from; a call whose number of entries depends on the data
    (the sparse histogram's non-empty cells) passes the public number of
    cells, so that the grid, which shows in the released values' last bits,
    is the same for both neighbours.

    Why the grid keeps the guarantee. Let ``f`` (``d`` entries) have L2
    (Gaussian) or L1 (Laplace) sensitivity ``D`` and be calibrated at
    ``scale = sigma <= 2^40 D`` (refused otherwise, :func:`check_noise_ratio`).
    The sampler draws at ``scale' = scale (1 + eta)``, ``eta = 2^-20``, on the
    grid ``g = 2^k <= scale / (c 2^68)`` of :func:`grid_exponent` (``c >= d``
    the public count), and returns ``g (round(f / g) + Z)``, ``Z`` exact
    discrete noise of scale ``s = scale' / g >= c 2^68`` on the integers:
    post-processing of the lattice mechanism ``round(f / g) + Z``.

    1. Rounding. Rounding moves each entry by at most ``g / 2``, and only
       the entries of ``f`` that change can round differently, so the
       lattice input moves by at most ``D / g + sqrt(d)`` (L2) or
       ``D / g + d`` (L1): ``f``'s sensitivity inflated to
       ``D' <= D + d g <= D + scale 2^-68 <= D (1 + 2^-28)``.

    2. Laplace: the discrete Laplace with an integer shift ``m`` has
       likelihood ratio at most ``exp(|m|_1 / s)``, so the draw is
       ``D' / scale'``-DP, at most ``D / scale = eps``: exact, no lattice
       term. OpenDP's map certifies the same (checked by :func:`certified`).

    3. Gaussian, zCDP (certified). The discrete Gaussian with integer shift
       ``m`` is ``|m|_2^2 / (2 s^2)``-zCDP exactly as the continuous one
       (Canonne, Kamath and Steinke 2020), so the draw is
       ``(D' / scale')^2 / 2 <= (D / scale)^2 / 2``-zCDP, the calibrated
       mechanism's. This is what OpenDP's map states; :func:`certified`
       checks it on every measurement built.

    4. Gaussian, (eps, delta) (the lattice bound). The calibration is the
       analytic Gaussian (and the tight accountant composes Gaussian
       curves), which are sharper than zCDP, and the discrete Gaussian's
       curve is not the continuous one: they differ polynomially in
       ``1 / s``, not like ``exp(-s^2)``. Explicitly: add an independent
       uniform ``U`` on ``[-1/2, 1/2)^d`` to the lattice output; the output
       is ``round`` of the sum, so this loses nothing. ``Z + U`` has density
       ``N_Z(round(y)) / C`` with ``C = (sum_j e^{-j^2 / (2 s^2)} / (s sqrt(2
       pi)))^d = (1 + 2 e^{-2 pi^2 s^2} + ...)^d`` (Poisson summation), and
       ``| |y|^2 - |round(y)|^2 | <= sum_i (|y_i| + 1/4)``. On ``|y_i| <= 40
       s`` for all ``i`` (which both ``Z + U`` and the continuous ``N(0,
       s^2)`` leave with probability ``beta <= 2 d e^{-790}``, sub-Gaussian
       tails) the two densities are within a factor ``e^{+-gamma}``,
       ``gamma = d (40 s + 1/4) / (2 s^2) + log C <= 21 d / s <= 21 2^-68``.
       So for every event, ``P_disc <= e^gamma P_cont + beta`` and back, and
       the draw (or a composition of ``m`` such draws, adding ``m gamma`` and
       ``m beta``) is ``(eps_c + 2 gamma, e^gamma delta_c + 3 beta)``-DP
       whenever the continuous mechanism at ``(D', scale')`` is ``(eps_c,
       delta_c)``-DP. The slack pays for it: at ``scale' = scale (1 +
       2^-20)`` and sensitivity ``D' <= D (1 + 2^-28)`` the continuous
       mechanism is ``(eps - x, delta)``-DP with ``x`` at least about
       ``2^-21 eps >= 2^-21 (D / scale) >= 2^-61``, far more than ``2 gamma
       <= 2^-62.6`` (and its delta at ``eps - 2 gamma`` is below ``delta``
       by more than the factor ``e^gamma``); ``beta`` is below any delta a
       release accepts. ``tests/test_mechanisms.py`` evaluates this
       inequality on the analytic curve over eps in ``[1e-12, 50]`` and
       delta in ``[1e-300, 0.1]``.

    5. The symmetric matrix is drawn in two calls (diagonal at ``sigma``,
       upper triangle at ``sigma / sqrt 2``), each on its own grid. Scaling
       the upper triangle by ``sqrt 2`` makes it one Gaussian mechanism at
       ``sigma`` on the vector (diagonal, ``sqrt 2`` upper) whose L2
       sensitivity is the matrix's Frobenius sensitivity ``D``; steps 1-4
       apply per coordinate (each with its own lattice step; the rounding
       allowances add at most ``3 scale 2^-68`` to ``D``, and the
       ``gamma``'s of the two calls add), with the same conclusion.

    6. The sparse histogram draws only on its non-empty cells, a count that
       depends on the data; its grid comes from the public number of cells
       (``grid_count``), so both neighbours' outputs lie on one lattice.
       The counts are integers, hence on the grid already (no rounding).

    7. The K-norm sampler (:mod:`dppca.privacy.knorm`) accepts a proposal
       with probability ``exp(-gap / b)`` where ``gap`` is read from the
       noise recovered from the output, ``g Z + (g round(f / g) - f)``: it
       differs from the lattice noise ``g Z`` by the rounding of ``f``, at
       most ``d g / 2`` in the gap. The accepted output's law is the lattice
       K-norm law with each point's weight perturbed by at most ``e^{d g /
       (2 b)}``, normalisation included a factor ``e^{d g / b} <=
       e^{2^-68}``, far inside the slack ``2^-20 eps`` of its Laplace
       proposals; the number of proposals is perturbed likewise.

    References
    ----------
    Canonne, C. L., Kamath, G. and Steinke, T. (2020). The discrete Gaussian
    for differential privacy. NeurIPS.
    """
    flat = np.ascontiguousarray(value, dtype=np.float64).ravel()
    if flat.size == 0:
        return flat.reshape(value.shape)
    count = flat.size if grid_count is None else max(int(grid_count), flat.size)
    noisy = measurement(dp, kind, float(scale) * (1.0 + SCALE_SLACK), flat.size, count)
    # an ndarray skips OpenDP's per-value type checks of a list
    out = np.asarray(noisy(flat), dtype=np.float64)  # type: ignore[operator]
    return out.reshape(value.shape)
