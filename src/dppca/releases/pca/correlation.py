"""The standardised scree of a tau release: Pearson correlations from Kendall's tau.

A standardised fit releases ``A = T / p + E`` (:mod:`dppca.releases.directions.tau`):
Kendall's tau matrix over p plus symmetric Gaussian noise, its diagonal set to
the public ``1 / p``. For an elliptical distribution (Gaussian, t, ...) the
Pearson correlation of two columns is ``sin(pi tau / 2)`` (Greiner's
relation; Lindskog, McNeil and Schmock 2003), so

    R = sin(pi / 2 * clip(p A, -1, 1)),  diagonal 1,

estimates the table's correlation matrix from the released matrix alone
(post-processing: no new noise, no new cost). The variances of the
standardised table along the released directions ``v_j`` are ``v_j' R v_j``
and the total variance is ``p``; they are what :func:`dppca.dp_pca` reports as
the standardised scree. For columns that are not elliptical (skewed, heavy
ties) the rank correlation ``sin(pi tau / 2)`` is a robust stand-in for the
Pearson correlation, not the same quantity.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import NDArray

__all__ = ["correlation_from_tau", "standardized_variances"]


def correlation_from_tau(noisy: NDArray[np.float64]) -> NDArray[np.float64]:
    """The correlation estimate ``sin(pi tau / 2)`` from a released tau matrix over p.

    Parameters
    ----------
    noisy : ndarray of shape (p, p)
        The released matrix ``A`` (Kendall's tau over p plus noise, diagonal
        ``1 / p``).

    Returns
    -------
    ndarray of shape (p, p)
        Symmetric, unit diagonal, entries in [-1, 1]. Not necessarily
        positive semi-definite: the noise can push eigenvalues below 0.

    Examples
    --------
    >>> A = np.array([[0.5, 1 / 6], [1 / 6, 0.5]])  # tau = 1/3 over p = 2
    >>> round(float(correlation_from_tau(A)[0, 1]), 4)
    0.5
    """
    a = np.asarray(noisy, dtype=np.float64)
    p = a.shape[0]
    tau = np.clip(p * a, -1.0, 1.0)
    r = np.sin(0.5 * math.pi * tau)
    r = 0.5 * (r + r.T)
    np.fill_diagonal(r, 1.0)
    return r


def standardized_variances(
    correlation: NDArray[np.float64], directions: NDArray[np.float64]
) -> NDArray[np.float64]:
    """``v_j' R v_j`` for each direction, clipped at 0 (a variance is not negative)."""
    r = np.asarray(correlation, dtype=np.float64)
    v = np.asarray(directions, dtype=np.float64)
    values = np.einsum("ij,ik,kj->j", v, r, v)
    return np.clip(values, 0.0, None)
