"""The app's logic without any user interface: data, budget, releases.

Everything a browser session does to the data goes through :class:`AppState`:
loading a table (its budget lives in a :class:`~dppca.ledger.Ledger`, keyed
by the table's fingerprint, so every session of the app and every restart
sees the same spending), choosing its columns and public bounds, pricing and
forecasting a release from its data-free plan before it runs, running it
through the budget and keeping it so that every later plot of it is
post-processing. The Shiny layer
(:mod:`dppca.app.ui`) only reads and calls this module, which imports no
Shiny, so it is tested without a browser.
"""

from __future__ import annotations

import math
import os
import threading
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from .._validation import (
    check_bins_cap,
    check_bounds,
    check_delta,
    check_delta_for_n,
    check_design,
    check_design_m,
    check_eps,
    post_processing_rng,
)
from ..accounting import Budget, PrivacyCost
from ..datasets import DATASETS, load_dataset
from ..directions import DirectionsResult, plan_directions
from ..forecast import Forecast
from ..ledger import Ledger, LedgerBudget, LedgerError, frame_fingerprint
from ..loading import dp_loading

__all__ = [
    "DEFAULT_EPS",
    "DEFAULT_SHARES",
    "MAX_UPLOAD_BYTES",
    "RELEASE_KINDS",
    "AppState",
    "DataError",
    "Preview",
    "Release",
    "Selection",
    "default_delta",
    "describe_forecast",
    "numeric_columns",
    "parse_labels",
    "read_csv_upload",
    "select_data",
]

#: Largest accepted upload, in bytes.
MAX_UPLOAD_BYTES = 20 * 1024 * 1024
#: Total epsilon offered for a newly loaded dataset.
DEFAULT_EPS = 1.0
#: What the app can release, one tab each.
RELEASE_KINDS = ("directions", "scree", "score")
#: Share of the dataset's total budget suggested for each kind of release.
DEFAULT_SHARES: Mapping[str, float] = {"directions": 0.4, "scree": 0.3, "score": 0.3}


class DataError(ValueError):
    """A data or settings problem, worded for the page (no traceback)."""


# Releases of one dataset run one at a time within the process (the ledger's
# transaction already makes overspending impossible across processes; this
# lock also avoids computing a release that would be refused at the end).
_RELEASE_LOCKS: dict[tuple[str, str], threading.Lock] = {}
_LOCKS_GUARD = threading.Lock()


def _release_lock(ledger: Ledger, fp: str) -> threading.Lock:
    key = (str(ledger.path) + ("" if str(ledger.path) != ":memory:" else f"@{id(ledger)}"), fp)
    with _LOCKS_GUARD:
        return _RELEASE_LOCKS.setdefault(key, threading.Lock())


# ----------------------------------------------------------------------------- data


def default_delta(n: int) -> float:
    """A conservative default delta for ``n`` rows: ``n ** -1.1`` rounded down.

    The value is rounded down to one significant digit, so it is always
    below ``1 / n`` (a delta near ``1 / n`` allows releasing a row outright).

    Examples
    --------
    >>> default_delta(5000)
    8e-05
    >>> default_delta(100)
    0.006
    """
    if n < 2:
        raise ValueError(f"n must be at least 2; got {n}.")
    target = float(n) ** -1.1
    exponent = math.floor(math.log10(target))
    digit = math.floor(target / 10.0**exponent)
    value = float(f"{digit}e{exponent}")
    while value > target:  # guard against rounding in the last digit
        digit -= 1
        value = float(f"{digit}e{exponent}") if digit > 0 else float(f"9e{exponent - 1}")
    return value


def numeric_columns(frame: pd.DataFrame) -> list[str]:
    """Names of the real-valued columns (booleans and complex numbers excluded)."""
    return [
        str(c)
        for c in frame.columns
        if pd.api.types.is_numeric_dtype(frame[c])
        and not pd.api.types.is_bool_dtype(frame[c])
        and not pd.api.types.is_complex_dtype(frame[c])
    ]


