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
import math
import os
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ._io import write_text_atomically
from ._lazy import pandas as pd
from ._typing import Calibration, Data, RandomStateLike, Ties
from ._validation import check_data, check_delta, check_eps, check_random_state
from .accounting import Budget, PrivacyCost
from .directions import DirectionsResult, dp_pc_dir
from .exceptions import AccuracyWarning, PrivacyWarning
from .loading import LoadingResult, dp_loading
from .score import ScoreResult, dp_score
from .scree import ScreeResult, dp_scree

__all__ = ["DEFAULT_SHARES", "Report", "report"]

#: Default split of (eps, delta) across the releases of a report.
DEFAULT_SHARES: Mapping[str, float] = {"directions": 0.4, "scree": 0.3, "score": 0.3}

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
        The report's own ledger: one entry per release, total at most (eps, delta).
    notes : tuple of str
        Warnings raised while releasing (accuracy or privacy qualifications).
    """

    html: str
    directions: DirectionsResult
    loading: LoadingResult
    scree: ScreeResult
    score: ScoreResult
    budget: Budget
    notes: tuple[str, ...] = ()

    @property
    def cost(self) -> PrivacyCost:
        """Total cost of the report's releases (basic composition)."""
        eps, delta = self.budget.spent
        return PrivacyCost(eps, delta, "composition", "dppca report", self.budget.ledger)

    def save(self, path: str | os.PathLike[str]) -> Path:
        """Write the page to ``path`` atomically."""
        return _write_text(path, self.html)

    def __repr__(self) -> str:
        eps, delta = self.budget.spent
        d = self.directions
        return f"Report(n={d.n}, p={d.p}, eps={eps:g}, delta={delta:g})"


def _check_shares(shares: Mapping[str, float] | None) -> dict[str, float]:
    if shares is None:
        return dict(DEFAULT_SHARES)
    if not isinstance(shares, Mapping) or set(shares) != set(DEFAULT_SHARES):
        raise ValueError(
            "shares must be a mapping with the keys 'directions', 'scree' and 'score'; "
            f"got {shares!r}."
        )
    values = {k: float(v) for k, v in shares.items()}
    if not all(math.isfinite(v) and v > 0 for v in values.values()):
        raise ValueError(f"shares must be finite and > 0; got {shares!r}.")
    total = math.fsum(values.values())
    return {k: v / total for k, v in values.items()}


def _split(total: float, shares: dict[str, float]) -> dict[str, float]:
    """``total`` split by ``shares``; the last part takes the rounding so parts sum to total."""
    keys = list(DEFAULT_SHARES)
    parts = {k: total * shares[k] for k in keys[:-1]}
    parts[keys[-1]] = total - math.fsum(parts.values())
    return parts


