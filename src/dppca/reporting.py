"""One self-contained HTML page with the private PCA pictures, their tables and costs.

:func:`report` spends one budget on three releases: private directions, a
private scree (variances along those directions) and a private score plot.
The loading plot is post-processing of the directions, which the scree and
the score reuse, so the directions are paid for once. Figures are inline PNG
images (``data:`` URIs): the page opens offline and refers to nothing outside
itself.
"""

from __future__ import annotations

import base64
import html
import io
import os
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from numpy.typing import ArrayLike

from .core.exceptions import AccuracyWarning, DataWarning, PrivacyWarning
from .core.lazy import pandas as pd
from .core.reading import write_text_atomically
from .core.types import Accuracy, Calibration, Data, RandomStateLike, Ties
from .core.validation import check_grouped_data
from .privacy.accounting import Budget, PrivacyCost
from .releases.directions import DirectionsResult, resolve_directions
from .releases.engine import CheckedData, execute
from .releases.loading import LoadingResult
from .releases.report import DEFAULT_SHARES, ReportInputs, ReportReleases, plan_report
from .releases.score import ScoreResult
from .releases.score.groups import _resolve_groups, resolve_group_codes
from .releases.scree import ScreeResult

__all__ = ["Report", "report"]

REFERENCES = (
    "Kim, M. and Jung, S. (2025). Robust and differentially private principal component "
    "analysis. Statistical Analysis and Data Mining, 18(6), e70053.",
    "Balle, B. and Wang, Y.-X. (2018). Improving the Gaussian mechanism for differential "
    "privacy: analytical calibration and optimal denoising. Proceedings of the 35th "
    "International Conference on Machine Learning (ICML), PMLR 80, 394-403.",
    "Durfee, D. (2023). Unbounded differentially private quantile and maximum estimation. "
    "Advances in Neural Information Processing Systems 36 (NeurIPS).",
    "Dwork, C. and Roth, A. (2014). The algorithmic foundations of differential privacy. "
    "Foundations and Trends in Theoretical Computer Science, 9(3-4), 211-407.",
)


@dataclass(frozen=True, eq=False, repr=False)
class Report:
    """The releases behind a report page and the page itself.

    Attributes
    ----------
    html : str
        The complete, self-contained HTML page.
    directions : DirectionsResult
    loading : LoadingResult
        Post-processing of ``directions``.
    scree : ScreeResult
        Reuses ``directions``; its cost excludes them.
    score : ScoreResult
        Reuses ``directions``; its cost excludes them.
    budget : Budget
        The report's own ledger: one entry per release, whose tight total is
        at most (eps, delta).
    cost : PrivacyCost
        What the report spent and charged: the tight composition of its
        releases (:attr:`dppca.releases.report.ReportPlan.cost`).
    notes : tuple of str
        Warnings raised while releasing (accuracy or privacy qualifications).
    """

    html: str
    directions: DirectionsResult
    loading: LoadingResult
    scree: ScreeResult
    score: ScoreResult
    budget: Budget
    cost: PrivacyCost
    notes: tuple[str, ...] = ()

    def save(self, path: str | os.PathLike[str]) -> Path:
        """Write the page to ``path`` atomically."""
        return _write_text(path, self.html)

    def __repr__(self) -> str:
        d = self.directions
        return f"Report(n={d.n}, p={d.p}, eps={self.cost.eps:g}, delta={self.cost.delta:g})"


