"""Noise calibration and noise: the only module of dppca that draws random numbers.

Every mechanism takes a resolved ``numpy.random.Generator`` and draws in a fixed
order, so the same data and seed give bit-identical output.

Which sampler draws the noise: the three noise functions (:func:`gaussian_noise`,
:func:`symmetric_gaussian_noise`, :func:`laplace_noise`) use OpenDP's
floating-point-safe Gaussian and Laplace samplers when the generator is a
:class:`~dppca._validation.HardenedGenerator` (what ``random_state=None``
resolves to) and OpenDP is installed (``pip install dppca[hardened]``); they
draw from the operating system's entropy. With a seed or a given ``Generator``
they use numpy's samplers, which are reproducible but not hardened against
precision attacks on the least significant bits (Mironov 2012). The other
draws (exponential scans, Gumbel draws, pairings) always use numpy's sampler
of the given generator; post-processing draws use a stream of their own.
"""

from __future__ import annotations

import functools
import math
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ._lazy import scipy_optimize as optimize
from ._lazy import scipy_special as special
from ._validation import check_calibration, check_delta, check_eps
from ._warnings import warn_privacy

# opendp.prelude once loaded, False if it is not installed (an optional extra:
# a large package, imported on the first hardened draw, never by ``import dppca``).
_dp: Any = None

__all__ = [
    "analytic_gaussian_sigma",
    "capped_quantile_level",
    "classic_gaussian_sigma",
    "em_quantile",
    "exponential_mechanism",
    "gaussian_noise",
    "gaussian_sigma",
    "kendall_sensitivity",
    "kendall_sigma",
    "ladder_bin",
    "ladder_failure_bound",
    "ladder_quantile",
    "laplace_noise",
    "noise_sampler",
    "quantile_overshoot_bound",
    "random_pairing",
    "reperturbed_matrices",
    "sample_histogram",
    "signed_log_bin",
    "signed_log_edges",
    "signed_quantile",
    "stability_threshold",
    "symmetric_gaussian_noise",
    "unbounded_quantile",
    "unbounded_quantile_upper",
]

_DBL_MAX = float(np.finfo(np.float64).max)


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
    la = special.log_ndtr(0.5 / sigma - eps * sigma)
    lb = special.log_ndtr(-0.5 / sigma - eps * sigma)
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
    The root is found by Brent's method on ``log(sigma)`` after doubling an
    upper bracket; the privacy profile is monotone decreasing in sigma. The
    returned value is nudged upward, if needed, until the exact profile is at
    most ``delta``, so rounding never weakens the guarantee.

    References
    ----------
    Balle, B. and Wang, Y.-X. (2018). Improving the Gaussian mechanism for
    differential privacy: analytical calibration and optimal denoising. ICML.
    """
    eps = check_eps(eps)
    delta = check_delta(delta)
    if not (math.isfinite(sensitivity) and sensitivity > 0):
        raise ValueError(f"sensitivity must be finite and > 0; got {sensitivity!r}.")

    def excess(log_sigma: float) -> float:
        return _analytic_delta(math.exp(log_sigma), eps) - delta

    lo, hi = math.log(1e-12), 0.0
    while excess(hi) > 0:
        lo, hi = hi, hi + math.log(2.0)
    while excess(lo) <= 0 and lo > math.log(1e-300):
        lo -= 10.0
    log_sigma = optimize.brentq(excess, lo, hi, xtol=1e-14, rtol=4 * np.finfo(float).eps)
    sigma = math.exp(log_sigma)
    while _analytic_delta(sigma, eps) > delta:
        sigma *= 1 + 1e-12
    return sensitivity * sigma


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

    Warns
    -----
    PrivacyWarning
        With ``calibration="classic"`` and ``eps >= 1``.
    """
    eps = check_eps(eps)
    delta = check_delta(delta)
    calibration = check_calibration(calibration)
    if calibration == "analytic":
        return analytic_gaussian_sigma(sensitivity, eps, delta)
    if eps >= 1:
        warn_privacy(
            f"eps={eps:g} is outside (0, 1), where the classic Gaussian calibration is "
            "proven; pass calibration='analytic', which is exact for every eps > 0."
        )
    return classic_gaussian_sigma(sensitivity, eps, delta)


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
            import opendp.prelude as dp
        except ImportError:  # pragma: no cover - exercised only without the extra
            _dp = False
        else:
            _dp = dp
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


