"""The loading release, :func:`dp_loading`: private directions, then coordinates.

The only privacy-relevant step is the direction release (:func:`dp_pc_dir`),
or a given private release; everything after it is post-processing.
"""

from __future__ import annotations

import math
from typing import Any, Literal

import numpy as np
from numpy.typing import NDArray

from ...core.options import (
    SCALE_SHARE,
    DirectionsOptions,
    LoadingOptions,
    release_options,
)
from ...core.progress import ProgressLike
from ...core.scalar_checks import check_bool, check_choice
from ...core.tables import MissingRule, check_missing, document_missing
from ...core.types import (
    Accuracy,
    Calibration,
    Data,
    Design,
    RandomStateLike,
    Sensitivity,
    SignReference,
    Ties,
)
from ...core.validation import check_components, check_delta, check_design, check_eps, check_k
from ...kernels.kendall import validate_kendall_input
from ...privacy.accounting import Accountant
from ..directions.release import pc_dir_checked
from ..directions.result import DirectionsResult
from ..directions.tau import Estimator
from ..engine import CheckedData, execute
from .plan import plan_loading_options
from .result import LoadingResult

__all__ = ["dp_loading"]


def _check_directions_match(
    directions: object, eps: object, delta: object
) -> tuple[DirectionsResult, float, float]:
    if not isinstance(directions, DirectionsResult):
        raise TypeError(
            f"directions must be the result of dp_pc_dir; got {type(directions).__name__}."
        )
    if not directions.private or directions.cost is None:
        raise ValueError(
            "directions must be a private release (dp_pc_dir); for non-private "
            "directions use LoadingResult.from_directions(pc_dir(X))."
        )
    cost = directions.cost
    for name, given, spent in (("eps", eps, cost.eps), ("delta", delta, cost.delta)):
        if given is None:
            continue
        value = check_eps(given) if name == "eps" else check_delta(given)
        if not math.isclose(value, spent, rel_tol=1e-12, abs_tol=0.0):
            raise ValueError(
                f"{name}={value:g} differs from the {name}={spent:g} of the given directions; "
                f"omit {name} or pass the value the release was made with."
            )
    return directions, cost.eps, cost.delta


def _given_directions(
    directions: object,
    eps: object,
    delta: object,
    data: NDArray[np.float64] | None,
    variables: tuple[str, ...] | None,
    k: int | None,
    components: tuple[int, int],
) -> tuple[DirectionsResult, int]:
    """A given private release, checked against the call, cut to its first ``k`` PCs."""
    res, _, _ = _check_directions_match(directions, eps, delta)
    if data is not None and (data.shape[1] != res.p or variables != res.variables):
        raise ValueError(
            "X does not match the given directions: they need the same variables "
            f"(directions have p={res.p})."
        )
    if data is not None and data.shape[0] != res.n:
        raise ValueError(f"X has {data.shape[0]} rows but the directions used n={res.n}.")
    k = check_k(k, res.k)
    check_components(components, k)
    if k < res.k:
        res = DirectionsResult(
            directions=np.array(res.directions[:, :k]),
            eigenvalues=np.array(res.eigenvalues[:k]),
            noisy_matrix=np.array(res.noisy_matrix),
            sigma=res.sigma,
            n=res.n,
            variables=res.variables,
            cost=res.cost,
            calibration=res.calibration,
            sensitivity=res.sensitivity,
            bounds=res.bounds,
            forecast=res.forecast,
        )
    return res, k


