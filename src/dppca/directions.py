"""Principal component directions: private (g-DPPCA, spherical) and ordinary."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import InitVar, dataclass, replace
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from ._lazy import is_dataframe
from ._lazy import pandas as pd
from ._progress import ProgressLike, resolve_progress
from ._results import ResultMixin, computed_private
from ._typing import (
    Accuracy,
    Calibration,
    Data,
    Design,
    LoadingKind,
    RandomStateLike,
    Sensitivity,
    Ties,
)
from ._validation import (
    apply_bounds,
    check_accuracy,
    check_bool,
    check_bounds,
    check_budget,
    check_calibration,
    check_choice,
    check_data,
    check_delta,
    check_delta_for_n,
    check_design,
    check_design_m,
    check_eps,
    check_finite_matrix,
    check_k,
    check_positive_int,
    check_random_state,
    check_ties,
)
from .accounting import Budget, PrivacyCost
from .forecast import Forecast, direction_noise_norm, direction_problem, enforce
from .kendall import kendall_matrix, validate_kendall_input
from .mechanisms import (
    kendall_sensitivity,
    kendall_sigma,
    random_pairing,
    symmetric_gaussian_noise,
)

if TYPE_CHECKING:
    from matplotlib.axes import Axes

__all__ = [
    "DirectionsPlan",
    "DirectionsResult",
    "dp_pc_dir",
    "orient_signs",
    "pc_dir",
    "plan_directions",
]


@computed_private
@dataclass(frozen=True, eq=False, repr=False)
class DirectionsResult(ResultMixin):
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
        Computed: True for a release (it has a ``cost``), False for
        :func:`pc_dir`, whose output is computed from the sample covariance
        without any noise. Passing ``private=`` to the constructor is
        deprecated and has no effect.
    sensitivity : str or None
        ``"tight"`` (``2 sqrt(2) / n``) or ``"seed"`` (``4 / n``): the Frobenius
        sensitivity the noise was calibrated to.
    bounds : ndarray of shape (p, 2) or None
        The public bounds the data were clipped to before the release, if any.
    forecast : Forecast or None
        The data-free accuracy forecast made before the release.
    """

    directions: NDArray[np.float64]
    eigenvalues: NDArray[np.float64]
    noisy_matrix: NDArray[np.float64] | None
    sigma: float | None
    n: int
    variables: tuple[str, ...]
    cost: PrivacyCost | None
    calibration: str | None = None
    private: InitVar[bool | None] = None  # deprecated and ignored: computed from cost
    sensitivity: str | None = None
    bounds: NDArray[np.float64] | None = None
    forecast: Forecast | None = None

    def __post_init__(self, private: bool | None) -> None:
        for a in (self.directions, self.eigenvalues, self.noisy_matrix, self.bounds):
            if a is not None:
                a.setflags(write=False)

    def nonprivate_parts(self) -> tuple[str, ...]:
        """``("directions",)`` for non-private directions (:func:`pc_dir`), else empty."""
        return () if self.cost is not None else ("directions",)

    @property
    def has_comparison(self) -> bool:
        """Always False: directions carry no comparison part."""
        return False

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

    def plot(self, kind: LoadingKind = "vector", *, ax: Any = None, **kwargs: Any) -> Axes:
        """Draw a loading plot of these directions (no new privacy cost).

        Parameters
        ----------
        kind : {"vector", "point", "heatmap"}, default="vector"
            The display; see :func:`dppca.plotting.plot_loading`.
        ax : matplotlib Axes, optional
            Where to draw; a new figure by default.
        **kwargs
            Passed to :func:`dppca.plotting.plot_loading`.

        Returns
        -------
        matplotlib.axes.Axes
            The Axes drawn on, as for every result's ``plot()``.
        """
        from .loading import LoadingResult

        return LoadingResult.from_directions(self).plot(kind=kind, ax=ax, **kwargs)

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
    check_finite_matrix(matrix, "matrix to decompose")  # issue 14: no garbage eigenpairs
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
    calibration: Calibration = "analytic",
    ties: Ties = "zero",
    budget: Budget | None = None,
    design: Design = "exact",
    m: int | None = None,
    progress: ProgressLike = None,
    sensitivity: Sensitivity = "tight",
    bounds: Any = None,
    accuracy: Accuracy = "warn",
    allow_large_delta: bool = False,
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
    calibration : {"analytic", "classic"}, default="analytic"
        Gaussian noise calibration; see :func:`dppca.mechanisms.gaussian_sigma`.
    ties : {"zero", "error"}, default="zero"
        Handling of duplicate rows (a difference that cannot be normalised in
        float64, whatever the units); see :func:`dppca.spherical_kendall`.
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
    sensitivity : {"tight", "seed"}, default="tight"
        Frobenius sensitivity the noise is calibrated to: the exact
        ``2 sqrt(2) / n``, or the reference method's ``4 / n`` (with
        ``calibration="classic"`` this reproduces its sigma exactly).
    bounds : None, (lower, upper), array of shape (p, 2) or mapping, default=None
        A public data domain per variable (from a codebook or the units, never
        from the data). Values outside are clipped to it before the release
        (each row on its own, so the guarantee is unchanged). See
        :func:`dppca._validation.check_bounds` for the accepted forms.
    accuracy : {"warn", "error", "ignore"}, default="warn"
        What to do, before any data are read, when the data-free forecast says
        the directions would be mostly noise (:attr:`DirectionsResult.forecast`):
        an ``AccuracyWarning``, an ``InaccurateReleaseError`` (nothing spent),
        or nothing.
    allow_large_delta : bool, default=False
        A delta of ``1/n`` or more permits mechanisms that publish a whole row
        with probability delta, so it is refused unless this is True.

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
    is calibrated to the Frobenius sensitivity ``2 sqrt(2) / n`` of the spherical
    Kendall matrix (:func:`dppca.mechanisms.kendall_sensitivity` holds the
    proof that it is exact), by default with the analytic Gaussian mechanism;
    ``sensitivity="seed", calibration="classic"`` gives the reference method's
    ``sigma = 4 sqrt(2 ln(1.25/delta)) / (n eps)``. The
    directions, eigenvalues and the sign convention (largest-magnitude
    coefficient positive) are post-processing, so the whole result is
    (eps, delta)-DP. No mean or scale is estimated: the matrix is translation
    invariant. Under ``ties="error"`` the error itself reveals that two rows
    nearly coincide; ``ties="zero"`` removes that leak at no privacy cost.

    With ``design="balanced"`` the random order of the rows is drawn first and
    the noise second, both from the generator resolved from ``random_state``;
    the order depends on n only, is never released, and the balanced matrix
    has the same sensitivity (proof in :func:`dppca.mechanisms.kendall_sensitivity`),
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
    check_budget(budget)
    design = check_design(design)
    data, variables = validate_kendall_input(X, design)
    n, p = data.shape
    k = check_k(k, p)
    eps = check_eps(eps)
    delta = check_delta_for_n(
        check_delta(delta), n, check_bool(allow_large_delta, "allow_large_delta")
    )
    calibration = check_calibration(calibration)
    sensitivity = check_choice(sensitivity, "sensitivity", ("tight", "seed"))
    ties = check_ties(ties)
    accuracy = check_accuracy(accuracy)
    box = check_bounds(bounds, variables)
    if box is not None and not isinstance(data, np.ndarray):
        raise TypeError("bounds are supported for in-memory data only; clip a Dask array first.")
    if design == "balanced":
        m = check_design_m(m, n)
    callback = resolve_progress(progress)
    rng = check_random_state(random_state)
    plan = plan_directions(
        n, p, eps=eps, delta=delta, calibration=calibration, sensitivity=sensitivity,
        design=design, m=m,
    )  # fmt: skip
    sigma, cost, forecast = plan.sigma, plan.cost, plan.forecast
    enforce(forecast, accuracy)
    if budget is not None:
        budget.check(cost)
    if box is not None:
        data = apply_bounds(np.array(data, dtype=np.float64), box)
    order = random_pairing(n, rng) if design == "balanced" else None
    kendall = kendall_matrix(data, ties=ties, design=design, m=m, order=order, progress=callback)
    result = release_directions(
        kendall, sigma=sigma, k=k, n=n, variables=variables, cost=cost,
        calibration=calibration, rng=rng, budget=budget,
    )  # fmt: skip
    return replace(
        result,
        sensitivity=sensitivity,
        bounds=None if box is None else np.column_stack(box),
        forecast=forecast,
    )


