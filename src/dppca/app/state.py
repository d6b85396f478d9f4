"""The app's logic without any user interface: data, budget, releases.

Everything a browser session does to the data goes through :class:`AppState`:
loading a table (its budget lives in a :class:`~dppca.privacy.ledger.Ledger`, keyed
by the table's fingerprint, so every session of the app and every restart
sees the same spending), choosing its columns and public bounds, pricing and
forecasting a release from its data-free plan before it runs, running it
through the budget and keeping it so that every later plot of it is
post-processing. Reading and choosing data lives in :mod:`.data`, pricing
and forecasting in :mod:`.plans`, each imported from there. The Shiny
layer (the page in :mod:`dppca.app.ui`, its handlers in :mod:`dppca.app.server`)
only reads and calls these modules, which import no Shiny, so they are tested
without a browser.
"""

from __future__ import annotations

import threading
import warnings
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from .._kinds import app_tabs, load
from ..core.defaults import default_delta
from ..core.validation import check_delta, check_eps, post_processing_rng
from ..datasets import DATASETS, load_dataset
from ..privacy.accounting import Accountant
from ..privacy.ledger import Ledger
from ..privacy.ledger_budget import LedgerBudget
from ..privacy.ledger_store import LedgerError
from ..releases.directions.result import DirectionsResult
from ..releases.engine import execute
from .data import (
    DataError,
    Selection,
    numeric_columns,
    select_data,
)
from .plans import (
    Preview,
    Release,
    ReleaseRequest,
    bounds_array,
    page_sentence,
    plan_request,
    read_bound,
)
from .preview_text import preview_notes, price_message
from .stored import DeferredCharge, payload_of, restore_releases, stores_releases

__all__ = [
    "DEFAULT_EPS",
    "DEFAULT_SHARES",
    "RELEASE_KINDS",
    "AppState",
    "directions_of",
]

#: Total epsilon offered for a newly loaded dataset.
DEFAULT_EPS = 1.0
#: What the app can release, one tab each (the kinds with a tab in
#: :data:`dppca._kinds.KINDS`); the PCA fit (every picture from one release)
#: first, as the recommended route.
RELEASE_KINDS = tuple(app_tabs())
#: Share of the dataset's total budget suggested for each kind of release. The
#: PCA fit is a whole analysis (all five pictures), so it is offered the whole
#: budget; the single-picture tabs are offered parts of it.
DEFAULT_SHARES: Mapping[str, float] = {kind: tab.share for kind, tab in app_tabs().items()}


def _details(kind: str, plan: Any) -> tuple[str, ...]:
    """The plan in words for the preview, where the kind's tab has them (the PCA fit)."""
    details = app_tabs()[kind].details
    return () if details is None else tuple(load(details)(plan))


# Releases of one dataset run one at a time in the process (the ledger's transaction
# stops overspending across processes; this lock avoids computing a refused release).
_RELEASE_LOCKS: dict[tuple[str, str], threading.Lock] = {}
_LOCKS_GUARD = threading.Lock()


def _release_lock(ledger: Ledger, fp: str) -> threading.Lock:
    key = (str(ledger.path) + ("" if str(ledger.path) != ":memory:" else f"@{id(ledger)}"), fp)
    with _LOCKS_GUARD:
        return _RELEASE_LOCKS.setdefault(key, threading.Lock())