@document_missing
def dp_loading(
    X: Data | None,
    *,
    eps: float | None = None,
    delta: float | None = None,
    components: tuple[int, int] = (1, 2),
    k: int | None = None,
    compare: bool = False,
    random_state: RandomStateLike = None,
    calibration: Calibration = "analytic",
    ties: Ties = "zero",
    directions: DirectionsResult | None = None,
    sign_reference: SignReference = "private",
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
    standardize: bool = False,
) -> LoadingResult:
    """Private loading coordinates of the PC directions, for loading plots.

    Parameters
    ----------
    X : array-like of shape (n, p), pandas.DataFrame, Dask collection or None
        Numeric data, checked once and only read. A Dask array or DataFrame
        is reduced on the active Dask scheduler, as in :func:`dp_pc_dir`
        (``compare=True`` needs data in memory). May be None when
        ``directions`` is given and ``compare=False``.
    eps, delta : float
        Privacy parameters of the release, as in :func:`dp_pc_dir`. Required
        unless ``directions`` is given; then they may be omitted, and if
        passed they must equal the release's values.
    components : (int, int), default=(1, 2)
        The default pair of PCs (numbered from 1) for the coordinate table and
        the plots; two different integers in ``1..k``.
    k : int, default=None
        Number of directions to keep, in [1, p]; None keeps all. The whole
        noisy matrix is released either way, so ``k`` does not change the cost.
    compare : bool, default=False
        Also compute ordinary PCA directions (eigenvectors of the sample
        covariance) for comparison. That part is not private: it is stored in
        ``nonprivate``, named ``nonprivate_*`` in tables, titled "non-private"
        in plots, and the result's ``private`` flag becomes False.
    random_state : None, int or numpy.random.Generator, default=None
        Source of the privacy noise; None (fresh entropy) for a published release.
    calibration : {"analytic", "classic"}, default="analytic"
        Gaussian noise calibration.
    ties : {"zero", "error"}, default="zero"
        Handling of (nearly) coincident rows; see :func:`dppca.spherical_kendall`.
    directions : DirectionsResult, optional
        An existing :func:`dp_pc_dir` release to reuse: no new noise is drawn
        and no budget is spent, so one release can feed many plots.
    sign_reference : {"private", "nonprivate"}, default="private"
        With ``compare=True``: which side keeps its signs while each vector of
        the other side is flipped, if needed, to point the same way. This is
        for display only and changes no direction.
    budget : Accountant, optional
        Passed to :func:`dp_pc_dir` (checked before, charged after). Not used
        when ``directions`` is given.
    design : {"exact", "balanced"} or None, default=None
        Pairs entering the Kendall matrix, as in :func:`dp_pc_dir`; the
        balanced design suits very large tables at the same privacy cost.
        None: exact up to ``n (n - 1) / 2 * p = 1e11``, balanced above.
    m : int, optional
        Partners per row for ``design="balanced"`` (default from n only).
    progress : None, bool or callable, default=None
        Progress reporting for the Kendall computation, as in :func:`dp_pc_dir`.
    sensitivity, bounds, accuracy, allow_large_delta
        As in :func:`dp_pc_dir`: the Kendall sensitivity rule, public data
        bounds (the data are clipped to them), what to do when the data-free
        forecast says the directions would be noise, and permission for
        ``delta >= 1/n``.
    scale, scale_share
        As in :func:`dp_pc_dir`: ``scale="private"`` releases per-variable
        scales from ``scale_share`` of ``eps`` and divides the data by them
        (``result.directions.scales``); ``compare=True`` then compares with
        the non-private directions of the same scaled data.
    estimator : {"kendall", "tau"}, default="kendall"
        As in :func:`dp_pc_dir`: the spherical Kendall matrix, or Kendall's
        tau matrix over p (the same in any units of the columns; no ``scale``),
        at the same cost.
    missing : {"refuse", "zero"}, default="refuse"
        %(missing)s
    dropna : bool, default=False
        The old spelling of ``missing="zero"`` (see ``missing``).
    standardize : bool, default=False
        True: the loadings of the standardised (correlation) PCA, the same in
        any units of the columns, as one private PCA fit
        (:func:`dppca.dp_pca` with ``standardize=True`` and no score plot):
        Kendall's tau directions, exactly those whose scree
        ``dp_scree(..., standardize=True)`` shows. ``compare=True`` compares
        with the NON-private correlation PCA. The options the fit decides
        itself (``directions``, ``design``, ``m``, ``sensitivity``, ``scale``,
        ``estimator``) keep their defaults.

    Returns
    -------
    LoadingResult

    Raises
    ------
    TypeError, ValueError
        For invalid arguments, including ``components`` that are not two
        different integers in ``1..k``, before any computation.
    TiedRowsError
        With ``ties="error"`` when two rows (almost) coincide.

    Warns
    -----
    PrivacyWarning
        With ``calibration="classic"`` and ``eps >= 1``.

    See Also
    --------
    dp_pc_dir : the release the coordinates come from.
    dppca.plotting.plot_loading : vector, point and heatmap displays.

    Notes
    -----
    Privacy: neighbouring datasets have the same ``n`` and differ in one row.
    The only release is that of :func:`dp_pc_dir`, the spherical Kendall
    matrix (or Kendall's tau matrix over p) plus symmetric Gaussian noise
    calibrated to its Frobenius sensitivity ``2 sqrt(2)/n`` (``4/n`` with
    ``sensitivity="seed"``), costing (eps, delta). The loading coordinates are
    entries of its eigenvectors, so they and every plot of them are
    post-processing. The sign of each private vector follows the rule of
    :func:`dp_pc_dir` (largest-magnitude entry positive), which looks at the
    vector only. With ``compare=True`` the sample-covariance eigenvectors are
    computed without noise; they are for the analyst's own check and must not
    be published. Matching signs between the two sides only flips vectors for
    display. With ``ties="error"`` an error reveals that two rows nearly
    coincide; ``ties="zero"`` avoids that.

    Examples
    --------
    >>> from dppca import dp_loading
    >>> from dppca.datasets import load_gau
    >>> res = dp_loading(load_gau(), eps=0.5, delta=1e-5, random_state=0)
    >>> res
    LoadingResult(p=20, k=20, components=(1, 2), n=5000, eps=0.5, delta=1e-05)
    >>> res.coordinates().round(2).head(3)
         PC1   PC2
    V1  0.44  0.03
    V2  0.44 -0.04
    V3  0.46  0.07
    """
    compare = check_bool(compare, "compare")
    sign_reference = check_choice(sign_reference, "sign_reference", ("private", "nonprivate"))
    design = None if design is None else check_design(design)  # None: the plan's rule
    if check_bool(standardize, "standardize"):  # one private PCA fit decides the analysis
        from ..standardized import standardized_release

        fixed = "directions design m sensitivity scale estimator"
        return standardized_release(dp_loading, "loading", locals(), fixed)
    missing = check_missing(missing, dropna)
    if directions is not None:
        return _from_given(
            X, directions, eps, delta, k, components, compare, sign_reference, design, missing
        )
    if X is None:
        raise TypeError("X is required unless directions is given and compare is False; got None.")
    if eps is None or delta is None:
        raise TypeError("eps and delta are required (pass both as numbers).")
    arguments = locals()
    privacy, directions_options, options = release_options(
        arguments, DirectionsOptions, LoadingOptions
    )
    # Checked once, without a copy of a float64 array: the release only reads it.
    data, variables = validate_kendall_input(
        X, directions_options.design or "exact", missing=missing
    )
    n, p = data.shape
    plan = plan_loading_options(n, p, privacy, directions_options, options, variables)
    result: LoadingResult = execute(
        plan, CheckedData(data, variables), budget=budget, random_state=random_state
    )
    return result


def _from_given(
    X: Data | None,
    directions: object,
    eps: object,
    delta: object,
    k: int | None,
    components: tuple[int, int],
    compare: bool,
    sign_reference: str,
    design: str | None,
    missing: str = "refuse",
) -> LoadingResult:
    """Loadings of a given private release: no new noise, nothing spent."""
    data: Any = None
    variables = None
    if X is not None:
        data, variables = validate_kendall_input(X, design or "exact", missing=missing)
    elif compare:
        raise TypeError("X is required unless directions is given and compare is False; got None.")
    if compare and not isinstance(data, np.ndarray):
        raise TypeError(
            "compare=True needs X in memory (the non-private comparison is computed with "
            "numpy); pass X.compute() or compare=False."
        )
    res, k = _given_directions(directions, eps, delta, data, variables, k, components)
    nonprivate = None
    if compare:
        assert data is not None and variables is not None  # compare needs X (above)
        nonprivate = pc_dir_checked(data, variables, k)
    return LoadingResult(
        directions=res,
        components=tuple(int(c) for c in components),  # type: ignore[arg-type]
        nonprivate=nonprivate,
        sign_reference=sign_reference,
    )
