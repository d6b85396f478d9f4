"""The layout of the dppca app's page, and :func:`create_app`.

The page is declared here; what a session does with it lives in
:mod:`dppca.app.server` (reactive handlers), :mod:`dppca.app.views` (the
plain functions behind them) and :mod:`dppca.app.widgets` (the fragments the
server draws), over :mod:`dppca.app.state`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pandas as pd
from shiny import App, ui

from .._kinds import app_tabs, load
from ..core.validation import MAX_BINS
from ..datasets import DATASETS
from ..privacy.ledger import Ledger
from ._limits import LocalApp, new_token
from .data import MAX_UPLOAD_BYTES, MISSING_BOX, MISSING_HELP
from .figures import PCA_PICTURES
from .plans import BOUNDS_HELP
from .server import make_server
from .state import DEFAULT_EPS
from .views import MAX_SAMPLE_SIZE, MAX_UNCERTAINTY, split_defaults
from .widgets import FREE

__all__ = ["build_ui", "create_app"]

_COLOURS = {"#1f5fa8": "blue", "#b2182b": "red", "#1b7837": "green", "#333333": "grey"}
_CALIBRATIONS = {"analytic": "analytic (exact for every eps)", "classic": "classic (eps < 1)"}
_SCALES = {"": "units as given", "private": "private scales (half of this release's eps)"}


def _release_inputs(prefix: str) -> list[Any]:
    """eps, delta, calibration and column scales of one release."""
    return [
        ui.layout_columns(
            ui.input_numeric(f"{prefix}_eps", "eps of this release", value=0.3, min=0, step=0.05),
            ui.input_numeric(
                f"{prefix}_delta", "delta of this release", value=1e-7, min=0, step=1e-7
            ),
            ui.input_select(f"{prefix}_calibration", "Gaussian calibration", _CALIBRATIONS),
            ui.input_select(f"{prefix}_scale", "column scales", _SCALES),
        )
    ]


def _release_block(prefix: str, button: str) -> list[Any]:
    return [
        ui.output_ui(f"{prefix}_preview"),
        ui.input_action_button(f"run_{prefix}", button, class_="btn-primary"),
        ui.output_ui(f"{prefix}_status"),
    ]


def _downloads(prefix: str, table: str) -> Any:
    """The download buttons of a tab, rendered by the server once there is a release."""
    return ui.output_ui(f"{prefix}_downloads")


_ANALYSES = {
    "standardized": "standardised (correlation PCA; the same in any units; recommended)",
    "units": "in the table's units (depends on them)",
}
_PCA_SCORE = {
    "auto": "automatic",
    "yes": "always",
    "no": "never",
}
_WEIGHT_LABELS = {
    "directions": "directions",
    "scree": "scree (units only)",
    "frame": "score frame",
    "score": "score histogram",
    "scales": "private scales (standardised)",
}


def pca_tab() -> Any:
    """The PCA tab: one private PCA fit, and every picture drawn from it."""
    weights = split_defaults("standardized")
    return ui.nav_panel(
        "PCA",
        ui.p(
            "One private PCA of the chosen columns: the directions, the variances "
            "(scree / PVE) and the score plot share one budget and one choice of analysis, "
            "and the five pictures (scree, score, loading, correlation circle, biplot) are "
            "drawn from that one fit at no further cost. Missing values follow the rule "
            "chosen in the data panel; public bounds, if given, clip the data and set the "
            "score plot's frame and scales for free.",
            class_="small text-muted",
        ),
        ui.layout_columns(
            ui.input_numeric("pca_eps", "eps of this fit", value=DEFAULT_EPS, min=0, step=0.05),
            ui.input_numeric("pca_delta", "delta of this fit", value=1e-7, min=0, step=1e-7),
            ui.input_select("pca_calibration", "Gaussian calibration", _CALIBRATIONS),
        ),
        ui.input_radio_buttons("pca_standardize", "Analysis", _ANALYSES, inline=True),
        ui.layout_columns(
            ui.input_select("pca_score", "Score plot", _PCA_SCORE),
            ui.input_numeric(
                "pca_k", "PCs with a private variance (0 = the fit's default)", 0, min=0, step=1
            ),
            ui.input_numeric("pca_pc_x", "x: PC", 1, min=1, step=1),
            ui.input_numeric("pca_pc_y", "y: PC", 2, min=1, step=1),
        ),
        ui.help_text(
            "Score plot 'automatic': released unless it would need private scales that "
            "the forecast says fail at this n and eps (then left out, saying why, and its "
            "budget goes to the other parts); 'never' releases none, at no cost."
        ),
        ui.accordion(
            ui.accordion_panel(
                "Budget split (weights of the parts)",
                ui.help_text(
                    "Public weights of the parts that spend, normalised over the parts the "
                    "fit uses; 0 means the analysis' default (or a part it does not use). "
                    "They decide which part gets how much noise, not what the fit costs: "
                    "it records exactly its eps. The plan below lists each part's eps."
                ),
                ui.layout_columns(
                    *(
                        ui.input_numeric(
                            f"pca_w_{part}", label, weights[part] or 0, min=0, step=0.05
                        )
                        for part, label in _WEIGHT_LABELS.items()
                    )
                ),
                value="split",
            ),
            id="pca_split_panel",
            open=False,
        ),
        *_release_block("pca", "Run private PCA fit"),
        ui.hr(),
        ui.input_radio_buttons(
            "pca_kind", "Picture", {"all": "all five", **PCA_PICTURES}, inline=True
        ),
        ui.output_ui("pca_note"),
        ui.output_image("pca_plot", height="auto"),
        ui.layout_columns(
            ui.div(ui.h6("Importance of components"), ui.output_table("pca_importance")),
            ui.div(ui.h6("Budget of the parts"), ui.output_table("pca_budget")),
        ),
        _downloads("pca", "Importance table"),
    )


# Many columns must not push the rest of the sidebar below the fold.
_CSS = """
#columns + .selectize-control .selectize-input { max-height: 7.5em; overflow-y: auto; }
#columns + .selectize-control .selectize-input .item { font-size: 0.8em; padding: 0 4px; }
.bounds-table td, .bounds-table th { padding: 2px 4px; vertical-align: middle; }
.bounds-table .form-group { margin-bottom: 0; }
.bounds-table input { padding: 2px 6px; }
.plan-text { white-space: pre-wrap; }
"""


def loading_tab() -> Any:
    """The directions tab: a private directions release and its loading plot."""
    return ui.nav_panel(
        "Directions / loading",
        *_release_inputs("directions"),
        ui.input_radio_buttons(
            "directions_design",
            "Kendall matrix",
            {"exact": "exact (all pairs)", "balanced": "balanced design (faster, large tables)"},
            inline=True,
        ),
        ui.input_radio_buttons(
            "directions_estimator",
            "Matrix",
            {
                "kendall": "spherical Kendall (the method's default)",
                "tau": "Kendall's tau (columns in unrelated units; no scales needed)",
            },
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
                max=MAX_UNCERTAINTY,
                step=50,
            ),
        ),
        ui.output_ui("loading_note"),
        ui.output_image("loading_plot", height="auto"),
        _downloads("loading", "Directions"),
    )


def scree_tab() -> Any:
    """The scree tab: a private scree / PVE release and its plot."""
    return ui.nav_panel(
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


def score_tab() -> Any:
    """The score tab: a private score histogram and its pictures."""
    return ui.nav_panel(
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
            ui.input_numeric(
                "score_sample_size",
                f"sample size (0 = n, at most {MAX_SAMPLE_SIZE:,})",
                0,
                min=0,
                max=MAX_SAMPLE_SIZE,
                step=100,
            ),
        ),
        ui.output_ui("score_note"),
        ui.output_image("score_plot", height="auto"),
        _downloads("score", "Bin table"),
    )


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
        ui.input_checkbox("missing", MISSING_BOX, value=False),
        ui.help_text(MISSING_HELP),
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
            ui.input_numeric("total_delta", "Total delta", value=1e-6, min=0, step=1e-7),
        ),
        ui.input_action_button("set_budget", "Set budget"),
        ui.output_ui("budget_message"),
        ui.output_text("budget_summary"),
        ui.output_table("ledger_compact"),
        ui.help_text(FREE),
        width=380,
    )
    # one tab per kind the app offers (dppca._kinds), in the registry's order
    tabs = [load(tab.page)() for tab in app_tabs().values()]
    ledger = ui.card(
        ui.card_header("Privacy ledger (every release of this dataset, in every session)"),
        ui.output_table("ledger"),
        ui.output_ui("ledger_downloads"),
    )
    return ui.page_sidebar(
        sidebar,
        ui.navset_card_tab(*tabs, id="tabs"),
        ledger,
        title="dppca: differentially private PCA",
        fillable=False,
    )


def create_app(
    data: pd.DataFrame | None = None,
    *,
    data_name: str = "data",
    max_upload: int = MAX_UPLOAD_BYTES,
    ledger: Ledger | None = None,
    token: str | None = None,
    hosts: Sequence[str] = (),
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
    token : str, optional
        The secret every request must carry (``?token=...`` once, then a
        cookie); default a fresh random one, readable as ``app.token``.
    hosts : sequence of str, default=()
        Host names the page may be reached by besides the loopback names
        (see :class:`dppca.app._limits.LocalApp`).
    """
    page = build_ui(None if data is None else data_name, max_upload=max_upload)
    shared = Ledger(":memory:") if ledger is None else ledger

    server = make_server(data, data_name=data_name, max_upload=max_upload, ledger=shared)
    secret = new_token() if token is None else token
    return LocalApp(page, server, max_upload=max_upload, token=secret, hosts=hosts)