# ------------------------------------------------------------------------- releases


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
        self.missing = "refuse"  # the page's checkbox: "zero" analyses missing values

    # -- data and budget -------------------------------------------------------------
    def load(self, name: str, frame: pd.DataFrame) -> str | None:
        """Start on a table: its budget from the ledger (a new table gets the default
        total) and the releases the ledger stored with their charges (:mod:`.stored`).

        All numeric columns are chosen; if they cannot be analysed together
        (for example one has missing values) the reason is returned and no
        columns are chosen yet.
        """
        if not isinstance(frame, pd.DataFrame) or frame.shape[0] < 2:
            raise DataError("the data need at least two rows.")
        from ..core.tables import check_unique_columns

        try:
            check_unique_columns(list(frame.columns), repr(str(name)))
        except ValueError as exc:
            raise DataError(str(exc)) from None
        if not numeric_columns(frame):
            raise DataError(f"{name!r} has no numeric columns.")
        try:
            fp = self.ledger.key(frame, str(name))  # an earlier version's record moved on
            delta = default_delta(int(frame.shape[0]))
            self.ledger.ensure_total(fp, DEFAULT_EPS, delta, name=name)
        except LedgerError as exc:
            raise DataError(str(exc)) from None
        self.data_name = str(name)
        self.frame = frame
        self.fingerprint = fp
        self.budget = self.ledger.budget(fp, name=self.data_name)
        self.releases = restore_releases(self.ledger, fp)  # paid for earlier: shown again
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
        missing: str | None = None,
    ) -> Selection:
        """Choose the analysed columns (and group column) of the loaded table.

        ``missing`` (the page's checkbox; None keeps the current setting) is
        ``"refuse"`` or ``"zero"`` (:func:`dppca.core.tables.check_missing`).
        See :func:`dppca.app.data.select_data`.
        """
        if self.frame is None:
            raise DataError("load a dataset first.")
        if missing is not None:
            self.missing = str(missing)
        self.selection = select_data(
            self.frame,
            columns,
            group=group,
            groups_public=groups_public,
            group_labels=group_labels,
            missing=self.missing,
        )
        return self.selection

    def set_budget(self, eps: float, delta: float) -> None:
        """Set the dataset's total budget; allowed only before the first release."""
        if self.budget is None:
            raise DataError("load a dataset first.")
        for value, label in ((eps, "the total eps"), (delta, "the total delta")):
            if value is None or value == "":
                raise DataError(f"{label} is required: type a number in its box.")
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
                return directions_of(rel.result)
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
                read_bound(values[0], name, "lower"),
                read_bound(values[1], name, "upper"),
            )
        self.bounds_entries = out

    def public_bounds(self) -> NDArray[np.float64] | None:
        """The public bounds of the analysed columns, (p, 2), or None if the table is empty.

        Raises
        ------
        DataError
            When only some cells are filled or the values are invalid
            (:func:`dppca.app.plans.bounds_array`).
        """
        if self.selection is None:
            return None
        return bounds_array(self.bounds_entries, self.selection.columns)

    def bounds_status(self) -> tuple[str, str]:
        """A line about the bounds for the page, and its kind (secondary, success, danger)."""
        try:
            box = self.public_bounds()
        except DataError as exc:
            return (page_sentence(str(exc)), "danger")
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
    def _request(self, kind: str, params: Mapping[str, Any]) -> ReleaseRequest:
        """Plan a release from the selection's shape, the settings and the bounds."""
        if self.selection is None:
            raise DataError("load a dataset and choose at least two numeric columns first.")
        return plan_request(
            kind, params, self.selection, self.public_bounds(), self.reusable_directions()
        )

    def _run(self, req: ReleaseRequest, params: Mapping[str, Any], budget: Accountant) -> Any:
        """Make the planned release from the data: the plan previewed, run by the executor."""
        assert self.selection is not None
        return execute(
            req.plan, self.selection.X, budget=budget, random_state=self._rng, **req.inputs
        )

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
        notes = preview_notes(kind, params, self.selection, caught, req.plan)
        room = self.budget.headroom(delta=cost.delta or None)
        fits = self.budget.can_afford(cost)
        message = price_message(cost, room, fits, bool(self.releases))
        return Preview(
            kind,
            cost,
            fits,
            message,
            notes,
            forecast=req.plan.forecast,
            bounds_given=req.bounds is not None,
            details=_details(kind, req.plan),
        )

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
        settings, fp = dict(params), self.budget.fp
        # A ledger that stores releases gets the released values with the charge
        # (stored.DeferredCharge); otherwise the library charges the ledger itself.
        deferred = stores_releases(self.ledger)
        if deferred:
            budget: Any = DeferredCharge(self.ledger, fp, kind=kind, name=self.data_name)
        else:
            budget = self.ledger.budget(fp, kind=kind, name=self.data_name)
        with _release_lock(self.ledger, fp):
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                req = self._request(kind, params)
                try:
                    result = self._run(req, params, budget)
                    number = budget.charge(payload_of(result)) if deferred else None
                except LedgerError as exc:
                    raise DataError(str(exc)) from None
        number = number or getattr(budget, "last_release", None)
        cost = result.cost
        rel = Release(
            number=number or len(self.releases) + 1,
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
        from ..releases.score.result import sample_points

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
                "release",
                "time",
                "dataset",
                "kind",
                "released",
                "mechanism",
                "eps",
                "delta",
            ]
            return pd.DataFrame(columns=columns)
        return self.ledger.entries(self.budget.fp)

    def release_summary(self) -> pd.DataFrame:
        """One row per release of the dataset: number, kind, eps, delta."""
        if self.budget is None:
            return pd.DataFrame(columns=["release", "kind", "eps", "delta"])
        return self.ledger.releases(self.budget.fp)[["release", "kind", "eps", "delta"]]

    def spent_meaning(self) -> str:
        """What the releases made so far mean to a membership attacker; "" before any."""
        if self.budget is None:
            return ""
        costs = list(self.budget.ledger)
        if not costs:
            return ""
        from ..privacy.tradeoff import attacker_sentence

        return "Releases so far: " + attacker_sentence(costs)

    def budget_summary(self) -> str:
        """The budget panel: the total, what was spent and what still fits.

        The accountant's one text (:meth:`dppca.privacy.headroom.Headroom.describe`,
        as on the command line) after the total.
        """
        if self.budget is None:
            return "No dataset loaded."
        room = self.budget.headroom()
        return (
            f"Total eps = {room.total_eps:.4g}, delta = {room.total_delta:.3g}; {room.describe()}"
        )


def directions_of(result: Any) -> DirectionsResult:
    """The DirectionsResult inside a directions/loading release."""
    if isinstance(result, DirectionsResult):
        return result
    return result.directions
