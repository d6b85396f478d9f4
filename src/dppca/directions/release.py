"""The private direction release (:func:`dp_pc_dir`), its plan, and :func:`pc_dir`.

The spherical Kendall matrix gets symmetric Gaussian noise once
(:func:`release_directions`, shared by every way of computing the matrix) and
the directions are the leading eigenvectors of the noisy matrix.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .._progress import ProgressLike, resolve_progress
from .._typing import (
    Accuracy,
    Calibration,
    Data,
    Design,
    RandomStateLike,
    Sensitivity,
    Ties,
)
from .._validation import (
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
from ..accounting import Budget, PrivacyCost
from ..forecast import Forecast, direction_noise_norm, direction_problem, enforce
from ..kendall import kendall_matrix, validate_kendall_input
from ..mechanisms import (
    kendall_sensitivity,
    kendall_sigma,
    random_pairing,
    symmetric_gaussian_noise,
)
from ..resolvability import assess_directions, enforce_resolved, resolvability_rng
from .result import DirectionsResult, orient_signs

__all__ = [
    "DirectionsPlan",
    "dp_pc_dir",
    "dp_pc_dir_checked",
    "forecast_directions",
    "pc_dir",
    "pc_dir_checked",
    "plan_directions",
    "release_directions",
]


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
        or nothing. The same choice applies after the release, when the free
        post-release check (:attr:`DirectionsResult.resolvability`) finds the
        judged directions not separated from the noise; a release cannot be
        un-spent, so there ``"error"`` raises with the cost recorded and the
        result on the error's ``result``.
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
    InaccurateReleaseError
        With ``accuracy="error"``: before any data are read when the forecast
        finds a problem (nothing spent); after the release when the released
        directions are not separated from the noise (spent; ``err.result``).

    Warns
    -----
    PrivacyWarning
        With ``calibration="classic"`` and ``eps >= 1``.
    AccuracyWarning
        With ``accuracy="warn"``, from the forecast or from the post-release
        check, naming the PCs not separated from the noise.

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
    (eps, delta)-DP; so is the post-release check on ``resolvability``, which
    reads the released matrix, sigma and k only and draws from a stream kept
    apart from the noise's. No mean or scale is estimated: the matrix is translation
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
    return dp_pc_dir_checked(
        data, variables, k, eps=eps, delta=delta, random_state=random_state,
        calibration=calibration, ties=ties, budget=budget, design=design, m=m,
        progress=progress, sensitivity=sensitivity, bounds=bounds, accuracy=accuracy,
        allow_large_delta=allow_large_delta,
    )  # fmt: skip


def dp_pc_dir_checked(
    data: Any,
    variables: tuple[str, ...],
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
    """:func:`dp_pc_dir` on data checked by :func:`~dppca.kendall.validate_kendall_input`.

    For releases that check their data once and hand it on (internal): a
    float64 ndarray, only read here (possibly the caller's own array), or a
    validated Dask array, reduced on the Dask scheduler. Every other argument
    is checked as in :func:`dp_pc_dir`.
    """
    check_budget(budget)
    design = check_design(design)
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
    assert result.noisy_matrix is not None  # the post-release check reads the release only
    check = assess_directions(
        result.noisy_matrix, sigma, k, random_state=resolvability_rng(random_state)
    )
    result = replace(
        result,
        sensitivity=sensitivity,
        bounds=None if box is None else np.column_stack(box),
        forecast=forecast,
        resolvability=check,
    )
    enforce_resolved(check, accuracy, result)  # after the spend: raises with the result on it
    return result


@dataclass(frozen=True, eq=False)
class DirectionsPlan:
    """The data-free side of a direction release: noise scale, cost and forecast."""

    sigma: float
    cost: PrivacyCost
    forecast: Forecast

    @property
    def parts(self) -> tuple[PrivacyCost, ...]:
        """The elementary costs, in the order the release draws them."""
        return self.cost.leaves()


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
    return pc_dir_checked(data, variables, k)


def pc_dir_checked(
    data: NDArray[np.float64], variables: tuple[str, ...], k: int | None = None
) -> DirectionsResult:
    """:func:`pc_dir` on an in-memory table already checked by ``check_data`` (internal)."""
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


# Pickles and release files name the public path, which stays the same.
DirectionsPlan.__module__ = "dppca.directions"
