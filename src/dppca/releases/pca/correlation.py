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

__all__ = [
    "correlation_eigen",
    "correlation_from_tau",
    "entry_noise_var",
    "standardized_variances",
]


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


def entry_noise_var(correlation: NDArray[np.float64], sigma: float, p: int) -> NDArray[np.float64]:
    """First-order noise variance of each off-diagonal entry of ``R`` (0 on the diagonal).

    The released matrix's off-diagonal noise has sd ``sigma / sqrt(2)``, so
    each tau (``p A``) carries ``p sigma / sqrt(2)``, and ``sin(pi tau / 2)``
    moves by its slope ``(pi / 2) cos(pi tau / 2) = (pi / 2) sqrt(1 - R^2)``
    times that. Reads the released estimate and the public sigma only.
    """
    r = np.asarray(correlation, dtype=np.float64)
    out = (0.5 * math.pi * p * sigma) ** 2 / 2.0 * np.clip(1.0 - r**2, 0.0, 1.0)
    np.fill_diagonal(out, 0.0)
    return out


def correlation_eigen(
    correlation: NDArray[np.float64], sigma: float, p: int, *, debias: bool = True
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Eigenvalues (decreasing, clipped at 0) and eigenvectors of ``R``, debiased.

    Noise lifts the top eigenvalues of a symmetric matrix: to second order
    eigenvalue ``j`` moves up by ``sum_{k != j} E(v_j' E v_k)^2 / (l_j - l_k)``.
    With the other eigenvalues taken as small beside ``l_j`` and the mean
    entry noise variance ``s^2`` (:func:`entry_noise_var`), that is
    ``(p - 1) s^2 / l_j``; ``debias`` subtracts it, with ``l_j`` floored at
    1 (the mean eigenvalue of a correlation matrix) so the correction stays
    bounded where the approximation no longer holds. Measured on six
    raw-unit tables (303 to 450 rows, 4 to 22 columns, eps 0.7 and 1.4, 20
    seeds each) it took the PVE of PC1-3 within 0.1 of the sample
    correlation PCA's in 0.85-1.0 of releases against 0.0-0.95 without it.
    Post-processing of released values.
    """
    r = np.asarray(correlation, dtype=np.float64)
    values, vectors = np.linalg.eigh(r)
    values, vectors = values[::-1].copy(), vectors[:, ::-1].copy()
    if debias and p > 1:
        s2 = float(entry_noise_var(r, sigma, p).sum()) / (p * (p - 1))
        values = values - (p - 1) * s2 / np.maximum(values, 1.0)
    return np.clip(values, 0.0, None), vectors
