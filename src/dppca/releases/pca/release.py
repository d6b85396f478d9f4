"""One private PCA of a table: :func:`dp_pca`, and how its plan draws and checks.

:func:`dp_pca` checks the table, builds the fit's plan
(:func:`~dppca.releases.pca.plan.plan_pca`) and runs it through the one
executor: budget checked once, every step drawn from one noise stream,
charged once with exactly ``(eps, delta)``, then reviewed.
"""

from __future__ import annotations

import dataclasses
import math
import warnings
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from ...core.exceptions import AccuracyWarning, InaccurateReleaseError
from ...core.types import RandomStateLike
from ...core.validation import check_data
from ...core.warnings import _user_stacklevel
from ...privacy.accounting import PrivacyCost
from ..directions import DirectionsResult, resolve_directions
from ..directions.result import orient_signs
from ..engine import CheckedData, execute
from ..score.draw import ScoreInputs
from ..scree import ScreeResult
from ..scree._result import INTERVAL_SDS
from .correlation import (
    correlation_eigen,
    correlation_from_tau,
    entry_noise_var,
    standardized_variances,
)
from .result import PCAResult
from .split import PCASplit

if TYPE_CHECKING:
    from ...privacy.accounting import Budget
    from .plan import PCAPlan

__all__ = ["FRAME_LIMIT", "dp_pca"]

#: A score frame more than this many times wider (or narrower) than the
#: central 99 % range the fit's private variances give is not drawn as right.
FRAME_LIMIT = 10.0
# A released variance counts as above its noise when it exceeds this many noise sds:
# 2 for the standardised scree (Gaussian noise, to first order), 4 for a clipped
# scree, whose K-norm noise is not Gaussian (Chebyshev: at most 1/16 beyond 4 sds).
_TRUSTED_SDS = {"standardized": 2.0, "units": 4.0, "scaled": 4.0}


def _trusted_sds(analysis: str) -> float:
    return _TRUSTED_SDS[analysis]


# The central 99 % range of a normal variable, in standard deviations.
_RANGE99 = 2.0 * 2.5758293035489004


