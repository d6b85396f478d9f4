"""The histogram part of a score release: bins, counts and their noise.

The grid has a number of bins fixed by n alone (:func:`bin_rule`, checked
with the other options in :mod:`dppca.core.score_checks`) and edges
fixed by the frame, both before any histogram noise. Every row adds one to at
most one cell of all groups' counts together, so one replaced row moves at most
two cells by one (L1 sensitivity 2, L2 sensitivity sqrt(2)). The ``"add"``
method puts Gaussian noise on every cell; ``"sparse"`` is a stability
histogram (Laplace noise on non-empty cells, then a release threshold).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Literal

import numpy as np
from numpy.typing import NDArray

from ...core.types import Calibration
from ...privacy.cost import PrivacyCost
from ...privacy.mechanisms import (
    gaussian_noise,
    gaussian_sigma,
    laplace_noise,
    stability_threshold,
)

__all__ = [
    "add_counts",
    "bin_counts",
    "release_histograms",
    "sparse_counts",
]

ScoreMethod = Literal["add", "sparse"]


def _bin_index(values: NDArray[np.float64], edges: NDArray[np.float64]) -> NDArray[np.int64]:
    """Bin of each value on right-closed intervals (the first closed); outside -> edge bins."""
    j = np.searchsorted(edges, values, side="left") - 1
    return np.clip(j, 0, edges.size - 2)


def bin_counts(
    scores: NDArray[np.float64],
    x_edges: NDArray[np.float64],
    y_edges: NDArray[np.float64],
    codes: NDArray[np.int64] | None = None,
    n_groups: int = 1,
) -> NDArray[np.int64]:
    """Counts of rows per group and bin, shape (G, m), x varying fastest (internal).

    Each row adds 1 to at most one cell (none when its group code is -1), so
    replacing a row changes at most two cells by one each: L1 sensitivity 2 and
    L2 sensitivity sqrt(2), jointly over all groups even when the row changes
    group.
    """
    mx, my = x_edges.size - 1, y_edges.size - 1
    cell = _bin_index(scores[:, 1], y_edges) * mx + _bin_index(scores[:, 0], x_edges)
    if codes is not None:
        cell = (cell + codes * (mx * my))[codes >= 0]
    return np.bincount(cell, minlength=n_groups * mx * my).reshape(n_groups, mx * my)


def add_counts(
    counts: NDArray[np.int64], sigma: float, rng: np.random.Generator
) -> NDArray[np.float64]:
    """Gaussian noise on every cell, negative values set to zero (internal)."""
    return np.maximum(gaussian_noise(counts.astype(np.float64), sigma, rng), 0.0)


def sparse_counts(
    counts: NDArray[np.int64], scale: float, threshold: float, rng: np.random.Generator
) -> NDArray[np.float64]:
    """Stability histogram (internal): Laplace noise on non-empty cells, then a threshold.

    Empty cells stay zero and draw no noise; noisy values below ``threshold``
    become zero. Cells are visited in flat order, so the draws are reproducible.
    """
    flat = counts.ravel()
    kept = np.zeros(flat.size)
    nonempty = np.flatnonzero(flat > 0)
    # the hardened grid from the public number of cells, not the non-empty ones
    values = laplace_noise(flat[nonempty].astype(np.float64), scale, rng, grid_count=flat.size)
    kept[nonempty] = np.where(values >= threshold, values, 0.0)
    return kept.reshape(counts.shape)


def _normalise(values: NDArray[np.float64]) -> NDArray[np.float64]:
    totals = values.sum(axis=1, keepdims=True)
    safe = np.where(totals > 0, totals, 1.0)
    return np.where(totals > 0, values / safe, 0.0)


@dataclass(frozen=True)
class HistogramMethod:
    """One private histogram of the binned scores: its cost and its draw.

    Adding a method is adding an entry to :data:`HISTOGRAM_METHODS`: the plan
    prices every entry with ``cost`` and the release draws with ``run``, in the
    order the caller asked for.

    Attributes
    ----------
    cost : callable
        ``cost(name, grid, *, eps, delta, calibration) -> PrivacyCost``; data-free.
    run : callable
        ``run(counts, rng, *, eps, delta, calibration) -> (noisy counts, noise
        parameters)``.
    """

    cost: Callable[..., PrivacyCost]
    run: Callable[..., tuple[NDArray[np.float64], Mapping[str, float]]]


def _add_cost(name: str, grid: str, *, eps: float, delta: float, calibration: str) -> PrivacyCost:
    # L2 sensitivity sqrt(2): replacing one row moves two cells by one
    sigma = gaussian_sigma(math.sqrt(2.0), eps, delta, calibration)
    return PrivacyCost(
        eps,
        delta,
        f"gaussian ({calibration})",
        f"{name} histogram ({grid})",
        kind="gaussian",
        sensitivity=math.sqrt(2.0),
        sigma=sigma,
    )


def _add_run(
    counts: NDArray[np.int64],
    rng: np.random.Generator,
    *,
    eps: float,
    delta: float,
    calibration: str,
) -> tuple[NDArray[np.float64], Mapping[str, float]]:
    sigma = gaussian_sigma(math.sqrt(2.0), eps, delta, calibration)
    return add_counts(counts, sigma, rng), MappingProxyType({"sigma": sigma})


def _sparse_cost(
    name: str, grid: str, *, eps: float, delta: float, calibration: str
) -> PrivacyCost:
    # a release threshold: a generic (eps, delta) part
    return PrivacyCost(eps, delta, "laplace + threshold", f"{name} histogram ({grid})")


def _sparse_run(
    counts: NDArray[np.int64],
    rng: np.random.Generator,
    *,
    eps: float,
    delta: float,
    calibration: str,
) -> tuple[NDArray[np.float64], Mapping[str, float]]:
    scale, threshold = 2.0 / eps, stability_threshold(eps, delta)
    noisy = sparse_counts(counts, scale, threshold, rng)
    return noisy, MappingProxyType({"scale": scale, "threshold": threshold})


HISTOGRAM_METHODS: Mapping[str, HistogramMethod] = MappingProxyType(
    {
        "add": HistogramMethod(cost=_add_cost, run=_add_run),
        "sparse": HistogramMethod(cost=_sparse_cost, run=_sparse_run),
    }
)


def release_histograms(
    counts: NDArray[np.int64],
    methods: Sequence[str],
    *,
    eps_m: float,
    delta_m: float,
    calibration: Calibration,
    rng: np.random.Generator,
) -> tuple[dict[str, NDArray[np.float64]], dict[str, Mapping[str, float]]]:
    """Noisy bin probabilities and noise parameters per method (internal).

    Each method spends ``(eps_m, delta_m)`` on the counts of all groups
    together; the methods draw in the order given, so a seed gives the same
    histograms. Negative counts are set to zero and each group's row is then
    normalised (post-processing).
    """
    probs: dict[str, NDArray[np.float64]] = {}
    noise: dict[str, Mapping[str, float]] = {}
    for m in methods:
        noisy, noise[m] = HISTOGRAM_METHODS[m].run(
            counts, rng, eps=eps_m, delta=delta_m, calibration=calibration
        )
        probs[m] = _normalise(noisy)
    return probs, noise