def report(
    X: Data,
    *,
    eps: float,
    delta: float,
    out: str | os.PathLike[str] | None = None,
    k: int | None = None,
    components: tuple[int, int] = (1, 2),
    groups: str | ArrayLike | None = None,
    group_labels: Sequence[Any] | None = None,
    groups_public: bool = False,
    shares: Mapping[str, float] | None = None,
    directions: DirectionsResult | None = None,
    calibration: Calibration = "analytic",
    ties: Ties = "zero",
    score_range: float = 1e6,
    bounds: Any = None,
    accuracy: Accuracy = "warn",
    title: str | None = None,
    random_state: RandomStateLike = None,
    budget: Budget | None = None,
    dropna: bool = False,
) -> Report:
    """Release private directions, loading, scree and score plots; write them as one page.

    Parameters
    ----------
    X : array-like of shape (n, p) or pandas.DataFrame
        Numeric data (plus the group column if ``groups`` names one).
    eps, delta : float
        The whole budget of the report.
    out : str or path-like, optional
        Write the HTML page here (atomically).
    k : int, optional
        Number of PCs in the scree (default all p).
    components : (int, int), default=(1, 2)
        The PCs of the loading and score plots, numbered from 1.
    groups, group_labels, groups_public
        Group labels for the score plot (a column of ``X`` or one label per
        row), the public list of labels, and whether the labels (and so the
        group sizes) are public, as in :func:`dppca.dp_score`.
    shares : mapping, optional
        Basic split of (eps, delta) over ``"directions"``, ``"scree"`` and
        ``"score"``; default 0.4, 0.3, 0.3 (normalised), then scaled up to
        the tight total (see Notes).
    directions : DirectionsResult, optional
        An earlier private direction release to reuse: nothing is spent on
        directions, and the budget is split over the scree and the score.
    calibration : {"classic", "analytic"}, default="analytic"
        Gaussian calibration of every Gaussian step.
    ties : {"error", "zero"}, default="zero"
        Near-duplicate rows in the directions; ``"zero"`` leaks nothing.
    score_range : float, default=1e6
        Public bound on the scores for the private frame (see :func:`dppca.dp_score`).
    bounds : None, (lower, upper), array of shape (p, 2) or mapping, default=None
        A public data domain per variable; the data are clipped to it (see
        :func:`dppca.dp_pc_dir`).
    accuracy : {"warn", "error", "ignore"}, default="warn"
        What to do, before any data are read, when the data-free forecast of
        a release says it would be inaccurate.
    title : str, optional
        Page title.
    random_state : None, int or numpy.random.Generator, default=None
        Source of all noise; None (fresh entropy) for a page you publish.
    budget : Budget, optional
        A :class:`dppca.Budget` or a ledger's budget
        (:meth:`dppca.privacy.ledger.Ledger.budget`): checked with the report's whole
        cost before any data work and charged once with it.
    dropna : bool, default=False
        Missing values (NaN, None, pd.NA) in the analysed columns are refused
        unless this is True; then the rows holding one are dropped, and the
        count of complete rows is treated as public (it is the n of the
        release). Either way booleans are analysed as 0/1 and non-numeric
        columns are left out with a ``DataWarning`` (:mod:`dppca.core.tables`).
        The ``groups`` column is not analysed: a missing label drops no row.

    Returns
    -------
    Report

    Raises
    ------
    BudgetExceededError
        When ``budget`` cannot afford the report (nothing is read or drawn).

    Warns
    -----
    AccuracyWarning, PrivacyWarning, DataWarning
        As raised by the releases and the table's rule (columns left out,
        rows dropped); they are also listed on the page.

    Notes
    -----
    Privacy: neighbouring datasets have the same n and differ in one row.
    The report is one plan (:func:`dppca.releases.report.plan_report`) of three
    releases: (1) :func:`dppca.dp_pc_dir`, (2) :func:`dppca.dp_scree` reusing
    the released directions, (3) :func:`dppca.dp_score` reusing them as well.
    The loading plot and every table and figure are post-processing. The
    shares are a basic split; every eps share is then scaled by the largest
    factor for which the tight composition of all the parts is (eps, delta),
    the total the page shows and the budget is charged. The page holds no
    seed and no fingerprint of the data; n and the column names are public.

    Examples
    --------
    >>> from dppca.datasets import load_gau
    >>> rep = report(load_gau(), eps=1.0, delta=1e-5, random_state=0)
    >>> rep
    Report(n=5000, p=20, eps=1, delta=1e-05)
    >>> "<img" in rep.html
    True
    """
    features, labels = _resolve_groups(X, groups)
    with warnings.catch_warnings(record=True) as table_notes:  # shown on the page as well
        warnings.simplefilter("always", DataWarning)
        data, variables, labels = check_grouped_data(features, labels, min_cols=2, dropna=dropna)
    n, p = data.shape
    public_levels, levels, codes = resolve_group_codes(labels, group_labels, n)
    if directions is not None:
        resolve_directions(directions, p=p, k=max(components))  # a private release, p matches
        if directions.n != n:
            raise ValueError(f"X has {n} rows but the directions used n={directions.n}.")
    plan = plan_report(
        n, p, eps=eps, delta=delta, k=k, components=components,
        groups=None if levels is None else len(levels), groups_public=groups_public,
        shares=shares, directions_given=directions is not None, calibration=calibration,
        ties=ties, score_range=score_range, bounds=bounds, variables=variables,
        accuracy=accuracy,
    )  # fmt: skip
    inputs = ReportInputs(directions, public_levels, levels, codes)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        releases: ReportReleases = execute(
            plan, CheckedData(data, variables, inputs), budget=budget, random_state=random_state
        )
    notes = []
    for w in [*table_notes, *caught]:
        if issubclass(w.category, AccuracyWarning | PrivacyWarning | DataWarning):
            notes.append(str(w.message))
        warnings.warn(w.message, w.category, stacklevel=2)
    page_ledger = Budget(plan.eps, plan.delta)
    for _, sub in plan.plans:
        page_ledger.spend(sub.cost)
    page = render_html(
        directions=releases.directions, loading=releases.loading, scree=releases.scree,
        score=releases.score, budget=page_ledger, notes=tuple(notes), title=title,
        calibration=calibration, shares=plan.shares,
        names=tuple(name for name, _ in plan.plans),
    )  # fmt: skip
    result = Report(
        page, releases.directions, releases.loading, releases.scree, releases.score,
        page_ledger, plan.cost, tuple(notes),
    )  # fmt: skip
    if out is not None:
        result.save(out)
    return result