@functools.lru_cache(maxsize=64)
def _opendp_measurement(kind: str, scale: float) -> object:
    """OpenDP's vector Gaussian or Laplace measurement on floats at ``scale``.

    ``make_gaussian`` and ``make_laplace`` need OpenDP's ``"contrib"`` feature
    (their proofs have not finished OpenDP's vetting process). It is turned on
    only while the measurement is built and restored afterwards, so the
    caller's own OpenDP settings are left as they were. ``"floating-point"``
    (OpenDP's flag for samplers open to floating-point attacks) is never
    enabled. The samplers round the input to a grid of ``2**k`` and add exact
    discrete noise on it, drawn from the operating system's randomness.
    """
    assert _dp  # loaded by noise_sampler
    had_contrib = "contrib" in _dp.GLOBAL_FEATURES
    _dp.enable_features("contrib")
    try:
        domain = _dp.vector_domain(_dp.atom_domain(T=float, nan=False))
        if kind == "gaussian":
            return _dp.m.make_gaussian(domain, _dp.l2_distance(T=float), scale=scale)
        return _dp.m.make_laplace(domain, _dp.l1_distance(T=float), scale=scale)
    finally:
        if not had_contrib:
            _dp.disable_features("contrib")


def _opendp_add(kind: str, value: NDArray[np.float64], scale: float) -> NDArray[np.float64]:
    """``value`` plus OpenDP noise of ``scale`` in every entry (same shape)."""
    flat = np.ascontiguousarray(value, dtype=np.float64).ravel()
    if flat.size == 0:
        return flat.reshape(value.shape)
    measurement = _opendp_measurement(kind, float(scale))
    out = np.asarray(measurement(flat.tolist()), dtype=np.float64)  # type: ignore[operator]
    return out.reshape(value.shape)


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
    value: NDArray[np.float64] | float, scale: float, rng: np.random.Generator
) -> NDArray[np.float64]:
    """Return ``value`` plus independent Laplace(scale) noise in each entry.

    Laplace(b) has density proportional to ``exp(-|z| / b)``; with
    ``b = sensitivity_L1 / eps`` it gives eps-DP. The sampler is numpy's or
    OpenDP's, by :func:`noise_sampler`.
    """
    value = np.asarray(value, dtype=np.float64)
    if noise_sampler(rng) == "opendp":
        return _opendp_add("laplace", value, scale)
    return value + rng.laplace(0.0, scale, size=value.shape)


def unbounded_quantile_upper(
    x: NDArray[np.float64],
    *,
    lower: float,
    beta: float,
    q: float,
    eps1: float,
    eps2: float,
    rng: np.random.Generator,
    chunk: int = 4096,
) -> float:
    """Pure-DP quantile with no upper bound on the data (the "upper" routine).

    Values are put into geometric bins ``b(x) = floor(log_beta max(x - lower + 1, beta))``.
    A noisy target ``q N + Exp(rate eps1)`` is compared with the cumulative
    counts plus fresh ``Exp(rate eps2)`` noise, bin by bin, and the upper edge
    ``beta**i + lower - 1`` of the first bin whose noisy count passes the
    target is returned (``DBL_MAX`` on overflow).

    Notes
    -----
    Privacy: under replacement of one row every cumulative count moves by at
    most 1, all in the same direction, so this is (eps1 + eps2)-DP (the
    sparse-vector argument with one-sided exponential noise). ``lower``,
    ``beta`` and ``q`` must be public; the smallest possible output is
    ``lower + beta - 1``.
    """
    x = np.asarray(x, dtype=np.float64)
    n_obs = x.size
    log_beta = math.log(beta)
    # NaN and overflow go to the top bin, -inf to the first, each by its own
    # value, so the counts keep their sensitivity and nothing raises or warns.
    with np.errstate(over="ignore", invalid="ignore"):
        z = np.minimum(np.maximum(np.nan_to_num(x - lower + 1.0, nan=np.inf), beta), _DBL_MAX)
    bins = np.floor(np.log(z) / log_beta).astype(np.int64)
    top = int(bins.max()) if n_obs else 1
    counts = np.bincount(bins, minlength=top + 1)
    # cum[i] = number of values with bin index <= i, i = 0..top
    cum = np.cumsum(counts)
    target = q * n_obs + rng.exponential(1.0 / eps1)
    i_max = math.floor(math.log(_DBL_MAX) / log_beta)
    i = _first_passing_bin(cum, target, start=1, stop=i_max + 1, eps2=eps2, rng=rng, chunk=chunk)
    if i is None:
        return _DBL_MAX
    with np.errstate(over="ignore"):
        value = beta**i + lower - 1.0
    return value if math.isfinite(value) else _DBL_MAX