def dp_pca(
    X: Any,
    *,
    eps: float,
    delta: float,
    standardize: bool = True,
    k: int | None = None,
    components: tuple[int, int] = (1, 2),
    score: bool | None = None,
    bins: Any = None,
    bounds: Any = None,
    scales: Any = None,
    split: PCASplit | Mapping[str, float] | None = None,
    compare: bool = False,
    calibration: str = "analytic",
    debias: bool = True,
    accuracy: str = "warn",
    budget: Budget | None = None,
    random_state: RandomStateLike = None,
    allow_large_delta: bool = False,
) -> PCAResult:
    """One private PCA of a table: directions, variances and score plot from one budget.

    The analysis is chosen once, before any data are read, and every picture
    follows it: the directions, the scree (private variances and PVE), the
    score plot, the loading plot, the correlation circle and the biplot all
    come from this one fit (``fit.plot(kind)``), which records exactly
    ``(eps, delta)``.

    Parameters
    ----------
    X : array-like of shape (n, p) or pandas.DataFrame
        The table, in whatever units its columns are written in.
    eps, delta : float
        The fit's whole budget. The parts share it (``split``) and the tight
        accountant stretches their shares until they compose to exactly eps.
    standardize : bool, default=True
        True: the standardised (correlation) PCA, estimated without sample
        means or standard deviations: directions from Kendall's tau matrix
        (unit-free) and the variances from the same release at no extra cost
        (the correlation ``sin(pi tau / 2)``). The score plot needs comparable
        units: public ``scales``, else the widths of public ``bounds``, else
        private scales. False: the PCA of the table in its own units (the
        spherical Kendall directions, a clipped scree and the score plot), or
        of the table divided by public ``scales`` when given.
        The default is True because users bring tables in their own units,
        where the unit-dependent analysis mostly follows the column with the
        largest numbers; see the user guide's "Which analysis" section.
    k : int, optional
        Number of PCs with a private variance (default: all p for the
        standardised analysis, where they are free; ``max(3, components)``
        otherwise).
    components : tuple of (int, int), default=(1, 2)
        The PCs of the score plot, loading plot and biplot (1-based).
    score : bool, optional
        Whether to release the score plot (its frame and histogram). By
        default it is released unless it would need private scales that the
        data-free forecast says fail at this n and budget (below about 2,000
        rows at eps 1): the standardised score plot needs its columns on
        comparable scales, so without public ``scales`` or ``bounds`` the fit
        then leaves it out, says why (a warning before any data are read and
        a note on the result) and gives its budget to the other parts.
    bins : int, str or (int, int), optional
        Bins of the score histogram (see :func:`dppca.dp_score`).
    bounds : optional
        Public bounds of the columns (a codebook's domain, never the data's
        range): the data are clipped to them and the score frame is free.
    scales : array-like of shape (p,), optional
        Public scales of the columns (a codebook's standard deviations, never
        the data's): with ``standardize=False`` the fit is the PCA of
        ``X / scales``; with ``standardize=True`` they put the score plot on
        the standardised scale.
    split : PCASplit or mapping, optional
        Weights of the parts (see :class:`dppca.PCASplit`).
    compare : bool, default=False
        Attach the matching non-private analysis (the sample correlation PCA
        for the standardised analysis, the sample covariance PCA otherwise)
        and the parts' comparisons. Not private: the result is marked so.
    calibration : {"analytic", "classic"}, default="analytic"
        Gaussian noise calibration.
    debias : bool, default=True
        Standardised analysis only: subtract the noise's expected lift from
        the top eigenvalues of the private correlation estimate
        (:func:`dppca.releases.pca.correlation.correlation_eigen`; measured to
        pay on every raw-unit table tried at eps <= 1.4). Post-processing.
    accuracy : {"warn", "error", "ignore"}, default="warn"
        What to do with a forecast problem (before spending) and with a
        post-release problem (after: the cost is recorded, and with
        ``"error"`` the fit is on the error's ``result``).
    budget : Budget, optional
        Checked before any data work and charged once with ``(eps, delta)``.
    random_state : None, int or numpy.random.Generator, default=None
        The noise stream (None: fresh OS entropy). A seed is a secret.
    allow_large_delta : bool, default=False
        Accept ``delta >= 1/n``.

    Returns
    -------
    PCAResult

    Raises
    ------
    ValueError, TypeError
        Invalid arguments (named in the message), before any data are read.
    BudgetExceededError
        ``budget`` cannot afford ``(eps, delta)``; nothing is read or drawn.
    InaccurateReleaseError
        With ``accuracy="error"``: a forecast problem (nothing spent) or a
        post-release problem (spent; the fit is on ``result``).

    Warns
    -----
    AccuracyWarning
        A forecast or post-release problem with ``accuracy="warn"``: the
        directions not separated from the noise, a score frame more than
        10 times wider or narrower than the spread of the released variances.

    Notes
    -----
    Privacy: neighbouring tables differ in one replaced row and n is public.
    The fit is the adaptive composition of its steps, each an existing
    release with its own sensitivity argument: the private scales (p pure
    exponential-mechanism parts), the directions (Gaussian noise on
    Kendall's tau matrix over p, Frobenius sensitivity ``2 sqrt(2) / n``,
    or on the spherical Kendall matrix), the scree (clipped moments; only
    in units) and the score frame and histogram. The standardised scree is
    post-processing of the direction release (no new cost). The steps'
    shares are stretched to the largest factor whose tight composition
    (:func:`dppca.tight_total`) is at most eps at delta, and the fit records
    ``(eps, delta)``. The frame check reads released values only.

    The standardised analysis estimates the correlation PCA of an elliptical
    table exactly (Pearson = ``sin(pi tau / 2)``); for columns far from
    elliptical (skewed, many ties) it estimates the PCA of that rank
    correlation instead, a robust stand-in that can differ from Pearson's.

    Examples
    --------
    >>> from dppca.datasets import load_wine
    >>> fit = dp_pca(load_wine(), eps=1.0, delta=1e-6, random_state=0, accuracy="ignore")
    >>> fit.analysis, round(fit.cost.eps, 6), fit.directions.estimator, fit.score
    ('standardized', 1.0, 'tau', None)
    >>> fit.summary().importance.columns.tolist()
    ['variance', 'pve', 'cumulative_pve']
    """
    from .plan import plan_pca

    values, variables = check_data(X, min_rows=4, min_cols=2, copy=False)
    n, p = values.shape
    plan = plan_pca(
        n,
        p,
        eps=eps,
        delta=delta,
        standardize=standardize,
        k=k,
        components=components,
        score=score,
        bins=bins,
        bounds=bounds,
        scales=scales,
        split=split,
        compare=compare,
        calibration=calibration,
        debias=debias,
        variables=variables,
        accuracy=accuracy,
        allow_large_delta=allow_large_delta,
    )
    if plan.notes and plan.accuracy != "ignore":
        for note in plan.notes:
            warnings.warn(note, AccuracyWarning, stacklevel=2)
    fit = execute(plan, CheckedData(values, variables), budget=budget, random_state=random_state)
    return fit  # type: ignore[no-any-return]


