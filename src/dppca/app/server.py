"""The Shiny server of the dppca app: what one browser session does.

Each session gets a :class:`Session`, which registers the page's reactive
handlers (data, bounds, budget, ledger, releases) around one
:class:`~dppca.app.state.AppState`, then the figures and downloads of
:mod:`dppca.app.outputs`. The handlers only read the page and call the
state; what they compute from plain values lives in :mod:`dppca.app.views`
and the fragments they draw in :mod:`dppca.app.widgets`, so that it is
tested without a browser.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pandas as pd
from shiny import Inputs, Outputs, reactive, render, req, ui
from shiny import Session as ShinySession

from ..datasets import DATASETS
from ..privacy.ledger import Ledger, LedgerError
from . import widgets
from .data import DataError, numeric_columns, read_csv_upload
from .outputs import SampleCache, SessionOutputs
from .plans import Preview, Release
from .state import RELEASE_KINDS, AppState
from .views import (
    RELEASE_FAILURES,
    failure_message,
    load_message,
    readable_ledger,
    refusal_message,
    release_message,
    release_settings,
    same_selection,
    split_defaults,
    summary_table,
    table_notes,
)
from .widgets import alert, bound_ids, fit_note, preview_box, release_note

__all__ = ["Session", "make_server"]

KINDS = RELEASE_KINDS  # the PCA fit first, then one tab per picture
Message = tuple[str, str] | None  # text and Bootstrap kind of an alert


def make_server(
    data: pd.DataFrame | None, *, data_name: str, max_upload: int, ledger: Ledger
) -> Callable[[Inputs, Outputs, ShinySession], None]:
    """The server function of :func:`dppca.app.ui.create_app`: one Session per visit."""

    def server(input: Inputs, output: Outputs, session: ShinySession) -> None:
        Session(input, AppState(ledger=ledger), data, data_name, max_upload).start()

    return server


class Session:
    """One browser session: its state, its reactive values and its handlers."""

    def __init__(
        self,
        input: Inputs,
        state: AppState,
        data: pd.DataFrame | None,
        data_name: str,
        max_upload: int,
    ) -> None:
        self.input, self.state = input, state
        self.data, self.data_name, self.max_upload = data, data_name, max_upload
        self.tick = reactive.value(0)  # bumped on every change the outputs depend on
        self.data_msg: reactive.Value[Message] = reactive.value(None)
        self.budget_msg: reactive.Value[Message] = reactive.value(None)
        self.status: dict[str, reactive.Value[Message]] = {k: reactive.value(None) for k in KINDS}
        self.samples = SampleCache()
        self.notifications: dict[str, str] = {}  # kind -> id of its "computing" notice
        # the analysed columns, and a counter that redraws the bounds table
        # (new data or an emptied table) without waiting for a column change
        self.bounds_columns: reactive.Value[tuple[str, ...]] = reactive.value(())
        self.bounds_redraw = reactive.value(0)

    def start(self) -> None:
        """Register every handler, in the order the page was built around."""
        self._data_handlers()
        self._bounds_handlers()
        self._budget_handlers()
        self._ledger_outputs()
        for kind in KINDS:
            self._release_handlers(kind)
        self._notes()
        self._pca_handlers()
        SessionOutputs(self.input, self.state, self.tick, self.samples).register()

    def value(self, name: str) -> Any:
        """The current value of input ``name`` (a reactive read)."""
        return getattr(self.input, name)()

    # -- changes ---------------------------------------------------------------------
    def changed(self) -> None:
        self.tick.set(self.tick() + 1)

    def columns_changed(self) -> None:
        self.bounds_columns.set(self.state.selection.columns if self.state.selection else ())

    def reset_budget_inputs(self) -> None:
        if self.state.budget is not None:
            ui.update_numeric("total_eps", value=self.state.budget.eps)
            ui.update_numeric("total_delta", value=self.state.budget.delta)

    def suggest_release_budgets(self) -> None:
        for kind in KINDS:
            eps, delta = self.state.suggested(kind)
            ui.update_numeric(f"{kind}_eps", value=round(eps, 6))
            ui.update_numeric(f"{kind}_delta", value=float(f"{delta:.3g}"))

    def after_load(self, message: str, problem: str | None) -> None:
        """Point every widget at the table just loaded and forget the old releases."""
        frame = self.state.frame
        assert frame is not None and self.state.budget is not None
        numeric = numeric_columns(frame)
        selected = list(self.state.selection.columns) if self.state.selection else numeric
        ui.update_selectize("columns", choices=numeric, selected=selected)
        ui.update_select(
            "group",
            choices={"": "(none)", **{str(c): str(c) for c in frame.columns}},
            selected="",
        )
        self.reset_budget_inputs()
        self.suggest_release_budgets()
        p = len(selected)
        ui.update_numeric("scree_k", value=min(5, max(p, 1)), max=max(p, 1))
        ui.update_numeric("pca_k", max=max(p, 1))
        for key in self.status:
            self.status[key].set(None)
        self.samples.clear()
        if problem is None:
            self.data_msg.set((message, "success"))
        else:
            self.data_msg.set((f"{message} Choose the columns: {problem}", "warning"))
        self.budget_msg.set(None)
        self.columns_changed()
        self.bounds_redraw.set(self.bounds_redraw() + 1)
        self.changed()

    def load_frame(self, name: str, frame: pd.DataFrame) -> None:
        try:
            problem = self.state.load(name, frame)
        except DataError as exc:
            self.data_msg.set((str(exc), "danger"))
            return
        self.after_load(load_message(self.state, name), problem)

    def load_bundled(self, name: object) -> None:
        """Load a bundled dataset by name; a name the list does not hold gets a message."""
        if not isinstance(name, str) or name not in DATASETS:
            shown = repr(name)[:60]
            self.data_msg.set(
                (
                    f"There is no bundled dataset {shown}; choose one of "
                    f"{', '.join(DATASETS)}. The current data are unchanged.",
                    "danger",
                )
            )
            return
        self.load_frame(name, DATASETS[name]())

    def upload(self, files: Any) -> None:
        """Load an uploaded CSV file, or say why not."""
        if not files:
            return
        info = files[0]
        try:
            frame = read_csv_upload(
                info["datapath"], name=info["name"], size=info["size"], limit=self.max_upload
            )
        except DataError as exc:
            self.data_msg.set((f"Upload refused: {exc} The current data are unchanged.", "danger"))
            return
        self.load_frame(info["name"], frame)

    def select(self) -> None:
        """Take the page's columns and groups, unless they are the ones in force."""
        state = self.state
        if state.frame is None:
            return
        cols = list(self.input.columns() or [])
        group = self.input.group() or None
        if group is not None and group in cols:  # a group column is not analysed
            cols.remove(group)
            ui.update_selectize("columns", selected=cols)
        public = self.input.groups_public() == "public"
        labels = self.input.group_labels() or None
        missing = "zero" if self.input.missing() else "refuse"
        if same_selection(state.selection, cols, group, public, labels, missing):
            return  # nothing changed (for example the widget was just updated)
        try:
            state.select(
                cols, group=group, groups_public=public, group_labels=labels, missing=missing
            )
        except DataError as exc:
            state.selection = None
            self.data_msg.set((str(exc), "danger"))
        else:
            notes = table_notes(state.selection)
            self.data_msg.set(
                (f"Analysing {len(cols)} columns of {state.data_name}.{notes}", "success")
            )
            ui.update_numeric("scree_k", max=len(cols))
            ui.update_numeric("pca_k", max=len(cols))
        self.columns_changed()
        self.changed()

    def bounds_typed(self) -> None:
        """Keep the bounds typed into the table; a cell that is not a number is empty."""
        entries: dict[str, tuple[Any, Any]] = {}
        for name in self.bounds_columns():
            cells = []
            for cell in bound_ids(name):
                value = self.input[cell]
                cells.append(value() if value.is_set() else None)
            entries[name] = (cells[0], cells[1])
        with reactive.isolate():
            state = self.state
            old = {c: state.bounds_entries.get(c, (None, None)) for c in entries}
            try:
                state.set_bounds(entries)
            except DataError:
                state.set_bounds({c: (None, None) for c in entries})
            if {c: state.bounds_entries.get(c) for c in entries} != old:
                self.changed()

    # -- data, bounds, budget, ledger ------------------------------------------------
    def _data_handlers(self) -> None:
        input, state, data, data_name = self.input, self.state, self.data, self.data_name

        @reactive.effect
        def _startup() -> None:
            with reactive.isolate():
                if data is not None:
                    self.load_frame(data_name, data)
                else:
                    self.load_frame("gau_g", DATASETS["gau_g"]())

        @reactive.effect
        @reactive.event(input.load_bundled)
        def _load_bundled() -> None:
            self.load_bundled(input.dataset())

        @reactive.effect
        @reactive.event(input.source)
        def _provided_again() -> None:
            if input.source() == "provided" and data is not None:
                if state.data_name != data_name:
                    self.load_frame(data_name, data)

        @reactive.effect
        @reactive.event(input.upload)
        def _upload() -> None:
            self.upload(input.upload())

        @reactive.effect
        @reactive.event(
            input.columns,
            input.group,
            input.groups_public,
            input.group_labels,
            input.missing,
            ignore_init=True,
        )
        def _select() -> None:
            self.select()

    def _bounds_handlers(self) -> None:
        @render.ui
        def bounds_table() -> Any:
            self.bounds_redraw()
            columns = self.bounds_columns()
            with reactive.isolate():  # typing in a cell must not redraw the table
                return widgets.bounds_table(columns, dict(self.state.bounds_entries))

        @reactive.effect
        def _bounds_typed() -> None:
            self.bounds_typed()

        @reactive.effect
        @reactive.event(self.input.clear_bounds)
        def _clear_bounds() -> None:
            self.state.set_bounds(None)
            self.bounds_redraw.set(self.bounds_redraw() + 1)
            self.changed()

        @render.ui
        def bounds_message() -> Any:
            self.tick()
            text, kind = self.state.bounds_status()
            return ui.div(text, class_=f"alert alert-{kind} py-1 my-2 small", role="status")

        @render.ui
        def data_message() -> Any:
            msg = self.data_msg()
            return None if msg is None else alert(msg[0], msg[1])

    def _budget_handlers(self) -> None:
        @reactive.effect
        @reactive.event(self.input.set_budget)
        def _set_budget() -> None:
            try:
                self.state.set_budget(self.input.total_eps(), self.input.total_delta())
            except DataError as exc:
                self.budget_msg.set((f"Budget not changed: {exc}", "danger"))
                self.reset_budget_inputs()  # show the total in force, not the refused one
            else:
                self.budget_msg.set(("Budget set.", "success"))
                self.suggest_release_budgets()
            self.changed()

        @render.ui
        def budget_message() -> Any:
            msg = self.budget_msg()
            return None if msg is None else alert(msg[0], msg[1])

    def _ledger_outputs(self) -> None:
        state = self.state

        # Other sessions (and other processes) charge the same ledger: look for
        # new releases every second and refresh what depends on the budget.
        def version() -> tuple[int, int]:
            try:
                return state.ledger_version()
            except LedgerError:  # damaged since it was opened: the outputs say so
                return (-1, -1)

        @reactive.poll(version, 1.0)
        def ledger_token() -> tuple[int, int]:
            return version()

        @reactive.effect
        def _ledger_changed() -> None:
            ledger_token()
            with reactive.isolate():
                self.changed()

        @render.text
        def budget_summary() -> str:
            self.tick()
            try:
                meaning = state.spent_meaning()
                return state.budget_summary() + (f" {meaning}" if meaning else "")
            except LedgerError as exc:
                return str(exc)

        @render.table
        def ledger() -> pd.DataFrame:
            self.tick()
            return readable_ledger(state.ledger_frame())

        @render.table
        def ledger_compact() -> pd.DataFrame:
            self.tick()
            return readable_ledger(state.release_summary())

    # -- releases --------------------------------------------------------------------
    def settings(self, kind: str) -> dict[str, Any]:
        return release_settings(kind, self.value)

    def _release_handlers(self, kind: str) -> None:
        def preview_fn() -> Any:
            self.tick()
            try:
                settings = self.settings(kind)
            except DataError as exc:
                return preview_box(Preview(kind, None, False, f"Invalid settings: {exc}"))
            try:
                return preview_box(self.state.preview(kind, **settings))
            except LedgerError as exc:
                return preview_box(Preview(kind, None, False, str(exc)))

        preview_fn.__name__ = f"{kind}_preview"
        render.ui(preview_fn)

        def status_fn() -> Any:
            msg = self.status[kind]()
            return None if msg is None else alert(msg[0], msg[1])

        status_fn.__name__ = f"{kind}_status"
        render.ui(status_fn)

        # The release (O(n^2 p) for the directions) runs in a worker thread as
        # an extended task: Shiny's reactive graph, shared by every session, is
        # not held meanwhile, so the other sessions stay responsive.
        @reactive.extended_task
        async def task(settings: dict[str, Any]) -> tuple[Release | None, Message]:
            return await asyncio.to_thread(self.release_in_thread, kind, settings)

        @reactive.effect
        @reactive.event(getattr(self.input, f"run_{kind}"))
        def _run() -> None:
            if task.status() == "running":  # one release of a kind at a time per session
                msg = f"The {kind} release asked for earlier is still being computed; wait for it."
                self.status[kind].set((msg, "warning"))
                return
            settings = self.start_release(kind)
            if settings is not None:
                task(settings)

        @reactive.effect
        def _done() -> None:
            if task.status() not in ("success", "error"):
                return
            with reactive.isolate():
                note = self.notifications.pop(kind, None)
                if note is not None:
                    ui.notification_remove(note)
                _, message = task.result()  # a bug (not a release failure) is raised here
                self.status[kind].set(message)
                self.changed()

    def start_release(self, kind: str) -> dict[str, Any] | None:
        """The settings of a release the budget affords, or None after saying why not."""
        state, status = self.state, self.status[kind]
        try:
            settings = self.settings(kind)
        except DataError as exc:
            status.set((f"Not released: {exc}", "danger"))
            return None
        try:
            preview = state.preview(kind, **settings)
        except LedgerError as exc:  # damaged since it was opened
            status.set((f"Not released: {exc}", "danger"))
            return None
        if preview.cost is None:
            status.set((preview.message, "danger"))
            return None
        if not preview.affordable and state.budget is not None:
            status.set((refusal_message(preview.cost, state.budget.headroom()), "danger"))
            return None
        status.set((f"Computing the private {kind} release...", "info"))
        self.notifications[kind] = ui.notification_show(
            f"Computing the private {kind} release...", duration=None, type="message"
        )
        return settings

    def release_in_thread(
        self, kind: str, settings: dict[str, Any]
    ) -> tuple[Release | None, Message]:
        """Make a release (in a worker thread); the release and its status line."""
        try:
            rel = self.state.release(kind, **settings)
        except RELEASE_FAILURES as exc:
            return None, (failure_message(exc), "danger")
        return rel, release_message(rel)

    def _notes(self) -> None:
        def note(kind: str, what: str) -> Any:
            self.tick()
            return release_note(self.state.latest(kind), what)

        @render.ui
        def loading_note() -> Any:
            return note("directions", "directions")

        @render.ui
        def scree_note() -> Any:
            return note("scree", "scree")

        @render.ui
        def score_note() -> Any:
            return note("score", "score")

        @render.ui
        def pca_note() -> Any:
            self.tick()
            return fit_note(self.state.latest("pca"))

    def _pca_handlers(self) -> None:
        """The PCA tab: its split's defaults follow the analysis; the fit's tables."""

        @reactive.effect
        @reactive.event(self.input.pca_standardize, ignore_init=True)
        def _split_defaults() -> None:
            for part, weight in split_defaults(self.input.pca_standardize()).items():
                ui.update_numeric(f"pca_w_{part}", value=weight)

        def summary() -> Any:
            self.tick()
            rel = self.state.latest("pca")
            req(rel is not None)
            assert rel is not None
            return rel.result.summary()

        @render.table(index=True)
        def pca_importance() -> pd.DataFrame:
            return summary_table(summary().importance)

        @render.table(index=True)
        def pca_budget() -> pd.DataFrame:
            return summary_table(summary().budget)
