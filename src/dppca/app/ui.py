"""The Shiny page and server of the dppca app (a thin layer over :mod:`.state`)."""

from __future__ import annotations

import asyncio
import hashlib
import os
import tempfile
from collections.abc import Callable
from typing import Any

import pandas as pd
from shiny import App, Inputs, Outputs, Session, reactive, render, req, ui
from shiny.types import SilentException

from .._validation import MAX_BINS
from ..datasets import DATASETS
from ..exceptions import BudgetExceededError, TiedRowsError
from ..ledger import Ledger
from . import figures
from ._limits import UploadLimitedApp
from .state import (
    BOUNDS_HELP,
    DEFAULT_EPS,
    MAX_UPLOAD_BYTES,
    AppState,
    DataError,
    Preview,
    Release,
    numeric_columns,
    parse_labels,
    read_csv_upload,
)

__all__ = ["create_app"]

_FREE = (
    "Re-drawing a kept release (other plot kind, other components, other display options) "
    "is post-processing: it spends nothing."
)
_COLOURS = {"#1f5fa8": "blue", "#b2182b": "red", "#1b7837": "green", "#333333": "grey"}
_CALIBRATIONS = {"analytic": "analytic (exact for every eps)", "classic": "classic (eps < 1)"}


def _release_inputs(prefix: str) -> list[Any]:
    """eps, delta and calibration of one release."""
    return [
        ui.layout_columns(
            ui.input_numeric(f"{prefix}_eps", "eps of this release", value=0.3, min=0, step=0.05),
            ui.input_numeric(
                f"{prefix}_delta", "delta of this release", value=1e-5, min=0, step=1e-6
            ),
            ui.input_select(f"{prefix}_calibration", "Gaussian calibration", _CALIBRATIONS),
        )
    ]


def _release_block(prefix: str, button: str) -> list[Any]:
    return [
        ui.output_ui(f"{prefix}_preview"),
        ui.input_action_button(f"run_{prefix}", button, class_="btn-primary"),
        ui.output_ui(f"{prefix}_status"),
    ]


_DOWNLOAD_LABELS = {"png": "Figure (PNG)", "svg": "Figure (SVG)"}


def _downloads(prefix: str, table: str) -> Any:
    """The download buttons of a tab, rendered by the server once there is a release."""
    return ui.output_ui(f"{prefix}_downloads")


def _download_buttons(prefix: str, table: str, enabled: bool) -> Any:
    labels = {**_DOWNLOAD_LABELS, "csv": f"{table} (CSV)"}
    if enabled:
        buttons = [ui.download_button(f"dl_{prefix}_{fmt}", lab) for fmt, lab in labels.items()]
    else:  # nothing to download yet: inert buttons, no request reaches the server
        buttons = [
            ui.tags.button(lab, type="button", class_="btn btn-default", disabled=True)
            for lab in labels.values()
        ]
    return ui.div(*buttons, class_="d-flex gap-2 flex-wrap")


# Many columns must not push the rest of the sidebar below the fold.
_CSS = """
#columns + .selectize-control .selectize-input { max-height: 7.5em; overflow-y: auto; }
#columns + .selectize-control .selectize-input .item { font-size: 0.8em; padding: 0 4px; }
.bounds-table td, .bounds-table th { padding: 2px 4px; vertical-align: middle; }
.bounds-table .form-group { margin-bottom: 0; }
.bounds-table input { padding: 2px 6px; }
"""


def _bound_ids(variable: str) -> tuple[str, str]:
    """Input ids of one row of the bounds table (from the name, so a row keeps its cells)."""
    key = hashlib.sha1(variable.encode()).hexdigest()[:10]
    return f"bound_lo_{key}", f"bound_hi_{key}"


