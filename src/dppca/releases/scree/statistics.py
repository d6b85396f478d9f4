"""The scree's pre-noise statistics, kept apart so that tests can check their sensitivities."""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from ...kernels.pair_moments import paired_differences
from ...privacy.mechanisms import gaussian_sigma

_paired_differences = paired_differences  # the name the tests and earlier code use


def _winsorized_statistic(
    w: NDArray[np.float64], lower: NDArray[np.float64], upper: NDArray[np.float64]
) -> NDArray[np.float64]:
    """Mean of ``clamp(w, lower, upper)`` per column; L2 sensitivity ``||upper - lower|| / m``."""
    return np.clip(w, lower, upper).mean(axis=0)


def _huber_gradient(
    w: NDArray[np.float64], mu: NDArray[np.float64], tau: NDArray[np.float64], eta0: float
) -> NDArray[np.float64]:
    """One descent step's update ``eta0 * mean clamp(w - mu, -tau, tau)``.

    L2 sensitivity ``2 eta0 ||tau|| / m``.
    """
    return eta0 * np.clip(w - mu, -tau, tau).mean(axis=0)


def _m2_values(w: NDArray[np.float64]) -> NDArray[np.float64]:
    """``s_j = (w_{2j-1} - w_{2j})^2 / 2``: one changed ``w`` changes one ``s_j``."""
    half = w.size // 2
    with np.errstate(over="ignore", invalid="ignore"):  # inf/NaN are left out later
        return (w[0 : 2 * half : 2] - w[1 : 2 * half : 2]) ** 2 / 2.0


def _dyadic_bins(values: NDArray[np.float64], k_min: int, k_max: int) -> NDArray[np.int64]:
    """Bin ``clamp(floor(log2 u), k_min, k_max) - k_min``; 0 goes to the first bin.

    Non-finite or negative values get -1 (they are left out).
    """
    ok = np.isfinite(values) & (values >= 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        raw = np.floor(np.log2(np.where(ok, values, 1.0)))
    idx = np.where(values == 0, k_min, np.clip(raw, k_min, k_max)).astype(np.int64) - k_min
    return np.where(ok, idx, -1)


def _m2_histogram(w: NDArray[np.float64], k_min: int, k_max: int, blocks: int) -> NDArray:
    """Dyadic histogram of block medians of the ``s_j`` (rule ``"mode"``).

    One changed ``w`` changes one ``s_j``, hence at most one block median,
    which moves from one bin to another: L1 sensitivity 2.
    """
    s = _m2_values(w)
    n_blocks = min(blocks, s.size)
    size = s.size // n_blocks
    medians = np.array(
        [
            np.median(s[t * size : (t + 1) * size if t < n_blocks - 1 else s.size])
            for t in range(n_blocks)
        ]
    )
    idx = _dyadic_bins(medians, k_min, k_max)
    return np.bincount(idx[idx >= 0], minlength=k_max - k_min + 1)


def _m2_median_utility(w: NDArray[np.float64], k_min: int, k_max: int) -> NDArray:
    """Utility of each dyadic bin as the bin of the median of the ``s_j`` (rule ``"median"``).

    ``-max(below - N/2, N/2 - upto, 0)`` with ``below``/``upto`` the numbers of
    values in lower bins and in bins up to this one. One changed ``s_j``
    moves every count by at most 1, so every utility by at most 1.
    """
    idx = _dyadic_bins(_m2_values(w), k_min, k_max)
    counts = np.bincount(idx[idx >= 0], minlength=k_max - k_min + 1).astype(np.float64)
    upto = np.cumsum(counts)
    below = upto - counts
    half = idx.size / 2.0
    return -np.maximum(np.maximum(below - half, half - upto), 0.0)


def _sigma(sensitivity: float, eps: float, delta: float, calibration: str) -> float:
    """Gaussian scale; zero when the statistic cannot move (sensitivity 0)."""
    if sensitivity == 0:
        return 0.0
    return gaussian_sigma(sensitivity, eps, delta, calibration)