@dataclass(frozen=True, eq=False)
class DirectionsPlan:
    """The data-free side of a direction release: noise scale, cost and forecast."""

    sigma: float
    cost: PrivacyCost
    forecast: Forecast


def plan_directions(
    n: int,
    p: int,
    *,
    eps: float,
    delta: float,
    calibration: Calibration = "analytic",
    sensitivity: Sensitivity = "tight",
    design: Design = "exact",
    m: int | None = None,
) -> DirectionsPlan:
    """Price and forecast a :func:`dp_pc_dir` call without any data.

    Examples
    --------
    >>> plan = plan_directions(178, 13, eps=1.0, delta=1e-6)
    >>> round(plan.forecast.quantities["direction_noise_norm"], 2), plan.forecast.ok
    (0.34, False)
    """
    n, p = check_positive_int(n, "n"), check_positive_int(p, "p")
    eps, delta = check_eps(eps), check_delta(delta)
    calibration = check_calibration(calibration)
    sensitivity = check_choice(sensitivity, "sensitivity", ("tight", "seed"))
    released = f"noisy spherical Kendall matrix ({p} x {p})"
    if check_design(design) == "balanced":
        released = f"noisy spherical Kendall matrix ({p} x {p}, balanced design, m={m})"
    sigma = kendall_sigma(n, eps, delta, calibration, sensitivity)
    cost = PrivacyCost(
        eps, delta, mechanism=f"gaussian ({calibration})", released=released,
        kind="gaussian", sensitivity=kendall_sensitivity(n, sensitivity), sigma=sigma,
    )  # fmt: skip
    return DirectionsPlan(sigma, cost, forecast_directions(n, p, eps, delta, sigma))


