"""Private per-variable scales: the ``scale="private"`` parts of a direction release.

The spherical Kendall matrix is not scale invariant, so a table in raw units
needs its columns put on comparable scales first. Sample standard deviations
would leak; this module releases a robust scale per column with the
exponential mechanism instead, and the Kendall matrix is then computed on the
data divided by the released scales (post-processing of a private output).

The statistic of column ``j``: the rows are put in a uniformly random order
``pi`` drawn from the release's noise stream
(:func:`dppca.privacy.mechanisms.random_pairing`, the same draw the balanced
design and the scree use), paired as ``(pi_1, pi_2), (pi_3, pi_4), ...`` (``m
= n // 2`` pairs; with n odd the last row of the order sits out), and the
0.75-quantile of the absolute differences ``|x_{pi_{2i-1}, j} - x_{pi_{2i},
j}|`` is released on a log scale over a public range, divided by
:data:`NORMAL_FACTOR` so that for a Gaussian column it estimates the
standard deviation. The pairing is drawn without looking at the data: a
pairing by position in the file would not be private, since files are often
stored sorted or grouped by a column, and then the pairs (hence the
quantile) depend on every row's value, not on one row at a time.

The 0.75-quantile is used rather than the median because it is the more
efficient of the two for a half-normal and because a binary column (at most
half its differences nonzero) then gets the scale of its nonzero differences
instead of a coin flip between 0 and 1.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from ...kernels.pair_moments import paired_differences
from ...privacy.cost import PrivacyCost
from ...privacy.mechanisms import random_pairing
from ...privacy.quantiles import ladder_quantile

__all__ = [
    "CONSTANT_BELOW",
    "NORMAL_FACTOR",
    "SCALE_QUANTILE",
    "SCALE_RANGE",
    "PrivateScales",
    "draw_private_scales",
    "pair_differences",
    "scale_costs",
    "scale_ladder",
    "stretch_shares",
]

#: The quantile of the pair differences that is released.
SCALE_QUANTILE = 0.75
#: The 0.75-quantile of |Z1 - Z2| for independent standard normals: sqrt(2) Phi^-1(0.875).
NORMAL_FACTOR = math.sqrt(2.0) * 1.1503493803760079
#: The public range of the released quantile, in the column's unit (1, or its bounds' width).
SCALE_RANGE = (1e-8, 1e8)
#: Where zero differences are put before the jitter (in the column's unit).
ZERO_FLOOR = 1e-7
#: A released scale below this (in the column's unit) marks the column as constant.
CONSTANT_BELOW = 1e-6
#: Ratio of consecutive candidates of the public ladder (a 1% scan).
LADDER_RATIO = 1.3
_DBL_MAX = float(np.finfo(np.float64).max)


@dataclass(frozen=True, eq=False, repr=False)
class PrivateScales:
    """Released per-variable scales (the output of the scale parts).

    Attributes
    ----------
    values : ndarray of shape (p,)
        The released scales in the data's units (standard-deviation units for
        a Gaussian column); a constant column's value is tiny.
    constant : ndarray of shape (p,), bool
        Columns whose released scale is below ``CONSTANT_BELOW`` times their
        unit: most of their pair differences are zero. They are left in their
        own units (divided by 1) rather than blown up.
    eps_each : float
        The pure-DP epsilon of each column's release.
    """

    values: NDArray[np.float64]
    constant: NDArray[np.bool_]
    eps_each: float

    def __post_init__(self) -> None:
        self.values.setflags(write=False)
        self.constant.setflags(write=False)

    @property
    def divisors(self) -> NDArray[np.float64]:
        """What the data are divided by: the scales, with 1 for constant columns."""
        return np.where(self.constant, 1.0, self.values)

    def apply(self, values: NDArray[np.float64]) -> NDArray[np.float64]:
        """``values`` divided by :attr:`divisors`, saturated at +-DBL_MAX (a new array).

        A huge finite value divided by a scale below 1 would overflow to
        infinity with a warning that only tables holding such a value give:
        the quotient is clipped to the largest finite double instead, with no
        warning whatever the data (post-processing of the released scales).
        """
        with np.errstate(over="ignore"):
            out = np.asarray(values, dtype=np.float64) / self.divisors
        return np.clip(out, -_DBL_MAX, _DBL_MAX)

    def note(self, variables: tuple[str, ...]) -> str | None:
        """A sentence naming the columns left unscaled, or None."""
        names = [v for v, c in zip(variables, self.constant, strict=True) if c]
        if not names:
            return None
        shown = ", ".join(names[:8]) + (f" and {len(names) - 8} more" if len(names) > 8 else "")
        return (
            f"{len(names)} column(s) have a private scale of about 0 (constant or "
            f"nearly so): {shown}; they were left in their own units."
        )

    def __repr__(self) -> str:
        return f"PrivateScales(p={self.values.size}, constant={int(self.constant.sum())})"


def scale_costs(variables: tuple[str, ...], eps_each: float) -> list[PrivacyCost]:
    """One pure part per column: the exponential-mechanism quantile of its differences."""
    return [
        PrivacyCost(
            eps_each,
            0.0,
            mechanism="noisy scan (1.15x log ladder)",
            released=f"private scale of {name}",
            kind="pure",
        )
        for name in variables
    ]


def draw_private_scales(
    values: NDArray[np.float64],
    *,
    eps_each: float,
    units: NDArray[np.float64],
    rng: np.random.Generator,
) -> PrivateScales:
    """Release one robust scale per column (each ``eps_each``-DP; p parts in all).

    Parameters
    ----------
    values : ndarray of shape (n, p)
        The table (already clipped to its public bounds, if any).
    eps_each : float
        Epsilon of each column's exponential mechanism.
    units : ndarray of shape (p,)
        Public units per column (1, or the width of its public bounds): the
        range of the quantile is ``SCALE_RANGE`` times the unit.
    rng : numpy.random.Generator
        The release's noise stream: first the pairing (one permutation of the
        n rows, :func:`dppca.privacy.mechanisms.random_pairing`), then each
        column's noisy scan, in column order.

    Notes
    -----
    Privacy: neighbouring tables have the same n and differ in one row. The
    pairing is a uniformly random permutation of ``range(n)`` drawn from the
    release's stream before any data are read: its law depends on the public
    n alone, whatever the order the rows are stored in, and it is never
    released. Condition on it: it is then the same for both neighbours, row
    ``r`` enters at most one of its pairs, so replacing it changes at most
    one of the ``m`` differences of each column (zeros are raised to
    ``ZERO_FLOOR``, and an overflowing difference saturates at the largest
    double: fixed maps of each difference alone, which warn for no data).
    The argument holds for every fixed pairing, so it holds for the mixture
    over pairings too. A pairing by position would not do: in a file sorted
    by column ``j`` every pair is two neighbours in rank, and changing one
    value re-sorts the file and so changes many pairs. Each column's
    value is then the noisy scan :func:`dppca.privacy.quantiles.ladder_quantile` on
    the public ladder :func:`scale_ladder` (fixed before any data are read),
    whose cumulative counts move by at most one when one value changes: it
    is (eps_each / 2 + eps_each / 2)-DP. A pair with a missing cell in
    column ``j`` (``missing="zero"``) counts as a zero difference there (a
    map of that pair alone, so the argument is unchanged), and the rank
    aimed at stays ``0.75 m`` of the public ``m``: with a share ``f`` of
    such pairs the scale is the ``(0.75 - f) / (1 - f)`` quantile of the
    present differences, always within reach (counting them in no bin
    would aim at ``0.75 / (1 - f)``, out of reach once ``f > 0.25``). The p
    columns compose; the plan
    records p pure parts for the tight accountant. The output is a ladder
    candidate at or above the noisy quantile, so it has the ladder's 15%
    resolution; measured on raw-unit tables, finer ladders lost more to the
    scan's early stops than they gained (benchmarks/bench_units.py).
    """
    n, p = values.shape
    diffs = pair_differences(values, random_pairing(n, rng))
    ladder = scale_ladder()
    out = np.empty(p)
    for j in range(p):
        unit = float(units[j])
        # a pair with a missing cell in column j (NaN, missing="zero") counts as a
        # zero difference: at the bottom of the ladder, a map of the pair alone;
        # an overflowing one saturates: no data-dependent warning either way
        with np.errstate(over="ignore"):
            d = np.clip(np.nan_to_num(diffs[:, j] / unit, nan=0.0), ZERO_FLOOR, _DBL_MAX)
        t = ladder_quantile(
            d, ladder, q=SCALE_QUANTILE, eps1=eps_each / 2, eps2=eps_each / 2, rng=rng
        )
        out[j] = t * unit / NORMAL_FACTOR
    constant = out < CONSTANT_BELOW * np.asarray(units, dtype=np.float64)
    return PrivateScales(out, constant, eps_each)


def stretch_shares(
    eps: float, delta: float, share: float, p: int, gaussian_rho: Callable[[float], float]
) -> float:
    """The factor ``c >= 1`` by which both shares can grow and still cost at most eps.

    The release spends ``c * share * eps / p`` on each of the p scales (pure
    parts) and ``c * (1 - share) * eps`` on the Gaussian part; at ``c = 1``
    basic composition already gives eps. A pure eps_i part is
    ``eps_i^2 / 2``-zCDP and a Gaussian part ``gaussian_rho(eps_G)``-zCDP
    (``(sensitivity / sigma)^2 / 2``), zCDP adds up, and rho-zCDP implies
    ``(rho + 2 sqrt(rho ln(1 / delta)), delta)``-DP (Bun and Steinke 2016):
    the largest ``c`` whose bound is at most eps (found by bisection on this
    closed form) is returned, or 1 when the bound is looser than basic
    composition. The recorded cost is still the tight accountant's.
    """

    def bound(c: float) -> float:
        rho = p * (c * share * eps / p) ** 2 / 2 + gaussian_rho(c * (1 - share) * eps)
        return rho + 2 * math.sqrt(rho * math.log(1 / delta))

    if bound(1.0) >= eps:
        return 1.0
    lo, hi = 1.0, 2.0
    while bound(hi) < eps and hi < 1e6:
        lo, hi = hi, 2 * hi
    for _ in range(50):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if bound(mid) < eps else (lo, mid)
    return lo


def pair_differences(values: NDArray[np.float64], order: NDArray[np.int64]) -> NDArray[np.float64]:
    """``|x_a - x_b|`` per column for consecutive entries ``a, b`` of ``order``, (n // 2, p).

    ``order`` is a permutation of the rows drawn without the data
    (:func:`dppca.privacy.mechanisms.random_pairing`); the pairs are those of
    :func:`dppca.kernels.pair_moments.paired_differences` (with n odd, the
    last row of the order is left out). A difference too large for a double
    saturates at the largest one, without a warning.
    """
    z = paired_differences(np.asarray(values, dtype=np.float64), order)
    with np.errstate(over="ignore"):
        return np.minimum(np.abs(z) * math.sqrt(2.0), _DBL_MAX)


def scale_ladder() -> NDArray[np.float64]:
    """The public candidates: ``SCALE_RANGE`` in steps of ``LADDER_RATIO`` (about 3700)."""
    lo, hi = SCALE_RANGE
    steps = math.ceil(math.log(hi / lo) / math.log(LADDER_RATIO))
    return lo * LADDER_RATIO ** np.arange(steps + 1, dtype=np.float64)
