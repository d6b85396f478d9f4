"""The HTML page of a report: inline figures, tables, costs and the methods.

:func:`render_html` turns the released results of :func:`dppca.report` into
one self-contained page: figures as inline PNG images (``data:`` URIs), the
tables, the privacy ledger of the page and a paragraph on the methods. It
reads released values only.
"""

from __future__ import annotations

import base64
import html
import io
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ._version import __version__
from .core.lazy import pandas as pd
from .privacy.accounting import Accountant
from .privacy.tradeoff import attacker_sentence
from .releases.directions.result import DirectionsResult
from .releases.loading.result import LoadingResult
from .releases.report import DEFAULT_SHARES, ReportReleases
from .releases.score.result import ScoreResult
from .releases.scree.result import ScreeResult

__all__ = ["REFERENCES", "RunFacts", "render_html"]

#: Re-perturbations behind the loading plot's privacy-noise regions, and the
#: fixed seed of that post-processing draw (the released matrix and its sigma
#: are public; a fixed seed makes the same report draw the same picture).
NOISE_REGION_DRAWS = 200
_NOISE_REGION_SEED = 20240601

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
    "Dong, J., Roth, A. and Su, W. J. (2022). Gaussian differential privacy. Journal of the "
    "Royal Statistical Society Series B, 84(1), 3-37.",
)


@dataclass(frozen=True)
class RunFacts:
    """The run's public choices that the page states: its title and its Methods.

    Attributes
    ----------
    title : str or None
        The page's title (None: "Differentially private PCA").
    calibration : str
        The Gaussian calibration of every Gaussian step.
    shares : mapping of str to float
        The basic split of the budget over the releases.
    names : sequence of str
        The page ledger's entries, in its order (``"directions"`` is absent
        when an earlier direction release was reused).
    missing_zero : bool
        Missing cells were allowed (``missing="zero"``): each adds nothing to
        the sums it is part of, and n stays the table's row count.
    command : str or None
        The call or command line that made the page, without any seed.
    """

    title: str | None
    calibration: str
    shares: Mapping[str, float]
    names: Sequence[str]
    missing_zero: bool
    command: str | None


def _figure_png(fig: Any) -> str:
    import matplotlib.pyplot as plt

    buffer = io.BytesIO()
    try:
        # no "Software" tag: the page carries no address, not even inside an image
        fig.savefig(
            buffer, format="png", dpi=110, bbox_inches="tight", metadata={"Software": None}
        )
    finally:
        plt.close(fig)
    return base64.b64encode(buffer.getvalue()).decode("ascii")


def _figures(loading: LoadingResult, scree: ScreeResult, score: ScoreResult) -> list[str]:
    regions: dict[str, Any] = {}
    if loading.directions.noisy_matrix is not None and loading.directions.sigma:
        regions = {"uncertainty": NOISE_REGION_DRAWS, "random_state": _NOISE_REGION_SEED}
    drawn = [
        loading.plot(kind="vector", **regions),
        scree.plot(kind="pve"),
        score.plot("groups", variances=scree)
        if score.groups is not None
        else score.plot("histogram", variances=scree),
    ]
    return [_figure_png(d if hasattr(d, "savefig") else d.figure) for d in drawn]


def _table(frame: pd.DataFrame, caption: str, *, css: str = "", index: bool = True) -> str:
    body = frame.to_html(
        index=index,
        float_format=lambda v: f"{v:.4g}",
        border=0,
        classes=css or None,
        na_rep="",
    )
    return f"<figure class='table'><figcaption>{html.escape(caption)}</figcaption>{body}</figure>"


_RELEASE_NAMES = {
    "scales": "private scales",
    "directions": "directions (and loading plot)",
    "scree": "scree / PVE",
    "score": "score plot",
}


def _ledger_frame(budget: Accountant, names: Sequence[str]) -> pd.DataFrame:
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
    rows.append(
        {"release": "total", "what": "", "mechanism": mechanism, "eps": eps, "delta": delta}
    )
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


def _analysis_sentence(directions: DirectionsResult) -> str:
    """How the table entered the releases: its own units, public bounds or private scales."""
    if directions.scales is not None:
        note = f" {directions.scale_note}" if directions.scale_note else ""
        return (
            "Each column was first divided by a privately released robust scale (shown "
            "above), so that columns in unrelated units weigh alike; every release below "
            f"uses the scaled table.{note}"
        )
    if directions.bounds is not None:
        return (
            "The data were clipped to public bounds given per variable (a data domain "
            "stated before the analysis, not read from the data) and analysed in their own "
            "units."
        )
    return "The data were analysed in their own units, with no clipping bounds."


def _frame_sentence(score: ScoreResult) -> str:
    source = getattr(score, "frame_source", "private")
    if source == "bounds":
        return (
            "the frame is the range the scores can take over the public bounds (free, "
            "nothing estimated)"
        )
    if source == "public":
        return "the frame was given by the analyst as public"
    return "the frame was set by pure-DP quantiles of the scores [3]"


