"""The scale-free estimator of a direction release: Kendall's tau matrix over p.

``estimator="tau"`` on :func:`dppca.dp_pc_dir` (and :func:`dppca.dp_loading`)
releases ``A = T / p + E`` instead of the spherical Kendall matrix plus noise,
where ``T`` is the marginal Kendall's tau matrix
(:func:`dppca.kernels.tau.kendall_tau_matrix`) and ``E`` the same symmetric
Gaussian noise, calibrated to the same sensitivity (:func:`tau_sensitivity`).
``T`` reads only the signs of pair differences, so it is the same for the
table in any units: no public or private scales are needed.
"""

from __future__ import annotations

import math
from typing import Literal

from ...privacy.cost import PrivacyCost
from ...privacy.mechanisms import gaussian_sigma

__all__ = [
    "ESTIMATORS",
    "Estimator",
    "check_estimator",
    "released_text",
    "tau_cost",
    "tau_sensitivity",
]

#: The ``estimator`` argument of a direction release.
Estimator = Literal["kendall", "tau"]

#: The estimators of a direction release: the seed's spherical Kendall matrix
#: (the default) and Kendall's tau matrix over p.
ESTIMATORS = ("kendall", "tau")


def tau_sensitivity(n: int, p: int | None = None) -> float:
    """Frobenius sensitivity of what a tau release publishes: ``2 sqrt(2) / n``, less for odd p.

    Parameters
    ----------
    n : int
        Number of rows (public), n >= 2.
    p : int, optional
        Number of columns (public). For odd p >= 3 the bound shrinks by the
        factor ``sqrt(1 - 1 / p^2)`` (0.943 at p = 3, 0.994 at p = 9);
        without p, the bound ``2 sqrt(2) / n`` that holds for every p.

    Notes
    -----
    Write ``T = 2 / (n (n - 1)) sum_{i<j} s_ij s_ij^T`` with
    ``s_ij = sign(x_i - x_j)`` in ``{-1, 0, 1}^p`` (0 for a tie). For any two
    such vectors ``s`` and ``t``,

        ||s s^T - t t^T||_F^2 = |s|^4 + |t|^4 - 2 (s.t)^2 <= 2 p^2,

    because ``|s|^2 = (number of non-zero entries of s) <= p``, likewise for
    ``t``, and ``(s.t)^2 >= 0``. Replacing row ``i`` by another row changes
    only the ``n - 1`` pair terms that contain row ``i``; each moves
    ``T / p`` by at most ``sqrt(2) p * 2 / (n (n - 1)) / p``, so by the
    triangle inequality the whole matrix moves by at most
    ``(n - 1) sqrt(2) * 2 / (n (n - 1)) = 2 sqrt(2) / n`` in Frobenius norm,
    the same bound as the spherical Kendall matrix
    (:func:`dppca.privacy.mechanisms.kendall_sensitivity`). Ties only make
    ``|s|`` smaller, so the bound holds with them.

    The bound is attained for every even p: put every row but ``i`` at one
    point ``c``, and row ``i`` above ``c`` in every coordinate (all ``n - 1``
    sign vectors are the all-ones vector); the neighbour moves row ``i``
    above ``c`` in half of the coordinates and below in the other half. Then
    ``|s|^2 = |t|^2 = p`` and ``s.t = 0``, each of the ``n - 1`` changes is
    the same matrix of norm ``sqrt(2) p``, and they add up in norm.

    Odd p. Let ``S`` and ``U`` be the sets of non-zero coordinates of ``s``
    and ``t``. The product ``s.t`` is a sum of ``|S & U|`` terms equal to
    +-1, so its parity is that of ``|S & U|``. If ``|S| = |U| = p`` then
    ``|S & U| = p`` is odd, ``s.t`` is odd, ``(s.t)^2 >= 1`` and the square
    norm is at most ``2 p^2 - 2``. Otherwise ``|S| + |U| <= 2 p - 1`` with
    both at most p, so ``|s|^4 + |t|^4 <= p^2 + (p - 1)^2 = 2 p^2 - 2 p + 1``,
    which is at most ``2 p^2 - 2`` for p >= 2. Every pair term therefore
    moves by at most ``sqrt(2 p^2 - 2) = sqrt(2) p sqrt(1 - 1/p^2)``, and the
    argument above gives ``2 sqrt(2) sqrt(1 - 1/p^2) / n``. It is attained by
    the same construction with the neighbour above ``c`` in ``(p + 1) / 2``
    coordinates and below in ``(p - 1) / 2`` (``s.t = 1``). The diagonal
    terms ``s_a^2 - t_a^2`` are 0 in every case that reaches a bound, so the
    bound is the same whether or not the diagonal counts (it is not
    released, see below). At p = 1 there is no off-diagonal entry; a tau
    release needs p >= 2 to mean anything, and the general bound is kept.

    The balanced design averages ``n m`` pairs with weight ``1 / (n m)`` and
    each row in ``2 m`` of them: again at most ``2 m / (n m)`` times the
    bound on one pair term, the same value.

    Only the off-diagonal entries of the noisy matrix are released. Its
    diagonal is set to the public constant ``1 / p`` (the value of ``T / p``'s
    diagonal when no column has ties); a constant diagonal moves every
    eigenvalue by the same amount and leaves the eigenvectors as they are, so
    without ties the directions lose nothing, and the diagonal's noise (the
    largest entries of the symmetric noise) never reaches them. With ties the
    estimand's diagonal becomes 1/p in place of each column's share of
    untied pairs over p, as a correlation matrix has a unit diagonal. Dropping entries is
    post-processing, so the guarantee is that of the whole noisy matrix.

    Examples
    --------
    >>> round(tau_sensitivity(100), 6)
    0.028284
    >>> round(tau_sensitivity(100, 3) / tau_sensitivity(100), 4)
    0.9428
    >>> tau_sensitivity(100, 4) == tau_sensitivity(100)
    True
    """
    bound = 2.0 * math.sqrt(2.0) / n
    if p is not None and p >= 3 and p % 2 == 1:
        return bound * math.sqrt(1.0 - 1.0 / p**2)
    return bound