def _megabytes(size: int) -> str:
    return f"{size / 1024 / 1024:.3g} MB"


def read_csv_upload(
    path: str | os.PathLike[str],
    *,
    name: str | None = None,
    size: int | None = None,
    limit: int = MAX_UPLOAD_BYTES,
) -> pd.DataFrame:
    """Read an uploaded CSV file, or raise :class:`DataError` with a readable reason.

    Parameters
    ----------
    path : path-like
        Where the upload was stored.
    name : str, optional
        The file name the user chose (shown in messages); default the path's name.
    size : int, optional
        Its size in bytes as reported by the browser. The larger of it and
        the measured size is checked, so a browser cannot understate it.
    limit : int, default=MAX_UPLOAD_BYTES
        Largest accepted size; checked before the file is parsed.

    Returns
    -------
    pandas.DataFrame
        With at least one row and one numeric column.
    """
    name = os.path.basename(os.fspath(path)) if name is None else str(name)
    if not name.lower().endswith(".csv"):
        raise DataError(f"{name!r} is not a CSV file: choose a file whose name ends in .csv.")
    # The bytes actually stored count, whatever size the browser declared.
    measured = os.path.getsize(path)
    size = measured if size is None else max(int(size), measured)
    if size > limit:
        raise DataError(
            f"{name!r} is too large ({_megabytes(size)}); the limit is {_megabytes(limit)}."
        )
    if size == 0:
        raise DataError(f"{name!r} is empty.")
    with open(path, "rb") as fh:
        head = fh.read(8192)
    if b"\x00" in head:
        raise DataError(f"{name!r} is not a text CSV file (it holds binary data).")
    from .._io import _raw_header, sniff_csv_layout
    from .._validation import check_unique_columns

    # European files (semicolons, decimal commas) are recognised and read as such.
    sep, decimal = sniff_csv_layout(path)
    try:
        check_unique_columns(_raw_header(path, sep), repr(name))
        frame = pd.read_csv(path, sep=sep, decimal=decimal)
    except pd.errors.EmptyDataError:
        raise DataError(f"{name!r} is empty.") from None
    except (pd.errors.ParserError, UnicodeDecodeError, ValueError) as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise DataError(f"{name!r} could not be read as CSV: {first}") from None
    if frame.shape[0] == 0:
        raise DataError(f"{name!r} has a header but no rows.")
    if not numeric_columns(frame):
        raise DataError(
            f"{name!r} has no numeric columns; the analysis needs at least two columns "
            "of numbers (check the separator: it must be a comma)."
        )
    return frame


@dataclass(frozen=True, eq=False)
class Selection:
    """The analysed part of a table: numeric columns and optional group labels."""

    X: pd.DataFrame
    groups: np.ndarray | None = None
    group_column: str | None = None
    groups_public: bool = False
    group_labels: tuple[str, ...] | None = None
    #: Number of groups a score release would show (public list or labels found).
    n_groups: int | None = None
    # The shape is read once here, so pricing a release never touches the data.
    _n: int = field(init=False, repr=False)
    _columns: tuple[str, ...] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_n", int(self.X.shape[0]))
        object.__setattr__(self, "_columns", tuple(str(c) for c in self.X.columns))

    @property
    def n(self) -> int:
        """Number of rows."""
        return self._n

    @property
    def columns(self) -> tuple[str, ...]:
        """The analysed columns, in order."""
        return self._columns


