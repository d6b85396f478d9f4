"""The public score release, :func:`dp_score`: check the table, plan, execute.

The call checks the table and the labels once, builds its plan
(:func:`plan_score`) and runs it through :func:`dppca.releases.engine.execute`, which
checks the budget and draws the parts in a fixed order from one generator:
directions, group sizes, frame, histograms (in method order).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

from numpy.typing import ArrayLike

from ...core.data_checks import check_grouped_data
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
from ...core.validation import check_bins_cap, check_components
from ...privacy.accounting import Accountant
from ..directions.result import DirectionsResult
from ..engine import CheckedData, execute
from ..scaled import check_scale_settings, with_private_scales
from ..splits import ScoreSplit
from .draw import ScoreInputs, given_directions
from .groups import _resolve_groups, resolve_group_codes
from .histograms import ScoreMethod
from .options import ScoreOptions
from .plan import plan_score_options
from .result import ScoreResult
from .settings import ScoreGiven

__all__ = ["dp_score"]


@document_missing
@document_design
def dp_score(
    X: Data,
    *,
    eps: float,
    delta: float,
    bins: int | str | tuple[int, int] | None = None,
    components: tuple[int, int] = (1, 2),
    method: ScoreMethod | Sequence[ScoreMethod] = "add",
    directions: DirectionsResult | ArrayLike | None = None,
    groups: ArrayLike | str | None = None,
    groups_public: bool = False,
    group_labels: Sequence[Any] | None = None,
    public_directions: bool = False,
    split: ScoreSplit | None = None,
    score_range: float = 1e6,
    inflate: float = 0.2,
    calibration: Calibration = "analytic",
    ties: Ties = "zero",
    compare: bool = False,
    frame: tuple[tuple[float, float], tuple[float, float]] | None = None,
    random_state: RandomStateLike = None,
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
) -> ScoreResult:
    """A differentially private score plot: frame, grid and noisy 2-D histograms.

    Parameters
    ----------
    X : array-like of shape (n, p) or pandas.DataFrame
        Numeric data (plus the group column if ``groups`` names one). Not
        modified, centred or scaled.
    eps, delta : float
        Total privacy budget of the call, eps > 0 and 0 < delta < 1.
    bins : None, {"W", "J"}, int or (int, int), default=None
        Bins along x and y. None means the ``"W"`` rule ``round(n ** (1/4))``;
        ``"J"`` is ``round((n / ln n) ** (1/3))``. Both depend on n only.
    components : (int, int), default=(1, 2)
        The PCs on the x and y axes, numbered from 1.
    method : {"add", "sparse"} or a list of them, default="add"
        ``"add"``: Gaussian noise on every count. ``"sparse"``: stability
        histogram, Laplace noise on non-empty bins and a release threshold.
        Several methods share the histogram budget equally.
    directions : DirectionsResult, array of shape (p, k) or None, default=None
        None releases private directions in this call (:func:`dppca.dp_pc_dir`
        with a share of the budget). A private ``DirectionsResult`` (from an
        earlier release on the same data) costs nothing more. A non-private
        ``DirectionsResult`` (from :func:`dppca.pc_dir`) is refused unless
        ``public_directions=True``. An array with orthonormal columns is taken
        as public directions; the caller vouches that it does not depend on
        the data. Columns ``components`` are used.
    groups : array-like of shape (n,) or str, default=None
        Group label per row, or the name of a column of the DataFrame ``X``
        (then removed from the features). Without ``group_labels`` the set of
        labels found in the data is released as it is, sorted (not private:
        a label held by one row reveals that row; ``result.private`` is then
        False).
    groups_public : bool, default=False
        False: the group sizes are released with Laplace noise (a share of the
        budget) and only those are used. True: the caller declares the labels,
        and so the group sizes, public; the exact sizes are used and shown.
    group_labels : sequence, default=None
        The public list of possible group labels, in the order to show them.
        The released label set is then this list, whatever the data hold
        (groups no row belongs to get a histogram of noise only); rows with
        other or missing labels belong to no group and count only for the
        frame. This is the DP-safe way to use groups whose label set is not
        public.
    public_directions : bool, default=False
        Confirms that a non-private ``DirectionsResult`` comes from public data.
    split : ScoreSplit, default=None
        Epsilon weights of the parts (None: every weight at its default),
        normalised over the parts that are used: ``directions`` (0.35),
        ``frame``, ``groups`` (0.1) and ``histogram``
        (0.55, or 0.45 when private group sizes are released). The default frame
        weight is the smallest share of eps whose failure bound
        (:func:`frame_failure_bound`) is 1 %, kept between 0.1 and 0.4 of eps
        (a function of n and eps only); the other weights share the rest.
        Delta goes to the directions and the histograms in proportion to their
        weights. These shares are a basic split; with the analytic calibration
        every eps share is then scaled up until the tight total is eps (see
        Notes).
    score_range : float, default=1e6
        Public bound on the scores' size, which fixes the private frame's
        public ladders: centres within ``[-score_range, score_range]`` and half
        widths from 40 octaves below ``2 score_range`` up to ``4 score_range``
        (finer than that, the frame cannot resolve). A tighter true bound makes
        the frame cheaper to find at small n.
    inflate : float, default=0.2
        The private frame's half widths (per axis, the private 0.995-quantile
        of the distances from the private centre) are multiplied by
        ``1 + inflate``: 0 aims at 99.5 % of the rows per axis, with no
        margin (at small n eps a lower quantile stretched as for a Gaussian,
        so then for Gaussian-like tails).
    calibration : {"analytic", "classic"}, default="analytic"
        Gaussian calibration for the directions and the ``"add"`` histogram.
    ties : {"zero", "error"}, default="zero"
        Near-duplicate rows in the direction step; see :func:`dppca.dp_pc_dir`.
    frame : ((float, float), (float, float)), default=None
        A public frame ``((xmin, xmax), (ymin, ymax))`` the caller vouches for
        (for example from a known data domain). It costs nothing, and its
        budget share goes to the other parts. None estimates it privately.
    compare : bool, default=False
        Also attach the raw scores and exact histograms as ``nonprivate``
        (NOT private, for the analyst's own comparison; never publish them);
        ``result.private`` is then False.
    random_state : None, int or numpy.random.Generator, default=None
        Source of all noise. None draws fresh OS entropy, which a release meant
        for publication should use.
    budget : Accountant, optional
        Checked for the call's cost before the data are touched; charged after.
    bounds : None, (lower, upper), array of shape (p, 2) or mapping, default=None
        Public data domain per variable (see :func:`dppca.dp_pc_dir`). The data
        are clipped to it, and the frame is the exact range of the scores over
        the bounded domain, at no privacy cost (unless ``frame=`` is given).
    accuracy : {"warn", "error", "ignore"}, default="warn"
        What to do when the data-free forecast (``result.forecast``) says the
        picture would be wrong: warn, refuse before reading any data, or nothing.
    allow_large_delta : bool, default=False
        Permit ``delta >= 1/n``.
    scale : {None, "private"}, default=None
        ``"private"`` releases one scale per column from ``scale_share`` of
        ``eps`` (as in :func:`dp_pc_dir`) and draws the whole score plot from
        the data divided by them (scores and ``score_range`` in those units);
        ``result.scales`` holds them. Not with ``bounds`` or given
        ``directions``.
    scale_share : float, default=0.5
        The share of ``eps`` spent on the scales.
    missing : {"refuse", "zero"}, default="refuse"
        %(missing)s
    dropna : bool, default=False
        The old spelling of ``missing="zero"`` (see ``missing``).
    standardize : bool, default=False
        True: the score plot of the standardised (correlation) PCA, the same
        in any units of the columns, as one private PCA fit
        (:func:`dppca.dp_pca` with ``standardize=True``): Kendall's tau
        directions, and the scores of the table divided by the widths of the
        public ``bounds`` or else by private scales released in the fit. The
        result records the whole fit's cost. The options the fit decides
        itself (``method``, ``directions``, ``groups``, ``split``,
        ``score_range``, ``inflate``, ``frame``, ``scale``, ``design``,
        ``m``) keep their defaults.
    design : {"exact", "balanced"} or None, default=None
        %(design)s
        Used by the directions released here (not with ``directions`` given).
    m : int, optional
        %(m)s

    Returns
    -------
    ScoreResult

    Raises
    ------
    TypeError, ValueError
        For invalid arguments (checked before any computation).
    TiedRowsError
        From the direction step with ``ties="error"``.
    BudgetExceededError
        When ``budget`` cannot afford the call.

    Warns
    -----
    PrivacyWarning
        With ``calibration="classic"`` when a Gaussian part gets eps >= 1.
    AccuracyWarning
        With ``accuracy="warn"`` when the forecast finds a problem (for
        example n and the frame's share of eps too small for a reliable
        private frame, :func:`frame_failure_bound` > 0.05), and after the
        release when a private frame is probably wrong by its released values
        (:func:`dppca.releases.score.frame_check.score_frame_problem`: a
        centre too coarse for the scores' spread, a half width at an end of
        its ladder, rows piled in the outer or central bins). With
        ``accuracy="error"`` the latter raises
        :class:`~dppca.core.exceptions.InaccurateReleaseError` after the
        charge, with the result on its ``result``.

    See Also
    --------
    sample_points : synthetic points from a released histogram.
    dppca.plotting.plot_score, dppca.plotting.plot_score_panels

    Notes
    -----
    Privacy: neighbouring datasets have the same n and differ in one row; n is
    public. The call releases the parts below. Their shares of ``split`` are a
    basic split of (eps, delta); with the analytic calibration every eps share
    is then multiplied by the largest factor ``t >= 1`` whose tight total
    (:func:`dppca.privacy.accounting.tight_total`: Gaussian parts by their noise,
    Laplace and pure parts exactly) is still eps at delta, deltas unchanged.
    ``result.cost`` is (eps, delta) with these parts, whose own eps add up
    to ``t`` eps; each carries less noise than the basic split gives it. A
    "public" directions array equal to the data's own sample-covariance
    directions is refused (:func:`dppca.releases.directions.refuse_own_directions`).

    1. directions (unless given): the noisy spherical Kendall matrix,
       (eps_d, delta_d) as in :func:`dppca.dp_pc_dir`;
    2. group sizes (private groups only): counts per group with Laplace(2 /
       eps_g) noise; a row that changes group moves two counts by one (L1
       sensitivity 2), so this is eps_g-DP;
    3. the frame (unless public bounds or a public ``frame`` give it), per
       axis (:func:`private_frame`): the axis's median by the exponential
       mechanism on a public ladder (bins 20 % of their distance from zero
       wide), then the quantile 0.995 of the distances ``|s - c|`` from that
       released centre (a lower level at small n eps, extrapolated as for a
       Gaussian: :func:`dppca.releases.score.frame.frame_level`), by a noisy
       scan over public candidates 2 % apart. A
       replaced row changes one score per axis, so every utility and every
       cumulative count moves by at most one: four pure parts, eps_f in all.
       No sample mean, no smooth-sensitivity median;
    4. per method, on the grid fixed by the frame before any histogram noise,
       the counts of all groups together: one replaced row moves at most two
       cells by one (L1 2, L2 sqrt(2)), even across groups, so each group's
       histogram does not need its own budget. ``"add"`` adds N(0, sigma^2)
       with sigma for L2 sensitivity sqrt(2); ``"sparse"`` adds Laplace(2 /
       eps_m) to non-empty cells and keeps those above
       :func:`dppca.privacy.mechanisms.stability_threshold`, (eps_m, delta_m)-DP
       since, for an ordered pair of neighbours, only the cell the replaced
       row leaves can be non-empty in one and empty in the other.

    Probabilities (negative counts set to 0, then normalised per group) are
    post-processing. The scores depend on the directions, which are private
    or public, and on one row each. Without ``group_labels`` the label set
    found in the data is revealed, and a missing label raises an error; with
    it, the released labels are the caller's list and neither happens. With ``ties="error"`` the
    error reveals that near-duplicate rows exist. ``result.cost`` is what this
    call spent: a private directions release passed in was paid for earlier.

    The frame is in the scores' own coordinates (no centring), which is safe
    because its centres and half widths are themselves private outputs; x and
    y each get their own, so the frame is a rectangle fitted to each axis. A
    frame that a scan pushed past the data (rare: its target passes n with
    probability at most ``exp(-2)``, then each further 2 % step is less likely)
    is wider than needed, never narrower. The number of
    bins depends on n only and the edges on the frame only, so the grid is
    fixed before any histogram noise. Noise is drawn in a fixed order
    (directions, group sizes, frame, then each method), so the same data and
    seed give the same result.

    Examples
    --------
    >>> from dppca import dp_score
    >>> from dppca.datasets import load_gau_g
    >>> res = dp_score(load_gau_g(), eps=1.0, delta=1e-5, groups="group", random_state=0)
    >>> res
    ScoreResult(n=5000, components=(1, 2), bins=(8, 8), methods=('add',), groups=5, eps=1, delta=1e-05)
    >>> res.table("add", "group1").shape
    (64, 5)
    """  # noqa: E501
    check_bins_cap(bins)  # before any work (issue 14)
    if check_bool(standardize, "standardize"):  # one private PCA fit decides the analysis
        from ..standardized import standardized_release

        fixed = "method directions groups group_labels public_directions split score_range"
        return standardized_release(
            dp_score, "score", locals(), fixed + " inflate frame scale design m"
        )
    privacy, options, design_options = release_options(locals(), ScoreOptions, DesignOptions)
    X, labels = _resolve_groups(X, groups)
    data, variables, labels = check_grouped_data(X, labels, min_cols=2, missing=privacy.missing)
    n, p = data.shape
    components = check_components(options.components, p)
    matrix, dir_result = given_directions(directions, p, components, public_directions)
    public_levels, levels, codes = resolve_group_codes(labels, group_labels, n)
    scaling = check_scale_settings(privacy.scale, bounds=bounds, directions=directions)
    given = ScoreGiven(
        directions=matrix is not None, groups=None if levels is None else len(levels)
    )
    plan = with_private_scales(
        lambda e: plan_score_options(
            n, p, evolve(privacy, eps=e), options, given, variables, design_options
        ),
        privacy.eps,
        scaling,
        variables,
        privacy.scale_share,
    )
    inputs = ScoreInputs(matrix, dir_result, public_levels, levels, codes)
    result: ScoreResult = execute(
        plan, CheckedData(data, variables, inputs), budget=budget, random_state=random_state
    )
    return result