def _first_passing_bin(
    cum: NDArray[np.int64],
    target: float,
    *,
    start: int,
    stop: int,
    eps2: float,
    rng: np.random.Generator,
    chunk: int,
) -> int | None:
    """The noisy scan shared by the quantile routines (above-threshold with Exp noise).

    For bins ``i = start, ..., stop - 1`` in order, with ``H(i - 1)`` the number
    of values in bins below ``i`` (``cum[i - 1]``, 0 for ``i = 0``, and the
    total past the last bin), return the first ``i`` with
    ``H(i - 1) + Exp(rate eps2) > target``, or None. The noise is drawn in
    blocks of ``chunk`` bins, in bin order, so the result is reproducible.
    """
    last = cum.size - 1
    while start < stop:
        idx = np.arange(start, min(start + chunk, stop))
        below = np.where(idx > 0, cum[np.clip(idx - 1, 0, last)], 0)  # H(i - 1)
        noise = rng.exponential(1.0 / eps2, size=idx.size)
        hit = np.flatnonzero(below + noise > target)
        if hit.size:
            return int(idx[hit[0]])
        start = int(idx[-1]) + 1
    return None


def unbounded_quantile(
    x: NDArray[np.float64],
    *,
    lower: float,
    upper: float,
    beta: float,
    q: float,
    eps1: float,
    eps2: float,
    rng: np.random.Generator,
) -> float:
    """Two-sided pure-DP quantile, clipped to the public range ``[lower, upper]``.

    For ``q >= 0.5`` the upper routine runs from ``lower``; otherwise it runs on
    ``-x`` from ``-upper`` for the quantile ``1 - q`` and the sign is flipped.
    Costs ``eps1 + eps2`` (pure DP).
    """
    if q >= 0.5:
        value = unbounded_quantile_upper(
            x, lower=lower, beta=beta, q=q, eps1=eps1, eps2=eps2, rng=rng
        )
        return min(value, upper)
    value = unbounded_quantile_upper(
        -np.asarray(x, dtype=np.float64),
        lower=-upper,
        beta=beta,
        q=1.0 - q,
        eps1=eps1,
        eps2=eps2,
        rng=rng,
    )
    return max(-value, lower)


def signed_log_edges(bound: float, beta: float) -> NDArray[np.float64]:
    """Public bin edges for :func:`signed_quantile`: ``sign(j) (beta**|j| - 1)``, |j| <= J.

    ``J = ceil(log_beta(1 + bound))``, so the edges cover ``[-bound, bound]``. Near
    zero the bins are about ``beta - 1`` wide; far from zero their width is a
    fraction ``beta - 1`` of the distance to zero.
    """
    top = math.ceil(math.log1p(bound) / math.log(beta))
    j = np.arange(-top, top + 1, dtype=np.float64)
    return np.sign(j) * np.expm1(np.abs(j) * math.log(beta))


def signed_log_bin(x: NDArray[np.float64], bound: float, beta: float) -> NDArray[np.int64]:
    """Index into :func:`signed_log_edges` of the bin ``(e[i-1], e[i]]`` holding each value.

    Values are clipped to ``[-bound, bound]`` first (NaN counts as ``bound``). Each
    index depends on its own value only, so replacing one value moves one count by one.
    """
    x = np.clip(np.nan_to_num(np.asarray(x, dtype=np.float64), nan=bound), -bound, bound)
    top = math.ceil(math.log1p(bound) / math.log(beta))
    level = np.log1p(np.abs(x)) / math.log(beta)
    j = np.where(x >= 0, np.ceil(level), -np.floor(level)).astype(np.int64)
    return np.clip(j, -top, top) + top


def signed_quantile(
    x: NDArray[np.float64],
    *,
    bound: float,
    beta: float,
    q: float,
    eps1: float,
    eps2: float,
    rng: np.random.Generator,
    chunk: int = 4096,
) -> float:
    """Pure-DP quantile on ``[-bound, bound]`` with bins that are fine near zero.

    The same noisy scan as :func:`unbounded_quantile_upper` (a noisy target
    ``q N + Exp(rate eps1)`` against cumulative counts plus fresh
    ``Exp(rate eps2)`` noise, bin by bin from the bottom), run on the public,
    sign-symmetric geometric bins of :func:`signed_log_edges`. It returns the
    upper edge of the first bin that passes, or ``bound`` if none does.

    Notes
    -----
    Privacy: the bins are fixed by the public ``bound`` and ``beta`` only. Under
    replacement of one value every cumulative count moves by at most 1, all in
    the same direction, so the argument of the upper routine applies unchanged
    and the output is (eps1 + eps2)-DP. Unlike :func:`unbounded_quantile` with
    ``lower=-bound``, whose bins near zero are about ``bound * (beta - 1)`` wide,
    the resolution here is about ``beta - 1`` near zero and a relative
    ``beta - 1`` elsewhere.
    """
    x = np.asarray(x, dtype=np.float64)
    edges = signed_log_edges(bound, beta)
    n_bins = edges.size
    cum = np.cumsum(np.bincount(signed_log_bin(x, bound, beta), minlength=n_bins))
    target = q * x.size + rng.exponential(1.0 / eps1)
    i = _first_passing_bin(cum, target, start=0, stop=n_bins, eps2=eps2, rng=rng, chunk=chunk)
    return float(bound) if i is None else float(np.clip(edges[i], -bound, bound))


