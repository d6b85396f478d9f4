"""One self-contained HTML page with the private PCA pictures, their tables and costs.

:func:`report` spends one budget on three releases: private directions, a
private scree (variances along those directions) and a private score plot.
The loading plot is post-processing of the directions, which the scree and
the score reuse, so the directions are paid for once. Figures are inline PNG
images (``data:`` URIs): the page opens offline and refers to nothing outside
itself.
"""

from __future__ import annotations

import dataclasses
import inspect
import os
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from numpy.typing import ArrayLike

from .core.data_checks import check_grouped_data
from .core.exceptions import AccuracyWarning, DataWarning, PrivacyWarning
from .core.options import (
    SCALE_SHARE,
    DesignOptions,
    PrivacyOptions,
    document_design,
    release_options,
)
from .core.reading import write_text_atomically
from .core.scalar_checks import check_bool
from .core.tables import MissingRule, check_missing, document_missing
from .core.types import Accuracy, Calibration, Data, Design, RandomStateLike, Ties
from .privacy.accounting import Accountant, Budget
from .privacy.cost import PrivacyCost, compose
from .releases.directions.given import resolve_directions
from .releases.directions.result import DirectionsResult
from .releases.engine import CheckedData, execute
from .releases.loading.result import LoadingResult
from .releases.report import (
    ReportInputs,
    ReportOptions,
    ReportPlan,
    ReportReleases,
    plan_report_options,
)
from .releases.score.groups import _resolve_groups, resolve_group_codes
from .releases.score.result import ScoreResult
from .releases.score.settings import ScoreGiven
from .releases.scree.result import ScreeResult
from .report_page import RunFacts, render_html

__all__ = ["Report", "report"]


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

    Examples
    --------
    >>> from dppca import report
    >>> from dppca.datasets import load_iris
    >>> rep = report(load_iris().iloc[:, :4], eps=1.0, delta=1e-6, random_state=0)
    >>> rep
    Report(n=150, p=4, eps=1, delta=1e-06)
    >>> rep.html.startswith("<!DOCTYPE html>"), rep.cost.eps <= 1.0
    (True, True)
    """

    html: str
    directions: DirectionsResult
    loading: LoadingResult
    scree: ScreeResult
    score: ScoreResult
    budget: Accountant
    cost: PrivacyCost
    notes: tuple[str, ...] = ()

    def save(self, path: str | os.PathLike[str]) -> Path:
        """Write the page to ``path`` atomically."""
        return _write_text(path, self.html)

    def __repr__(self) -> str:
        d = self.directions
        return f"Report(n={d.n}, p={d.p}, eps={self.cost.eps:.4g}, delta={self.cost.delta:.3g})"


@document_missing
@document_design
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
    allow_large_delta: bool = False,
    title: str | None = None,
    random_state: RandomStateLike = None,
    budget: Accountant | None = None,
    scale: Literal["private"] | None = None,
    scale_share: float = SCALE_SHARE,
    missing: MissingRule = "refuse",
    dropna: bool = False,
    command: str | None = None,
    standardize: bool = False,
    design: Design | None = None,
    m: int | None = None,
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
    allow_large_delta : bool, default=False
        A delta of ``1/n`` or more permits mechanisms that publish a whole row
        with probability delta, so it is refused unless this is True.
    title : str, optional
        Page title.
    random_state : None, int or numpy.random.Generator, default=None
        Source of all noise; None (fresh entropy) for a page you publish.
    budget : Accountant, optional
        A :class:`dppca.Budget` or a ledger's budget
        (:meth:`dppca.privacy.ledger.Ledger.budget`): checked with the report's whole
        cost before any data work and charged once with it.
    scale : {None, "private"}, default=None
        ``"private"`` releases one robust scale per column first (from
        ``scale_share`` of the basic split of eps, p pure parts) and makes all
        three releases on the table divided by them, so that columns in
        unrelated units weigh alike; the scales are shown on the page and held
        by every result (``scales``, ``scale_note``). Not with ``bounds`` or a
        reused ``directions`` release.
    scale_share : float, default=0.5
        The share of eps spent on the private scales (before the tight
        stretch, see Notes).
    missing : {"refuse", "zero"}, default="refuse"
        %(missing)s
    dropna : bool, default=False
        The old spelling of ``missing="zero"`` (see ``missing``).
    command : str, optional
        The command line to quote in the page's Methods (the command line
        passes its own, without the seed); by default the Python call with
        the options that differ from their defaults (never the seed).
    standardize : bool, default=False
        True: the page of one private PCA fit (:func:`dppca.dp_pca` with
        ``standardize=True``), the standardised (correlation) PCA, the same
        in any units of the columns: Kendall's tau directions, the scree
        from the same release, the score plot on the bounds' widths or
        private scales. ``groups``, ``shares``, ``directions``, ``scale``,
        ``score_range``, ``design`` and ``m`` keep their defaults (the fit
        decides them).
    design : {"exact", "balanced"} or None, default=None
        %(design)s
        Used by the directions released here (not with ``directions`` given).
    m : int, optional
        %(m)s

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
        As raised by the releases and the table's rule (columns left out);
        they are also listed on the page.

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
    arguments = locals()
    if check_bool(standardize, "standardize"):
        return _standardized_report(arguments)
    privacy, options, design_options = release_options(arguments, ReportOptions, DesignOptions)
    run = ReportRun.pick(arguments)
    if command is None:
        call = _python_call(
            arguments,
            groups=groups if isinstance(groups, str) else None if groups is None else "...",
            bounds=None if bounds is None else "...",
            missing=privacy.missing,
        )
        run = dataclasses.replace(run, command=call)
    return report_from_options(X, privacy, options, design_options, run, stacklevel=3)


@dataclass(frozen=True, eq=False, repr=False)
class ReportRun:
    """The inputs of one report besides its settings: its data, seed, ledger and page.

    The fields are :func:`report`'s keywords of the same names, except
    ``command``: the line quoted in the page's Methods, None for no line.
    :func:`report` picks them from its arguments; the command line builds
    one from its own. The run holds the seed, so no result keeps it and its
    repr shows no field.
    """

    groups: str | ArrayLike | None = None
    group_labels: Sequence[Any] | None = None
    directions: DirectionsResult | None = None
    out: str | os.PathLike[str] | None = None
    title: str | None = None
    random_state: RandomStateLike = None
    budget: Accountant | None = None
    command: str | None = None

    @classmethod
    def pick(cls, arguments: Mapping[str, Any]) -> ReportRun:
        """The run's inputs from a call of :func:`report` (its ``locals()``)."""
        return cls(**{f.name: arguments[f.name] for f in dataclasses.fields(cls)})