def _bounds_table(columns: tuple[str, ...], entries: dict[str, Any]) -> Any:
    """One row per analysed variable: its name and two cells, empty unless typed in."""
    if not columns:
        return ui.p("Choose the columns first.", class_="text-muted small")
    head = ui.tags.thead(
        ui.tags.tr(ui.tags.th("variable"), ui.tags.th("lower"), ui.tags.th("upper"))
    )
    rows = []
    for name in columns:
        lo_id, hi_id = _bound_ids(name)
        lo, hi = entries.get(name, (None, None))
        rows.append(
            ui.tags.tr(
                ui.tags.td(name, class_="bound-variable"),
                ui.tags.td(ui.input_numeric(lo_id, None, value=lo)),
                ui.tags.td(ui.input_numeric(hi_id, None, value=hi)),
            )
        )
    return ui.tags.table(head, ui.tags.tbody(*rows), class_="table table-sm bounds-table")


def build_ui(provided: str | None = None, *, max_upload: int = MAX_UPLOAD_BYTES) -> Any:
    """The page: data and budget in the sidebar, one tab per kind of release."""
    sources = {"bundled": "Bundled dataset", "upload": "Upload a CSV file"}
    if provided is not None:
        sources = {"provided": f"Provided: {provided}", **sources}
    limit_mb = f"{max_upload / (1024 * 1024):g}"
    sidebar = ui.sidebar(
        ui.tags.style(_CSS),
        ui.h5("Data"),
        ui.input_radio_buttons("source", None, sources),
        ui.panel_conditional(
            "input.source === 'bundled'",
            ui.input_select("dataset", "Bundled dataset", sorted(DATASETS), selected="gau_g"),
            ui.input_action_button("load_bundled", "Load dataset"),
        ),
        ui.panel_conditional(
            "input.source === 'upload'",
            ui.input_file(
                "upload", f"CSV file with a header row (at most {limit_mb} MB)", accept=[".csv"]
            ),
        ),
        ui.output_ui("data_message"),
        ui.input_selectize(
            "columns",
            "Numeric columns to analyse",
            [],
            multiple=True,
            options={"plugins": ["remove_button"]},
        ),
        ui.input_select("group", "Group column (optional)", {"": "(none)"}),
        ui.input_text(
            "group_labels",
            "Public list of group labels (comma-separated; empty: the labels found in "
            "the data, which are then released as they are)",
        ),
        ui.input_radio_buttons(
            "groups_public",
            "Group labels are",
            {"private": "private (sizes released with noise)", "public": "public"},
        ),
        ui.accordion(
            ui.accordion_panel(
                "Public bounds (optional)",
                ui.help_text(BOUNDS_HELP),
                ui.output_ui("bounds_table"),
                ui.input_action_button("clear_bounds", "Empty the table", class_="btn-sm"),
                value="bounds",
            ),
            id="bounds_panel",
            open=False,
        ),
        ui.output_ui("bounds_message"),
        ui.hr(),
        ui.h5("Privacy budget of this dataset (kept in the ledger)"),
        ui.layout_columns(
            ui.input_numeric("total_eps", "Total eps", value=DEFAULT_EPS, min=0, step=0.1),
            ui.input_numeric("total_delta", "Total delta", value=1e-5, min=0, step=1e-6),
        ),
        ui.input_action_button("set_budget", "Set budget"),
        ui.output_ui("budget_message"),
        ui.output_text("budget_summary"),
        ui.output_table("ledger_compact"),
        ui.help_text(_FREE),
        width=380,
    )
    loading_tab = ui.nav_panel(
        "Directions / loading",
        *_release_inputs("directions"),
        ui.input_radio_buttons(
            "directions_design",
            "Kendall matrix",
            {"exact": "exact (all pairs)", "balanced": "balanced design (faster, large tables)"},
            inline=True,
        ),
        *_release_block("directions", "Run private directions release"),
        ui.hr(),
        ui.layout_columns(
            ui.input_radio_buttons(
                "loading_kind",
                "Plot kind",
                {"vector": "vector", "point": "point", "heatmap": "heatmap"},
                inline=True,
            ),
            ui.input_numeric("loading_pc_x", "x: PC", 1, min=1, step=1),
            ui.input_numeric("loading_pc_y", "y: PC", 2, min=1, step=1),
            ui.input_numeric("loading_heat_k", "heatmap: PCs", 4, min=1, step=1),
            ui.input_numeric("loading_top", "show top variables (0 = all)", 0, min=0, step=1),
            ui.input_select("loading_color", "colour", _COLOURS),
            ui.input_numeric(
                "loading_uncertainty",
                "noise-sensitivity draws (0 = off)",
                0,
                min=0,
                max=1000,
                step=50,
            ),
        ),
        ui.output_ui("loading_note"),
        ui.output_image("loading_plot", height="auto"),
        _downloads("loading", "Directions"),
    )
    scree_tab = ui.nav_panel(
        "Scree / PVE",
        *_release_inputs("scree"),
        ui.layout_columns(
            ui.input_numeric("scree_k", "components k", 5, min=1, step=1),
            ui.input_checkbox_group(
                "scree_methods",
                "Methods (they share the release's budget)",
                {
                    "clipped": "clipped mean",
                    "pmwm": "winsorized mean (PMWM)",
                    "huber": "Huber descent",
                },
                selected=["clipped"],
                inline=True,
            ),
            ui.input_checkbox("scree_reuse", "reuse the private directions (no extra cost)", True),
            ui.input_checkbox("scree_mono", "non-increasing fit", True),
        ),
        ui.accordion(
            ui.accordion_panel(
                "Method controls",
                ui.layout_columns(
                    ui.input_numeric(
                        "scree_clip", "clipped: level C (0 = private default)", 0, min=0
                    ),
                    ui.input_checkbox("scree_pmwm_split", "PMWM: disjoint halves", True),
                    ui.input_numeric(
                        "scree_huber_m2",
                        "Huber: share for the scale",
                        0.25,
                        min=0.01,
                        max=0.99,
                        step=0.05,
                    ),
                ),
            ),
            open=False,
        ),
        *_release_block("scree", "Run private scree release"),
        ui.hr(),
        ui.input_radio_buttons(
            "scree_kind",
            "Plot kind",
            {
                "pve_total": "PVE (share of the total variance)",
                "pve": "PVE (of the k components)",
                "scree": "variances",
            },
            selected="pve_total",
            inline=True,
        ),
        ui.output_ui("scree_note"),
        ui.output_image("scree_plot", height="auto"),
        _downloads("scree", "Scree table"),
    )
    score_tab = ui.nav_panel(
        "Score",
        *_release_inputs("score"),
        ui.layout_columns(
            ui.input_numeric("score_pc_x", "x: PC", 1, min=1, step=1),
            ui.input_numeric("score_pc_y", "y: PC", 2, min=1, step=1),
            ui.input_numeric(
                "score_bins", "bins per axis (0 = rule from n)", 0, min=0, max=MAX_BINS, step=1
            ),
            ui.input_checkbox_group(
                "score_methods",
                "Histogram methods",
                {"add": "Gaussian (add)", "sparse": "sparse (threshold)"},
                selected=["add"],
                inline=True,
            ),
            ui.input_checkbox("score_groups", "use the group column", True),
            ui.input_checkbox("score_reuse", "reuse the private directions (no extra cost)", True),
        ),
        *_release_block("score", "Run private score release"),
        ui.hr(),
        ui.layout_columns(
            ui.input_radio_buttons(
                "score_kind",
                "Show",
                {
                    "histogram": "histogram",
                    "sample": "synthetic sample",
                    "groups": "one panel per group",
                },
                inline=True,
            ),
            ui.input_select(
                "score_method_shown", "Method shown", {"add": "add", "sparse": "sparse"}
            ),
            ui.input_numeric("score_sample_size", "sample size (0 = n)", 0, min=0, step=100),
        ),
        ui.output_ui("score_note"),
        ui.output_image("score_plot", height="auto"),
        _downloads("score", "Bin table"),
    )
    ledger = ui.card(
        ui.card_header("Privacy ledger (every release of this dataset, in every session)"),
        ui.output_table("ledger"),
        ui.output_ui("ledger_downloads"),
    )
    return ui.page_sidebar(
        sidebar,
        ui.navset_card_tab(loading_tab, scree_tab, score_tab, id="tabs"),
        ledger,
        title="dppca: differentially private PCA",
        fillable=False,
    )