def select_data(
    frame: pd.DataFrame,
    columns: Sequence[str],
    *,
    group: str | None = None,
    groups_public: bool = False,
    group_labels: Sequence[str] | str | None = None,
) -> Selection:
    """Check a choice of columns and return what the analysis will use.

    Raises :class:`DataError` when fewer than two numeric columns are chosen,
    when the group column is also an analysed column, or when a chosen column
    has missing values, or the group column has missing labels and no public
    list of labels is given. ``group_labels`` (a sequence or comma-separated
    text; empty means none) is the public list of possible labels: then the
    released label set is that list, and rows with other labels belong to no
    group. The message names the columns
    only: the app runs on the data holder's machine, for the data holder.
    """
    columns = [str(c) for c in columns]
    numeric = set(numeric_columns(frame))
    unknown = [c for c in columns if c not in frame.columns]
    if unknown:
        raise DataError(f"unknown column(s): {', '.join(unknown)}.")
    not_numeric = [c for c in columns if c not in numeric]
    if not_numeric:
        raise DataError(f"column(s) {', '.join(not_numeric)} are not numeric.")
    if len(columns) < 2:
        raise DataError("choose at least two numeric columns.")
    if group is not None and group in columns:
        raise DataError(
            f"the group column {group!r} is also an analysed column; remove it from one of them."
        )
    X = frame[columns]
    bad = [c for c in columns if not np.isfinite(X[c].to_numpy(dtype=np.float64)).all()]
    if bad:
        raise DataError(
            f"column(s) {', '.join(bad)} have missing (NaN) or infinite values; remove those "
            "rows from the file or choose other columns."
        )
    if X.shape[0] < 4:
        raise DataError(f"the data need at least 4 rows; got {X.shape[0]}.")
    labels = None
    public_labels = parse_labels(group_labels)
    if group is not None:
        if group not in frame.columns:
            raise DataError(f"unknown group column {group!r}.")
        if public_labels is None and frame[group].isna().any():
            raise DataError(
                f"the group column {group!r} has missing labels; give the public list of "
                "labels (rows with a missing label then belong to no group)."
            )
        labels = frame[group].astype(str).to_numpy()
    n_groups = None
    if labels is not None:
        n_groups = len(public_labels) if public_labels is not None else len(pd.unique(labels))
    return Selection(
        X=X.reset_index(drop=True),
        groups=labels,
        group_column=group,
        groups_public=bool(groups_public) and group is not None,
        group_labels=public_labels if group is not None else None,
        n_groups=n_groups,
    )


def parse_labels(group_labels: Sequence[str] | str | None) -> tuple[str, ...] | None:
    """A public list of group labels from a sequence or comma-separated text (None if empty)."""
    if group_labels is None:
        return None
    items = group_labels.split(",") if isinstance(group_labels, str) else list(group_labels)
    labels = tuple(str(x).strip() for x in items if str(x).strip())
    if not labels:
        return None
    if len(set(labels)) != len(labels):
        raise DataError("the list of group labels names a label twice.")
    return labels


# ------------------------------------------------------------------------- releases


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
    (", or raise trace_share", ""),
)


def _sentence(text: str) -> str:
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
    lines = [f"Forecast: {head}. " + " ".join(_sentence(t) for t in forecast.problems)]
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
class _Request:
    """A release's validated settings and its data-free plan (no data read)."""

    kind: str
    plan: Any
    options: Mapping[str, Any]
    bounds: NDArray[np.float64] | None


def _fmt_cost(cost: PrivacyCost) -> str:
    return f"eps = {cost.eps:.4g}, delta = {cost.delta:.3g}"