def ladder_bin(x: NDArray[np.float64], edges: NDArray[np.float64]) -> NDArray[np.int64]:
    """Index ``i`` of the ladder bin ``(edges[i-1], edges[i]]`` of each value.

    Values at or below ``edges[0]`` get 0 and values above ``edges[-1]`` (and
    NaN) the last index. Each index depends on its own value only, so replacing
    one value moves one count by one.
    """
    x = np.nan_to_num(np.asarray(x, dtype=np.float64), nan=np.inf)
    return np.minimum(np.searchsorted(edges, x, side="left"), edges.size - 1).astype(np.int64)


def ladder_quantile(
    x: NDArray[np.float64],
    edges: NDArray[np.float64],
    *,
    q: float,
    eps1: float,
    eps2: float,
    rng: np.random.Generator,
    chunk: int = 4096,
) -> float:
    """Pure-DP quantile on a public, increasing ladder of candidate values.

    The noisy scan of :func:`unbounded_quantile_upper` on the candidates
    ``edges``: a target ``q N + Exp(rate eps1)`` is compared, candidate by
    candidate from the bottom, with the number of values at or below the
    candidate plus fresh ``Exp(rate eps2)`` noise; the first candidate that
    passes is returned, or the top one if none does. Without noise this is the
    smallest candidate at or above the q-quantile.

    Notes
    -----
    Privacy: the ladder must be public (fixed before the data are read).
    Replacing one value moves every cumulative count by at most one, all in the
    same direction, so the scan is (eps1 + eps2)-DP, as for the unbounded
    routine. A short ladder is the point: each bin below the data can stop the
    scan with probability at most ``exp(-eps2 q N)``, so the chance of a result
    below all the data grows with the number of bins, not with their width
    (:func:`ladder_failure_bound`).
    """
    x = np.asarray(x, dtype=np.float64)
    edges = np.asarray(edges, dtype=np.float64)
    # cum[j] = number of values <= edges[j]; scan position i compares cum[i - 1]
    cum = np.cumsum(np.bincount(ladder_bin(x, edges), minlength=edges.size))
    target = q * x.size + rng.exponential(1.0 / eps1)
    stop = edges.size + 1
    i = _first_passing_bin(cum, target, start=1, stop=stop, eps2=eps2, rng=rng, chunk=chunk)
    return float(edges[-1] if i is None else edges[i - 1])


def ladder_failure_bound(bins: int, n: int, q: float, eps2: float) -> float:
    """Public bound on the chance that a ladder scan stops below all the data.

    Below the smallest value every cumulative count is 0 and the target is at
    least ``q n``, so each such bin stops the scan with probability at most
    ``exp(-eps2 q n)``; at most ``bins`` bins lie below the data.

    Examples
    --------
    >>> round(ladder_failure_bound(40, 1000, 0.9, 0.05), 6)
    0.0
    """
    return min(1.0, bins * math.exp(-eps2 * q * n))


def em_quantile(
    x: NDArray[np.float64],
    edges: NDArray[np.float64],
    *,
    q: float,
    eps: float,
    rng: np.random.Generator,
) -> tuple[float, float]:
    """Pure-DP choice of the public bin ``(edges[i], edges[i+1]]`` holding the q-quantile.

    The exponential mechanism with utility ``-max(B_i - q N, q N - U_i, 0)``,
    where ``B_i`` and ``U_i`` count the values at or below the bin's lower and
    upper edge: 0 for the bin that holds the quantile, and minus the number of
    ranks between the bin and the quantile otherwise. Replacing one value moves
    every count by at most one, so the utilities have sensitivity 1 and the
    choice is eps-DP (:func:`exponential_mechanism`). A bin ``t`` ranks away is
    chosen with probability at most ``exp(-eps t / 2)`` relative to the right
    one, so with ``G`` bins the chance of landing ``t`` ranks off is at most
    ``G exp(-eps t / 2)``: it grows with ``log G`` only, which is what makes a
    coarse public ladder cheap. Unlike a choice among points, a bin that holds
    the quantile always scores best, even when the data are narrower than the
    ladder's spacing.

    Returns
    -------
    (lower, upper) : the chosen bin's edges.
    """
    x = np.sort(np.nan_to_num(np.asarray(x, dtype=np.float64), nan=np.inf))
    edges = np.asarray(edges, dtype=np.float64)
    at_or_below = np.searchsorted(x, edges, side="right").astype(np.float64)
    below, upto = at_or_below[:-1], at_or_below[1:]
    target = q * x.size
    utility = -np.maximum(np.maximum(below - target, target - upto), 0.0)
    i = exponential_mechanism(utility, eps=eps, sensitivity=1.0, rng=rng)
    return float(edges[i]), float(edges[i + 1])


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