# ---------------------------------------------------------------------- drawing


def _divide(data: CheckedData, scales: NDArray[np.float64], extra: Any = None) -> CheckedData:
    return CheckedData(np.asarray(data.values) / scales, data.variables, extra)


def _score_table(plan: PCAPlan, data: CheckedData, drawn: Mapping[str, Any]) -> CheckedData:
    """The table the score plot reads: scaled by the fit's scales (public or private)."""
    s = plan.settings
    assert s is not None
    if "scales" in drawn:
        return drawn["scales"][0]  # type: ignore[no-any-return]
    if s.scales is not None:
        return _divide(data, s.scales)
    return data


def feed_step(
    plan: PCAPlan, name: str, data: CheckedData, drawn: Mapping[str, Any]
) -> CheckedData:
    """What step ``name`` of a fit draws from (see :meth:`PCAPlan.feed`)."""
    s = plan.settings
    assert s is not None
    table = CheckedData(data.values, data.variables)
    if name in ("scales",):
        return table
    if name == "directions":
        if s.analysis == "scaled":
            assert s.scales is not None
            return _divide(table, s.scales)
        return table
    directions: DirectionsResult = drawn["directions"]
    if name == "scree":
        given, _ = resolve_directions(directions, p=plan.p, k=s.k)
        base = (
            _divide(table, s.scales) if s.analysis == "scaled" and s.scales is not None else table
        )
        return CheckedData(base.values, base.variables, (given, directions))
    if name == "score":
        base = _score_table(plan, table, drawn)
        cols = [c - 1 for c in s.components]
        matrix = np.ascontiguousarray(directions.directions[:, cols])
        return CheckedData(base.values, base.variables, ScoreInputs(matrix, directions))
    raise KeyError(name)  # pragma: no cover - the plan's steps are fixed


def _standardized_scree(
    plan: PCAPlan, directions: DirectionsResult
) -> tuple[ScreeResult, NDArray[np.float64], tuple[str, ...]]:
    """The free scree of a tau release: eigenvalues of ``R = sin(pi tau / 2)``, debiased."""
    s = plan.settings
    assert s is not None and directions.noisy_matrix is not None
    corr = correlation_from_tau(np.asarray(directions.noisy_matrix))
    sigma = float(directions.sigma or 0.0)
    values, vectors = correlation_eigen(corr, sigma, plan.p, debias=s.debias)
    values, vectors = values[: s.k], orient_signs(vectors[:, : s.k])
    notes: list[str] = []
    negative = int(np.sum(np.linalg.eigvalsh(corr) < 0))
    if negative:
        notes.append(
            f"the private correlation estimate has {negative} negative eigenvalue(s) "
            "(noise); they are reported as 0."
        )
    noise = tau_variance_noise_sd(vectors, sigma, plan.p, corr)
    scree = ScreeResult(
        methods=("sin-tau",),
        values=values[None, :],
        trace=float(plan.p),
        directions=np.ascontiguousarray(vectors),
        directions_source="private",
        directions_release=None,  # the variances' own directions: eigenvectors of R
        n=plan.n,
        n_pairs=plan.n // 2,
        variables=directions.variables,
        cost=directions.cost,  # type: ignore[arg-type]
        calibration=directions.calibration or "analytic",
        mono=False,
        noise_sd=noise[None, :],
        trace_sd=0.0,
    )
    return scree, corr, tuple(notes)