def tau_cost(
    n: int, p: int, eps: float, delta: float, calibration: str, released: str
) -> PrivacyCost:
    """The Gaussian part of a tau release at (eps, delta): :func:`tau_sensitivity` ``(n, p)``."""
    sensitivity = tau_sensitivity(n, p)
    return PrivacyCost(
        eps,
        delta,
        mechanism=f"gaussian ({calibration})",
        released=released,
        kind="gaussian",
        sensitivity=sensitivity,
        sigma=gaussian_sigma(sensitivity, eps, delta, calibration),
    )


def check_estimator(estimator: object, *, scale: object, sensitivity: str, ties: str) -> Estimator:
    """``estimator`` as ``"kendall"`` or ``"tau"``, refusing settings tau does not have.

    ``scale`` is the caller's argument as given (any value but None is
    refused with tau), ``sensitivity`` and ``ties`` are already checked.
    """
    if not isinstance(estimator, str) or estimator not in ESTIMATORS:
        raise ValueError(f"estimator must be 'kendall' or 'tau'; got {estimator!r}.")
    if estimator == "kendall":
        return "kendall"
    if scale is not None:
        raise ValueError(
            f"scale={scale!r} cannot be used with estimator='tau': Kendall's tau matrix "
            "does not change when a column is multiplied by a positive scale, so there is "
            "nothing to scale; pass scale=None (and spend the whole budget on the matrix)."
        )
    if sensitivity != "tight":
        raise ValueError(
            f"sensitivity={sensitivity!r} reproduces the reference method's noise on the "
            "spherical Kendall matrix only; with estimator='tau' pass sensitivity='tight' "
            "(2 sqrt(2) / n, exact for the tau matrix as well)."
        )
    if ties != "zero":
        raise ValueError(
            f"ties={ties!r} applies to the spherical Kendall matrix only: Kendall's tau "
            "scores a tie in a column as 0 by definition; pass ties='zero'."
        )
    return "tau"


def released_text(estimator: str, p: int, design: str, m: int | None) -> str:
    """What a direction release publishes, for its cost."""
    name = (
        "noisy Kendall's tau matrix / p, off the diagonal"
        if estimator == "tau"
        else "noisy spherical Kendall matrix"
    )
    if design == "balanced":
        return f"{name} ({p} x {p}, balanced design, m={m})"
    return f"{name} ({p} x {p})"
