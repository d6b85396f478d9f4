"""How a fit's plan draws, assembles and checks its steps (internal to :func:`dppca.dp_pca`).

:class:`~dppca.releases.pca.plan.PCAPlan` delegates here: what each step reads
(:func:`feed_step`), the standardised scree computed from the tau release
(:func:`assemble_fit`), the private standard deviations of the score axes
(:func:`axis_sds`) and the post-release checks (:func:`review_fit`), among them
the frame against the fit's variances (:func:`frame_ratio`).
"""

from __future__ import annotations

import dataclasses
import math
import warnings
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np
from numpy.typing import NDArray

from ...core.exceptions import AccuracyWarning, InaccurateReleaseError
from ...core.warnings import _user_stacklevel
from ...privacy.cost import PrivacyCost
from ..directions.given import resolve_directions
from ..directions.result import DirectionsResult, orient_signs
from ..engine import CheckedData
from ..score.draw import ScoreInputs
from ..score.frame_check import EDGE_SHARE
from ..score.frame_check import edge_share_bound as score_edge_share_bound
from ..scree.result import INTERVAL_SDS, ScreeResult
from .correlation import (
    correlation_eigen,
    correlation_from_tau,
    entry_noise_var,
    standardized_variances,
)
from .result import PCAResult

if TYPE_CHECKING:
    from ...privacy.cost import PrivacyCost as _Cost
    from ..forecast import Forecast
    from .settings import PCASettings


class PCAPlan(Protocol):
    """What the drawing reads of a fit's plan (:class:`~dppca.releases.pca.plan.PCAPlan`)."""

    @property
    def n(self) -> int: ...
    @property
    def p(self) -> int: ...
    @property
    def settings(self) -> PCASettings | None: ...
    @property
    def steps(self) -> tuple[tuple[str, Any], ...]: ...
    @property
    def plans(self) -> dict[str, Any]: ...
    @property
    def shares(self) -> Mapping[str, float]: ...
    @property
    def notes(self) -> tuple[str, ...]: ...
    @property
    def cost(self) -> _Cost: ...
    @property
    def forecast(self) -> Forecast: ...
    @property
    def accuracy(self) -> str: ...


__all__ = [
    "FRAME_LIMIT",
    "assemble_fit",
    "axis_sds",
    "edge_share_bound",
    "feed_step",
    "frame_ratio",
    "review_fit",
    "tau_variance_noise_sd",
]

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


# ---------------------------------------------------------------------- drawing


def _divide(data: CheckedData, scales: NDArray[np.float64], extra: Any = None) -> CheckedData:
    return CheckedData(np.asarray(data.values) / scales, data.variables, extra)


def _score_table(plan: PCAPlan, data: CheckedData, drawn: Mapping[str, Any]) -> CheckedData:
    """The table the score plot reads: scaled by the fit's scales (public or private)."""
    s = plan.settings
    assert s is not None
    if "scales" in drawn:
        return drawn["scales"][0]
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
        if fields.get("scale_note"):
            notes += (
                str(fields["scale_note"]) + " The score plot mixes standardised and raw "
                "units; give public scales= or bounds=.",
            )
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


def edge_share_bound(fit: PCAResult, *, complete: bool = True) -> float | None:
    """A lower bound on the share of rows in the fit's score grid's outer ring of bins.

    :func:`dppca.releases.score.frame_check.edge_share_bound` on the fit's
    score plot and n (None without a score plot): rows outside the frame are
    counted in the edge bins, so a frame that cuts rows off piles them there;
    the fit's frame check against the variances cannot see that when the
    score table is not in the units the variances describe (a private or
    public scale far off its column). Released values only (post-processing).
    """
    if fit.score is None:
        return None
    return score_edge_share_bound(fit.score, fit.n, complete=complete)


def _edge_problem(fit: PCAResult, complete: bool) -> str | None:
    """A sentence when the released histogram piles rows on the frame's edge bins."""
    share = edge_share_bound(fit, complete=complete)
    if share is None or share < EDGE_SHARE:
        return None
    return (
        f"the private score plot puts at least {share:.0%} of the rows (beyond its noise) "
        "in the outer bins of its frame, where rows outside the frame are counted: the "
        "frame probably cuts off part of the scores (on a standardised fit, a scale far "
        "off its column does this). Public bounds (bounds=...) or public scales= make "
        "the frame exact; a larger eps or more rows help."
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
    if accuracy != "ignore":
        for note in fit.notes:
            if "left in their own units" in note:  # the private scales failed somewhere
                warnings.warn(note, AccuracyWarning, stacklevel=_user_stacklevel())
    ratio = frame_ratio(fit)
    complete = plan.settings is None or plan.settings.missing == "refuse"
    notes = list(fit.notes)
    if ratio is not None or fit.score is not None:
        problems = [
            text
            for text in (
                None if ratio is None else _frame_problem(fit, ratio),
                _edge_problem(fit, complete),
            )
            if text is not None
        ]
        problem = " Also, ".join(problems) if problems else None
        score = fit.score
        if problem is not None:
            notes.append(problem)
            if score is not None:  # the score plot carries its own problem when drawn alone
                score = dataclasses.replace(score, notes=(*score.notes, problem))
        fit = dataclasses.replace(fit, frame_ratio=ratio, notes=tuple(notes), score=score)
        if problem is not None and accuracy == "error":
            raise InaccurateReleaseError(
                problem + " The fit was made and its cost recorded; it is on this "
                "error's `result`.",
                result=fit,
            )
        if problem is not None and accuracy == "warn":
            warnings.warn(problem, AccuracyWarning, stacklevel=_user_stacklevel())
    return fit
