"""Forecast of the CPU time the noise samplers take, from the count alone.

A plan or ``--dry-run`` shows it before a release runs, so it reads no data:
only the number of noise values, their kind and which sampler draws them
(the hardened OpenDP one for an unseeded release, numpy's for a seeded one).
"""

from __future__ import annotations

__all__ = ["SECONDS_PER_VALUE", "noise_seconds"]

#: CPU seconds per value of the hardened samplers (OpenDP 0.16, grid of
#: :mod:`.hardened`, one vector call), as measured by benchmarks/bench_noise.py;
#: numpy's samplers cost about 0.02 us a value.
SECONDS_PER_VALUE = {"gaussian": 12e-6, "laplace": 6.5e-6, "numpy": 2e-8}


def noise_seconds(count: int, *, kind: str = "gaussian", hardened: bool = True) -> float:
    """Forecast CPU time of drawing ``count`` noise values (data-free).

    Parameters
    ----------
    count : int
        Number of noise values (``p (p + 1) / 2`` for a p x p Kendall matrix).
    kind : {"gaussian", "laplace"}, default="gaussian"
    hardened : bool, default=True
        The hardened sampler (an unseeded release with OpenDP installed), or
        numpy's (a seeded one).

    Returns
    -------
    float
        Seconds, from per-value costs measured on one core by
        ``benchmarks/bench_noise.py`` (:data:`SECONDS_PER_VALUE`); a plan or
        ``--dry-run`` shows it when it is more than a second.

    Examples
    --------
    >>> round(noise_seconds(1000 * 1001 // 2), 1)  # a 1000 x 1000 Kendall matrix
    6.0
    """
    per_value = SECONDS_PER_VALUE[kind if hardened else "numpy"]
    return float(count) * per_value