def random_pairing(n: int, rng: np.random.Generator) -> NDArray[np.int64]:
    """A uniformly random order of ``range(n)``, drawn without looking at any data.

    Used to pair rows for mean-free differences; because the order depends only
    on ``n`` (public) and the generator, the pairing is data-independent and is
    never released.
    """
    return rng.permutation(n).astype(np.int64)


def exponential_mechanism(
    utility: NDArray[np.float64], *, eps: float, sensitivity: float, rng: np.random.Generator
) -> int:
    """Index drawn with probability proportional to ``exp(eps * u / (2 * sensitivity))``.

    The exponential mechanism (McSherry and Talwar 2007): eps-DP when every
    utility moves by at most ``sensitivity`` between neighbouring datasets.
    Sampled with the Gumbel-max trick (one standard Gumbel draw per candidate,
    in index order), which gives exactly these probabilities.
    """
    utility = np.asarray(utility, dtype=np.float64)
    scores = eps * utility / (2.0 * sensitivity)
    return int(np.argmax(scores + rng.gumbel(size=utility.shape)))


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


def capped_quantile_level(q: float, n: int, eps1: float, margin: float = 1.0) -> float:
    """Quantile level for the noisy scans, lowered so the target rarely passes ``n``.

    The scans of :func:`unbounded_quantile_upper` and :func:`signed_quantile`
    aim at ``q n + Exp(rate eps1)``. When that target exceeds ``n`` no
    cumulative count can reach it, and the scan stops only when a fresh
    ``Exp(rate eps2)`` draw covers the gap, which can take very many bins.
    Keeping ``n - q n >= margin / eps1`` bounds the chance of this by
    ``exp(-margin)``, so the level is ``min(q, 1 - margin / (eps1 n))``, and
    never below 0.5.

    Notes
    -----
    Privacy: every input (``q``, ``n``, ``eps1`` and ``margin``) must be
    public; the level is then public too, and the scan that uses it keeps its
    (eps1 + eps2)-DP guarantee and its cost. Lowering the level only moves
    the estimate towards the centre of the data.

    Examples
    --------
    >>> capped_quantile_level(0.99, 10_000, 1.0)
    0.99
    >>> round(capped_quantile_level(0.995, 5000, 0.01), 4)
    0.98
    """
    return max(min(q, 1.0 - margin / (eps1 * n)), 0.5)


def quantile_overshoot_bound(bins: int, n: int, q: float, eps1: float, eps2: float) -> float:
    """Public bound on the chance that a noisy scan runs ``bins`` or more bins past the data.

    Past the bin of the largest value every cumulative count is ``n``. The
    scan gets there unstopped only if its target exceeds ``n``, with
    probability ``exp(-eps1 n (1 - q))``; the excess ``E`` is then again
    ``Exp(rate eps1)`` (memoryless), and each further bin stops the scan with
    probability ``exp(-eps2 E)``. With ``r = eps1 / eps2`` and
    ``u = exp(-eps2 E)`` (density ``r u**(r - 1)`` on (0, 1)), the chance of
    passing ``bins`` more bins is ``E[(1 - u)**bins] = r B(r, bins + 1)``,
    about ``Gamma(r + 1) bins**(-r)``: a tail like ``1 / bins`` for
    ``eps1 = eps2``, and lighter for a larger ``eps1``.

    Notes
    -----
    Privacy: computed from public values only (``bins``, ``n``, ``q`` and the
    epsilons); no data are read.

    Examples
    --------
    >>> round(quantile_overshoot_bound(99, 5000, 0.5, 1.0, 1.0), 6)
    0.0
    >>> round(quantile_overshoot_bound(99, 100, 1.0, 1.0, 1.0), 4)
    0.01
    """
    ratio = eps1 / eps2
    log_tail = math.log(ratio) + special.betaln(ratio, bins + 1.0)
    return min(1.0, math.exp(-eps1 * n * (1.0 - q) + log_tail))