def report_from_options(
    X: Data,
    privacy: PrivacyOptions,
    options: ReportOptions,
    design: DesignOptions,
    run: ReportRun,
    *,
    stacklevel: int = 2,
) -> Report:
    """:func:`report` from its option objects, built and checked once by the caller.

    ``privacy``, ``options`` and ``design`` are the report's settings (as
    :func:`report` builds them from its keywords, or the command line from
    its arguments); ``run`` holds the run's own inputs. The warnings raised
    again point ``stacklevel`` frames up (2: the caller). Nothing here
    checks a setting again.
    """
    with warnings.catch_warnings(record=True) as table_notes:  # shown on the page as well
        warnings.simplefilter("always", DataWarning)
        data, variables, labels = check_grouped_data(
            *_resolve_groups(X, run.groups), min_cols=2, missing=privacy.missing
        )
    n, p = data.shape
    public_levels, levels, codes = resolve_group_codes(labels, run.group_labels, n)
    reused = run.directions
    _check_reused(reused, n, p, options.components)
    given = ScoreGiven(reused is not None, None if levels is None else len(levels))
    plan = plan_report_options(n, p, privacy, options, given, variables, design)
    checked = CheckedData(data, variables, ReportInputs(reused, public_levels, levels, codes))
    releases, notes = _execute_noting(
        plan, checked, run.budget, run.random_state, table_notes, stacklevel + 1
    )
    return _page(plan, releases, notes, run)


def _page(
    plan: ReportPlan, releases: ReportReleases, notes: tuple[str, ...], run: ReportRun
) -> Report:
    """The report of a plan's released results: its page, its own ledger and its cost."""
    parts = _page_parts(plan)
    facts = RunFacts(
        title=run.title,
        calibration=plan.privacy.calibration,
        shares=plan.shares,
        names=tuple(parts),
        missing_zero=plan.missing == "zero",
        command=run.command,
    )
    ledger = _page_ledger(plan.eps, plan.delta, parts)
    return _report(releases, ledger, plan.cost, notes, facts, run.out)


