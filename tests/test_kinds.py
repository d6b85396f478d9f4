"""The registry of release kinds (dppca._kinds) drives the CLI's subcommands and the app's tabs."""

from __future__ import annotations

import argparse
import sys
import types

import pytest

from dppca import _kinds
from dppca._kinds import KINDS, AppTab, ReleaseKind, app_tabs, load, release_kind
from dppca.cli import build_parser
from dppca.core.options import _Checked

HEAVY = ("pandas", "scipy", "matplotlib", "shiny")


@pytest.mark.parametrize("name", list(KINDS))
def test_every_piece_of_every_kind_loads(name):
    # a renamed module or function fails here, not in a user's session
    kind = KINDS[name]
    for piece in kind.pieces():
        assert load(piece) is not None, piece
    assert all(issubclass(load(cls), _Checked) for cls in kind.options)
    assert callable(load(kind.plan)) and hasattr(load(kind.result), "__dataclass_fields__")


def test_reading_the_registry_imports_nothing_heavy(loaded_after):
    code = "from dppca._kinds import KINDS, app_tabs\napp_tabs()\n"
    assert loaded_after(code, HEAVY) == set()
    found = loaded_after(code, ("dppca.cli", "dppca.app", "dppca.releases.scree"))
    assert found == set()


def test_the_cli_has_one_subcommand_per_kind_then_the_app_and_the_ledger():
    parser = build_parser()
    (subparsers,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    commands = [name for name, kind in KINDS.items() if kind.command is not None]
    assert list(subparsers.choices) == [*commands, "app", "ledger"]


def test_the_app_has_one_tab_per_kind_with_a_tab():
    from dppca.app.state import DEFAULT_SHARES, RELEASE_KINDS

    assert RELEASE_KINDS == ("pca", "directions", "scree", "score")
    assert RELEASE_KINDS == tuple(app_tabs())
    assert DEFAULT_SHARES == {"pca": 1.0, "directions": 0.4, "scree": 0.3, "score": 0.3}


def test_an_unknown_kind_is_refused_naming_the_kinds():
    with pytest.raises(KeyError, match=r"unknown release kind .biplot.*pca, directions"):
        release_kind("biplot")


@pytest.fixture
def extra_kind(monkeypatch):
    """A kind added to the registry, with a subcommand and an app planner of its own."""
    module = types.ModuleType("dppca_test_extra_kind")
    seen: list[tuple] = []

    def register(subparsers):
        subparsers.add_parser("extra", help="a kind added to the registry")

    def request(sel, settings, privacy, box, directions):
        seen.append((settings, privacy.eps, privacy.scale))
        return "planned"

    module.register = register  # type: ignore[attr-defined]
    module.request = request  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, module.__name__, module)
    tab = AppTab(
        prefix="extra",
        table="Extra table",
        share=0.1,
        page=f"{module.__name__}:register",
        settings=f"{module.__name__}:register",
        request=f"{module.__name__}:request",
    )
    entry = ReleaseKind(
        "extra",
        options=(),
        plan=f"{module.__name__}:request",
        result=f"{module.__name__}:request",
        command=module.__name__,
        tab=tab,
    )
    monkeypatch.setattr(_kinds, "KINDS", {**KINDS, "extra": entry})
    monkeypatch.setattr("dppca.cli.KINDS", _kinds.KINDS)
    return seen


def test_a_kind_added_to_the_registry_gets_a_subcommand(extra_kind):
    parser = build_parser()
    (subparsers,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    assert "extra" in subparsers.choices
    assert list(subparsers.choices)[-3:] == ["extra", "app", "ledger"]


def test_a_kind_added_to_the_registry_is_planned_by_its_own_request(extra_kind):
    import pandas as pd

    from dppca.app.data import Selection
    from dppca.app.plans import plan_request

    sel = Selection(pd.DataFrame({"a": [0.0] * 500, "b": [1.0] * 500}))
    settings = {"eps": 0.5, "delta": 1e-6, "calibration": "analytic", "scale": "private"}
    assert plan_request("extra", {**settings, "bins": 7}, sel, None, None) == "planned"
    assert extra_kind == [({"bins": 7}, 0.5, "private")]  # the shared settings, built once
