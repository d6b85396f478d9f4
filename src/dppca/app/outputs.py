"""The figures and downloads of one session of the dppca app.

Everything here draws or writes from kept releases only (post-processing, no
cost). Each ``draw_*`` reads the page's settings on the event loop, where
reactive reads belong, and returns a job that draws from released values
only; the job runs in a worker thread as a Shiny extended task, outside the
reactive graph that all sessions share, so one session's slow figure never
blocks another session.
"""

from __future__ import annotations

import asyncio
import os
import tempfile
import threading
from collections import OrderedDict
from collections.abc import AsyncIterator, Callable
from typing import Any

import pandas as pd
from shiny import Inputs, reactive, render, req, ui
from shiny.types import SilentException

from .._kinds import app_tabs
from . import figures
from .data import DataError
from .plans import Release
from .state import AppState
from .views import (
    MAX_SAMPLE_SIZE,
    ledger_csv_frame,
    loading_options,
    positive_or_none,
    score_display,
)
from .widgets import download_buttons

__all__ = ["SampleCache", "SessionOutputs"]


Job = Callable[[], Any]  # drawing or writing from released values, run in a worker thread


class SampleCache:
    """The few synthetic samples a session drew last, by (release, method, size).

    Bounded (least recently used first out), so asking for many sizes does
    not grow the server's memory; thread-safe, as figures draw in threads.
    """

    def __init__(self, size: int = 4) -> None:
        self.size = int(size)
        self._items: OrderedDict[tuple[int, str, int], pd.DataFrame] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: tuple[int, str, int], make: Callable[[], pd.DataFrame]) -> pd.DataFrame:
        """The sample kept under ``key``, or ``make()`` kept from now on."""
        with self._lock:
            if key in self._items:
                self._items.move_to_end(key)
                return self._items[key]
        value = make()
        with self._lock:
            self._items[key] = value
            self._items.move_to_end(key)
            while len(self._items) > self.size:
                self._items.popitem(last=False)
        return value

    def clear(self) -> None:
        with self._lock:
            self._items.clear()

    def __len__(self) -> int:
        return len(self._items)


