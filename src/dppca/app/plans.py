"""Pricing a release in the app: data-free plans, forecasts in words, public bounds.

Also what the page keeps of a release made (:class:`Release`) and says with it.

Nothing here reads the data: a release is planned from the selection's shape
(n, p), the page's settings and the public bounds, so the cost and the
forecast shown before a release are free and as fast for 10^6 rows as for
100. No Shiny either.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, cast

import numpy as np
from numpy.typing import NDArray

from .._kinds import load, release_kind
from ..core.data_checks import check_bounds
from ..core.options import PrivacyOptions, evolve
from ..core.scalar_checks import check_positive_int
from ..core.validation import (
    check_bins_cap,
    check_delta_for_n,
    check_design,
    check_design_m,
)
from ..privacy.cost import PrivacyCost
from ..releases.directions.result import DirectionsResult
from ..releases.engine import ReleasePlan
from ..releases.forecast import Forecast
from ..releases.scaled import check_scale_settings, with_private_scales
from .data import DataError, Selection

__all__ = [
    "BOUNDS_HELP",
    "CLIPPED_NOTE",
    "PCA_SCORE",
    "Preview",
    "Release",
    "ReleaseRequest",
    "bounds_array",
    "describe_forecast",
    "directions_request",
    "page_sentence",
    "pca_request",
    "plan_request",
    "read_bound",
    "score_request",
    "scree_request",
]


@dataclass(frozen=True)
class Preview:
    """The price and accuracy forecast of a release, worked out before it runs.

    Both come from the release's data-free plan (n, p and the settings), so
    nothing of the data is read. ``cost`` and ``forecast`` are None when the
    settings are invalid (``message`` says why).
    """

    kind: str
    cost: PrivacyCost | None
    affordable: bool
    message: str
    warnings: tuple[str, ...] = ()
    forecast: Forecast | None = None
    bounds_given: bool = False
    details: tuple[str, ...] = ()  # a PCA fit's plan, as ``dppca pca --dry-run`` prints it

    @property
    def forecast_lines(self) -> tuple[str, ...]:
        """The forecast in plain sentences (empty for invalid settings)."""
        if self.forecast is None:
            return ()
        return describe_forecast(self.forecast, bounds_given=self.bounds_given)


@dataclass(frozen=True, eq=False)
class Release:
    """One private release made in the app, kept for re-drawing at no cost.

    ``forecast`` is the data-free forecast the release was made under;
    ``bounds`` the public bounds the data were clipped to, (p, 2), or None.
    """

    number: int
    kind: str
    result: Any
    cost: PrivacyCost
    settings: Mapping[str, Any]
    columns: tuple[str, ...]
    warnings: tuple[str, ...] = ()
    forecast: Forecast | None = None
    bounds: NDArray[np.float64] | None = None

    @property
    def notes(self) -> tuple[str, ...]:
        """What the page says with the result: the forecast and the clipping policy."""
        lines: tuple[str, ...] = ()
        if self.forecast is not None:
            lines += describe_forecast(
                self.forecast, bounds_given=self.bounds is not None, made=True
            )
        if self.bounds is not None:
            lines += (CLIPPED_NOTE,)
        return lines + check_lines(self.result)


def check_lines(result: Any) -> tuple[str, ...]:
    """What the post-release checks found (:mod:`dppca.releases.resolvability`, scree checks)."""
    holder = getattr(result, "directions_release", None) or getattr(result, "directions", None)
    check = getattr(result, "resolvability", None) or getattr(holder, "resolvability", None)
    scree = hasattr(result, "unpooled_values")  # a scree's variances stay right (no warning)
    problem = None if check is None or scree else check.problem()
    lines: tuple[str, ...] = (
        () if problem is None else (page_sentence(problem[0].upper() + problem[1:]),)
    )
    if getattr(result, "problems", ()):
        lines += ("Not an estimate: " + "; ".join(result.problems) + ".",)
    if getattr(result, "order_note", None):
        lines += (result.order_note[0].upper() + result.order_note[1:] + ".",)
    return lines


#: Said with every release made under public bounds. Never a count of the
#: clipped values: that count depends on individual rows and is not private.
CLIPPED_NOTE = (
    "The data were clipped to the public bounds before this release (a value below its "
    "lower bound counts as the bound, likewise above the upper bound). How many values "
    "were clipped is not shown: that count is not private."
)

BOUNDS_HELP = (
    "Optional: the range each variable can take, from a codebook, the units or an "
    "instrument's range (for example 0 to 120 for an age in years). Never read them off "
    "the data (its minimum and maximum): bounds taken from the data leak it. With bounds "
    "for every analysed variable, each release clips the data to them and gets its clip "
    "levels and plot frame from them for free; leave the table empty otherwise."
)


# The library's forecast names its own arguments; the page names its controls.
_PAGE_WORDS = (
    ("pass directions released earlier", "reuse the directions of a directions release"),
    ("a public ClippedControl(clip=...)", "a public clip level (method controls)"),
    ("give public bounds or frame=, or raise eps", "give public bounds or raise eps"),
    (" or split=ScreeSplit(clip=...)", ""),  # the page has no control for the clip share
    # the fit's note when it leaves its score plot out (dppca.releases.pca.plan)
    (
        "Give public scales= or bounds= (a codebook's) for a score plot, or score=True to "
        "release it with private scales anyway",
        "Give public bounds for every analysed variable (in the sidebar) for a score plot, "
        "or choose 'always' for the score plot to release it with private scales anyway",
    ),
    (
        "give public scales= or bounds= (a codebook's), or score=False",
        "give public bounds (in the sidebar), or choose 'never' for the score plot",
    ),
)


def page_sentence(text: str) -> str:
    text = text.strip()
    for library, page in _PAGE_WORDS:
        text = text.replace(library, page)
    return text[:1].upper() + text[1:] if text else text


def describe_forecast(
    forecast: Forecast, *, bounds_given: bool = False, made: bool = False
) -> tuple[str, ...]:
    """The forecast of a release in plain sentences, for the page.

    ``made`` words it for a release already made (shown with its result).
    """
    if forecast.ok:
        return (
            "Forecast: looks accurate (predicted from public settings only: n, p, eps, delta "
            "and the options; no data were read).",
        )
    head = "this picture is likely wrong" if made else "the picture would likely be wrong"
    lines = [f"Forecast: {head}. " + " ".join(page_sentence(t) for t in forecast.problems)]
    helps = ["more eps for this release"]
    if not bounds_given and forecast.release != "directions":
        helps.append("public bounds for every analysed variable (in the sidebar)")
    helps.append("more rows")
    lines.append("What would help: " + ", ".join(helps[:-1]) + " or " + helps[-1] + ".")
    if made:
        lines.append("Check it before publishing it: it may show mostly noise.")
    else:
        lines.append("The release is allowed; its result will carry this warning.")
    return tuple(lines)


@dataclass(frozen=True, eq=False)
class ReleaseRequest:
    """A release's data-free plan (no data read) and what its run reads besides the table.

    ``inputs`` go to :func:`dppca.releases.engine.execute` with the data: a kept
    directions release to reuse, the group labels and their public list.
    """

    kind: str
    plan: ReleasePlan
    inputs: Mapping[str, Any]
    bounds: NDArray[np.float64] | None


def plan_request(
    kind: str,
    params: Mapping[str, Any],
    sel: Selection,
    box: NDArray[np.float64] | None,
    directions: DirectionsResult | None,
) -> ReleaseRequest:
    """Check a release's settings and plan it from n, p and them alone.

    ``box`` are the public bounds, ``directions`` a kept private directions
    release to reuse (when the settings ask for reuse). Reads the
    selection's shape, never its data. The shared settings become one
    :class:`~dppca.core.options.PrivacyOptions`, checked here once; the
    kind's entry in :data:`dppca._kinds.KINDS` names the function that
    builds the rest and plans it (``pca_request``, ``directions_request``,
    ``scree_request``, ``score_request``).
    """
    try:
        tab = release_kind(kind).tab
    except KeyError:
        tab = None
    if tab is None:
        raise DataError(f"unknown release kind {kind!r}.")
    opts = dict(params)
    # ties="zero": rows that (almost) coincide contribute nothing to the Kendall
    # matrix instead of stopping the release, which keeps the guarantee and
    # avoids an error that depends on the data. The page shows the forecast
    # itself, so the release need not warn again (accuracy="ignore").
    privacy = PrivacyOptions(
        eps=opts.pop("eps"),
        delta=opts.pop("delta"),
        calibration=opts.pop("calibration", "analytic"),
        ties="zero",
        bounds=box,
        accuracy="ignore",
        scale=opts.pop("scale", None) or None,
        missing=sel.missing,
    )
    check_delta_for_n(privacy.delta, sel.n)
    request: Callable[..., ReleaseRequest] = load(tab.request)
    return request(sel, opts, privacy, box, directions)


#: The PCA tab's choices of the score plot, as ``dp_pca(score=...)``.
PCA_SCORE = {"auto": None, "yes": True, "no": False}


def pca_request(
    sel: Selection,
    opts: Mapping[str, Any],
    privacy: PrivacyOptions,
    box: NDArray[np.float64] | None,
    directions: DirectionsResult | None,
) -> ReleaseRequest:
    """The plan of one private PCA fit (:func:`dppca.releases.pca.plan.plan_pca_options`).

    The options of :func:`dppca.dp_pca` from the page's settings, the
    selection's shape and the public bounds; the fit reads only the table
    (no inputs besides it, and no kept directions).
    """
    from ..releases.pca.options import PCAOptions
    from ..releases.pca.plan import plan_pca_options
    from ..releases.pca.split import PCASplit

    score = opts.get("score", "auto")
    if score not in PCA_SCORE:
        raise DataError(f"the score plot setting must be one of {', '.join(PCA_SCORE)}.")
    weights = {name: w for name, w in dict(opts.get("split") or {}).items() if w is not None}
    components = tuple(int(c) for c in opts.get("components", (1, 2)))
    options = PCAOptions(
        standardize=bool(opts.get("standardize", True)),
        k=opts.get("k"),
        components=cast("tuple[int, int]", components),
        score=PCA_SCORE[score],
        split=PCASplit(**weights),
    )
    # the page shows the forecast and the fit's notes itself (accuracy="ignore")
    plan = plan_pca_options(sel.n, len(sel.columns), privacy, options, tuple(sel.columns))
    return ReleaseRequest("pca", plan, {}, box)


def directions_request(
    sel: Selection,
    opts: Mapping[str, Any],
    privacy: PrivacyOptions,
    box: NDArray[np.float64] | None,
    directions: DirectionsResult | None,
) -> ReleaseRequest:
    """The plan of a directions release: all p directions, so every pair of PCs can be drawn."""
    from ..core.options import DirectionsOptions, LoadingOptions
    from ..releases.loading.plan import plan_loading_options

    n, p = sel.n, len(sel.columns)
    design = opts.get("design")  # None: the library's rule on the public n and p
    if design is not None:
        design = check_design(design)
    m = check_design_m(None, n) if design == "balanced" else None
    options = DirectionsOptions(design=design, m=m, estimator=opts.get("estimator", "kendall"))
    plan = plan_loading_options(n, p, privacy, options, LoadingOptions(), tuple(sel.columns))
    return ReleaseRequest("directions", plan, {}, box)


def _reused(
    opts: dict[str, Any], privacy: PrivacyOptions, directions: DirectionsResult | None
) -> DirectionsResult | None:
    """The kept directions a scree or score release reuses, or None."""
    if not opts.pop("reuse_directions", True) or privacy.scale == "private":
        return None  # directions released on other units cannot serve a privately scaled table
    return directions


def _scaled_request(
    kind: str,
    sel: Selection,
    privacy: PrivacyOptions,
    box: NDArray[np.float64] | None,
    plan_at: Callable[[PrivacyOptions], ReleasePlan],
    inputs: Mapping[str, Any],
) -> ReleaseRequest:
    """A scree or score request: ``plan_at(privacy)``, after the private scales if asked.

    The option objects are built once by the caller; each step of the
    private-scale stretch derives its privacy settings with ``evolve``.
    """
    inner = evolve(privacy, scale=None)  # the scales are a part of their own
    plan = with_private_scales(
        lambda e: plan_at(evolve(inner, eps=e)), privacy.eps, privacy.scale, tuple(sel.columns)
    )
    return ReleaseRequest(kind, plan, inputs, box)


def scree_request(
    sel: Selection,
    opts: Mapping[str, Any],
    privacy: PrivacyOptions,
    box: NDArray[np.float64] | None,
    directions: DirectionsResult | None,
) -> ReleaseRequest:
    """The plan of a scree release and the inputs (kept directions) it runs with."""
    from ..releases.scree.options import ScreeOptions
    from ..releases.scree.plan import plan_scree_options

    opts = dict(opts)
    directions = _reused(opts, privacy, directions)
    # a scree or score on private scales cannot also clip to bounds in the data's units
    check_scale_settings(privacy.scale, bounds=box, directions=None)
    methods, control = _scree_methods(opts)
    options = ScreeOptions(
        k=opts.get("k"), method=methods, control=control, mono=bool(opts.get("mono", True))
    )
    n, p, columns = sel.n, len(sel.columns), tuple(sel.columns)
    given = directions is not None

    def plan_at(privacy: PrivacyOptions) -> ReleasePlan:
        return plan_scree_options(n, p, privacy, options, given, columns)

    return _scaled_request("scree", sel, privacy, box, plan_at, {"directions": directions})


def score_request(
    sel: Selection,
    opts: Mapping[str, Any],
    privacy: PrivacyOptions,
    box: NDArray[np.float64] | None,
    directions: DirectionsResult | None,
) -> ReleaseRequest:
    """The plan of a score release and the inputs (directions, groups) it runs with."""
    from ..releases.score.options import ScoreOptions
    from ..releases.score.plan import plan_score_options
    from ..releases.score.settings import ScoreGiven

    opts = dict(opts)
    directions = _reused(opts, privacy, directions)
    check_scale_settings(privacy.scale, bounds=box, directions=None)
    methods = list(opts.get("methods", ("add",)))
    if not methods:
        raise DataError("choose at least one histogram method.")
    bins = opts.get("bins")
    check_bins_cap(bins)
    use_groups = bool(opts.get("use_groups", True)) and sel.groups is not None
    _check_groups(sel, sel.n, use_groups)
    options = ScoreOptions(
        bins=bins,
        components=tuple(opts.get("components", (1, 2))),
        method=methods,
        groups_public=sel.groups_public if use_groups else False,
    )
    groups = sel.n_groups if use_groups else None
    given = ScoreGiven(
        directions=directions is not None,
        groups=None if groups is None else check_positive_int(groups, "groups"),
    )
    n, p, columns = sel.n, len(sel.columns), tuple(sel.columns)

    def plan_at(privacy: PrivacyOptions) -> ReleasePlan:
        return plan_score_options(n, p, privacy, options, given, columns)

    inputs = {
        "directions": directions,
        "groups": sel.groups if use_groups else None,
        "group_labels": sel.group_labels if use_groups else None,
    }
    return _scaled_request("score", sel, privacy, box, plan_at, inputs)


def bounds_array(
    entries: Mapping[str, tuple[float | None, float | None]], columns: Sequence[str]
) -> NDArray[np.float64] | None:
    """The public bounds of ``columns`` as a (p, 2) array, or None if none is filled.

    Raises
    ------
    DataError
        When only some cells are filled (every analysed variable needs
        both values, or none has any) or the values are invalid
        (:func:`dppca.core.validation.check_bounds`).
    """
    columns = tuple(columns)
    cells = {c: entries.get(c, (None, None)) for c in columns}
    if all(lo is None and hi is None for lo, hi in cells.values()):
        return None
    missing = [c for c, (lo, hi) in cells.items() if lo is None or hi is None]
    if missing:
        shown = ", ".join(missing[:5]) + (", ..." if len(missing) > 5 else "")
        raise DataError(
            f"the public bounds table is only partly filled (missing for {shown}): every "
            "analysed variable needs both a lower and an upper value, or leave the "
            "whole table empty."
        )
    try:
        box = check_bounds({c: cells[c] for c in columns}, columns)
    except (TypeError, ValueError) as exc:
        raise DataError(f"public bounds: {exc}") from None
    assert box is not None
    return np.column_stack(box)


def read_bound(value: object, name: object, side: str) -> float | None:
    """One cell of the bounds table: None when blank, else a float."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    if isinstance(value, bool):
        raise DataError(f"the {side} bound of {name!r} must be a number; got {value!r}.")
    try:
        out = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise DataError(f"the {side} bound of {name!r} must be a number; got {value!r}.") from None
    return None if math.isnan(out) else out


def _check_groups(sel: Selection, n: int, use_groups: bool) -> None:
    """The library's refusal of an identifier-like group column, from the label count."""
    if not use_groups or sel.n_groups is None:
        return
    from ..core.score_checks import check_group_count

    levels = tuple(range(sel.n_groups))
    try:
        check_group_count(levels, levels, n)
    except ValueError as exc:
        raise DataError(str(exc)) from None


def _scree_methods(opts: Mapping[str, Any]) -> tuple[list[str], dict[str, Any] | None]:
    """The scree methods chosen on the page and their controls."""
    from ..releases.scree.controls import ClippedControl, HuberControl, PMWMControl

    methods = list(opts.get("methods", ("clipped",)))
    if not methods:
        raise DataError("choose at least one scree method.")
    control: dict[str, Any] = {}
    if "clipped" in methods and opts.get("clip") is not None:
        control["clipped"] = ClippedControl(clip=opts["clip"])
    if "pmwm" in methods:
        control["pmwm"] = PMWMControl(split=bool(opts.get("pmwm_split", True)))
    if "huber" in methods:
        control["huber"] = HuberControl(m2_frac=float(opts.get("huber_m2_frac", 0.25)))
    return methods, control or None
