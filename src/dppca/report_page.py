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
from typing import Any

from .core.lazy import pandas as pd
from .privacy.accounting import Budget
from .releases.directions import DirectionsResult
from .releases.loading import LoadingResult
from .releases.report import DEFAULT_SHARES
from .releases.score import ScoreResult
from .releases.scree import ScreeResult

__all__ = ["REFERENCES", "render_html"]

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
