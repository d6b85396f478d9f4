"""Private quantiles: noisy scans over public bins and the exponential mechanism.

Like the noise functions of :mod:`dppca.privacy.mechanisms`, these routines
take a resolved ``numpy.random.Generator`` and draw from it in a fixed order
(exponential noise in bin order, one Gumbel draw per candidate), so the same
data and seed give bit-identical output; they always use numpy's sampler.

The scans (:func:`unbounded_quantile_upper`, :func:`unbounded_quantile`,
:func:`signed_quantile`, :func:`ladder_quantile`) compare a noisy target with
noisy cumulative counts over public bins and are (eps1 + eps2)-DP;
:func:`em_quantile` chooses a public bin with the exponential mechanism
(:func:`exponential_mechanism`) and is eps-DP. The bounds
(:func:`ladder_failure_bound`, :func:`quantile_overshoot_bound`,
:func:`capped_quantile_level`) are computed from public values only.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import NDArray

from ..core.lazy import scipy_special as special

__all__ = [
    "capped_quantile_level",
    "em_quantile",
    "exponential_mechanism",
    "ladder_bin",
    "ladder_failure_bound",
    "ladder_quantile",
    "quantile_overshoot_bound",
    "signed_log_bin",
    "signed_log_edges",
    "signed_quantile",
    "unbounded_quantile",
    "unbounded_quantile_upper",
]

_DBL_MAX = float(np.finfo(np.float64).max)


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
    present: NDArray[np.bool_] | None = None,
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

    ``present`` (a mask, default all) marks the values that exist; each of
    the others (missing under ``missing="zero"``) adds ``q`` to every count,
    as if a share ``q`` of it lay below every edge, so the chosen bin holds
    the q-quantile of the present values while the target stays ``q N`` for
    the public ``N = x.size``. A value that appears, disappears or moves
    still changes every count by at most one (``max(q, 1 - q)``), so the
    utilities keep sensitivity 1.

    Returns
    -------
    (lower, upper) : the chosen bin's edges.
    """
    x = np.asarray(x, dtype=np.float64)
    size = x.size
    if present is not None:
        x = x[np.asarray(present, dtype=bool)]
    x = np.sort(np.nan_to_num(x, nan=np.inf))
    edges = np.asarray(edges, dtype=np.float64)
    at_or_below = np.searchsorted(x, edges, side="right").astype(np.float64)
    at_or_below += q * (size - x.size)  # each absent value: a share q below every edge
    below, upto = at_or_below[:-1], at_or_below[1:]
    target = q * size
    utility = -np.maximum(np.maximum(below - target, target - upto), 0.0)
    i = exponential_mechanism(utility, eps=eps, sensitivity=1.0, rng=rng)
    return float(edges[i]), float(edges[i + 1])


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