def report(
    X: Data,
    *,
    eps: float,
    delta: float,
    out: str | os.PathLike[str] | None = None,
    k: int | None = None,
    components: tuple[int, int] = (1, 2),
    groups: str | None = None,
    group_labels: Sequence[Any] | None = None,
    groups_public: bool = False,
    shares: Mapping[str, float] | None = None,
    calibration: Calibration = "analytic",
    ties: Ties = "zero",
    score_range: float = 1e6,
    title: str | None = None,
    random_state: RandomStateLike = None,
    ledger: Any = None,
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
        A group column for the score plot, as in :func:`dppca.dp_score`.
    shares : mapping, optional
        Split of (eps, delta) over ``"directions"``, ``"scree"`` and
        ``"score"``; default 0.4, 0.3, 0.3 (normalised).
    calibration : {"classic", "analytic"}, default="analytic"
        Gaussian calibration of every Gaussian step.
    ties : {"error", "zero"}, default="zero"
        Near-duplicate rows in the directions; ``"zero"`` leaks nothing.
    score_range : float, default=1e6
        Public bound on the scores for the private frame (see :func:`dppca.dp_score`).
    title : str, optional
        Page title.
    random_state : None, int or numpy.random.Generator, default=None
        Source of all noise; None (fresh entropy) for a page you publish.
    ledger : object, optional
        A persistent ledger (:class:`dppca.ledger.Ledger`) to check and charge
        as well, keyed by the data's fingerprint.

    Returns
    -------
    Report

    Warns
    -----
    AccuracyWarning, PrivacyWarning
        As raised by the releases; they are also listed on the page.

    Notes
    -----
    Privacy: neighbouring datasets have the same n and differ in one row.
    The releases are (1) :func:`dppca.dp_pc_dir` with the ``directions``
    share, (2) :func:`dppca.dp_scree` with the ``scree`` share, reusing the
    released directions, (3) :func:`dppca.dp_score` with the ``score`` share,
    reusing them as well. The loading plot and every table and figure are
    post-processing. By basic composition the page costs at most (eps,
    delta), the total shown in its ledger. The page holds no seed and no
    fingerprint of the data; n and the column names are public.

    Examples
    --------
    >>> from dppca.datasets import load_gau
    >>> rep = report(load_gau(), eps=1.0, delta=1e-5, random_state=0)
    >>> rep
    Report(n=5000, p=20, eps=1, delta=1e-05)
    >>> "<img" in rep.html
    True
    """
    eps = check_eps(eps)
    delta = check_delta(delta)
    weights = _check_shares(shares)
    eps_parts, delta_parts = _split(eps, weights), _split(delta, weights)
    data, variables = check_data(_features(X, groups))
    frame = pd.DataFrame(data, columns=list(variables))
    rng = check_random_state(random_state)
    budget = Budget(eps, delta)
    planned = PrivacyCost(eps, delta, "composition", "dppca report")
    charge = _ledger_charge(ledger, frame, variables, planned)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        directions = dp_pc_dir(
            frame, None, eps=eps_parts["directions"], delta=delta_parts["directions"],
            random_state=rng, calibration=calibration, ties=ties, budget=budget,
        )  # fmt: skip
        charge(directions.cost, "directions")
        loading = dp_loading(None, directions=directions, components=components)
        scree = dp_scree(
            frame, k, eps=eps_parts["scree"], delta=delta_parts["scree"],
            directions=directions, random_state=rng, calibration=calibration,
            budget=budget,
        )  # fmt: skip
        charge(scree.cost, "scree")
        score = dp_score(
            _with_groups(frame, X, groups), eps=eps_parts["score"], delta=delta_parts["score"],
            components=components, directions=directions,
            groups="__group__" if groups is not None else None,
            group_labels=group_labels, groups_public=groups_public,
            score_range=score_range, calibration=calibration, ties=ties,
            random_state=rng, budget=budget,
        )  # fmt: skip
        charge(score.cost, "score")
    notes = []
    for w in caught:
        if issubclass(w.category, AccuracyWarning | PrivacyWarning):
            notes.append(str(w.message))
        warnings.warn(w.message, w.category, stacklevel=2)
    page = render_html(
        directions=directions, loading=loading, scree=scree, score=score, budget=budget,
        notes=tuple(notes), title=title, calibration=calibration, shares=weights,
    )  # fmt: skip
    result = Report(page, directions, loading, scree, score, budget, tuple(notes))
    if out is not None:
        result.save(out)
    return result


def _features(X: Data, groups: str | None) -> Data:
    """The table without the group column, when ``groups`` names one of a DataFrame's."""
    if isinstance(groups, str) and isinstance(X, pd.DataFrame) and groups in X.columns:
        return X.drop(columns=[groups])
    return X


def _with_groups(frame: pd.DataFrame, X: Data, groups: Any) -> pd.DataFrame:
    """The checked data with the group labels as ``__group__`` (a column of X or an array)."""
    if groups is None:
        return frame
    labels = X[groups] if isinstance(groups, str) else groups
    return frame.assign(**{"__group__": np.asarray(labels)})


def _ledger_charge(
    ledger: Any, frame: pd.DataFrame, variables: tuple[str, ...], planned: PrivacyCost
) -> Callable[[PrivacyCost | None, str], None]:
    """Check the whole plan against the persistent ledger; the charge of each release.

    Without a ledger the charge does nothing.
    """
    fp = None
    if ledger is not None:
        from .ledger import fingerprint

        fp = fingerprint(frame, list(variables))
        ledger_budget = ledger.budget(fp)
        if ledger_budget is not None and hasattr(ledger_budget, "check"):
            ledger_budget.check(planned)

    def charge(cost: PrivacyCost | None, kind: str) -> None:
        if ledger is not None:
            assert cost is not None  # every release here is private
            ledger.charge(fp, cost, kind=kind, name="dppca report")

    return charge


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
        score.plot("groups") if score.groups is not None else score.plot("histogram"),
    ]
    return [_figure_png(d if hasattr(d, "savefig") else d.figure) for d in drawn]


def _table(frame: pd.DataFrame, caption: str, *, css: str = "", index: bool = True) -> str:
    body = frame.to_html(
        index=index, float_format=lambda v: f"{v:.4g}", border=0, classes=css or None,
        na_rep="",
    )  # fmt: skip
    return f"<figure class='table'><figcaption>{html.escape(caption)}</figcaption>{body}</figure>"


def _ledger_frame(budget: Budget) -> pd.DataFrame:
    rows = []
    names = ("directions (and loading plot)", "scree / PVE", "score plot")
    for name, cost in zip(names, budget.ledger, strict=False):
        for leaf in cost.leaves():
            rows.append(
                {
                    "release": name,
                    "what": leaf.released,
                    "mechanism": leaf.mechanism,
                    "eps": leaf.eps,
                    "delta": leaf.delta,
                }
            )
    eps, delta = budget.spent
    # Each release composes its own parts tightly (their claims add up to more),
    # and the releases add up by basic composition.
    mechanism = "basic composition of the releases, each composed tightly"
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
    eps, delta = budget.spent
    gaussian = (
        "the analytic Gaussian mechanism [2]"
        if calibration == "analytic"
        else "the classic Gaussian mechanism [4]"
    )
    share = ", ".join(f"{100 * shares[k]:.0f}% to the {k}" for k in DEFAULT_SHARES)
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
        f"privacy budget (eps = {eps:.4g}, delta = {delta:.3g}) was split {share}, and the "
        "costs add up by basic composition [4]; neighbouring datasets differ in one "
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
) -> str:
    """The report page for released results (post-processing only)."""
    loading_png, scree_png, score_png = _figures(loading, scree, score)
    eps, delta = budget.spent
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
        _table(_ledger_frame(budget), "Privacy ledger", css="ledger", index=False),
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