def forecast_directions(n: int, p: int, eps: float, delta: float, sigma: float) -> Forecast:
    """Data-free forecast of a direction release with Kendall noise scale ``sigma``.

    The spherical Kendall matrix has eigenvalues adding up to 1; the noise's
    operator norm is about ``sigma sqrt(2 p)``
    (:func:`dppca.forecast.direction_noise_norm`). Directions separated by an
    eigenvalue gap ``g`` move by about that norm over ``g``; above
    :data:`dppca.forecast.DIRECTION_NOISE_LIMIT` the directions of a typical
    real table are forecast to be mostly noise.
    """
    norm = direction_noise_norm(p, sigma)
    problem = direction_problem(norm)
    problems = [] if problem is None else [problem]
    return Forecast(
        "directions", n, p, eps, delta,
        quantities={"kendall_sigma": sigma, "direction_noise_norm": norm},
        descriptions={
            "kendall_sigma": "standard deviation of the noise on each diagonal entry",
            "direction_noise_norm": "typical operator norm of the noise; directions whose "
            "Kendall eigenvalues differ by less than about twice this are not resolved",
        },
        problems=tuple(problems),
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
    noisy = symmetric_gaussian_noise(p, sigma, rng, value=kendall)
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
    with np.errstate(over="ignore", invalid="ignore"):  # overflow is refused just below
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
    )


# A "public" direction closer than this (max abs entry, up to sign) to the
# data's own sample-covariance direction of the same PC is taken to be it.
_OWN_DIRECTION_TOL = 1e-8


def refuse_own_directions(
    data: NDArray[np.float64], matrix: NDArray[np.float64], pcs: Sequence[int]
) -> None:
    """Refuse public directions that are the data's own non-private directions (internal).

    Parameters
    ----------
    data : ndarray of shape (n, p)
        The validated data of the call (before any clipping to bounds).
    matrix : ndarray of shape (p, len(pcs))
        The caller's "public" directions, as the release would use them.
    pcs : sequence of int
        The PC number (from 1) each column stands for.

    Raises
    ------
    ValueError
        If a column equals, to 1e-8 in every entry and up to its sign, the
        direction of the same PC that :func:`pc_dir` computes from ``data``.

    Notes
    -----
    Privacy: this is a check on the data, so its outcome is itself a function
    of the data; here is why it costs nothing that the caller had not already
    given away. The release treats ``matrix`` as fixed and public, and its
    (eps, delta) guarantee is for neighbouring datasets with the same
    ``matrix``. The check fires only on the data whose own sample-covariance
    direction lies within 1e-8 of a column: a caller who passes such a column
    has, except by a coincidence of probability zero for directions chosen
    without the data, computed it from these data, and the release (which
    publishes ``matrix`` as its directions) would have published a
    non-private statistic, so the guarantee was already void; the refusal
    stops that before anything is spent or drawn. For every other
    ``matrix`` the check passes on both neighbours alike and the guarantee is
    untouched. The residual: a ``matrix`` crafted by someone who knows every
    other row turns the refusal into a yes/no answer to "is the remaining row
    (almost exactly) this guess?"; only pass directions you trust to be
    public. No warning or error here depends on the data otherwise (a
    non-finite covariance, for example, simply passes).
    """
    if matrix.size == 0:
        return
    with np.errstate(all="ignore"):
        cov = np.cov(data, rowvar=False).reshape(data.shape[1], data.shape[1])
        if not np.isfinite(cov).all():
            return
        values, vectors = np.linalg.eigh(cov)
    order = np.argsort(values)[::-1]
    for j, pc in enumerate(pcs):
        own = vectors[:, order[pc - 1]]
        col = matrix[:, j]
        gap = min(np.max(np.abs(col - own)), np.max(np.abs(col + own)))
        if gap <= _OWN_DIRECTION_TOL:
            raise ValueError(
                "directions: a column passed as public equals the non-private direction "
                f"(pc_dir) of PC{pc} of these same data, so the release would not be "
                "private. Pass directions from public data, or a private release from "
                "dp_pc_dir (or directions=None to release them here)."
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