def _methods_paragraph(
    directions: DirectionsResult,
    scree: ScreeResult,
    score: ScoreResult,
    budget: Accountant,
    facts: RunFacts,
) -> str:
    eps, delta = budget.spent_tight
    gaussian = (
        "the analytic Gaussian mechanism [2]"
        if facts.calibration == "analytic"
        else "the classic Gaussian mechanism [4]"
    )
    shares = facts.shares
    share = ", ".join(f"{100 * shares[k]:.0f}% to the {k}" for k in DEFAULT_SHARES if k in shares)
    groups = ""
    if score.groups is not None:
        groups = " Group sizes were " + (
            "taken as public." if score.groups_public else "released with Laplace noise."
        )
    missing = (
        "Missing cells were allowed: a missing cell adds nothing to the sums it is part "
        "of, no row was dropped, and n is the table's row count."
        if facts.missing_zero
        else "The analysed columns held no missing values (a table with any is refused "
        "unless missing cells are allowed with missing='zero')."
    )
    reused = (
        "the directions were released once"
        if "directions" in facts.names
        else "an earlier private direction release was reused"
    )
    command = f" Command: <code>{html.escape(facts.command)}</code>." if facts.command else ""
    if directions.estimator == "tau":  # the standardised analysis of one private PCA fit
        analysis = (
            "The standardised (correlation) analysis was chosen: it is the same in any "
            "units of the columns and reads no sample means or standard deviations."
        )
        released = (
            f"Principal component directions of the n = {directions.n} rows and "
            f"p = {directions.p} variables were released from Kendall's tau matrix of "
            "every pair of columns, perturbed by symmetric Gaussian noise calibrated with "
            f"{gaussian} (noise scale {directions.sigma:.3g}); the loading plot shows "
            "entries of its leading eigenvectors, with privacy-noise regions (post-"
            "processing). The variances of the standardised table (scree and proportion "
            "of variance explained) are the eigenvalues of the correlation estimate "
            "sin(pi tau / 2) from the same release, at no extra cost. "
        )
    else:
        analysis = _analysis_sentence(directions)
        released = (
            f"Principal component directions of the n = {directions.n} rows and "
            f"p = {directions.p} variables were released with g-DPPCA [1]: the spherical "
            f"Kendall matrix, perturbed by symmetric Gaussian noise calibrated with "
            f"{gaussian} (noise scale {directions.sigma:.3g}); the loading plot shows "
            "entries of its leading eigenvectors, with privacy-noise regions (the "
            "directions recomputed after adding fresh noise of the same size to the "
            "released matrix; post-processing). Variances along these directions (scree "
            "and proportion of variance explained) were estimated from paired differences "
            "of the rows with clipped means and a private total variance whose clipping "
            "level comes from a pure-DP quantile [3]. "
        )
    return (
        f"<p>{html.escape(analysis)} {missing} {html.escape(released)}"
        f"The score plot shows noisy two-dimensional histograms of the scores; "
        f"{_frame_sentence(score)}.{groups} For the loading, scree and score plots, "
        f"{reused} and shared. The total privacy budget (eps = {eps:.3g}, "
        f"delta = {delta:.2g}) was split {share}, and every share scaled up until the tight "
        "composition of all the parts is that total [4]; neighbouring datasets differ in "
        "one replaced row, with n public. What the total means to an attacker is computed "
        f"from the trade-off function of the composed noise [5]. Computed with the Python "
        f"package dppca {html.escape(__version__)}.{command}</p>"
    )


def _meaning_html(budget: Accountant, n: int) -> list[str]:
    """The attacker sentence and the trade-off curve of everything the page released."""
    from .plotting.tradeoff import plot_tradeoff

    costs = list(budget.ledger)
    ax = plot_tradeoff(costs, n=n, total=budget.spent_tight)
    png = _figure_png(ax.figure)
    return [
        "<h2>What the privacy guarantee means</h2>",
        f"<p class='attacker'>{html.escape(attacker_sentence(costs))}</p>",
        "<p>The curve gives, for every false-alarm rate, the most often any test can tell "
        "whether a given person's row is in the table, whatever else the attacker knows; "
        "the dashed diagonal is a test that learns nothing.</p>",
        f"<figure class='plot' id='tradeoff'><img alt='privacy trade-off curve' "
        f"src='data:image/png;base64,{png}'></figure>",
    ]


def _scales_html(directions: DirectionsResult) -> list[str]:
    """The private scales the releases divided the table by (nothing without them)."""
    if directions.scales is None:
        return []
    frame = pd.DataFrame({"variable": directions.variables, "private scale": directions.scales})
    note = [f"<p>{html.escape(directions.scale_note)}</p>"] if directions.scale_note else []
    return [
        "<h2>Private scales</h2>",
        "<p>Every release below uses the table divided by these released scales, one per "
        "column.</p>",
        _table(frame, "Private scales", css="scales", index=False),
        *note,
    ]


def render_html(
    releases: ReportReleases, budget: Accountant, notes: tuple[str, ...], facts: RunFacts
) -> str:
    """The report page for released results (post-processing only).

    ``budget`` is the page's own ledger, one entry per name of ``facts.names``;
    ``notes`` are the warnings to list.
    """
    directions, loading = releases.directions, releases.loading
    scree, score = releases.scree, releases.score
    loading_png, scree_png, score_png = _figures(loading, scree, score)
    eps, delta = budget.spent_tight
    title = facts.title or "Differentially private PCA"
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
        f"<b>eps = {eps:.3g}, delta = {delta:.2g}</b>. "
        f"{html.escape(attacker_sentence(list(budget.ledger)))}</p>",
        *_scales_html(directions),
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
        _table(_ledger_frame(budget, facts.names), "Privacy ledger", css="ledger", index=False),
        *_meaning_html(budget, directions.n),
        _forecast_html({"directions": directions, "scree": scree, "score": score}),
    ]
    if notes:
        pieces.append("<h2>Notes</h2><ul>")
        pieces.extend(f"<li>{html.escape(note)}</li>" for note in notes)
        pieces.append("</ul>")
    pieces += [
        "<h2>Methods</h2>",
        _methods_paragraph(directions, scree, score, budget, facts),
        "<h2>References</h2><ol>",
        *(f"<li>{html.escape(ref)}</li>" for ref in REFERENCES),
        "</ol></body></html>",
    ]
    return "\n".join(pieces) + "\n"
