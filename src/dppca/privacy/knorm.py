"""The K-norm mechanism of the scree's joint moment release (pure DP).

The scree releases a vector ``a = (w_1, ..., w_k, s)``: k clipped second
moments along orthonormal directions and the clipped total. Each pair of rows
contributes a point of the simplex ``C P`` with

    P = {(w, s) : w >= 0, sum(w) <= s <= 1},

whose vertices are ``0``, ``e_s`` and ``e_l + e_s``. Barycentric coordinates
of ``(w, s)`` in ``C P`` are ``(1 - s/C, (s - sum w)/C, w_1/C, ..., w_k/C)``, so
the difference of two points of ``C P`` has, in the norm

    ||(u, t)||_P = (|t| + |t - sum(u)| + ||u||_1) / 2,

half the L1 distance of their barycentric coordinates: at most ``C``. This norm
is the gauge of the difference body ``P - P``, the tightest symmetric convex
set holding every change of one pair. The K-norm mechanism (Hardt and Talwar
2010) adds noise with density proportional to ``exp(-eps ||x||_P / D)``, where
``D`` is the sensitivity of the released average in that norm; it is eps-DP
because ``||.||_P`` is a norm (triangle inequality on the density ratio).

Sampling. Since ``||x||_1 <= 2 ||x||_P``, a proposal of independent Laplace
noise of scale ``b = 2 D / eps`` in every coordinate (density proportional to
``exp(-||x||_1 / b)``) dominates the target, and accepting it with probability
``exp(-(2 ||x||_P - ||x||_1) / b) = exp(-|t - sum(u)| / b)`` gives exactly the
target. That scale is the Laplace mechanism's own (L1 sensitivity ``2 D``), so
the K-norm noise is Laplace noise conditioned on the extra constraint: in
barycentric coordinates it is ``d + 1`` independent Laplace variables
conditioned on summing to 0 (``d = k + 1``). Every coordinate then has
variance ``b^2 d (2 d + 1) / ((d + 1) (d + 2))`` against the Laplace mechanism's
``2 b^2`` (0.60 times it for k = 3), and the noise on ``w_l`` and ``s`` is
positively correlated (``1 / d``), which shrinks the noise of their ratio, the
PVE, further.

The proposals come from :func:`dppca.privacy.mechanisms.laplace_noise`, hence from
OpenDP's floating-point-safe sampler for a hardened generator. The acceptance
test reads only the noise. With numpy's sampler that is exact; with OpenDP the
noise is recovered from the output and carries the grid's rounding of the
value (at most ``(k + 1) g / 2`` in the gap, ``g`` the lattice step), which
perturbs each output's weight, and the number of proposals, by a factor at
most ``e^{2^-68}``, inside the sampler's slack (the proof is step 7 of
:func:`dppca.privacy.hardened.add_noise`). The value and the scale are
checked finite before the first proposal, so no input makes the loop run to
its cap.

References
----------
Hardt, M. and Talwar, K. (2010). On the geometry of differential privacy.
STOC.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import NDArray

from .mechanisms import laplace_noise, noise_sampler

__all__ = ["moment_knorm", "moment_knorm_noise", "moment_knorm_variance"]

# Proposals before giving up: the acceptance rate is about 1 / sqrt(pi d), so
# this is never reached for any d a table can have (it would take d ~ 10^11).
_MAX_PROPOSALS = 1_000_000


def moment_knorm(x: NDArray[np.float64]) -> NDArray[np.float64]:
    """``||(u, t)||_P`` of each row of ``x`` (last column ``t``), see the module notes.

    Examples
    --------
    >>> float(moment_knorm(np.array([1.0, 0.0, 1.0])))  # the vertex e_1 + e_s
    1.0
    """
    x = np.asarray(x, dtype=np.float64)
    u, t = x[..., :-1], x[..., -1]
    return 0.5 * (np.abs(t) + np.abs(t - u.sum(axis=-1)) + np.abs(u).sum(axis=-1))


def moment_knorm_variance(d: int, scale: float) -> float:
    """Variance of every coordinate of the K-norm noise in ``d`` dimensions.

    ``scale`` is the Laplace proposal's scale ``b = 2 D / eps``. The noise is
    ``d + 1`` independent Laplace(b) variables conditioned on a zero sum (in
    barycentric coordinates), whose second moment is, with characteristic
    functions, ``b^2 d (2 d + 1) / ((d + 1) (d + 2))``.
    """
    return scale * scale * d * (2 * d + 1) / ((d + 1) * (d + 2))


def moment_knorm_noise(
    value: NDArray[np.float64], scale: float, rng: np.random.Generator
) -> NDArray[np.float64]:
    """``value`` (``(w_1, ..., w_k, s)``) plus K-norm noise for the moment polytope.

    Parameters
    ----------
    value : ndarray of shape (k + 1,)
        The pre-noise statistic, total last.
    scale : float
        ``2 D / eps`` with ``D`` the sensitivity in ``||.||_P``: the Laplace
        mechanism's scale for the L1 sensitivity ``2 D``.
    rng : numpy.random.Generator
        Source of the proposals' noise (see :func:`dppca.privacy.mechanisms.laplace_noise`)
        and of the acceptance draws.
    """
    value = np.asarray(value, dtype=np.float64)
    if not (math.isfinite(scale) and scale > 0):  # public: before the first proposal
        raise ValueError(
            f"the K-norm scale must be finite and > 0; got {scale!r} (public bounds or "
            "a clip level too wide for a double?)."
        )
    hardened = noise_sampler(rng) == "opendp"
    for _ in range(_MAX_PROPOSALS):
        if hardened:  # OpenDP adds the noise itself; recover it to one rounding
            proposal = laplace_noise(value, scale, rng)
            x = proposal - value
        else:  # numpy: the noise exactly, added as laplace_noise would add it
            x = laplace_noise(np.zeros_like(value), scale, rng)
            proposal = value + x
        gap = abs(float(x[-1] - np.sum(x[:-1])))
        if rng.random() < math.exp(-gap / scale):
            return proposal
    raise RuntimeError("the K-norm sampler accepted no proposal")  # pragma: no cover
