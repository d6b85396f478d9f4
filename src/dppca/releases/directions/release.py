"""The private direction release (:func:`dp_pc_dir`) and the ordinary :func:`pc_dir`.

:func:`dp_pc_dir` checks the table, builds its plan (:func:`plan_pc_dir`) and
runs it through the one executor, :func:`dppca.releases.engine.execute`.
"""

from __future__ import annotations

from typing import Any, Literal

import numpy as np
from numpy.typing import NDArray

from ...core.data_checks import check_data
from ...core.options import SCALE_SHARE, DirectionsOptions, document_design, release_options
from ...core.progress import ProgressLike
from ...core.tables import MissingRule, complete_rows, document_missing
from ...core.types import Accuracy, Calibration, Data, Design, RandomStateLike, Sensitivity, Ties
from ...core.validation import check_k
from ...kernels.kendall import validate_kendall_input
from ...privacy.accounting import Accountant
from ..engine import CheckedData, execute
from .plan import plan_directions, top_eigen
from .result import DirectionsResult
from .tau import Estimator

__all__ = ["dp_pc_dir", "pc_dir", "pc_dir_checked"]


@document_missing
@document_design
def dp_pc_dir(
    X: Data,
    k: int | None = None,
    *,
    eps: float,
    delta: float,
    random_state: RandomStateLike = None,
    calibration: Calibration = "analytic",
    ties: Ties = "zero",
    budget: Accountant | None = None,
    design: Design | None = None,
    m: int | None = None,
    progress: ProgressLike = None,
    sensitivity: Sensitivity = "tight",
    bounds: Any = None,
    accuracy: Accuracy = "warn",
    allow_large_delta: bool = False,
    scale: Literal["private"] | None = None,
    scale_share: float = SCALE_SHARE,
    estimator: Estimator = "kendall",
    missing: MissingRule = "refuse",
    dropna: bool = False,
) -> DirectionsResult:
    """Differentially private PC directions (g-DPPCA, spherical case).

    The spherical Kendall matrix of ``X`` (or, with ``estimator="tau"``,
    Kendall's tau matrix over p) is perturbed with symmetric Gaussian noise
    and the leading eigenvectors of the noisy matrix are returned.

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
        Gaussian noise calibration; see :func:`dppca.privacy.mechanisms.gaussian_sigma`.
    ties : {"zero", "error"}, default="zero"
        Handling of duplicate rows (a difference that cannot be normalised in
        float64, whatever the units); see :func:`dppca.spherical_kendall`.
    budget : Accountant, optional
        If given, the cost is checked against it before the data are touched
        and recorded in it afterwards.
    design : {"exact", "balanced"} or None, default=None
        %(design)s
    m : int, optional
        %(m)s
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
        :func:`dppca.core.validation.check_bounds` for the accepted forms.
    accuracy : {"warn", "error", "ignore"}, default="warn"
        What to do, before any data are read, when the data-free forecast says
        the directions would be mostly noise (:attr:`DirectionsResult.forecast`):
        an ``AccuracyWarning``, an ``InaccurateReleaseError`` (nothing spent),
        or nothing.
    allow_large_delta : bool, default=False
        A delta of ``1/n`` or more permits mechanisms that publish a whole row
        with probability delta, so it is refused unless this is True.
    scale : {None, "private"}, default=None
        None analyses the data in their own units (divide by public scales
        first where the units are known). ``"private"`` releases one robust
        scale per column (:func:`dppca.releases.directions.scales.draw_private_scales`)
        and divides the data by them before the Kendall matrix; use it for a
        table whose columns are in unrelated units. The scales are in
        ``result.scales``; constant columns are left unscaled and named in
        ``result.scale_note``.
    scale_share : float, default=0.5
        With ``scale="private"``, the share of the budget spent on the
        scales (the rest buys the Kendall matrix). Finding the split that
        the tight accountant prices at ``eps`` takes up to a few seconds.
    estimator : {"kendall", "tau"}, default="kendall"
        The matrix released with noise. ``"kendall"`` is the seed method's
        spherical Kendall matrix, which depends on the units of the columns.
        ``"tau"`` is the marginal Kendall's tau matrix divided by p: it reads
        only the signs of pair differences, so it is the same for the table in
        any units, and it suits a table in raw, unrelated units with no public
        scales (``scale`` must then be None; ``sensitivity="tight"`` and
        ``ties="zero"`` only). In-memory data only; O(n^2 p^2) time. Its
        noise scale and cost are those of the Kendall release.
    missing : {"refuse", "zero"}, default="refuse"
        %(missing)s
    dropna : bool, default=False
        The old spelling of ``missing="zero"`` (see ``missing``).

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
    Kendall matrix (:func:`dppca.privacy.mechanisms.kendall_sensitivity` holds the
    proof that it is exact), by default with the analytic Gaussian mechanism;
    ``sensitivity="seed", calibration="classic"`` gives the reference method's
    ``sigma = 4 sqrt(2 ln(1.25/delta)) / (n eps)``. The
    directions, eigenvalues and the sign convention (largest-magnitude
    coefficient positive) are post-processing, so the whole result is
    (eps, delta)-DP. No mean or scale is estimated: the matrix is translation
    invariant. With ``scale="private"`` the p scales are p pure-DP parts of
    ``c * scale_share * eps / p`` each and the Kendall noise is calibrated
    to ``c * (1 - scale_share) * eps``, where ``c >= 1`` is the largest
    factor (to about 1%) at which the tight accountant composes the p + 1
    parts to at most ``eps`` at ``delta`` (about 1.25 for p = 10, 1.75 for
    p = 64); the recorded cost is that tight composition. Dividing the data
    by released scales is post-processing. Under ``ties="error"`` the
    error itself reveals that two rows nearly coincide; ``ties="zero"``
    removes that leak at no privacy cost.

    With ``estimator="tau"`` the released matrix is ``T / p + E`` with the
    same noise ``E``: ``T = 2 / (n (n - 1)) sum_{i<j} s_ij s_ij^T`` with
    ``s_ij = sign(x_i - x_j)`` per coordinate has Frobenius sensitivity
    ``2 sqrt(2) p / n`` for even p and ``sqrt(1 - 1/p^2)`` times that for
    odd p (both attained; proof in
    :func:`dppca.releases.directions.tau.tau_sensitivity`), so ``T / p`` has
    at most the Kendall matrix's ``2 sqrt(2) / n`` and its noise is
    calibrated to its own bound. Without ties its trace is 1, like the
    Kendall matrix's, so the forecast applies unchanged; the post-release
    check uses a rule of its own (:mod:`dppca.releases.resolvability`).
    Under elliptical models its eigenvectors are close to those of the
    Kendall matrix of the standardised table.

    With ``design="balanced"`` the random order of the rows is drawn first and
    the noise second, both from the generator resolved from ``random_state``;
    the order depends on n only, is never released, and the balanced matrix
    has the same sensitivity (proof in :func:`dppca.privacy.mechanisms.kendall_sensitivity`),
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
    privacy, options = release_options(locals(), DirectionsOptions)
    checked = _check_input(X, options.design, privacy.missing)
    n, p = checked.shape
    plan = plan_directions(n, p, privacy, options, checked.variables)
    result: DirectionsResult = execute(plan, checked, budget=budget, random_state=random_state)
    return result


def _check_input(X: Data, design: str | None, missing: str = "refuse") -> CheckedData:
    """The table checked once for a direction release (in memory or Dask)."""
    # None is resolved by the plan, from n and p (the check reads no design)
    data, variables = validate_kendall_input(X, design or "exact", missing=missing)
    return CheckedData(data, variables)


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
    """:func:`pc_dir` on an in-memory table already checked by ``check_data`` (internal).

    A table with missing cells (``missing="zero"``) gives the directions of its
    complete rows (a non-private comparison; ``n`` stays every row).
    """
    n, p = data.shape
    complete = complete_rows(data)
    if complete is not None:
        data = data[complete]
    k = check_k(k, p)
    # Tiny data (subnormal values) would give a covariance of zeros: scale by a
    # power of two (exact) into the normal range, and the eigenvalues back.
    top = float(np.max(np.abs(data))) if data.size else 0.0
    shift = -int(np.frexp(top)[1]) if 0.0 < top < 2.0**-500 else 0
    with np.errstate(over="ignore", invalid="ignore"):  # overflow is refused just below
        cov = np.cov(np.ldexp(data, shift) if shift else data, rowvar=False).reshape(p, p)
    values, vectors = top_eigen(cov, k)
    if shift:
        with np.errstate(under="ignore"):
            values = np.ldexp(values, -2 * shift)
    return DirectionsResult(
        directions=vectors,
        eigenvalues=values,
        noisy_matrix=None,
        sigma=None,
        n=n,
        variables=variables,
        cost=None,
        calibration=None,
        estimator=None,
    )