def _alert(text: str, kind: str) -> Any:
    return ui.div(text, class_=f"alert alert-{kind} py-2 my-2", role="alert")


def _forecast_ui(lines: tuple[str, ...], ok: bool, cls: str) -> Any:
    body = [ui.p(line, class_="mb-1") for line in lines]
    kind = "success" if ok else "warning"
    return ui.div(*body, class_=f"alert alert-{kind} py-2 my-2 {cls}", role="status")


def _preview_ui(preview: Preview) -> Any:
    body = [ui.p(preview.message, class_="mb-1")]
    body += [ui.p(f"Note: {w}", class_="mb-1 small") for w in preview.warnings]
    kind = "secondary" if preview.cost is None else ("info" if preview.affordable else "warning")
    cost = ui.div(*body, class_=f"alert alert-{kind} py-2 my-2 cost-preview", role="status")
    if preview.forecast is None:
        return cost
    return ui.div(
        cost, _forecast_ui(preview.forecast_lines, preview.forecast.ok, "forecast-preview")
    )


def _release_forecast(rel: Release) -> Any:
    """The forecast a release was made under and the clipping policy, shown with it."""
    if not rel.notes:
        return None
    ok = rel.forecast is None or rel.forecast.ok
    return _forecast_ui(rel.notes, ok, "release-forecast")