class AppState:
    """One analyst's session: a dataset, its budget and the releases made from it.

    Parameters
    ----------
    random_state : None or numpy.random.Generator, default=None
        Source of the noise for every release. None (what the app uses) draws
        fresh OS entropy each time; tests pass a generator.
    ledger : Ledger, optional
        Where budgets are kept; the app passes one ledger to all its sessions.
        Default: a ledger in memory, private to this object.

    Notes
    -----
    Privacy: each dataset has one budget in the ledger, keyed by the
    fingerprint of its numeric columns (all of them: analysing other columns
    of the same table spends from the same budget, as the rows are the same
    people). Loading the same table again, in this session or another one, or
    after a restart, finds the same budget and what was spent from it. The
    total is set before the first release and fixed afterwards. A release is priced first
    (:meth:`preview`), refused if the remaining budget cannot pay for it, and
    recorded in the ledger once made. Plots, tables and samples drawn from a
    kept release read only released values, so they cost nothing. Scree and
    score releases reuse the latest private directions of the same columns
    when asked, so the directions are paid for once. Choosing other columns of
    the same table keeps the same budget (the rows are the same people).
    """

    def __init__(
        self, *, random_state: np.random.Generator | None = None, ledger: Ledger | None = None
    ) -> None:
        self._rng = random_state
        self.ledger = Ledger(":memory:") if ledger is None else ledger
        self.data_name: str | None = None
        self.frame: pd.DataFrame | None = None
        self.fingerprint: str | None = None
        self.selection: Selection | None = None
        self.budget: LedgerBudget | None = None
        self.releases: list[Release] = []
        self.generation = 0  # bumped whenever the dataset changes
        # public bounds typed into the page: variable -> (lower, upper), None if blank
        self.bounds_entries: dict[str, tuple[float | None, float | None]] = {}

    # -- data and budget -------------------------------------------------------------
    def load(self, name: str, frame: pd.DataFrame) -> str | None:
        """Start on a table: its budget from the ledger (a new table gets the default
        total), no kept releases in this session.

        All numeric columns are chosen; if they cannot be analysed together
        (for example one has missing values) the reason is returned and no
        columns are chosen yet.
        """
        if not isinstance(frame, pd.DataFrame) or frame.shape[0] < 2:
            raise DataError("the data need at least two rows.")
        from .._validation import check_unique_columns

        try:
            check_unique_columns(list(frame.columns), repr(str(name)))
        except ValueError as exc:
            raise DataError(str(exc)) from None
        if not numeric_columns(frame):
            raise DataError(f"{name!r} has no numeric columns.")
        fp = frame_fingerprint(frame)
        try:
            delta = default_delta(int(frame.shape[0]))
            self.ledger.ensure_total(fp, DEFAULT_EPS, delta, name=name)
        except LedgerError as exc:
            raise DataError(str(exc)) from None
        self.data_name = str(name)
        self.frame = frame
        self.fingerprint = fp
        self.budget = self.ledger.budget(fp, name=self.data_name)
        self.releases = []
        self.generation += 1
        self.selection = None
        self.bounds_entries = {}  # another table: its variables mean other things
        try:
            self.select(numeric_columns(frame))
        except DataError as exc:
            return str(exc)
        return None

    def load_bundled(self, name: str) -> None:
        """Load one of :data:`dppca.datasets.DATASETS`."""
        if name not in DATASETS:
            raise DataError(f"unknown bundled dataset {name!r}.")
        self.load(name, load_dataset(name))

    def select(
        self,
        columns: Sequence[str],
        *,
        group: str | None = None,
        groups_public: bool = False,
        group_labels: Sequence[str] | str | None = None,
    ) -> Selection:
        """Choose the analysed columns (and group column) of the loaded table."""
        if self.frame is None:
            raise DataError("load a dataset first.")
        self.selection = select_data(
            self.frame, columns, group=group, groups_public=groups_public,
            group_labels=group_labels,
        )  # fmt: skip
        return self.selection

    def set_budget(self, eps: float, delta: float) -> None:
        """Set the dataset's total budget; allowed only before the first release."""
        if self.budget is None:
            raise DataError("load a dataset first.")
        try:
            eps, delta = check_eps(eps), check_delta(delta)
        except (TypeError, ValueError) as exc:
            raise DataError(str(exc)) from None
        try:
            self.ledger.set_total(self.budget.fp, eps, delta, name=self.data_name)
        except LedgerError:
            raise DataError(
                "the total budget is fixed once a release has been made from this dataset."
            ) from None

    @property
    def locked(self) -> bool:
        """Whether the total budget is fixed (something has been spent)."""
        return bool(self.budget is not None and self.ledger.version(self.budget.fp)[0])

    def ledger_version(self) -> tuple[int, int]:
        """Changes whenever anything is charged to this dataset (by any session)."""
        if self.budget is None:
            return (0, 0)
        return self.ledger.version(self.budget.fp)

    def suggested(self, kind: str) -> tuple[float, float]:
        """A default (eps, delta) for a release: its share of the dataset's total."""
        if self.budget is None:
            raise DataError("load a dataset first.")
        share = DEFAULT_SHARES[kind]
        return self.budget.eps * share, self.budget.delta * share

    # -- releases --------------------------------------------------------------------
    def reusable_directions(self) -> DirectionsResult | None:
        """The latest private directions of the currently chosen columns, if any."""
        if self.selection is None:
            return None
        for rel in reversed(self.releases):
            if rel.kind == "directions" and rel.columns == self.selection.columns:
                return _directions_of(rel.result)
        return None

    def latest(self, kind: str) -> Release | None:
        """The most recent release of ``kind``."""
        for rel in reversed(self.releases):
            if rel.kind == kind:
                return rel
        return None

    # -- public bounds ---------------------------------------------------------------
    def set_bounds(self, entries: Mapping[str, Sequence[object]] | None) -> None:
        """Keep public bounds typed into the page's table.

        ``entries`` maps a variable to ``(lower, upper)``; a blank (None, ""
        or NaN) is an empty cell. Variables not named keep their entries;
        None empties the whole table. The values are checked as a whole
        when a release is priced or made (:meth:`public_bounds`).
        """
        if entries is None:
            self.bounds_entries = {}
            return
        out = dict(self.bounds_entries)
        for name, pair in entries.items():
            values = tuple(pair)
            if len(values) != 2:
                raise DataError(f"the bounds of {name!r} need a lower and an upper value.")
            out[str(name)] = (
                _bound_value(values[0], name, "lower"),
                _bound_value(values[1], name, "upper"),
            )
        self.bounds_entries = out

    def public_bounds(self) -> NDArray[np.float64] | None:
        """The public bounds of the analysed columns, (p, 2), or None if the table is empty.

        Raises
        ------
        DataError
            When only some cells are filled (every analysed variable needs
            both values, or none has any) or the values are invalid
            (:func:`dppca._validation.check_bounds`).
        """
        if self.selection is None:
            return None
        columns = self.selection.columns
        cells = {c: self.bounds_entries.get(c, (None, None)) for c in columns}
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

    def bounds_status(self) -> tuple[str, str]:
        """A line about the bounds for the page, and its kind (secondary, success, danger)."""
        try:
            box = self.public_bounds()
        except DataError as exc:
            return (_sentence(str(exc)), "danger")
        if box is None:
            return (
                "No public bounds: each release finds the ranges it needs privately, "
                "from its own eps.",
                "secondary",
            )
        return (
            f"Public bounds set for all {box.shape[0]} analysed variables: every release "
            "clips the data to them first.",
            "success",
        )

    # -- releases, priced from plans ---------------------------------------------------
    def _request(self, kind: str, params: Mapping[str, Any]) -> _Request:
        """Check the settings and plan the release from n, p and them alone.

        Reads the selection's shape, the bounds table and the kept releases,
        never the data.
        """
        if self.selection is None:
            raise DataError("load a dataset and choose at least two numeric columns first.")
        sel = self.selection
        n, p = sel.n, len(sel.columns)
        opts = dict(params)
        eps, delta = check_eps(opts.pop("eps")), check_delta(opts.pop("delta"))
        check_delta_for_n(delta, n)
        money = {"eps": eps, "delta": delta, "calibration": opts.pop("calibration", "analytic")}
        box = self.public_bounds()
        directions = self.reusable_directions() if opts.pop("reuse_directions", True) else None
        if kind == "directions":
            design = check_design(opts.get("design", "exact"))
            m = check_design_m(None, n) if design == "balanced" else None
            plan: Any = plan_directions(n, p, design=design, m=m, **money)
            return _Request(kind, plan, {"design": design}, box)
        if kind == "scree":
            from ..scree import plan_scree

            methods, control = _scree_methods(opts)
            k = opts.get("k")
            plan = plan_scree(
                n, p, k, method=methods, control=control,
                directions_given=directions is not None, bounds=box, **money,
            )  # fmt: skip
            options = {
                "k": k, "method": methods, "control": control, "directions": directions,
                "mono": bool(opts.get("mono", True)),
            }  # fmt: skip
            return _Request(kind, plan, options, box)
        if kind == "score":
            from ..score import plan_score

            methods = list(opts.pop("methods", ("add",)))
            if not methods:
                raise DataError("choose at least one histogram method.")
            bins = opts.get("bins")
            check_bins_cap(bins)
            use_groups = bool(opts.get("use_groups", True)) and sel.groups is not None
            _check_groups(sel, n, use_groups)
            components = tuple(opts.get("components", (1, 2)))
            groups_public = sel.groups_public if use_groups else False
            plan = plan_score(
                n, p, bins=bins, components=components, method=methods,
                directions_given=directions is not None,
                groups=sel.n_groups if use_groups else None, groups_public=groups_public,
                bounds_given=box is not None, **money,
            )  # fmt: skip
            options = {
                "bins": bins, "components": components, "method": methods,
                "directions": directions, "groups": sel.groups if use_groups else None,
                "groups_public": groups_public,
                "group_labels": sel.group_labels if use_groups else None,
            }  # fmt: skip
            return _Request(kind, plan, options, box)
        raise DataError(f"unknown release kind {kind!r}.")

    def _run(self, req: _Request, params: Mapping[str, Any], budget: Budget) -> Any:
        """Make the planned release from the data."""
        assert self.selection is not None
        X = self.selection.X
        # ties="zero": rows that (almost) coincide contribute nothing to the
        # Kendall matrix instead of stopping the release, which keeps the
        # guarantee and avoids an error that depends on the data. The page
        # shows the forecast itself, so the library need not warn again.
        common = {
            "eps": params["eps"], "delta": params["delta"],
            "calibration": params.get("calibration", "analytic"), "ties": "zero",
            "random_state": self._rng, "budget": budget, "bounds": req.bounds,
            "accuracy": "ignore",
        }  # fmt: skip
        if req.kind == "directions":
            return _release_directions(X, **req.options, **common)
        if req.kind == "scree":
            from ..scree import dp_scree

            opts = dict(req.options)
            return dp_scree(X, opts.pop("k"), **opts, **common)
        from ..score import dp_score

        return dp_score(X, **req.options, **common)

    def preview(self, kind: str, **params: Any) -> Preview:
        """Price and forecast a release with the current settings, without running it.

        Both come from the release's data-free plan (n, p, the settings and
        the public bounds): the data are not read, so the preview is as
        fast for a million rows as for a hundred.
        """
        if self.budget is None or self.selection is None:
            return Preview(
                kind, None, False, "Load a dataset and choose at least two usable columns first."
            )
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                req = self._request(kind, params)
            except (DataError, TypeError, ValueError) as exc:
                return Preview(kind, None, False, f"Invalid settings: {exc}")
        cost = req.plan.cost
        notes = tuple(dict.fromkeys(str(w.message) for w in caught))
        sel = self.selection
        if (
            kind == "score"
            and params.get("use_groups", True)
            and sel.groups is not None
            and sel.group_labels is None
            and not sel.groups_public
        ):
            notes += (
                "the set of group labels found in the data is released as it is (not "
                "private); give the public list of labels in the data panel to avoid that.",
            )
        eps_left, delta_left = self.budget.remaining
        extra = {"forecast": req.plan.forecast, "bounds_given": req.bounds is not None}
        if self.budget.can_afford(cost):
            message = (
                f"This release will cost {_fmt_cost(cost)}. Remaining before it: "
                f"eps = {eps_left:.4g}, delta = {delta_left:.3g}."
            )
            return Preview(kind, cost, True, message, notes, **extra)
        message = (
            f"This release would cost {_fmt_cost(cost)}, but only eps = {eps_left:.4g}, "
            f"delta = {delta_left:.3g} remain: it will be refused. Lower its eps/delta or "
            "re-draw an existing release (free)."
        )
        return Preview(kind, cost, False, message, notes, **extra)

    def release(self, kind: str, **params: Any) -> Release:
        """Run a release through the budget and keep it.

        Raises
        ------
        BudgetExceededError
            If the budget cannot pay for it (nothing is computed or spent).
        DataError, TypeError, ValueError
            For invalid settings or data.
        """
        if self.budget is None or self.selection is None:
            raise DataError("load a dataset and choose its columns first.")
        settings = dict(params)
        budget = self.ledger.budget(self.budget.fp, kind=kind, name=self.data_name)
        with _release_lock(self.ledger, self.budget.fp):
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                req = self._request(kind, params)
                try:
                    result = self._run(req, params, budget)
                except LedgerError as exc:
                    raise DataError(str(exc)) from None
        cost = result.cost
        rel = Release(
            number=budget.last_release or len(self.releases) + 1,
            kind=kind,
            result=result,
            cost=cost,
            settings=settings,
            columns=self.selection.columns,
            warnings=tuple(dict.fromkeys(str(w.message) for w in caught)),
            forecast=req.plan.forecast,
            bounds=req.bounds,
        )
        self.releases.append(rel)
        return rel

    def sample(
        self, release: Release, *, method: str | None = None, size: int | None = None
    ) -> pd.DataFrame:
        """Synthetic points from a score release (post-processing, no cost)."""
        from ..score import sample_points

        if release.kind != "score":
            raise DataError("synthetic samples come from a score release.")
        post = post_processing_rng(self._rng)  # never the noise's stream
        return sample_points(release.result, method=method, size=size, random_state=post)

    # -- ledger ----------------------------------------------------------------------
    def ledger_frame(self) -> pd.DataFrame:
        """The dataset's ledger (every session, every run): one row per elementary
        part of each release, oldest first.

        Columns: release, time (UTC), dataset, kind, released, mechanism, eps, delta.
        """
        if self.budget is None:
            columns = [
                "release", "time", "dataset", "kind", "released", "mechanism", "eps", "delta",
            ]  # fmt: skip
            return pd.DataFrame(columns=columns)
        return self.ledger.entries(self.budget.fp)

    def release_summary(self) -> pd.DataFrame:
        """One row per release of the dataset: number, kind, eps, delta."""
        if self.budget is None:
            return pd.DataFrame(columns=["release", "kind", "eps", "delta"])
        return self.ledger.releases(self.budget.fp)[["release", "kind", "eps", "delta"]]

    def budget_summary(self) -> str:
        """One line: total, spent and remaining (eps, delta)."""
        if self.budget is None:
            return "No dataset loaded."
        total_eps, total_delta = self.ledger.total(self.budget.fp) or (0.0, 0.0)
        eps_spent, delta_spent = self.budget.spent
        eps_left, delta_left = self.budget.remaining
        return (
            f"Total eps = {total_eps:.4g}, delta = {total_delta:.3g}; "
            f"spent eps = {eps_spent:.4g}, delta = {delta_spent:.3g}; "
            f"remaining eps = {eps_left:.4g}, delta = {delta_left:.3g}."
        )


def _release_directions(X: pd.DataFrame, **common: Any) -> Any:
    """The directions/loading release: all p directions, so every pair can be drawn."""
    return dp_loading(X, k=None, **common)  # design: "exact" or "balanced" (large tables)


def _directions_of(result: Any) -> DirectionsResult:
    """The DirectionsResult inside a directions/loading release."""
    if isinstance(result, DirectionsResult):
        return result
    return result.directions


def _bound_value(value: object, name: object, side: str) -> float | None:
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
    from ..score import _check_group_count

    levels = tuple(range(sel.n_groups))
    try:
        _check_group_count(levels, levels, n)
    except ValueError as exc:
        raise DataError(str(exc)) from None


def _scree_methods(opts: Mapping[str, Any]) -> tuple[list[str], dict[str, Any] | None]:
    """The scree methods chosen on the page and their controls."""
    from ..scree import ClippedControl, HuberControl, PMWMControl

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
