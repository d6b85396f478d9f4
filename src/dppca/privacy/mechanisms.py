"""Noise calibration and noise: with :mod:`~dppca.privacy.quantiles` and
:mod:`~dppca.privacy.knorm`, all draws.

Every mechanism takes a resolved ``numpy.random.Generator`` and draws in a fixed
order, so the same data and seed give bit-identical output. The private
quantile scans and the exponential mechanism live in :mod:`dppca.privacy.quantiles`.

Which sampler draws the noise: the three noise functions (:func:`gaussian_noise`,
:func:`symmetric_gaussian_noise`, :func:`laplace_noise`) use OpenDP's
floating-point-safe Gaussian and Laplace samplers when the generator is a
:class:`~dppca.core.validation.HardenedGenerator` (what ``random_state=None``
resolves to) and OpenDP is installed (``pip install dppca[hardened]``); they
draw from the operating system's entropy. With a seed or a given ``Generator``
they use numpy's samplers, which are reproducible but not hardened against
precision attacks on the least significant bits (Mironov 2012). The other
draws (exponential scans, Gumbel draws, pairings) always use numpy's sampler
of the given generator; post-processing draws use a stream of their own.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..core.types import RandomStateLike
from ..core.validation import check_calibration, check_delta, check_eps, check_random_state
from ..core.warnings import warn_privacy
from . import hardened
from ._normal import bracket_root, log_ndtr

# OpenDP's sampler names once loaded (hardened.load_opendp), False if it is not
# installed (an optional extra, imported on the first hardened draw only).
_dp: Any = None

__all__ = [
    "analytic_gaussian_sigma",
    "analytic_multiplier",
    "classic_gaussian_sigma",
    "gaussian_noise",
    "gaussian_sigma",
    "kendall_sensitivity",
    "kendall_sigma",
    "laplace_noise",
    "noise_sampler",
    "random_pairing",
    "reperturbed_matrices",
    "sample_histogram",
    "stability_threshold",
    "symmetric_gaussian_noise",
]


def classic_gaussian_sigma(sensitivity: float, eps: float, delta: float) -> float:
    """Classic Gaussian calibration ``sensitivity * sqrt(2 ln(1.25 / delta)) / eps``.

    It is a proven (eps, delta) guarantee for 0 < eps < 1 (Dwork and Roth 2014,
    Theorem A.1). No warning is issued here; see :func:`gaussian_sigma`.
    """
    return sensitivity * math.sqrt(2.0 * math.log(1.25 / delta)) / eps


def _analytic_delta(sigma: float, eps: float) -> float:
    """Exact delta of the Gaussian mechanism with L2 sensitivity 1 and scale ``sigma``.

    Balle and Wang (2018, Theorem 8):
    ``delta = Phi(1/(2 sigma) - eps sigma) - exp(eps) Phi(-1/(2 sigma) - eps sigma)``,
    evaluated as ``exp(la) * (-expm1(eps + lb - la))`` with log-CDFs so that
    neither the large factor ``exp(eps)`` nor the difference of two tiny
    probabilities loses precision.
    """
    la = log_ndtr(0.5 / sigma - eps * sigma)
    lb = log_ndtr(-0.5 / sigma - eps * sigma)
    return math.exp(la) * -math.expm1(eps + lb - la)


def analytic_gaussian_sigma(sensitivity: float, eps: float, delta: float) -> float:
    """Smallest Gaussian noise scale that is (eps, delta)-DP for the given L2 sensitivity.

    The analytic Gaussian mechanism of Balle and Wang (2018, Algorithm 1): the
    exact privacy profile of the Gaussian mechanism is inverted numerically, so
    the calibration is valid (and tight) for every eps > 0.

    Parameters
    ----------
    sensitivity : float
        L2 sensitivity of the released statistic, > 0.
    eps : float
        > 0.
    delta : float
        In (0, 1).

    Returns
    -------
    float
        sigma with ``delta(sigma) <= delta`` (checked after the root search).

    Notes
    -----
    The profile falls as sigma grows. After doubling an upper bracket, the
    root in ``log(sigma)`` is bracketed to a width of ``1e-14 + 8.9e-16
    |log sigma|`` (:func:`dppca.privacy._normal.bracket_root`), and the
    bracket's upper end, at which the profile was evaluated to be at most
    ``delta``, is returned: rounding never weakens the guarantee. The lower
    end, at most that width below in ``log(sigma)``, was evaluated to exceed
    ``delta``, so sigma is within about 1e-14 relative of the smallest scale
    the computed profile allows.

    References
    ----------
    Balle, B. and Wang, Y.-X. (2018). Improving the Gaussian mechanism for
    differential privacy: analytical calibration and optimal denoising. ICML.
    """
    eps = check_eps(eps)
    delta = check_delta(delta)
    if not (math.isfinite(sensitivity) and sensitivity > 0):
        raise ValueError(f"sensitivity must be finite and > 0; got {sensitivity!r}.")
    return sensitivity * analytic_multiplier(eps, delta)


def analytic_multiplier(eps: float, delta: float) -> float:
    """:func:`analytic_gaussian_sigma` at sensitivity 1, for checked ``eps`` and ``delta``.

    The unchecked core, for callers that validated their arguments once (a
    budget split's search calls it many times); public callers use
    :func:`analytic_gaussian_sigma`.
    """

    def excess(log_sigma: float) -> float:
        return _analytic_delta(math.exp(log_sigma), eps) - delta

    lo, hi = math.log(1e-12), 0.0
    while excess(hi) > 0:
        lo, hi = hi, hi + math.log(2.0)
    while excess(lo) <= 0 and lo > math.log(1e-300):
        lo -= 10.0
    # excess falls as sigma grows: the end where it is <= 0 is the safe one, and
    # excess computed math.exp(log_sigma) there, the very float returned, so
    # _analytic_delta(sigma, eps) <= delta holds as evaluated. The unsafe end
    # is at most 1e-14 + 4 eps |log sigma| below it in log(sigma).
    _, log_sigma = bracket_root(excess, lo, hi, xtol=1e-14, rtol=4 * np.finfo(float).eps)
    return math.exp(log_sigma)


def gaussian_sigma(
    sensitivity: float, eps: float, delta: float, calibration: str = "analytic"
) -> float:
    """Noise scale of the Gaussian mechanism for an L2 ``sensitivity``.

    Parameters
    ----------
    sensitivity : float
        L2 sensitivity under replacement of one row.
    eps, delta : float
        Privacy parameters of this one release.
    calibration : {"analytic", "classic"}, default="analytic"
        ``"classic"`` uses ``sensitivity * sqrt(2 ln(1.25/delta)) / eps``, proven
        for eps < 1; for eps >= 1 it is still used but a ``PrivacyWarning`` is
        issued. ``"analytic"`` uses :func:`analytic_gaussian_sigma`, exact for
        every eps > 0 and never larger than the classic value where both apply.

    Raises
    ------
    ValueError
        When the scale exceeds ``2^40`` sensitivities (eps about 1e-12 or
        less), beyond the hardened sampler's proof
        (:func:`dppca.privacy.hardened.check_noise_ratio`).

    Warns
    -----
    PrivacyWarning
        With ``calibration="classic"`` and ``eps >= 1``.
    """
    eps = check_eps(eps)
    delta = check_delta(delta)
    calibration = check_calibration(calibration)
    if calibration == "analytic":
        if not (math.isfinite(sensitivity) and sensitivity > 0):
            raise ValueError(f"sensitivity must be finite and > 0; got {sensitivity!r}.")
        sigma = sensitivity * analytic_multiplier(eps, delta)
        return hardened.check_noise_ratio(sigma, sensitivity)
    if eps >= 1:
        warn_privacy(
            f"eps={eps:g} is outside (0, 1), where the classic Gaussian calibration is "
            "proven; pass calibration='analytic', which is exact for every eps > 0."
        )
    sigma = classic_gaussian_sigma(sensitivity, eps, delta)
    return hardened.check_noise_ratio(sigma, sensitivity)


def kendall_sensitivity(n: int, rule: str = "tight") -> float:
    """Frobenius sensitivity of the spherical Kendall matrix of ``n`` rows.

    Parameters
    ----------
    n : int
        Number of rows (public).
    rule : {"tight", "seed"}, default="tight"
        ``"tight"`` is the exact worst case ``2 sqrt(2) / n``; ``"seed"`` is
        the reference method's conservative ``4 / n``, kept to reproduce its
        noise scale.

    Notes
    -----
    Replacing row ``i`` changes only the ``n - 1`` pair terms that contain it,
    each of weight ``2 / (n (n - 1))``; the term of pair ``(i, j)`` goes from
    ``u u^T`` to ``w w^T`` for unit vectors ``u`` and ``w``. Since
    ``||u u^T - w w^T||_F^2 = 2 - 2 (u^T w)^2 <= 2``, the matrix moves by at most
    ``(n - 1) * sqrt(2) * 2 / (n (n - 1)) = 2 sqrt(2) / n``. The bound is
    attained: put every other row at one point and move row ``i`` so that its
    difference to that point turns by 90 degrees (all ``n - 1`` changes are then
    the same matrix and add up in norm). A tied pair contributes the zero
    matrix, and ``||u u^T||_F = 1 <= sqrt(2)``, so ``ties="zero"`` keeps the
    bound. The balanced design averages ``n m`` pairs with each row in ``2 m`` of
    them, weight ``1 / (n m)``: again ``2 m * sqrt(2) / (n m) = 2 sqrt(2) / n``.
    The reference method's ``4 / n`` bounds each change by ``2`` instead of
    ``sqrt(2)``.

    Examples
    --------
    >>> kendall_sensitivity(100) / kendall_sensitivity(100, "seed")  # doctest: +ELLIPSIS
    0.7071067811865...
    """
    if rule == "tight":
        return 2.0 * math.sqrt(2.0) / n
    if rule == "seed":
        return 4.0 / n
    raise ValueError(f"sensitivity must be 'tight' or 'seed'; got {rule!r}.")


def kendall_sigma(
    n: int,
    eps: float,
    delta: float,
    calibration: str = "analytic",
    sensitivity: str = "tight",
) -> float:
    """Noise scale sigma_K for the spherical Kendall matrix of ``n`` rows.

    With ``calibration="classic"`` and ``sensitivity="seed"`` this is the
    reference method's ``4 sqrt(2 ln(1.25/delta)) / (n eps)``.
    """
    return gaussian_sigma(kendall_sensitivity(n, sensitivity), eps, delta, calibration)


_warned_no_opendp = False


def noise_sampler(rng: np.random.Generator) -> str:
    """Which sampler the noise functions use with ``rng``: ``"opendp"`` or ``"numpy"``.

    ``"opendp"`` for a generator flagged ``hardened`` (the one
    ``random_state=None`` resolves to) when OpenDP is installed; ``"numpy"``
    otherwise. A hardened generator without OpenDP falls back to numpy and
    says so once per process with a ``PrivacyWarning``.
    """
    global _warned_no_opendp, _dp
    if not getattr(rng, "hardened", False):
        return "numpy"
    if _dp is None:
        try:
            _dp = hardened.load_opendp()
        except ImportError:  # pragma: no cover - exercised only without the extra
            _dp = False
    if _dp is False:
        if not _warned_no_opendp:
            _warned_no_opendp = True
            warn_privacy(
                "OpenDP is not installed, so unseeded noise comes from numpy's samplers, "
                "which are not hardened against floating-point attacks; install "
                "dppca[hardened] (OpenDP) for floating-point-safe noise."
            )
        return "numpy"
    return "opendp"


def _opendp_add(
    kind: str, value: NDArray[np.float64], scale: float, grid_count: int | None = None
) -> NDArray[np.float64]:
    """``value`` plus OpenDP noise of ``scale`` in every entry (same shape).

    The grid, the scale's slack and why they keep the guarantee:
    :func:`dppca.privacy.hardened.add_noise`.
    """
    assert _dp  # loaded by noise_sampler
    return hardened.add_noise(_dp, kind, value, scale, grid_count=grid_count)


def _numpy_symmetric_noise(p: int, sigma: float, rng: np.random.Generator) -> NDArray[np.float64]:
    rows, cols = np.triu_indices(p)
    scale = np.where(rows == cols, sigma, sigma / math.sqrt(2.0))
    values = rng.standard_normal(rows.size) * scale
    noise = np.empty((p, p), dtype=np.float64)
    noise[rows, cols] = values
    noise[cols, rows] = values
    return noise


def symmetric_gaussian_noise(
    p: int,
    sigma: float,
    rng: np.random.Generator,
    *,
    value: NDArray[np.float64] | None = None,
) -> NDArray[np.float64]:
    """Symmetric ``(p, p)`` noise: N(0, sigma^2) on the diagonal, N(0, sigma^2/2) off it.

    The ``p (p + 1) / 2`` independent entries on and above the diagonal are drawn
    row by row (``numpy.triu_indices`` order) and mirrored below it. With
    ``value`` (a symmetric ``(p, p)`` matrix) the noisy matrix ``value + noise``
    is returned instead; a release should pass its matrix this way, so that
    the hardened sampler adds the noise itself (see :func:`noise_sampler`).
    """
    if noise_sampler(rng) == "numpy":
        noise = _numpy_symmetric_noise(p, sigma, rng)
        return noise if value is None else np.asarray(value, dtype=np.float64) + noise
    base = np.zeros((p, p)) if value is None else np.asarray(value, dtype=np.float64)
    diag = np.arange(p)
    rows, cols = np.triu_indices(p, k=1)
    out = np.empty((p, p), dtype=np.float64)
    out[diag, diag] = _opendp_add("gaussian", base[diag, diag], sigma)
    upper = _opendp_add("gaussian", base[rows, cols], sigma / math.sqrt(2.0))
    out[rows, cols] = upper
    out[cols, rows] = upper
    return out


def gaussian_noise(
    value: NDArray[np.float64] | float, sigma: float, rng: np.random.Generator
) -> NDArray[np.float64]:
    """Return ``value`` plus independent N(0, sigma^2) noise in each entry.

    The sampler is numpy's or OpenDP's, by :func:`noise_sampler`.
    """
    value = np.asarray(value, dtype=np.float64)
    if noise_sampler(rng) == "opendp":
        return _opendp_add("gaussian", value, sigma)
    return value + sigma * rng.standard_normal(value.shape)


def laplace_noise(
    value: NDArray[np.float64] | float,
    scale: float,
    rng: np.random.Generator,
    *,
    grid_count: int | None = None,
) -> NDArray[np.float64]:
    """Return ``value`` plus independent Laplace(scale) noise in each entry.

    Laplace(b) has density proportional to ``exp(-|z| / b)``; with
    ``b = sensitivity_L1 / eps`` it gives eps-DP. The sampler is numpy's or
    OpenDP's, by :func:`noise_sampler`. A caller whose number of entries
    depends on the data passes ``grid_count``, a public bound on it: the
    hardened sampler's grid is chosen from it (see
    :func:`dppca.privacy.hardened.add_noise`, step 6).
    """
    value = np.asarray(value, dtype=np.float64)
    if noise_sampler(rng) == "opendp":
        return _opendp_add("laplace", value, scale, grid_count)
    return value + rng.laplace(0.0, scale, size=value.shape)


def stability_threshold(eps: float, delta: float) -> float:
    """Release threshold of the stability (sparse) histogram with Laplace(2/eps) counts.

    ``1 + (2 / eps) ln(1 / (2 delta))``: a bin holding one record in one dataset
    and none in its neighbour passes it with probability
    ``P(Lap(2/eps) >= (2/eps) ln(1/(2 delta))) = delta``. Replacing a row can
    empty the bin it leaves and fill the bin it enters, but for an ordered pair
    of neighbours (D, D') only the first is non-empty in D and empty in D'. Its
    release in D (probability delta) is the one event D' cannot produce; the
    other bin is 0 in D and 0 with probability 1 - delta in D', which matches
    the 1 - delta of the first bin staying 0 in D. Bins non-empty on both sides
    move by at most 2 in total (Laplace, eps). So the histogram is
    (eps, delta)-DP (the mixed cases need delta <= 1/2).
    """
    return 1.0 + 2.0 * math.log(1.0 / (2.0 * delta)) / eps


def sample_histogram(
    prob: NDArray[np.float64],
    x_edges: NDArray[np.float64],
    y_edges: NDArray[np.float64],
    *,
    size: int,
    kind: str,
    bandwidth: float,
    rng: np.random.Generator,
) -> NDArray[np.float64]:
    """Draw ``size`` points from a two-dimensional histogram (post-processing).

    ``prob`` holds one probability per bin, x varying fastest. Bins are drawn
    i.i.d.; each point starts at its bin's centre (``kind="center"``) or at a
    uniform point of the bin (``kind="uniform"``) and gets independent normal
    jitter with standard deviation ``bandwidth`` times the bin width on each
    axis. Draw order: bins, then uniforms, then jitter.
    """
    mx, my = x_edges.size - 1, y_edges.size - 1
    cells = rng.choice(mx * my, size=size, p=prob)
    jx, jy = cells % mx, cells // mx
    x0, x1 = x_edges[jx], x_edges[jx + 1]
    y0, y1 = y_edges[jy], y_edges[jy + 1]
    if kind == "center":
        px, py = 0.5 * (x0 + x1), 0.5 * (y0 + y1)
    else:
        u = rng.random((size, 2))
        px, py = x0 + u[:, 0] * (x1 - x0), y0 + u[:, 1] * (y1 - y0)
    width = np.array([np.median(np.diff(x_edges)), np.median(np.diff(y_edges))])
    jitter = rng.standard_normal((size, 2)) * (bandwidth * width)
    return np.column_stack([px, py]) + jitter


def random_pairing(n: int, rng: RandomStateLike) -> NDArray[np.int64]:
    """A uniformly random order of ``range(n)``, drawn without looking at any data.

    Used to pair rows for mean-free differences and as the row order of the
    balanced design (``spherical_kendall(X, design="balanced", order=...)``);
    because the order depends only on ``n`` (public) and the generator (an int
    seed, None for fresh entropy, or a Generator, which is advanced), the
    pairing is data-independent and is never released.
    """
    return check_random_state(rng).permutation(n).astype(np.int64)


def reperturbed_matrices(
    matrix: NDArray[np.float64], sigma: float, size: int, rng: np.random.Generator
) -> NDArray[np.float64]:
    """``size`` copies of a released symmetric matrix, each plus fresh symmetric noise.

    Copy ``b`` is ``matrix + E_b`` with ``E_b`` drawn like
    :func:`symmetric_gaussian_noise` (``b = 0, 1, ...`` in order), always with
    numpy's sampler: these are views, not releases. Used to show
    how much a result computed from a released noisy matrix moves under noise
    of the mechanism's own size. ``matrix`` and ``sigma`` must both be public
    (a released matrix and its noise scale), so this is post-processing and
    costs no privacy.

    Returns
    -------
    ndarray of shape (size, p, p)
    """
    matrix = np.asarray(matrix, dtype=np.float64)
    p = matrix.shape[0]
    out = np.empty((size, p, p), dtype=np.float64)
    for b in range(size):
        out[b] = matrix + _numpy_symmetric_noise(p, sigma, rng)
    return out