# --------------------------------------------------------------------------- rendering


def _figure_png(fig: Any) -> str:
    import matplotlib.pyplot as plt

    buffer = io.BytesIO()
    try:
        # no "Software" tag: the page carries no address, not even inside an image
        fig.savefig(buffer, format="png", dpi=110, bbox_inches="tight",
                    metadata={"Software": None})  # fmt: skip
    finally:
        plt.close(fig)
    return base64.b64encode(buffer.getvalue()).decode("ascii")


def _figures(loading: LoadingResult, scree: ScreeResult, score: ScoreResult) -> list[str]:
    drawn = [
        loading.plot(kind="vector"),
        scree.plot(kind="pve"),
        score.plot("groups", variances=scree)
        if score.groups is not None
        else score.plot("histogram", variances=scree),
    ]
    return [_figure_png(d if hasattr(d, "savefig") else d.figure) for d in drawn]


def _table(frame: pd.DataFrame, caption: str, *, css: str = "", index: bool = True) -> str:
    body = frame.to_html(
        index=index, float_format=lambda v: f"{v:.4g}", border=0, classes=css or None,
        na_rep="",
    )  # fmt: skip
    return f"<figure class='table'><figcaption>{html.escape(caption)}</figcaption>{body}</figure>"


_RELEASE_NAMES = {
    "directions": "directions (and loading plot)",
    "scree": "scree / PVE",
    "score": "score plot",
}


def _ledger_frame(budget: Budget, names: Sequence[str]) -> pd.DataFrame:
    rows = []
    for name, cost in zip(names, budget.ledger, strict=True):
        for leaf in cost.leaves():
            rows.append(
                {
                    "release": _RELEASE_NAMES[name],
                    "what": leaf.released,
                    "mechanism": leaf.mechanism,
                    "eps": leaf.eps,
                    "delta": leaf.delta,
                }
            )
    eps, delta = budget.spent_tight
    # Every part's own eps is scaled up until the tight composition of all of
    # them is the report's total: their claims add up to more than it.
    mechanism = "tight composition of every part (accountant)"
    rows.append({"release": "total", "what": "", "mechanism": mechanism,
                 "eps": eps, "delta": delta})  # fmt: skip
    return pd.DataFrame(rows)


def _forecast_html(results: Mapping[str, Any]) -> str:
    parts = []
    for name, res in results.items():
        forecast = getattr(res, "forecast", None)
        if callable(forecast) and not hasattr(forecast, "to_frame"):
            try:
                forecast = forecast()
            except TypeError:  # a method that needs arguments: nothing to show
                forecast = None
        if forecast is None:
            continue
        if hasattr(forecast, "to_frame"):
            parts.append(_table(forecast.to_frame(), f"Forecast accuracy: {name}"))
        else:
            parts.append(f"<p><b>{html.escape(name)}:</b> {html.escape(str(forecast))}</p>")
    if not parts:
        return ""
    return "<h2>Forecast accuracy</h2>" + "".join(parts)


