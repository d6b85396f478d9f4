"""The public :func:`dp_scree`: check the table, build its plan, run it through the executor."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

from ...core.data_checks import check_data
from ...core.options import (
    SCALE_SHARE,
    DesignOptions,
    document_design,
    evolve,
    release_options,
)
from ...core.scalar_checks import check_bool
from ...core.tables import MissingRule, document_missing
from ...core.types import Accuracy, Calibration, Data, Design, RandomStateLike, Ties
from ...core.validation import check_k
from ...privacy.accounting import Accountant
from ..directions.given import resolve_directions
from ..directions.result import DirectionsResult
from ..engine import CheckedData, execute
from ..scaled import check_scale_settings, with_private_scales
from ..splits import ScreeSplit
from .controls import ScreeMethod
from .options import ScreeOptions
from .plan import plan_scree_options
from .result import ScreeResult


@document_missing
@document_design
def dp_scree(
    X: Data,
    k: int | None = None,
    *,
    eps: float,
    delta: float,
    method: ScreeMethod | Sequence[ScreeMethod] = "clipped",
    control: Any = None,
    directions: DirectionsResult | Any = None,
    public_directions: bool = False,
    split: ScreeSplit | None = None,
    pairing: Literal["all", "random", "consecutive"] | None = None,
    mono: bool = True,
    compare: bool = False,
    random_state: RandomStateLike = None,
    calibration: Calibration = "analytic",
    ties: Ties = "zero",
    budget: Accountant | None = None,
    bounds: Any = None,
    accuracy: Accuracy = "warn",
    allow_large_delta: bool = False,
    scale: Literal["private"] | None = None,
    scale_share: float = SCALE_SHARE,
    missing: MissingRule = "refuse",
    dropna: bool = False,
    standardize: bool = False,
    design: Design | None = None,
    m: int | None = None,
) -> ScreeResult:
    """Private variances (scree values) and PVE along PC directions.

    Parameters
    ----------
    X : array-like of shape (n, p) or pandas.DataFrame
        Numeric data, n >= 4. Not modified, centred or scaled.
    k : int, default=None
        Number of components, in [1, p]; None means p.
    eps : float
        Total epsilon of the call, > 0.
    delta : float
        Total delta of the call, in (0, 1/n).
    method : {"clipped", "pmwm", "huber"} or list of them, default="clipped"
        Estimator(s). ``"clipped"`` is the joint release of the variances and
        the total variance (always made, since it gives the total); the others
        are extra releases that share the budget left after the directions and
        the clip level equally with it.
    control : control object or dict, optional
        A :class:`ClippedControl`, :class:`PMWMControl` or
        :class:`HuberControl` (matched to its method by type), or a dict
        ``{method: control}``. Missing ones take their defaults, which do not
        look at the data.
    directions : DirectionsResult or array of shape (p, >=k), optional
        None (default): private directions are released in this call by
        :func:`dppca.dp_pc_dir` with ``split.directions`` of the budget. A
        private ``DirectionsResult`` is reused at no new cost. A non-private
        ``DirectionsResult`` (from :func:`dppca.pc_dir`) is refused unless
        ``public_directions=True``. A matrix with orthonormal columns is taken
        as public: the caller vouches that it does not come from these data.
    public_directions : bool, default=False
        Confirms that a non-private ``DirectionsResult`` comes from public data.
    split : ScreeSplit, default=None
        The budget shares of the directions and of the clip level, as weights
        of the basic split (see Notes); None means ``ScreeSplit()``:
        directions 0.35 (unused when ``directions`` is given) and the
        automatic clip share: between 0.05 and 0.3, the one with the least
        forecast error (noise against clipping bias) among those whose scan
        the forecast does not flag (a function of n, eps and the ladder only).
    pairing : {"all", "random", "consecutive"}, default=None
        Pairs of rows the moments are averaged over. ``"all"`` (the default
        while it costs little, up to n = 14100 at p = 50: see
        :func:`dppca.kernels.pair_moments.all_pairs_pay`) uses every pair: without
        clipping this is exactly the sample variance, so no sampling error
        is added. ``"random"`` (the default beyond) averages 16 uniformly
        random pairings (perfect matchings of the rows, drawn from
        ``random_state``); ``"consecutive"``
        pairs rows (1, 2), (3, 4), ... once (only sensible when the row order
        is unrelated to the data). The
        clip-level scan and the ``"pmwm"``/``"huber"`` estimators always use
        disjoint pairs (random unless ``"consecutive"``).
    mono : bool, default=True
        Replace each method's values by their non-increasing least-squares
        fit, clipped at 0 (post-processing).
    compare : bool, default=False
        Also attach the non-private top-k sample covariance eigenvalues and
        total variance, for comparison plots. These are NOT private: do not
        publish them.
    random_state : None, int or numpy.random.Generator, default=None
        Source of the noise and of the pairing. Use fresh entropy (None) for
        a release you publish.
    calibration : {"analytic", "classic"}, default="analytic"
        Gaussian calibration for every Gaussian step.
    ties : {"zero", "error"}, default="zero"
        Passed to :func:`dppca.dp_pc_dir` for the internal directions.
    budget : Accountant, optional
        Checked before the data are touched; the call's cost is spent after.
    bounds : None, (lower, upper), array of shape (p, 2) or mapping, default=None
        Public data domain per variable (see :func:`dppca.dp_pc_dir`). The
        data are clipped to it, and the clip level is searched on a short
        ladder below the largest squared pair norm the bounds allow.
    accuracy : {"warn", "error", "ignore"}, default="warn"
        What to do when the data-free forecast (``result.forecast``) says the
        release would be inaccurate: warn, refuse before reading any data, or
        nothing.
    allow_large_delta : bool, default=False
        Permit ``delta >= 1/n``.
    scale : {None, "private"}, default=None
        ``"private"`` releases one scale per column from ``scale_share`` of
        ``eps`` (as in :func:`dp_pc_dir`) and runs the whole scree on the data
        divided by them; ``result.scales`` holds them. Not with ``bounds`` or
        given ``directions``.
    scale_share : float, default=0.5
        The share of ``eps`` spent on the scales.
    missing : {"refuse", "zero"}, default="refuse"
        %(missing)s
    dropna : bool, default=False
        The old spelling of ``missing="zero"`` (see ``missing``).
    standardize : bool, default=False
        True: the standardised (correlation) PCA, the same in any units of
        the columns, as one private PCA fit (:func:`dppca.dp_pca` with
        ``standardize=True`` and no score plot): Kendall's tau directions and
        the scree from the same release at no extra cost (the correlation
        estimate ``sin(pi tau / 2)`` along the released directions;
        ``pve_total`` is the share of p). The result records the fit's cost.
        The options the fit decides itself (``method``, ``control``,
        ``directions``, ``split``, ``pairing``, ``mono``, ``scale``) keep
        their defaults.
    design : {"exact", "balanced"} or None, default=None
        %(design)s
        Used by the directions released here (not with ``directions``
        given, nor with ``standardize=True``).
    m : int, optional
        %(m)s

    Returns
    -------
    ScreeResult
        ``values`` (one row per method), ``scree``, ``pve``, ``pve_total``,
        ``trace``, ``directions``, ``noise_sd``, ``forecast`` and ``cost``.

    Raises
    ------
    TypeError, ValueError
        For invalid arguments (checked before any computation).
    InaccurateReleaseError
        With ``accuracy="error"`` when the forecast finds a problem.
    BudgetExceededError
        When ``budget`` cannot afford the call.
    TiedRowsError
        With ``ties="error"`` when the internal directions meet two coinciding
        rows; the error itself reveals that such rows exist.

    Warns
    -----
    AccuracyWarning
        With ``accuracy="warn"`` when the forecast finds a problem.
    PrivacyWarning
        With ``calibration="classic"`` when a Gaussian step gets eps >= 1.

    See Also
    --------
    dp_pc_dir : the private directions.
    dppca.plotting.plot_scree : draws the result.

    Notes
    -----
    Privacy: neighbouring datasets have the same ``n`` and differ in one row.
    For a pair of rows let ``z = (x_a - x_b) / sqrt(2)``; for a unit direction
    ``v``, ``E[(v' z)^2] = v' Sigma v`` for any mean, so nothing is centred.
    With the directions fixed (a private release or public), the parts are:

    * directions (when computed here): :func:`dppca.dp_pc_dir` with
      ``split.directions * (eps, delta)``;
    * the clip level ``C`` (``split.clip * eps``, pure DP): the pure-DP
      ladder scan :func:`dppca.privacy.mechanisms.ladder_quantile` at level 0.9
      (lowered at small ``n eps``) of ``||z||^2`` over disjoint pairs; a row
      is in one pair, so every cumulative count moves by at most one;
    * the joint release ("clipped"): each pair's ``z`` is scaled down to
      norm ``sqrt(C)`` if longer, and the k mean squares along the
      directions and the mean squared norm are released together. Each
      pair's contribution lies in a simplex, so one row moves the vector
      by at most ``2 C / n`` over all pairs in the norm of that simplex's
      difference body (and by ``4 C / n`` in L1, ``2 sqrt(2) C / n`` in L2;
      proofs in :func:`dppca.kernels.pair_moments.moment_sensitivity` and
      :mod:`dppca.privacy.knorm`), whatever k. The noise is that of the K-norm
      mechanism for this body (pure DP; Laplace noise conditioned on it,
      0.5 to 0.8 times the Laplace mechanism's variance) or Gaussian noise,
      whichever is smaller at the (eps, delta) of this part (a public
      choice);
    * each other method gets an equal part ``(eps_m, delta_m)``:

      - pmwm: per component a pure-DP upper quantile (eps_m / k, split evenly
        between the two noise draws of the search) on half A of the disjoint
        pairs, then the k-vector of winsorized means ``clamp(w_il, L_l, U_l)``
        on half B with L2 sensitivity ``||U - L|| / |B|``; parallel
        composition. With ``split=False`` both use all pairs and the budget is
        divided.
      - huber: per component, a scale proxy from the values
        ``s_j = (w_{2j-1} - w_{2j})^2 / 2`` (one replaced row changes one
        ``s_j``): by default the exponential mechanism picks the dyadic bin of
        their median (utility sensitivity 1, ``m2_frac eps_m / k`` each); with
        ``m2_rule="mode"`` the noisy arg-max of a histogram of block medians
        with Laplace noise of scale ``2 k / (m2_frac eps_m)``. The proxy sets
        the clipping level ``tau``, capped at ``C`` (post-processing). Then T
        steps of noisy gradient descent, each a k-vector with L2 sensitivity
        ``D = 2 eta0 ||tau|| / m``; T adaptive Gaussian releases compose
        exactly to one Gaussian mechanism with sensitivity ``sqrt(T) D``
        (Gaussian differential privacy).

    With public ``bounds`` the data are clipped to them row by row first, so
    neighbours stay neighbours. The monotone fit, the clipping at 0 and the PVE
    are post-processing. PVE over all p components divides by
    ``max(trace, sum of the k values)``. Directions passed in as an earlier
    private release are not counted again. With ``compare=True`` the result
    also carries non-private values.

    Composition: the shares above are a basic split of (eps, delta). With
    the analytic calibration every eps share is then multiplied by one
    factor ``t >= 1``, the largest whose tight total
    (:func:`dppca.privacy.accounting.tight_total`, which reads each part's noise) is
    still eps at delta; deltas stay as split. ``result.cost`` is (eps, delta)
    with the parts as ``parts`` (their own eps add up to ``t`` eps): every
    part carries less noise than the basic split would give it. The clipped
    moments' sensitivity is ``c C`` with ``C`` chosen privately, so their part
    records the noise multiplier (noise over sensitivity), which is fixed
    before any data are read. The classic calibration keeps the basic split.

    A "public" directions array whose column equals (to 1e-8, up to sign) the
    data's own sample-covariance direction of the same PC is refused before
    anything is spent; see :func:`dppca.releases.directions.refuse_own_directions` for
    why that data-dependent check leaks nothing the caller had not already
    given away.

    References
    ----------
    Dong, J., Roth, A. and Su, W. J. (2022). Gaussian differential privacy.
    Journal of the Royal Statistical Society B, 84(1), 3-37.

    Durfee, D. (2023). Unbounded differentially private quantile and maximum
    estimation. NeurIPS.

    McSherry, F. and Talwar, K. (2007). Mechanism design via differential
    privacy. FOCS.

    Examples
    --------
    >>> from dppca import dp_scree
    >>> from dppca.datasets import load_gau
    >>> res = dp_scree(load_gau(), 3, eps=0.9, delta=1e-5, random_state=0)
    >>> res
    ScreeResult(p=20, k=3, n=5000, methods=('clipped',), eps=0.9, delta=1e-05)
    >>> res.to_frame().shape
    (3, 3)
    """
    if check_bool(standardize, "standardize"):  # one private PCA fit decides the analysis
        from ..standardized import standardized_release

        fixed = "method control directions public_directions split pairing mono scale design m"
        return standardized_release(dp_scree, "scree", locals(), fixed)
    privacy, options, design_options = release_options(locals(), ScreeOptions, DesignOptions)
    data, variables = check_data(X, min_rows=4, missing=privacy.missing)
    n, p = data.shape
    k = check_k(options.k, p)
    public_directions = check_bool(public_directions, "public_directions")
    given, release = resolve_directions(directions, p=p, k=k, public_directions=public_directions)
    scaling = check_scale_settings(privacy.scale, bounds=bounds, directions=directions)
    plan = with_private_scales(
        lambda e: plan_scree_options(
            n, p, evolve(privacy, eps=e), options, given is not None, variables, design_options
        ),
        privacy.eps,
        scaling,
        variables,
        privacy.scale_share,
    )
    checked = CheckedData(data, variables, extra=(given, release))
    result: ScreeResult = execute(plan, checked, budget=budget, random_state=random_state)
    return result