def _standardized_report(arguments: dict[str, Any]) -> Report:
    """``report(..., standardize=True)``: the page of one private PCA fit."""
    from .releases.standardized import refuse_options, standardized_report_releases

    fixed: tuple[str, ...] = ("groups", "group_labels", "shares", "directions", "scale")
    fixed += ("score_range", "design", "m")
    defaults = inspect.signature(report).parameters
    refuse_options("report", {n: (arguments[n], defaults[n].default) for n in fixed})
    names: tuple[str, ...] = ("eps", "delta", "k", "components", "bounds", "calibration")
    names += ("accuracy", "allow_large_delta")
    settings = {n: arguments[n] for n in (*names, "budget", "random_state", "missing", "dropna")}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fit = standardized_report_releases(arguments["X"], **settings)
    notes = []
    for w in caught:
        if issubclass(w.category, AccuracyWarning | PrivacyWarning | DataWarning):
            notes.append(str(w.message))
        warnings.warn(w.message, w.category, stacklevel=3)
    notes += fit.notes
    facts = RunFacts(
        title=arguments["title"],
        calibration=arguments["calibration"],
        shares=fit.split,
        names=tuple(fit.parts),
        missing_zero=check_missing(arguments["missing"], arguments["dropna"]) == "zero",
        command=arguments["command"],
    )
    releases = ReportReleases(fit.directions, fit.loading, fit.scree, fit.score)
    ledger = _page_ledger(fit.eps, fit.delta, fit.parts)
    return _report(releases, ledger, fit.cost, tuple(notes), facts, arguments["out"])


def _report(
    releases: ReportReleases,
    ledger: Budget,
    cost: PrivacyCost,
    notes: tuple[str, ...],
    facts: RunFacts,
    out: str | os.PathLike[str] | None,
) -> Report:
    """The report of the released results, its page written to ``out`` if given.

    ``ledger`` is the page's own ledger (one entry per name of
    ``facts.names``); ``cost`` is what the report spent and charged.
    """
    result = Report(
        html=render_html(releases, ledger, notes, facts),
        directions=releases.directions,
        loading=releases.loading,
        scree=releases.scree,
        score=releases.score,
        budget=ledger,
        cost=cost,
        notes=notes,
    )
    if out is not None:
        result.save(out)
    return result


_CALL_DEFAULTS: dict[str, Any] = {
    "k": None,
    "components": (1, 2),
    "groups": None,
    "groups_public": False,
    "calibration": "analytic",
    "bounds": None,
    "scale": None,
    "missing": "refuse",
}


def _python_call(arguments: Mapping[str, Any], **shown_as: Any) -> str:
    """``dppca.report(X, ...)`` with the options that differ from their defaults.

    ``arguments`` are the call's (its ``locals()``); ``shown_as`` replaces
    some of them with what the page shows instead. Only the public choices
    of :data:`_CALL_DEFAULTS` are listed; the seed and the budget never are,
    and values that stand for data (bounds, a label array) are shown as
    ``...``.
    """
    shown = [f"eps={arguments['eps']!r}", f"delta={arguments['delta']!r}"]
    for name, default in _CALL_DEFAULTS.items():
        value = shown_as[name] if name in shown_as else arguments[name]
        if value != default:
            shown.append(f"{name}={value}" if value == "..." else f"{name}={value!r}")
    return f"dppca.report(X, {', '.join(shown)})"


def _check_reused(
    directions: DirectionsResult | None, n: int, p: int, components: tuple[int, int]
) -> None:
    """A reused direction release must be private and made on this table's shape."""
    if directions is not None:
        resolve_directions(directions, p=p, k=max(components))  # a private release, p matches
        if directions.n != n:
            raise ValueError(f"X has {n} rows but the directions used n={directions.n}.")


def _execute_noting(
    plan: ReportPlan,
    data: CheckedData,
    budget: Accountant | None,
    random_state: RandomStateLike,
    earlier: Sequence[warnings.WarningMessage] = (),
    stacklevel: int = 3,
) -> tuple[ReportReleases, tuple[str, ...]]:
    """Run the report's plan; the accuracy, privacy and data warnings become page notes.

    ``earlier`` are the warnings of the table's check. Every warning is raised
    again as well, pointing ``stacklevel`` frames up (3: the caller's caller).
    """
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        releases: ReportReleases = execute(plan, data, budget=budget, random_state=random_state)
    notes = []
    for w in [*earlier, *caught]:
        if issubclass(w.category, AccuracyWarning | PrivacyWarning | DataWarning):
            notes.append(str(w.message))
        warnings.warn(w.message, w.category, stacklevel=stacklevel)
    return releases, tuple(notes)


def _page_parts(plan: ReportPlan) -> dict[str, PrivacyCost]:
    """The entries of a report's page ledger by name: the scales first, then each release."""
    parts = {}
    if plan.scales:
        # pure parts: their entry holds no delta (composed at delta 0, they sum)
        parts["scales"] = compose(list(plan.scales), released=f"private scales ({plan.p})")
    parts.update((name, sub.cost) for name, sub in plan.plans)
    return parts


def _page_ledger(eps: float, delta: float, parts: Mapping[str, PrivacyCost]) -> Budget:
    """The page's own ledger of (eps, delta): one entry per part, in order."""
    ledger = Budget(eps, delta)
    for cost in parts.values():
        ledger.spend(cost)
    return ledger


def _write_text(path: str | os.PathLike[str], text: str) -> Path:
    return write_text_atomically(path, text)
