"""The kinds of release the faces offer, one entry each: the registry of release kinds.

The command line registers one subcommand per kind that has a ``command``,
and the app builds one tab per kind that has an :class:`AppTab`, reading its
settings, planning it and offering its downloads through the entry, instead
of an ``if kind == ...`` chain in every place. Adding a kind is one entry
here and its pieces.

Every piece is named by its import path, ``"module:attribute"``, and loaded
by :func:`load` on first use: reading the registry imports nothing, so the
command line still starts without pandas, and the app's pieces (Shiny) are
never loaded by the command line. ``tests/test_kinds.py`` loads every piece,
so a renamed module or function fails there, not in a user's session.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

__all__ = ["KINDS", "AppTab", "ReleaseKind", "app_tabs", "load", "release_kind"]


def load(path: str) -> Any:
    """The object named by ``"module:attribute"`` (or the module, without ``:``)."""
    module, _, attribute = path.partition(":")
    loaded = importlib.import_module(module)
    return getattr(loaded, attribute) if attribute else loaded


@dataclass(frozen=True)
class AppTab:
    """What the app's tab of a kind is made of.

    ``prefix`` starts the ids of the tab's figure and downloads (``loading``
    for the directions, whose picture is the loading plot); ``table`` names
    its table download; ``share`` is the share of the dataset's budget
    suggested for one release; ``release_file`` offers the release file
    (JSON) as well. The other fields are pieces (see :func:`load`): ``page``
    builds the tab (no arguments), ``settings`` reads the tab's settings from
    the page (``settings(value) -> dict``) and ``request`` builds the kind's
    options from them and plans the release (``request(selection, settings,
    privacy, bounds, directions) -> ReleaseRequest``, ``privacy`` the
    :class:`~dppca.core.options.PrivacyOptions` built once from the page);
    ``details``, when given, words the plan for the preview
    (``details(plan) -> tuple of str``).
    """

    prefix: str
    table: str
    share: float
    page: str
    settings: str
    request: str
    release_file: bool = False
    details: str | None = None


@dataclass(frozen=True)
class ReleaseKind:
    """One kind of release: its library pieces and where each face finds its own.

    ``options`` are the option classes of the kind besides
    :class:`~dppca.core.options.PrivacyOptions`, ``plan`` plans it from
    option objects (``plan_x_options``) and ``result`` is the result class;
    ``command`` is the module of its subcommand (with ``register``), None
    when the command line has none; ``tab`` the app's tab, None when the app
    has none.
    """

    name: str
    options: tuple[str, ...]
    plan: str
    result: str
    command: str | None = None
    tab: AppTab | None = None

    def pieces(self) -> Iterator[str]:
        """Every piece this entry names (for the test that loads them all)."""
        yield from (*self.options, self.plan, self.result)
        if self.command is not None:
            yield self.command
        if self.tab is not None:
            yield from (self.tab.page, self.tab.settings, self.tab.request)
            if self.tab.details is not None:
                yield self.tab.details


_OPTIONS = "dppca.core.options"

#: The kinds in the order the command line lists them and the app shows them.
KINDS: Mapping[str, ReleaseKind] = MappingProxyType(
    {
        kind.name: kind
        for kind in (
            ReleaseKind(
                "pca",
                options=("dppca.releases.pca.options:PCAOptions", f"{_OPTIONS}:DesignOptions"),
                plan="dppca.releases.pca.plan:plan_pca_options",
                result="dppca.releases.pca.result:PCAResult",
                command="dppca.cli.pca",
                tab=AppTab(
                    prefix="pca",
                    table="Importance table",
                    share=1.0,  # a whole analysis: all five pictures from one release
                    page="dppca.app.ui:pca_tab",
                    settings="dppca.app.views:pca_settings",
                    request="dppca.app.plans:pca_request",
                    release_file=True,
                    details="dppca.app.preview_text:plan_details",  # as 'dppca pca --dry-run'
                ),
            ),
            ReleaseKind(
                "directions",
                options=(f"{_OPTIONS}:DirectionsOptions",),
                plan="dppca.releases.directions.plan:plan_directions",
                result="dppca.releases.directions.result:DirectionsResult",
                command="dppca.cli.directions",
                tab=AppTab(
                    prefix="loading",
                    table="Directions",
                    share=0.4,
                    page="dppca.app.ui:loading_tab",
                    settings="dppca.app.views:directions_settings",
                    request="dppca.app.plans:directions_request",
                ),
            ),
            ReleaseKind(
                "loading",
                options=(f"{_OPTIONS}:DirectionsOptions", f"{_OPTIONS}:LoadingOptions"),
                plan="dppca.releases.loading.plan:plan_loading_options",
                result="dppca.releases.loading.result:LoadingResult",
                command="dppca.cli.loading",
            ),
            ReleaseKind(
                "scree",
                options=(
                    "dppca.releases.scree.options:ScreeOptions",
                    f"{_OPTIONS}:DesignOptions",
                ),
                plan="dppca.releases.scree.plan:plan_scree_options",
                result="dppca.releases.scree.result:ScreeResult",
                command="dppca.cli.scree",
                tab=AppTab(
                    prefix="scree",
                    table="Scree table",
                    share=0.3,
                    page="dppca.app.ui:scree_tab",
                    settings="dppca.app.views:scree_settings",
                    request="dppca.app.plans:scree_request",
                ),
            ),
            ReleaseKind(
                "score",
                options=("dppca.releases.score.options:ScoreOptions", f"{_OPTIONS}:DesignOptions"),
                plan="dppca.releases.score.plan:plan_score_options",
                result="dppca.releases.score.result:ScoreResult",
                command="dppca.cli.score",
                tab=AppTab(
                    prefix="score",
                    table="Bin table",
                    share=0.3,
                    page="dppca.app.ui:score_tab",
                    settings="dppca.app.views:score_settings",
                    request="dppca.app.plans:score_request",
                ),
            ),
            ReleaseKind(
                "report",
                options=("dppca.releases.report:ReportOptions", f"{_OPTIONS}:DesignOptions"),
                plan="dppca.releases.report:plan_report_options",
                result="dppca.reporting:Report",
                command="dppca.cli.report",
            ),
        )
    }
)


def release_kind(name: str) -> ReleaseKind:
    """The entry of the kind ``name``.

    Raises
    ------
    KeyError
        If no kind has that name (the message lists the kinds).
    """
    try:
        return KINDS[name]
    except KeyError:
        raise KeyError(
            f"unknown release kind {name!r}; the kinds are {', '.join(KINDS)}."
        ) from None


def app_tabs() -> dict[str, AppTab]:
    """The kinds the app offers and their tabs, in the order of the tabs."""
    return {name: kind.tab for name, kind in KINDS.items() if kind.tab is not None}