def _positive_or_none(value: Any) -> int | None:
    return int(value) if value not in (None, "") and int(value) > 0 else None


def create_app(
    data: pd.DataFrame | None = None,
    *,
    data_name: str = "data",
    max_upload: int = MAX_UPLOAD_BYTES,
    ledger: Ledger | None = None,
) -> App:
    """Build the Shiny application.

    Parameters
    ----------
    data : pandas.DataFrame, optional
        A table offered as the "Provided" data source and loaded first;
        without it the bundled ``gau_g`` dataset is loaded.
    data_name : str, default="data"
        How the provided table is named on the page.
    max_upload : int, default=MAX_UPLOAD_BYTES
        Largest accepted upload, in bytes; enforced on the bytes received.
    ledger : Ledger, optional
        The ledger every session charges (default: one in memory, which lives
        as long as the app). One dataset has one budget in it, whichever
        session uses it.
    """
    page = build_ui(None if data is None else data_name, max_upload=max_upload)
    shared = Ledger(":memory:") if ledger is None else ledger

    def server(input: Inputs, output: Outputs, session: Session) -> None:
        state = AppState(ledger=shared)
        tick = reactive.value(0)
        data_msg: reactive.Value[tuple[str, str] | None] = reactive.value(None)
        budget_msg: reactive.Value[tuple[str, str] | None] = reactive.value(None)
        status: dict[str, reactive.Value[tuple[str, str] | None]] = {
            k: reactive.value(None) for k in ("directions", "scree", "score")
        }
        samples: dict[tuple[int, str, int], pd.DataFrame] = {}
        # the analysed columns, and a counter that redraws the bounds table
        # (new data or an emptied table) without waiting for a column change
        bounds_columns: reactive.Value[tuple[str, ...]] = reactive.value(())
        bounds_redraw = reactive.value(0)

        def columns_changed() -> None:
            bounds_columns.set(state.selection.columns if state.selection else ())

        def changed() -> None:
            tick.set(tick() + 1)

        def after_load(message: str, problem: str | None) -> None:
            frame = state.frame
            assert frame is not None and state.budget is not None
            numeric = numeric_columns(frame)
            selected = list(state.selection.columns) if state.selection else numeric
            ui.update_selectize("columns", choices=numeric, selected=selected)
            ui.update_select(
                "group",
                choices={"": "(none)", **{str(c): str(c) for c in frame.columns}},
                selected="",
            )
            reset_budget_inputs()
            suggest_release_budgets()
            p = len(selected)
            ui.update_numeric("scree_k", value=min(5, max(p, 1)), max=max(p, 1))
            for key in status:
                status[key].set(None)
            samples.clear()
            if problem is None:
                data_msg.set((message, "success"))
            else:
                data_msg.set((f"{message} Choose the columns: {problem}", "warning"))
            budget_msg.set(None)
            columns_changed()
            bounds_redraw.set(bounds_redraw() + 1)
            changed()

        def reset_budget_inputs() -> None:
            if state.budget is not None:
                ui.update_numeric("total_eps", value=state.budget.eps)
                ui.update_numeric("total_delta", value=state.budget.delta)

        def suggest_release_budgets() -> None:
            for kind in ("directions", "scree", "score"):
                eps, delta = state.suggested(kind)
                ui.update_numeric(f"{kind}_eps", value=round(eps, 6))
                ui.update_numeric(f"{kind}_delta", value=float(f"{delta:.3g}"))

        def describe(name: str) -> str:
            frame = state.frame
            assert frame is not None
            text = f"Loaded {name}: {frame.shape[0]} rows, {frame.shape[1]} columns. "
            releases = state.ledger_version()[0]
            if releases and state.budget is not None:
                eps, delta = state.budget.spent
                text += (
                    f"The ledger already holds {releases} release(s) of these data "
                    f"(eps = {eps:.4g}, delta = {delta:.3g} spent); they count against "
                    "its budget."
                )
            else:
                text += "Its privacy budget is kept in the ledger, shared by every session."
            return text

        def load_frame(name: str, frame: pd.DataFrame) -> None:
            try:
                problem = state.load(name, frame)
            except DataError as exc:
                data_msg.set((str(exc), "danger"))
                return
            after_load(describe(name), problem)

        @reactive.effect
        def _startup() -> None:
            with reactive.isolate():
                if data is not None:
                    load_frame(data_name, data)
                else:
                    load_frame("gau_g", DATASETS["gau_g"]())

        @reactive.effect
        @reactive.event(input.load_bundled)
        def _load_bundled() -> None:
            name = input.dataset()
            load_frame(name, DATASETS[name]())

        @reactive.effect
        @reactive.event(input.source)
        def _provided_again() -> None:
            if input.source() == "provided" and data is not None:
                if state.data_name != data_name:
                    load_frame(data_name, data)

        @reactive.effect
        @reactive.event(input.upload)
        def _upload() -> None:
            files = input.upload()
            if not files:
                return
            info = files[0]
            try:
                frame = read_csv_upload(
                    info["datapath"], name=info["name"], size=info["size"], limit=max_upload
                )
            except DataError as exc:
                data_msg.set((f"Upload refused: {exc} The current data are unchanged.", "danger"))
                return
            load_frame(info["name"], frame)

        @reactive.effect
        @reactive.event(
            input.columns, input.group, input.groups_public, input.group_labels,
            ignore_init=True,
        )  # fmt: skip
        def _select() -> None:
            if state.frame is None:
                return
            cols = list(input.columns() or [])
            group = input.group() or None
            if group is not None and group in cols:  # a group column is not analysed
                cols.remove(group)
                ui.update_selectize("columns", selected=cols)
            public = input.groups_public() == "public"
            labels = input.group_labels() or None
            sel = state.selection
            if sel is not None and (tuple(cols), group, public and group is not None) == (
                sel.columns,
                sel.group_column,
                sel.groups_public,
            ):
                try:
                    if parse_labels(labels) == sel.group_labels:
                        return  # nothing changed (for example the widget was just updated)
                except DataError:
                    pass
            try:
                state.select(cols, group=group, groups_public=public, group_labels=labels)
            except DataError as exc:
                state.selection = None
                data_msg.set((str(exc), "danger"))
            else:
                data_msg.set((f"Analysing {len(cols)} columns of {state.data_name}.", "success"))
                ui.update_numeric("scree_k", max=len(cols))
            columns_changed()
            changed()

        # -- public bounds -----------------------------------------------------------
        @render.ui
        def bounds_table() -> Any:
            bounds_redraw()
            columns = bounds_columns()
            with reactive.isolate():  # typing in a cell must not redraw the table
                return _bounds_table(columns, dict(state.bounds_entries))

        @reactive.effect
        def _bounds_typed() -> None:
            entries: dict[str, tuple[Any, Any]] = {}
            for name in bounds_columns():
                cells = []
                for cell in _bound_ids(name):
                    value = input[cell]
                    cells.append(value() if value.is_set() else None)
                entries[name] = (cells[0], cells[1])
            with reactive.isolate():
                old = {c: state.bounds_entries.get(c, (None, None)) for c in entries}
                try:
                    state.set_bounds(entries)
                except DataError:  # a cell that is not a number counts as empty
                    state.set_bounds({c: (None, None) for c in entries})
                if {c: state.bounds_entries.get(c) for c in entries} != old:
                    changed()

        @reactive.effect
        @reactive.event(input.clear_bounds)
        def _clear_bounds() -> None:
            state.set_bounds(None)
            bounds_redraw.set(bounds_redraw() + 1)
            changed()

        @render.ui
        def bounds_message() -> Any:
            tick()
            text, kind = state.bounds_status()
            return ui.div(text, class_=f"alert alert-{kind} py-1 my-2 small", role="status")

        @render.ui
        def data_message() -> Any:
            msg = data_msg()
            return None if msg is None else _alert(msg[0], msg[1])

        @reactive.effect
        @reactive.event(input.set_budget)
        def _set_budget() -> None:
            try:
                state.set_budget(input.total_eps(), input.total_delta())
            except DataError as exc:
                budget_msg.set((f"Budget not changed: {exc}", "danger"))
                reset_budget_inputs()  # show the total in force, not the refused one
            else:
                budget_msg.set(("Budget set.", "success"))
                suggest_release_budgets()
            changed()

        @render.ui
        def budget_message() -> Any:
            msg = budget_msg()
            return None if msg is None else _alert(msg[0], msg[1])

        # Other sessions (and other processes) charge the same ledger: look for
        # new releases every second and refresh what depends on the budget.
        @reactive.poll(state.ledger_version, 1.0)
        def ledger_token() -> tuple[int, int]:
            return state.ledger_version()

        @reactive.effect
        def _ledger_changed() -> None:
            ledger_token()
            with reactive.isolate():
                changed()

        @render.text
        def budget_summary() -> str:
            tick()
            return state.budget_summary()

        def readable(frame: pd.DataFrame) -> pd.DataFrame:
            if frame.empty:
                return pd.DataFrame({"ledger": ["nothing released yet"]})
            frame = frame.copy()
            for col in ("eps", "delta"):
                frame[col] = [f"{v:.4g}" for v in frame[col]]
            if "time" in frame:
                frame["time"] = [
                    t.replace("T", " ").replace("+00:00", " UTC") for t in frame["time"]
                ]
            return frame

        @render.table
        def ledger() -> pd.DataFrame:
            tick()
            return readable(state.ledger_frame())

        @render.table
        def ledger_compact() -> pd.DataFrame:
            tick()
            return readable(state.release_summary())

        # -- releases ----------------------------------------------------------------
        def params(kind: str) -> dict[str, Any]:
            base = {
                "eps": getattr(input, f"{kind}_eps")(),
                "delta": getattr(input, f"{kind}_delta")(),
                "calibration": getattr(input, f"{kind}_calibration")(),
            }
            if kind == "directions":
                base["design"] = input.directions_design()
            elif kind == "scree":
                clip = input.scree_clip()
                base.update(
                    k=input.scree_k(),
                    methods=tuple(input.scree_methods() or ()),
                    reuse_directions=input.scree_reuse(),
                    mono=input.scree_mono(),
                    clip=clip if clip else None,
                    pmwm_split=input.scree_pmwm_split(),
                    huber_m2_frac=input.scree_huber_m2(),
                )
            elif kind == "score":
                base.update(
                    components=(input.score_pc_x(), input.score_pc_y()),
                    bins=_positive_or_none(input.score_bins()),
                    methods=tuple(input.score_methods() or ()),
                    use_groups=input.score_groups(),
                    reuse_directions=input.score_reuse(),
                )
            return base

        def make_release_outputs(kind: str) -> None:
            def preview_fn() -> Any:
                tick()
                return _preview_ui(state.preview(kind, **params(kind)))

            preview_fn.__name__ = f"{kind}_preview"
            render.ui(preview_fn)

            def status_fn() -> Any:
                msg = status[kind]()
                return None if msg is None else _alert(msg[0], msg[1])

            status_fn.__name__ = f"{kind}_status"
            render.ui(status_fn)

            @reactive.effect
            @reactive.event(getattr(input, f"run_{kind}"))
            async def _run() -> None:
                settings = params(kind)
                preview = state.preview(kind, **settings)
                if preview.cost is None:
                    status[kind].set((preview.message, "danger"))
                    return
                if not preview.affordable and state.budget is not None:
                    eps_left, delta_left = state.budget.remaining
                    status[kind].set((
                        f"Refused: this release would cost {preview.cost}, but only "
                        f"(eps={eps_left:.4g}, delta={delta_left:.3g}) remains. Nothing was "
                        "computed or spent.", "danger",
                    ))  # fmt: skip
                    return
                # The computation (O(n^2 p) for the directions) runs in a worker
                # thread so that the server stays responsive meanwhile.
                note_id = ui.notification_show(
                    f"Computing the private {kind} release...", duration=None, type="message"
                )
                try:
                    rel = await asyncio.to_thread(state.release, kind, **settings)
                except BudgetExceededError as exc:
                    status[kind].set((f"Refused: {exc}", "danger"))
                except (DataError, TiedRowsError, TypeError, ValueError) as exc:
                    status[kind].set((f"Not released: {exc}", "danger"))
                except MemoryError:
                    status[kind].set((
                        "Not released: not enough memory for these settings; nothing "
                        "was spent.", "danger",
                    ))  # fmt: skip
                else:
                    text = f"Release #{rel.number} made; it cost eps = {rel.cost.eps:.4g}, "
                    text += f"delta = {rel.cost.delta:.3g}."
                    if rel.warnings:
                        text += " Notes: " + " ".join(rel.warnings)
                    ok = rel.forecast is None or rel.forecast.ok
                    if not ok:
                        text += (
                            " The forecast says this picture is likely wrong; see the "
                            "note with the figure."
                        )
                    status[kind].set((text, "success" if ok else "warning"))
                finally:
                    ui.notification_remove(note_id)
                changed()

        for kind in ("directions", "scree", "score"):
            make_release_outputs(kind)

        def note(kind: str, what: str) -> Any:
            tick()
            rel = state.latest(kind)
            if rel is None:
                return ui.p(
                    f"No {what} release yet: set its eps and delta and run it.",
                    class_="text-muted",
                )
            return ui.div(
                ui.p(
                    f"Showing release #{rel.number}, which cost {rel.cost}. {_FREE}",
                    class_="text-muted small redraw-note",
                ),
                _release_forecast(rel),
            )

        @render.ui
        def loading_note() -> Any:
            return note("directions", "directions")

        @render.ui
        def scree_note() -> Any:
            return note("scree", "scree")

        @render.ui
        def score_note() -> Any:
            return note("score", "score")

        # -- figures -----------------------------------------------------------------
        # Each draw_* reads the page's settings (on the event loop, where reactive
        # reads belong) and returns a job that draws from released values only;
        # the job runs in a worker thread, so one session's slow figure never
        # blocks another session.
        def draw_loading() -> Callable[[], Any]:
            tick()
            rel = _need(state.latest("directions"))
            p = len(rel.columns)
            heat_k = max(1, min(int(input.loading_heat_k() or 4), p))
            opts = {
                "kind": input.loading_kind(),
                "components": (int(input.loading_pc_x() or 1), int(input.loading_pc_y() or 2)),
                "heatmap_components": list(range(1, heat_k + 1)),
                "uncertainty": _positive_or_none(input.loading_uncertainty()),
                "top": _positive_or_none(input.loading_top()),
                "color": input.loading_color(),
            }
            return lambda: figures.loading_figure(rel, **opts)

        def draw_scree() -> Callable[[], Any]:
            tick()
            rel = _need(state.latest("scree"))
            kind = input.scree_kind()
            return lambda: figures.scree_figure(rel, kind=kind)

        def draw_score() -> Callable[[], Any]:
            tick()
            rel = _need(state.latest("score"))
            kind = input.score_kind()
            method = input.score_method_shown()
            if method not in rel.result.methods:
                method = rel.result.methods[0]
            if kind == "groups" and rel.result.groups is None:
                kind = "histogram"
            size = _positive_or_none(input.score_sample_size())

            def job() -> Any:
                sample = None
                if kind == "sample":
                    key = (rel.number, method, size or 0)
                    if key not in samples:
                        samples[key] = state.sample(rel, method=method, size=size)
                    sample = samples[key]
                return figures.score_figure(rel, kind=kind, method=method, sample=sample)

            return job

        def plot_output(name: str, draw: Callable[[], Callable[[], Any]]) -> None:
            # The figure is rendered here (not by render.plot, whose click map
            # cannot handle colour-bar axes) and shown at its own size.
            async def fn() -> Any:
                job = draw()
                png = await asyncio.to_thread(figures.render, job, "png")
                fd, path = tempfile.mkstemp(prefix="dppca-", suffix=".png")
                with os.fdopen(fd, "wb") as fh:
                    fh.write(png)
                return {"src": path, "style": "max-width: 100%; height: auto;", "alt": name}

            fn.__name__ = name
            render.image(delete_file=True)(fn)

        plot_output("loading_plot", draw_loading)
        plot_output("scree_plot", draw_scree)
        plot_output("score_plot", draw_score)

        # -- downloads ---------------------------------------------------------------
        # The buttons exist only once there is something to download; a request
        # without it (an old link) gets a short text, not a server error.
        def download(name: str, filename: str, content: Callable[[], Any], media: str) -> None:
            async def fn() -> Any:
                try:
                    job = content()
                except SilentException:
                    yield b"nothing to download yet\n"
                    return
                yield await asyncio.to_thread(job)

            fn.__name__ = name
            render.download_button(filename=filename, media_type=media)(fn)

        def download_buttons(prefix: str, kind: str, table: str) -> Callable[[], Any]:
            def fn() -> Any:
                tick()
                return _download_buttons(prefix, table, state.latest(kind) is not None)

            fn.__name__ = f"{prefix}_downloads"
            return fn

        draws = {"loading": draw_loading, "scree": draw_scree, "score": draw_score}
        kinds = {"loading": "directions", "scree": "scree", "score": "score"}
        tables = {"loading": "Directions", "scree": "Scree table", "score": "Bin table"}
        for prefix, draw in draws.items():
            kind = kinds[prefix]
            for fmt, media in figures.FIGURE_FORMATS.items():

                def figure_job(draw=draw, fmt=fmt) -> Callable[[], bytes]:
                    job = draw()
                    return lambda: figures.render(job, fmt)

                download(f"dl_{prefix}_{fmt}", f"dppca-{prefix}.{fmt}", figure_job, media)

            def table_job(kind=kind) -> Callable[[], str]:
                rel = _need(state.latest(kind))
                return lambda: figures.csv_text(figures.release_table(rel))

            download(f"dl_{prefix}_csv", f"dppca-{prefix}.csv", table_job, "text/csv")

            render.ui(download_buttons(prefix, kind, tables[prefix]))

        def ledger_job() -> Callable[[], str]:
            frame = state.ledger_frame()
            req(not frame.empty)
            frame = frame.assign(
                eps=[float(f"{v:.6g}") for v in frame["eps"]],
                delta=[float(f"{v:.6g}") for v in frame["delta"]],
            )
            return lambda: figures.csv_text(frame, index=False)

        download("dl_ledger_csv", "dppca-ledger.csv", ledger_job, "text/csv")

        @render.ui
        def ledger_downloads() -> Any:
            tick()
            if state.ledger_version()[0] == 0:
                return ui.tags.button(
                    "Ledger (CSV)", type="button", class_="btn btn-default", disabled=True
                )
            return ui.download_button("dl_ledger_csv", "Ledger (CSV)")

    return UploadLimitedApp(page, server, max_upload=max_upload)


def _need(release: Release | None) -> Release:
    """The release, or stop the reactive computation quietly while there is none."""
    req(release)
    assert release is not None  # req raises a silent stop on None
    return release
