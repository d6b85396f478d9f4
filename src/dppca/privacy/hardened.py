"""The hardened samplers: OpenDP's exact discrete noise on a fine grid.

Used by :mod:`dppca.privacy.mechanisms` for unseeded releases (a generator flagged
``hardened``) when OpenDP is installed; ``dp`` below is ``opendp.prelude``,
loaded there. Each call draws one vector of values in one OpenDP call, on
the grid of :func:`grid_exponent`, at the scale times ``1 + SCALE_SLACK``;
:func:`add_noise` proves that this keeps the calibrated guarantee.
"""

from __future__ import annotations

import functools
import math
from typing import Any

import numpy as np
from numpy.typing import NDArray

__all__ = ["GRID_BITS", "SCALE_SLACK", "add_noise", "grid_exponent", "measurement"]

#: The hardened samplers' grid is at most ``scale / (sqrt(count) 2^GRID_BITS)``
#: (Gaussian) or ``scale / (count 2^GRID_BITS)`` (Laplace).
GRID_BITS = 60
#: The hardened samplers draw at ``scale * (1 + SCALE_SLACK)``: it covers the
#: rounding to the grid (see :func:`add_noise`).
SCALE_SLACK = 2.0**-20


def grid_exponent(kind: str, scale: float, count: int) -> int:
    """The samplers' grid ``2^k``: at most ``scale / (sqrt(count) 2^GRID_BITS)`` (Gaussian).

    At most ``scale / (count 2^GRID_BITS)`` for Laplace. A function of the
    public scale and count only.
    """
    spread = math.sqrt(max(count, 1)) if kind == "gaussian" else float(max(count, 1))
    return math.floor(math.log2(scale / (spread * 2.0**GRID_BITS)))


@functools.lru_cache(maxsize=64)
def measurement(dp: Any, kind: str, scale: float, count: int) -> object:
    """OpenDP's vector Gaussian or Laplace measurement on ``count`` floats at ``scale``.

    ``make_gaussian`` and ``make_laplace`` need OpenDP's ``"contrib"`` feature
    (their proofs have not finished OpenDP's vetting process). It is turned on
    only while the measurement is built and restored afterwards, so the
    caller's own OpenDP settings are left as they were. ``"floating-point"``
    (OpenDP's flag for samplers open to floating-point attacks) is never
    enabled. The samplers round the input to the grid ``2^k`` of
    :func:`grid_exponent` and add exact discrete noise on it (discrete
    Gaussian or discrete Laplace on the integers, scale ``scale / 2^k``),
    drawn from the operating system's randomness; with the domain's size
    given, a coarser grid than OpenDP's default (``2^-1074``) is allowed,
    which makes a draw 4-5 times faster (benchmarks/bench_noise.py).
    """
    had_contrib = "contrib" in dp.GLOBAL_FEATURES
    dp.enable_features("contrib")
    try:
        domain = dp.vector_domain(dp.atom_domain(T=float, nan=False), size=count)
        k = grid_exponent(kind, scale, count)
        if kind == "gaussian":
            return dp.m.make_gaussian(domain, dp.l2_distance(T=float), scale=scale, k=k)
        return dp.m.make_laplace(domain, dp.l1_distance(T=float), scale=scale, k=k)
    finally:
        if not had_contrib:
            dp.disable_features("contrib")


def add_noise(dp: Any, kind: str, value: NDArray[np.float64], scale: float) -> NDArray[np.float64]:
    """``value`` plus OpenDP noise of ``scale`` in every entry (same shape).

    Why the grid keeps the guarantee. Let ``f`` (``d`` entries) have L2
    (Gaussian) or L1 (Laplace) sensitivity ``D`` and be calibrated at
    ``scale`` for (eps, delta) or eps. The sampler draws at
    ``scale' = scale (1 + 2^-20)`` on the grid ``g = 2^k`` of
    :func:`grid_exponent`, ``g <= scale / (sqrt(d) 2^60)`` (Gaussian) or
    ``scale / (d 2^60)`` (Laplace), and returns ``g (round(f / g) + Z)``,
    ``Z`` exact discrete noise of scale ``s = scale' / g`` on the integers:
    post-processing of the lattice mechanism ``round(f / g) + Z``. Rounding
    moves each entry by less than one lattice step, so between neighbours
    the lattice input moves by less than ``D / g + sqrt(d)`` (L2) or
    ``D / g + d`` (L1), that is by the sensitivity of ``f`` inflated to
    ``D + g sqrt(d) <= D + scale 2^-60`` (or ``D + d g``, the same bound).

    Laplace: the discrete Laplace with an integer shift ``m`` has likelihood
    ratio at most ``exp(|m|_1 / s)``, so the draw is eps'-DP with
    ``eps' = (D + scale 2^-60) / scale' <= eps`` whenever
    ``scale 2^-60 <= 2^-20 D``, i.e. ``eps = D / scale >= 2^-40``.

    Gaussian: the discrete Gaussian's privacy loss for an integer shift is
    that of the continuous Gaussian with the same shift, up to a term that
    falls like ``exp(-2 pi^2 s^2)`` (Canonne, Kamath and Steinke 2020), here
    ``s >= 2^60``: a term below ``exp(-2^120)``, nothing in double precision.
    The analytic Gaussian scale is linear in the sensitivity, so the
    continuous mechanism at sensitivity ``D + scale 2^-60`` is (eps, delta)-DP
    at ``scale (1 + 2^-60 scale / D)``, at most ``scale'`` whenever
    ``scale <= 2^40 D`` (every eps above about 1e-11 at delta = 1e-6); the
    slack left over (a relative ``2^-20 - 2^-60 scale / D`` on the scale)
    lowers delta by far more than that term.

    References
    ----------
    Canonne, C. L., Kamath, G. and Steinke, T. (2020). The discrete Gaussian
    for differential privacy. NeurIPS.
    """
    flat = np.ascontiguousarray(value, dtype=np.float64).ravel()
    if flat.size == 0:
        return flat.reshape(value.shape)
    noisy = measurement(dp, kind, float(scale) * (1.0 + SCALE_SLACK), flat.size)
    # an ndarray skips OpenDP's per-value type checks of a list
    out = np.asarray(noisy(flat), dtype=np.float64)  # type: ignore[operator]
    return out.reshape(value.shape)