def tau_variance_noise_sd(
    vectors: NDArray[np.float64], sigma: float, p: int, correlation: NDArray[np.float64]
) -> NDArray[np.float64]:
    """The noise sd of each ``v' R v`` of the standardised scree, to first order (public).

    For a unit ``v`` the off-diagonal sum ``v' E v = 2 sum_{i<k} v_i v_k E_ik``
    has variance ``4 sum_{i<k} v_i^2 v_k^2 s_ik^2`` with ``s_ik^2`` the entry
    noise variances of :func:`~dppca.releases.pca.correlation.entry_noise_var`.
    Reads released values and the public sigma only (post-processing).
    """
    v = np.asarray(vectors, dtype=np.float64)
    entry = entry_noise_var(correlation, sigma, p)
    w = v**2
    # 4 sum_{i<k} = 2 sum_{i != k} (the diagonal of entry is 0)
    return np.sqrt(2.0 * np.einsum("ij,ik,kj->j", w, entry, w))


def _nonprivate(
    plan: PCAPlan, data: CheckedData
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    """The matching non-private analysis: top-k eigenvalues, their PVE, directions."""
    s = plan.settings
    assert s is not None
    x = np.asarray(data.values, dtype=np.float64)
    if s.analysis == "standardized":
        matrix = np.corrcoef(x, rowvar=False)
    else:
        if s.scales is not None:
            x = x / s.scales
        matrix = np.cov(x, rowvar=False)
    values, vectors = np.linalg.eigh(matrix)
    values, vectors = values[::-1], vectors[:, ::-1]
    total = float(np.trace(matrix))
    top = values[: s.k]
    return top, top / total if total > 0 else np.zeros_like(top), vectors[:, : s.k]


def axis_sds(plan: PCAPlan, drawn: Mapping[str, Any]) -> tuple[float, float]:
    """The private standard deviations of the score plot's two axes (released values)."""
    s = plan.settings
    assert s is not None
    cols = [c - 1 for c in s.components]
    if s.analysis == "standardized":
        directions: DirectionsResult = drawn["directions"]
        corr = correlation_from_tau(np.asarray(directions.noisy_matrix))
        vectors = np.asarray(directions.directions)[:, cols]
        values = standardized_variances(corr, vectors)
        noise = tau_variance_noise_sd(vectors, float(directions.sigma or 0.0), plan.p, corr)
    else:
        scree: ScreeResult = drawn["scree"]
        values = np.asarray(scree.scree)[cols]
        sd = scree.noise_sd
        noise = np.zeros(2) if sd is None else np.asarray(sd)[0, cols]
    # a variance within its noise interval of 0 gives no width: the axis scans its own
    a, b = (
        math.sqrt(float(v)) if v > _trusted_sds(s.analysis) * max(float(e), 0.0) else 0.0
        for v, e in zip(values, noise, strict=True)
    )
    return a, b


def assemble_fit(plan: PCAPlan, data: CheckedData, drawn: Mapping[str, Any]) -> PCAResult:
    """The fit's result from its steps' results (see :meth:`PCAPlan.assemble`)."""
    s = plan.settings
    assert s is not None
    directions: DirectionsResult = drawn["directions"]
    notes: tuple[str, ...] = ()
    corr = None
    if s.analysis == "standardized":
        scree, corr, notes = _standardized_scree(plan, directions)
    else:
        scree = drawn["scree"]
    score = drawn.get("score")
    scales, source = s.scales, s.scale_source
    if "scales" in drawn:
        fields = drawn["scales"][1]
        scales = fields["scales"]
        if score is not None:
            score = dataclasses.replace(score, **fields)
    elif scales is not None and score is not None:
        score = dataclasses.replace(score, scales=scales)
    values = np.asarray(scree.scree, dtype=np.float64)
    pve = np.asarray(scree.pve_total, dtype=np.float64)
    comparison: dict[str, Any] = {}
    if s.compare:
        top, top_pve, vectors = _nonprivate(plan, data)
        comparison = {
            "nonprivate_variances": top,
            "nonprivate_pve": top_pve,
            "nonprivate_directions": vectors,
        }
        if s.analysis == "standardized":
            scree = dataclasses.replace(
                scree, nonprivate_values=top, nonprivate_trace=float(plan.p)
            )
    parts: dict[str, PrivacyCost] = {name: step.cost for name, step in plan.steps}
    return PCAResult(
        analysis=s.analysis,
        directions=directions,
        scree=scree,
        score=score,
        variances=values,
        pve=pve,
        correlation_matrix=corr,
        n=plan.n,
        variables=data.variables,
        components=s.components,
        cost=plan.cost,
        parts=parts,
        split=plan.shares,
        scales=None if scales is None else np.asarray(scales, dtype=np.float64),
        scale_source=source,
        notes=plan.notes + notes,
        forecast=plan.forecast,
        **comparison,
    )


# ---------------------------------------------------------------------- checks


def frame_ratio(fit: PCAResult) -> NDArray[np.float64] | None:
    """Each score axis's width over the central 99 % range the private variances give.

    The range of a normal score with the released variance ``v`` is
    ``2 * 2.576 sqrt(v)``. None when the variances are not in the score's
    units (a standardised fit whose scores are divided by bounds' widths).
    Reads released values only (post-processing).
    """
    if fit.score is None or fit.scale_source == "bounds":
        return None
    spreads = []
    noise = fit.scree.noise_sd
    for c in fit.components:
        v = float(fit.variances[c - 1])
        e = 0.0 if noise is None else float(np.asarray(noise)[0, c - 1])
        if v > _trusted_sds(fit.analysis) * e:
            spreads.append(_RANGE99 * math.sqrt(v))
        else:  # within its noise: judge against the upper end of its interval
            upper = v + INTERVAL_SDS * e
            spreads.append(-_RANGE99 * math.sqrt(upper) if upper > 0 else 0.0)
    widths = (fit.score.xlim[1] - fit.score.xlim[0], fit.score.ylim[1] - fit.score.ylim[0])
    # a negative ratio marks a spread known only up to its upper end (wide frames only)
    return np.array(
        [w / sp if sp != 0 else math.inf for w, sp in zip(widths, spreads, strict=True)]
    )


def _frame_problem(fit: PCAResult, ratio: NDArray[np.float64]) -> str | None:
    """A sentence on the axes whose frame disagrees with, or cannot be checked by, the fit."""
    wrong, unchecked = [], []
    for c, r in zip(fit.components, ratio, strict=True):
        if r < 0:  # the spread is known only up to the upper end of its noise interval
            unchecked.append(f"PC{c}")
        elif not math.isfinite(r):
            wrong.append(f"PC{c} (its released variance is 0)")
        elif r > FRAME_LIMIT:
            wrong.append(f"PC{c} ({r:.3g} times wider than the released spread)")
        elif r < 1.0 / FRAME_LIMIT:
            wrong.append(f"PC{c} ({1 / r:.3g} times narrower than the released spread)")
    text = []
    if wrong:
        text.append(
            "the private score frame disagrees with the fit's private variances on "
            + " and ".join(wrong)
            + "; the score plot is probably mostly empty or cut off"
        )
    if unchecked:
        text.append(
            "the score frame of "
            + " and ".join(unchecked)
            + " cannot be checked: the private variance is within its noise, so the frame "
            "(from a private scan) may be far too wide or narrow"
        )
    if not text:
        return None
    return (
        "; ".join(text) + ". Public bounds (bounds=...) make the frame exact and free; a "
        "larger eps or more rows help."
    )


def review_fit(plan: PCAPlan, fit: PCAResult) -> PCAResult:
    """The steps' post-release checks, then the frame against the released spread."""
    accuracy = plan.accuracy
    steps = plan.plans
    try:
        steps["directions"].review(fit.directions)
        if "scree" in steps:
            steps["scree"].review(fit.scree)
    except InaccurateReleaseError as exc:
        raise InaccurateReleaseError(str(exc), result=fit) from None
    ratio = frame_ratio(fit)
    notes = list(fit.notes)
    if ratio is not None:
        problem = _frame_problem(fit, ratio)
        if problem is not None:
            notes.append(problem)
        fit = dataclasses.replace(fit, frame_ratio=ratio, notes=tuple(notes))
        if problem is not None and accuracy == "error":
            raise InaccurateReleaseError(
                problem + " The fit was made and its cost recorded; it is on this "
                "error's `result`.",
                result=fit,
            )
        if problem is not None and accuracy == "warn":
            warnings.warn(problem, AccuracyWarning, stacklevel=_user_stacklevel())
    return fit
