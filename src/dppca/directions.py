"""Principal component directions: private (g-DPPCA, spherical) and ordinary."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from ._lazy import is_dataframe
from ._lazy import pandas as pd
from ._progress import ProgressLike, resolve_progress
from ._typing import Calibration, Data, Design, RandomStateLike, Ties
from ._validation import (
    check_calibration,
    check_data,
    check_delta,
    check_design,
    check_design_m,
    check_eps,
    check_k,
    check_random_state,
    check_ties,
)
from .accounting import Budget, PrivacyCost
from .kendall import kendall_matrix, validate_kendall_input
from .mechanisms import kendall_sigma, random_pairing, symmetric_gaussian_noise

if TYPE_CHECKING:
    from matplotlib.axes import Axes

__all__ = ["DirectionsResult", "dp_pc_dir", "orient_signs", "pc_dir"]


@dataclass(frozen=True, eq=False, repr=False)
class DirectionsResult:
    """PC directions and the matrix they were computed from.

    Attributes
    ----------
    directions : ndarray of shape (p, k)
        Orthonormal columns, PC1 first, ordered by decreasing eigenvalue.
    eigenvalues : ndarray of shape (k,)
        Eigenvalues of ``matrix`` for the returned columns. For a private
        result these belong to the noisy spherical Kendall matrix: they are
        not variances and do not measure explained variance.
    noisy_matrix : ndarray of shape (p, p) or None
        The released noisy spherical Kendall matrix K-tilde (private results
        only). Any function of it is post-processing.
    sigma : float or None
        Standard deviation of the diagonal noise (sigma_K); None if not private.
    n : int
        Number of rows of the data (public under the replacement model).
    variables : tuple of str
        Variable labels, one per row of ``directions``.
    cost : PrivacyCost or None
        The privacy cost of the release; None if not private.
    calibration : str or None
        ``"classic"`` or ``"analytic"`` for private results.
    private : bool
        False for :func:`pc_dir`, whose output is computed from the sample
        covariance without any noise.
    """

    directions: NDArray[np.float64]
    eigenvalues: NDArray[np.float64]
    noisy_matrix: NDArray[np.float64] | None
    sigma: float | None
    n: int
    variables: tuple[str, ...]
    cost: PrivacyCost | None
    calibration: str | None = None
    private: bool = True

    def __post_init__(self) -> None:
        for a in (self.directions, self.eigenvalues, self.noisy_matrix):
            if a is not None:
                a.setflags(write=False)

    @property
    def p(self) -> int:
        """Number of variables."""
        return int(self.directions.shape[0])

    @property
    def k(self) -> int:
        """Number of directions kept."""
        return int(self.directions.shape[1])

    @property
    def eps(self) -> float | None:
        """Epsilon spent on this release (None if not private)."""
        return None if self.cost is None else self.cost.eps

    @property
    def delta(self) -> float | None:
        """Delta spent on this release (None if not private)."""
        return None if self.cost is None else self.cost.delta

    @property
    def pc_labels(self) -> tuple[str, ...]:
        """Column labels ``PC1, ..., PCk``."""
        return tuple(f"PC{i + 1}" for i in range(self.k))

    def to_frame(self) -> pd.DataFrame:
        """The directions as a table: variables as index, columns ``PC1``, ``PC2``, ..."""
        return pd.DataFrame(
            np.array(self.directions), index=list(self.variables), columns=list(self.pc_labels)
        )

    def plot(self, kind: str = "vector", **kwargs: Any) -> Axes:
        """Draw a loading plot of these directions (no new privacy cost).

        Keyword arguments go to :func:`dppca.plotting.plot_loading`.
        """
        from .loading import LoadingResult

        return LoadingResult.from_directions(self).plot(kind=kind, **kwargs)

    def __repr__(self) -> str:
        head = f"DirectionsResult(p={self.p}, k={self.k}, n={self.n}"
        if self.cost is None:
            return head + ", non-private)"
        return head + f", eps={self.cost.eps:g}, delta={self.cost.delta:g})"


def orient_signs(vectors: NDArray[np.float64]) -> NDArray[np.float64]:
    """Flip each column so that its largest-magnitude entry is positive.

    The rule looks only at the vectors themselves (ties go to the first such
    entry), so applied to private vectors it is post-processing.
    """
    vectors = np.array(vectors, dtype=np.float64, copy=True)
    if vectors.size == 0:
        return vectors
    lead = np.argmax(np.abs(vectors), axis=0)
    signs = np.sign(vectors[lead, np.arange(vectors.shape[1])])
    signs[signs == 0] = 1.0
    return vectors * signs


def _top_eigen(matrix: NDArray[np.float64], k: int) -> tuple[NDArray, NDArray]:
    """Top-k eigenpairs of a symmetric matrix, eigenvalues decreasing."""
    values, vectors = np.linalg.eigh(matrix)
    order = np.argsort(values)[::-1][:k]
    return np.ascontiguousarray(values[order]), orient_signs(vectors[:, order])


def dp_pc_dir(
    X: Data,
    k: int | None = None,
    *,
    eps: float,
    delta: float,
    random_state: RandomStateLike = None,
    calibration: Calibration = "classic",
    ties: Ties = "error",
    budget: Budget | None = None,
    design: Design = "exact",
    m: int | None = None,
    progress: ProgressLike = None,
) -> DirectionsResult:
    """Differentially private PC directions (g-DPPCA, spherical case).

    The spherical Kendall matrix of ``X`` is perturbed with symmetric Gaussian
    noise and the leading eigenvectors of the noisy matrix are returned.

    Parameters
    ----------
    X : array-like of shape (n, p), pandas.DataFrame, dask.array.Array or dask.dataframe.DataFrame
        Numeric data, n >= 2 (n >= 3 for the balanced design). Not modified,
        centred or scaled. A Dask collection is reduced on the active Dask
        scheduler; the noise is then added once, here, on the client.
    k : int, default=None
        Number of directions to return, in [1, p]; None returns all p. The
        whole noisy matrix is released either way, so ``k`` does not change
        the cost.
    eps : float
        Privacy parameter, > 0.
    delta : float
        Privacy parameter, in (0, 1).
    random_state : None, int or numpy.random.Generator, default=None
        Source of the noise. None draws fresh entropy from the operating
        system, which is what a release meant for publication should use (a
        known seed lets anyone regenerate and subtract the noise).
    calibration : {"classic", "analytic"}, default="classic"
        Gaussian noise calibration; see :func:`dppca.mechanisms.gaussian_sigma`.
    ties : {"error", "zero"}, default="error"
        Handling of rows closer than about 1.49e-8; see
        :func:`dppca.spherical_kendall`.
    budget : Budget, optional
        If given, the cost is checked against it before the data are touched
        and recorded in it afterwards.
    design : {"exact", "balanced"}, default="exact"
        Pairs averaged in the Kendall matrix: all of them, or the n m pairs of
        a random balanced design (for very large n); see
        :func:`dppca.spherical_kendall`. The privacy cost is the same.
    m : int, optional
        Partners per row of the balanced design, in [1, (n - 1) // 2]; default
        ``min(20, (n - 1) // 2)``.
    progress : None, bool or callable, default=None
        Progress of the pair sum: True for a text bar on stderr, or a callable
        ``progress(done, total)`` (counts of pairs).

    Returns
    -------
    DirectionsResult
        ``directions`` (p, k), ``eigenvalues`` and ``noisy_matrix`` of the noisy
        matrix, ``sigma``, ``n``, ``variables`` and ``cost``.

    Raises
    ------
    TypeError, ValueError
        For invalid arguments (checked before any computation).
    TiedRowsError
        With ``ties="error"`` when two rows (almost) coincide.
    BudgetExceededError
        When ``budget`` cannot afford (eps, delta).

    Warns
    -----
    PrivacyWarning
        With ``calibration="classic"`` and ``eps >= 1``.

    See Also
    --------
    pc_dir : ordinary, non-private directions for comparison.
    spherical_kendall : the matrix before noise.

    Notes
    -----
    Privacy: neighbouring datasets have the same ``n`` and differ in one row.
    The released object is the noisy matrix ``K + E``: ``E`` is symmetric with
    N(0, sigma^2) diagonal and N(0, sigma^2/2) off-diagonal entries, and sigma
    is calibrated to the Frobenius sensitivity ``4/n`` of the spherical
    Kendall matrix (:func:`dppca.mechanisms.kendall_sensitivity`); with the
    classic calibration ``sigma = 4 sqrt(2 ln(1.25/delta)) / (n eps)``. The
    directions, eigenvalues and the sign convention (largest-magnitude
    coefficient positive) are post-processing, so the whole result is
    (eps, delta)-DP. No mean or scale is estimated: the matrix is translation
    invariant. Under ``ties="error"`` the error itself reveals that two rows
    nearly coincide; ``ties="zero"`` removes that leak at no privacy cost.

    With ``design="balanced"`` the random order of the rows is drawn first and
    the noise second, both from the generator resolved from ``random_state``;
    the order depends on n only, is never released, and the balanced matrix
    has the same sensitivity ``4/n`` (proof in :func:`dppca.spherical_kendall`),
    so sigma and the cost are unchanged.

    References
    ----------
    Kim, M. and Jung, S. (2025). Robust and differentially private principal
    component analysis. Statistical Analysis and Data Mining, 18(6), e70053.

    Examples
    --------
    >>> from dppca import dp_pc_dir
    >>> from dppca.datasets import load_gau
    >>> res = dp_pc_dir(load_gau(), k=2, eps=0.5, delta=1e-5, random_state=0)
    >>> res
    DirectionsResult(p=20, k=2, n=5000, eps=0.5, delta=1e-05)
    >>> res.to_frame().shape
    (20, 2)
    """
    design = check_design(design)
    data, variables = validate_kendall_input(X, design)
    n, p = data.shape
    k = check_k(k, p)
    eps = check_eps(eps)
    delta = check_delta(delta)
    calibration = check_calibration(calibration)
    ties = check_ties(ties)
    if design == "balanced":
        m = check_design_m(m, n)
    callback = resolve_progress(progress)
    rng = check_random_state(random_state)
    released = f"noisy spherical Kendall matrix ({p} x {p})"
    if design == "balanced":
        released = f"noisy spherical Kendall matrix ({p} x {p}, balanced design, m={m})"
    cost = PrivacyCost(eps, delta, mechanism=f"gaussian ({calibration})", released=released)
    if budget is not None:
        budget.check(cost)
    sigma = kendall_sigma(n, eps, delta, calibration)
    order = random_pairing(n, rng) if design == "balanced" else None
    kendall = kendall_matrix(data, ties=ties, design=design, m=m, order=order, progress=callback)
    return release_directions(
        kendall, sigma=sigma, k=k, n=n, variables=variables, cost=cost,
        calibration=calibration, rng=rng, budget=budget,
    )  # fmt: skip


def release_directions(
    kendall: NDArray[np.float64],
    *,
    sigma: float,
    k: int,
    n: int,
    variables: tuple[str, ...],
    cost: PrivacyCost,
    calibration: str,
    rng: np.random.Generator,
    budget: Budget | None = None,
) -> DirectionsResult:
    """Add the Kendall noise to a computed matrix and decompose it (internal).

    Shared by every way of computing the pre-noise matrix (exact, balanced
    design, distributed), so the mechanism is written once.
    """
    p = kendall.shape[0]
    noisy = kendall + symmetric_gaussian_noise(p, sigma, rng)
    noisy = 0.5 * (noisy + noisy.T)
    values, vectors = _top_eigen(noisy, k)
    if budget is not None:
        budget.spend(cost)
    return DirectionsResult(
        directions=vectors,
        eigenvalues=values,
        noisy_matrix=noisy,
        sigma=sigma,
        n=n,
        variables=variables,
        cost=cost,
        calibration=calibration,
        private=True,
    )


def pc_dir(X: Data, k: int | None = None) -> DirectionsResult:
    """Ordinary (non-private) PC directions from the sample covariance matrix.

    For comparison with private results only: the output is computed from the
    data without noise and carries ``private=False`` and no cost.

    Parameters
    ----------
    X : array-like of shape (n, p) or pandas.DataFrame
        Numeric data, n >= 2.
    k : int, default=None
        Number of directions, in [1, p]; None returns all p.

    Returns
    -------
    DirectionsResult
        ``eigenvalues`` are the sample covariance eigenvalues (variances along
        the directions); ``noisy_matrix`` and ``sigma`` are None. Signs follow
        the same rule as :func:`dp_pc_dir`.

    Examples
    --------
    >>> from dppca import pc_dir
    >>> from dppca.datasets import load_gau
    >>> pc_dir(load_gau(), k=3)
    DirectionsResult(p=20, k=3, n=5000, non-private)
    """
    data, variables = check_data(X)
    n, p = data.shape
    k = check_k(k, p)
    cov = np.cov(data, rowvar=False).reshape(p, p)
    values, vectors = _top_eigen(cov, k)
    return DirectionsResult(
        directions=vectors,
        eigenvalues=values,
        noisy_matrix=None,
        sigma=None,
        n=n,
        variables=variables,
        cost=None,
        calibration=None,
        private=False,
    )


def resolve_directions(
    directions: object, *, p: int, k: int, public_directions: bool = False
) -> tuple[NDArray[np.float64] | None, DirectionsResult | None]:
    """Check the directions a private summary is asked to use (internal).

    Shared by :func:`dppca.dp_scree` and :func:`dppca.dp_score`.

    Parameters
    ----------
    directions : None, DirectionsResult or array-like of shape (p, >=k)
        None: the caller releases private directions itself. A private
        ``DirectionsResult`` is an earlier release. A non-private one (from
        :func:`pc_dir`) is refused unless ``public_directions`` is True. An
        array is taken as public directions.
    p : int
        Number of variables of the data.
    k : int
        Number of leading columns needed (for example the largest PC shown).
    public_directions : bool, default=False
        The caller's confirmation that a non-private ``DirectionsResult``
        comes from public data.

    Returns
    -------
    matrix : ndarray of shape (p, k) or None
        A fresh copy of the first k columns; None when ``directions`` is None.
    release : DirectionsResult or None
        The private release used, if one was given.

    Notes
    -----
    Privacy: every check looks at the directions and the shapes only, never at
    the data. The private summaries treat the directions as fixed, so they must
    be a private release (whose cost was counted when it was made) or truly
    public. A matrix must have orthonormal columns: the scree's default
    clipping level assumes unit directions, and scores on other axes are not
    PC scores (the score histograms would stay private either way).
    """
    if directions is None:
        return None, None
    if not isinstance(public_directions, bool):
        raise TypeError(f"public_directions must be True or False; got {public_directions!r}.")
    need = (
        f"shape (p, >= k) = ({p}, >= {k}): one row per variable and a column for each "
        f"PC up to PC{k}"
    )
    if isinstance(directions, DirectionsResult):
        if not directions.private and not public_directions:
            raise ValueError(
                "directions is a non-private result (from pc_dir); using it would make the "
                "release non-private. Pass a private release from dp_pc_dir, or "
                "public_directions=True if the directions come from public data."
            )
        if directions.p != p or directions.k < k:
            raise ValueError(
                f"directions must have {need}; got a result with p={directions.p}, "
                f"k={directions.k}. Release directions for these columns and enough PCs."
            )
        release = directions if directions.private else None
        return np.array(directions.directions[:, :k], dtype=np.float64), release
    if is_dataframe(directions):
        directions = directions.to_numpy()
    try:
        matrix = np.array(directions, dtype=np.float64)
    except (TypeError, ValueError):
        raise TypeError(
            "directions must be None, a DirectionsResult or a (p, k) numeric matrix; "
            f"got {type(directions).__name__}."
        ) from None
    if matrix.ndim != 2 or matrix.shape[0] != p or matrix.shape[1] < k:
        raise ValueError(f"directions must have {need}; got shape {matrix.shape}.")
    matrix = np.ascontiguousarray(matrix[:, :k])
    if not np.isfinite(matrix).all() or not np.allclose(
        matrix.T @ matrix, np.eye(k), rtol=0.0, atol=1e-6
    ):
        raise ValueError(
            "directions must be finite with orthonormal columns (unit length, mutually "
            "orthogonal); orthonormalise them first, e.g. with numpy.linalg.qr."
        )
    return matrix, None
