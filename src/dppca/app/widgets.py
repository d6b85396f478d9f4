"""The pieces of the app's page that the server renders: alerts, previews, tables.

The static layout is :func:`dppca.app.ui.build_ui`; these fragments change
with the state and are drawn by :mod:`dppca.app.server`.
"""

from __future__ import annotations

import hashlib
from typing import Any

from shiny import ui

from .plans import Preview, Release, check_lines, page_sentence

__all__ = [
    "FREE",
    "alert",
    "bound_ids",
    "bounds_table",
    "download_buttons",
    "fit_note",
    "preview_box",
    "release_note",
]

FREE = (
    "Re-drawing a kept release (other plot kind, other components, other display options) "
    "is post-processing: it spends nothing."
)
_DOWNLOAD_LABELS = {"png": "Figure (PNG)", "svg": "Figure (SVG)"}


def alert(text: str, kind: str) -> Any:
    """A one-line message box of a Bootstrap kind (success, warning, danger, ...)."""
    return ui.div(text, class_=f"alert alert-{kind} py-2 my-2", role="alert")


def _forecast_box(lines: tuple[str, ...], ok: bool, cls: str) -> Any:
    body = [ui.p(line, class_="mb-1") for line in lines]
    kind = "success" if ok else "warning"
    return ui.div(*body, class_=f"alert alert-{kind} py-2 my-2 {cls}", role="status")


def preview_box(preview: Preview) -> Any:
    """The price of a release before it runs, with its accuracy forecast."""
    body = [ui.p(preview.message, class_="mb-1")]
    body += [ui.p(f"Note: {w}", class_="mb-1 small") for w in preview.warnings]
    kind = "secondary" if preview.cost is None else ("info" if preview.affordable else "warning")
    cost = ui.div(*body, class_=f"alert alert-{kind} py-2 my-2 cost-preview", role="status")
    if preview.forecast is None:
        return cost
    parts = [cost]
    if preview.details:  # a PCA fit: its plan as the command line's dry run prints it
        parts.append(
            ui.tags.details(
                ui.tags.summary("The plan (as dppca pca --dry-run prints it; no data read)"),
                ui.tags.pre("\n".join(preview.details), class_="small mb-0 plan-text"),
                open=True,
                class_="my-2",
            )
        )
    parts.append(_forecast_box(preview.forecast_lines, preview.forecast.ok, "forecast-preview"))
    return ui.div(*parts)


def _release_forecast(rel: Release) -> Any:
    """The forecast a release was made under and the clipping policy, shown with it."""
    if not rel.notes:
        return None
    ok = (rel.forecast is None or rel.forecast.ok) and not check_lines(rel.result)
    return _forecast_box(rel.notes, ok, "release-forecast")


def release_note(rel: Release | None, what: str) -> Any:
    """The line above a tab's figure: which release it shows, or how to make one."""
    if rel is None:
        return ui.p(
            f"No {what} release yet: set its eps and delta and run it.",
            class_="text-muted",
        )
    return ui.div(
        ui.p(
            f"Showing release #{rel.number}, which cost {rel.cost}. {FREE}",
            class_="text-muted small redraw-note",
        ),
        _release_forecast(rel),
    )


def fit_note(rel: Release | None) -> Any:
    """The PCA tab's line above the pictures: the release, then the fit's own notes
    and what its eps means to an attacker."""
    head = release_note(rel, "PCA")
    if rel is None:
        return head
    fit = rel.result
    lines = [ui.p(f"Analysis: {fit.analysis}: {fit.estimates}.", class_="mb-1")]
    lines += [ui.p(page_sentence(note), class_="mb-1") for note in fit.notes]
    lines.append(ui.p(f"What this fit's eps means: {fit.privacy_sentence()}", class_="mb-0"))
    return ui.div(
        head, ui.div(*lines, class_="alert alert-light py-2 my-2 small fit-notes", role="status")
    )


def download_buttons(prefix: str, table: str, enabled: bool, *, release_file: bool = False) -> Any:
    """A tab's download buttons; inert ones while there is nothing to download.

    ``release_file`` adds the release file (JSON, :mod:`dppca.release_io`).
    """
    labels = {**_DOWNLOAD_LABELS, "csv": f"{table} (CSV)"}
    if release_file:
        labels["json"] = "Release file (JSON)"
    if enabled:
        buttons = [ui.download_button(f"dl_{prefix}_{fmt}", lab) for fmt, lab in labels.items()]
    else:  # nothing to download yet: inert buttons, no request reaches the server
        buttons = [
            ui.tags.button(lab, type="button", class_="btn btn-default", disabled=True)
            for lab in labels.values()
        ]
    return ui.div(*buttons, class_="d-flex gap-2 flex-wrap")


def bound_ids(variable: str) -> tuple[str, str]:
    """Input ids of one row of the bounds table (from the name, so a row keeps its cells)."""
    key = hashlib.sha1(variable.encode()).hexdigest()[:10]
    return f"bound_lo_{key}", f"bound_hi_{key}"


def bounds_table(columns: tuple[str, ...], entries: dict[str, Any]) -> Any:
    """One row per analysed variable: its name and two cells, empty unless typed in."""
    if not columns:
        return ui.p("Choose the columns first.", class_="text-muted small")
    head = ui.tags.thead(
        ui.tags.tr(ui.tags.th("variable"), ui.tags.th("lower"), ui.tags.th("upper"))
    )
    rows = []
    for name in columns:
        lo_id, hi_id = bound_ids(name)
        lo, hi = entries.get(name, (None, None))
        rows.append(
            ui.tags.tr(
                ui.tags.td(name, class_="bound-variable"),
                ui.tags.td(ui.input_numeric(lo_id, None, value=lo)),
                ui.tags.td(ui.input_numeric(hi_id, None, value=hi)),
            )
        )
    return ui.tags.table(head, ui.tags.tbody(*rows), class_="table table-sm bounds-table")