class SessionOutputs:
    """The figure and download outputs of one session."""

    def __init__(
        self, input: Inputs, state: AppState, tick: reactive.Value[int], samples: SampleCache
    ) -> None:
        self.input, self.state, self.tick, self.samples = input, state, tick, samples

    def value(self, name: str) -> Any:
        """The current value of input ``name`` (a reactive read)."""
        return getattr(self.input, name)()

    def register(self) -> None:
        """The tabs' figures, then each tab's downloads and the ledger's."""
        self._figures()
        self._downloads()

    def draw_pca(self) -> Job:
        self.tick()
        rel = _need(self.state.latest("pca"))
        kind = self.input.pca_kind()
        return lambda: figures.pca_figure(rel, kind=kind)

    def draw_loading(self) -> Job:
        self.tick()
        rel = _need(self.state.latest("directions"))
        opts = loading_options(len(rel.columns), self.value)
        return lambda: figures.loading_figure(rel, **opts)

    def draw_scree(self) -> Job:
        self.tick()
        rel = _need(self.state.latest("scree"))
        kind = self.input.scree_kind()
        return lambda: figures.scree_figure(rel, kind=kind)

    def draw_score(self) -> Job:
        self.tick()
        rel = _need(self.state.latest("score"))
        kind, method = score_display(rel, self.input.score_kind(), self.input.score_method_shown())
        size = None
        if kind == "sample":
            size = positive_or_none(
                self.input.score_sample_size(), label="the sample size", most=MAX_SAMPLE_SIZE
            )

        def job() -> Any:
            sample = None
            if kind == "sample":
                sample = self.samples.get(
                    (rel.number, method, size or 0),
                    lambda: self.state.sample(rel, method=method, size=size),
                )
            return figures.score_figure(rel, kind=kind, method=method, sample=sample)

        return job

    def _draws(self) -> dict[str, Callable[[], Job]]:
        """Each tab's figure (by its prefix, ``draw_<prefix>``), in the registry's order."""
        return {tab.prefix: getattr(self, f"draw_{tab.prefix}") for tab in app_tabs().values()}

    def _figures(self) -> None:
        for prefix, draw in self._draws().items():
            _plot_output(f"{prefix}_plot", draw)

    def _downloads(self) -> None:
        # The buttons exist only once there is something to download; a request
        # without it (an old link) gets a short text, not a server error.
        draws = self._draws()
        for kind, tab in app_tabs().items():
            prefix, table, draw = tab.prefix, tab.table, draws[tab.prefix]
            for fmt, media in figures.FIGURE_FORMATS.items():

                def figure_job(draw: Callable[[], Job] = draw, fmt: str = fmt) -> Job:
                    try:
                        job = draw()
                    except DataError as exc:  # a setting out of range: the figure says why
                        job = _refusing(exc)
                    return lambda: figures.render(job, fmt)

                _download(f"dl_{prefix}_{fmt}", f"dppca-{prefix}.{fmt}", figure_job, media)

            def table_job(kind: str = kind) -> Job:
                rel = _need(self.state.latest(kind))
                return lambda: figures.csv_text(figures.release_table(rel))

            _download(f"dl_{prefix}_csv", f"dppca-{prefix}.csv", table_job, "text/csv")
            render.ui(self._download_buttons(prefix, kind, table, tab.release_file))

        def release_job() -> Job:  # the fit's release file (dppca.release_io)
            rel = _need(self.state.latest("pca"))
            return lambda: figures.release_file(rel)

        _download("dl_pca_json", "dppca-pca.json", release_job, "application/json")

        def ledger_job() -> Job:
            frame = self.state.ledger_frame()
            req(not frame.empty)
            frame = ledger_csv_frame(frame)
            return lambda: figures.csv_text(frame, index=False)

        _download("dl_ledger_csv", "dppca-ledger.csv", ledger_job, "text/csv")

        @render.ui
        def ledger_downloads() -> Any:
            self.tick()
            if self.state.ledger_version()[0] == 0:
                return ui.tags.button(
                    "Ledger (CSV)", type="button", class_="btn btn-default", disabled=True
                )
            return ui.download_button("dl_ledger_csv", "Ledger (CSV)")

    def _download_buttons(
        self, prefix: str, kind: str, table: str, release_file: bool
    ) -> Callable[[], Any]:
        def fn() -> Any:
            self.tick()
            made = self.state.latest(kind) is not None
            return download_buttons(prefix, table, made, release_file=release_file)

        fn.__name__ = f"{prefix}_downloads"
        return fn


def _plot_output(name: str, draw: Callable[[], Job]) -> None:
    # The figure is drawn by an extended task in a worker thread (outside the
    # reactive graph, which all sessions share), rendered here rather than by
    # render.plot (whose click map cannot handle colour-bar axes) and shown at
    # its own size. A setting the page cannot draw becomes a figure saying why.
    @reactive.extended_task
    async def task(job: Job) -> bytes:
        return await asyncio.to_thread(figures.render, job, "png")

    wanted = reactive.value(False)

    @reactive.effect
    def _draw() -> None:
        try:
            job = draw()
        except SilentException:  # nothing to draw (yet)
            wanted.set(False)
            return
        except DataError as exc:
            job = _refusing(exc)
        wanted.set(True)
        task.cancel()  # a figure for older settings is not wanted any more
        task(job)

    async def fn() -> Any:
        req(wanted())
        png = task.result()
        fd, path = tempfile.mkstemp(prefix="dppca-", suffix=".png")
        with os.fdopen(fd, "wb") as fh:
            fh.write(png)
        return {"src": path, "style": "max-width: 100%; height: auto;", "alt": name}

    fn.__name__ = name
    render.image(delete_file=True)(fn)


def _refusing(exc: DataError) -> Job:
    """A job that raises ``exc``: :func:`figures.render` draws its message instead."""

    def job() -> Any:
        raise exc

    return job


def _download(name: str, filename: str, content: Callable[[], Job], media: str) -> None:
    async def fn() -> AsyncIterator[Any]:
        try:
            job = content()
        except SilentException:
            yield b"nothing to download yet\n"
            return
        yield await asyncio.to_thread(job)

    fn.__name__ = name
    render.download_button(filename=filename, media_type=media)(fn)


def _need(release: Release | None) -> Release:
    """The release, or stop the reactive computation quietly while there is none."""
    req(release)
    assert release is not None  # req raises a silent stop on None
    return release