def _methods_paragraph(
    directions: DirectionsResult,
    scree: ScreeResult,
    score: ScoreResult,
    budget: Budget,
    calibration: str,
    shares: Mapping[str, float],
) -> str:
    eps, delta = budget.spent_tight
    gaussian = (
        "the analytic Gaussian mechanism [2]"
        if calibration == "analytic"
        else "the classic Gaussian mechanism [4]"
    )
    share = ", ".join(f"{100 * shares[k]:.0f}% to the {k}" for k in DEFAULT_SHARES if k in shares)
    groups = ""
    if score.groups is not None:
        groups = " Group sizes were " + (
            "taken as public." if score.groups_public else "released with Laplace noise."
        )
    return (
        f"<p>Principal component directions of the n = {directions.n} rows and "
        f"p = {directions.p} variables were released with g-DPPCA [1]: the spherical "
        f"Kendall matrix, perturbed by symmetric Gaussian noise calibrated with {gaussian} "
        f"(noise scale {directions.sigma:.3g}); the loading plot shows entries of its "
        "leading eigenvectors. Variances along these directions (scree and proportion of "
        "variance explained) were estimated from paired differences of the rows with "
        f"clipped means and a private total variance whose clipping level comes from a "
        f"pure-DP quantile [3]. The score plot shows noisy two-dimensional histograms of "
        f"the scores in a frame set by pure-DP quantiles [3].{groups} The directions were "
        f"released once and reused by the loading, scree and score plots. The total "
        f"privacy budget (eps = {eps:.4g}, delta = {delta:.3g}) was split {share}, and "
        "every share scaled up until the tight composition of all the parts is that total "
        "[4]; neighbouring datasets differ in one "
        "replaced row, with n public. Computed with the Python package dppca.</p>"
    )


def render_html(
    *,
    directions: DirectionsResult,
    loading: LoadingResult,
    scree: ScreeResult,
    score: ScoreResult,
    budget: Budget,
    notes: tuple[str, ...] = (),
    title: str | None = None,
    calibration: str = "analytic",
    shares: Mapping[str, float] = DEFAULT_SHARES,
    names: Sequence[str] = ("directions", "scree", "score"),
) -> str:
    """The report page for released results (post-processing only)."""
    loading_png, scree_png, score_png = _figures(loading, scree, score)
    eps, delta = budget.spent_tight
    title = title or "Differentially private PCA"
    score_table = score.to_frame()
    pieces = [
        "<!DOCTYPE html>",
        "<html lang='en'><head><meta charset='utf-8'>",
        f"<title>{html.escape(title)}</title>",
        "<style>body{font-family:sans-serif;max-width:60em;margin:2em auto;padding:0 1em}"
        "table{border-collapse:collapse;font-size:90%}td,th{padding:2px 8px;text-align:right;"
        "border-bottom:1px solid #ddd}figure{margin:1.5em 0}img{max-width:100%}"
        "figcaption{font-weight:bold;margin-bottom:.4em}.total{font-weight:bold}</style>",
        "</head><body>",
        f"<h1>{html.escape(title)}</h1>",
        f"<p>n = {directions.n} rows, p = {directions.p} variables; total privacy cost "
        f"<b>eps = {eps:.6g}, delta = {delta:.6g}</b>.</p>",
        "<h2>Loading plot</h2>",
        f"<figure class='plot' id='loading'><img alt='DP loading plot' "
        f"src='data:image/png;base64,{loading_png}'></figure>",
        _table(loading.to_frame(), "Loadings", css="loading"),
        "<h2>Scree / proportion of variance explained</h2>",
        f"<figure class='plot' id='scree'><img alt='DP PVE plot' "
        f"src='data:image/png;base64,{scree_png}'></figure>",
        _table(scree.to_frame(), "Private variances and PVE", css="scree"),
        f"<p>Total variance (private): {scree.trace:.4g}.</p>",
        "<h2>Score plot</h2>",
        f"<figure class='plot' id='score'><img alt='DP score plot' "
        f"src='data:image/png;base64,{score_png}'></figure>",
        f"<p>Frame: {score.pc_labels[0]} in [{score.xlim[0]:.4g}, {score.xlim[1]:.4g}], "
        f"{score.pc_labels[1]} in [{score.ylim[0]:.4g}, {score.ylim[1]:.4g}]; "
        f"{score.bins[0]} x {score.bins[1]} bins.</p>",
        "<details><summary>Score bin table</summary>",
        _table(score_table, "Private bin probabilities", css="score", index=False),
        "</details>",
        "<h2>Privacy ledger</h2>",
        _table(_ledger_frame(budget, names), "Privacy ledger", css="ledger", index=False),
        _forecast_html({"directions": directions, "scree": scree, "score": score}),
    ]
    if notes:
        pieces.append("<h2>Notes</h2><ul>")
        pieces.extend(f"<li>{html.escape(note)}</li>" for note in notes)
        pieces.append("</ul>")
    pieces += [
        "<h2>Methods</h2>",
        _methods_paragraph(directions, scree, score, budget, calibration, shares),
        "<h2>References</h2><ol>",
        *(f"<li>{html.escape(ref)}</li>" for ref in REFERENCES),
        "</ol></body></html>",
    ]
    return "\n".join(pieces) + "\n"


def _write_text(path: str | os.PathLike[str], text: str) -> Path:
    return write_text_atomically(path, text)
