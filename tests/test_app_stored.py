"""Releases paid for are shown again after a reload (a new session) or a restart.

The ledger's API for it (``charge(..., payload=...)`` and ``stored_releases``)
is stood in for by :class:`PayloadLedger` where the ledger lacks it, so the
app's side is tested either way.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from dppca import BudgetExceededError
from dppca.app import figures
from dppca.app.state import AppState, directions_of
from dppca.app.stored import restore_releases, stores_releases
from dppca.privacy.ledger import Ledger


class PayloadLedger(Ledger):
    """A ledger that keeps each charge's payload (what the real one adds)."""

    def __init__(self, path):
        super().__init__(path)
        self.payloads: dict[tuple[str, int], tuple[str, str | None]] = {}

    def charge(self, fp, cost, *, kind, name=None, payload=None):
        number = super().charge(fp, cost, kind=kind, name=name)
        self.payloads[(fp, number)] = (kind, payload)
        return number

    def stored_releases(self, fp):
        return [(n, k, p) for (f, n), (k, p) in sorted(self.payloads.items()) if f == fp]


def _ledger(path) -> Ledger:
    real = Ledger(path)
    return real if stores_releases(real) else PayloadLedger(path)


@pytest.fixture
def frame(rng: np.random.Generator) -> pd.DataFrame:
    out = pd.DataFrame(rng.normal(size=(300, 4)), columns=["a", "b", "c", "d"])
    out["label"] = np.where(np.arange(300) % 2 == 0, "x", "y")
    return out


def test_a_new_session_shows_the_releases_paid_for_at_no_cost(tmp_path, frame, rng):
    ledger = _ledger(tmp_path / "ledger.sqlite")
    first = AppState(random_state=rng, ledger=ledger)
    first.load("toy", frame)
    made = first.release("directions", eps=0.3, delta=1e-6)
    scree = first.release("scree", eps=0.2, delta=1e-6, k=3)
    spent = first.budget.spent
    # A reload: another session of the app (the same ledger) on the same table.
    again = AppState(random_state=rng, ledger=ledger)
    again.load("toy", frame)
    shown = again.latest("directions")
    assert shown is not None and shown.number == made.number == 1
    np.testing.assert_array_equal(
        directions_of(shown.result).directions, directions_of(made.result).directions
    )
    assert shown.cost.eps == pytest.approx(0.3) and shown.columns == ("a", "b", "c", "d")
    assert again.latest("scree").number == scree.number == 2
    assert figures.render(lambda: figures.loading_figure(shown), "png").startswith(b"\x89PNG")
    assert again.budget.spent == pytest.approx(spent)  # showing it again spent nothing
    # The restored directions are reused by a scree release at no direction cost.
    assert again.reusable_directions() is not None


def test_the_stored_payload_holds_released_values_only(tmp_path, frame, rng):
    ledger = _ledger(tmp_path / "ledger.sqlite")
    state = AppState(random_state=rng, ledger=ledger)
    state.load("toy", frame)
    state.release("directions", eps=0.3, delta=1e-6)
    (_, kind, payload), *_ = ledger.stored_releases(state.budget.fp)
    assert kind == "directions" and '"seed"' not in payload and "random_state" not in payload
    for value in frame["a"].to_numpy()[:20]:  # no data value is written
        assert repr(float(value)) not in payload


def test_an_overspending_release_is_not_stored_and_the_advice_fits(tmp_path, frame, rng):
    ledger = _ledger(tmp_path / "ledger.sqlite")
    state = AppState(random_state=rng, ledger=ledger)
    state.load("toy", frame)
    preview = state.preview("directions", eps=5.0, delta=1e-6)
    assert not preview.affordable and "re-draw" not in preview.message  # nothing to re-draw
    with pytest.raises(BudgetExceededError):
        state.release("directions", eps=5.0, delta=1e-6)
    assert restore_releases(ledger, state.budget.fp) == [] and state.budget.spent == (0.0, 0.0)
    state.release("directions", eps=0.3, delta=1e-6)
    assert (
        "re-draw an existing release (free)"
        in state.preview("directions", eps=5.0, delta=1e-6).message
    )


def test_a_ledger_without_stored_releases_still_charges_through_the_library(tmp_path, frame):
    plain = Ledger(tmp_path / "plain.sqlite")
    if stores_releases(plain):
        pytest.skip("this ledger stores releases")
    state = AppState(random_state=np.random.default_rng(1), ledger=plain)
    state.load("toy", frame)
    state.release("directions", eps=0.3, delta=1e-6)
    assert state.budget.spent == pytest.approx((0.3, 1e-6))
    again = AppState(ledger=plain)
    again.load("toy", frame)
    assert again.releases == []  # nothing stored: the advice says nothing of re-drawing
    assert "re-draw" not in again.preview("directions", eps=0.9, delta=1e-6).message


def test_a_restarted_app_shows_the_releases_stored_in_its_ledger_file(tmp_path, frame, rng):
    path = tmp_path / "ledger.sqlite"
    if not stores_releases(Ledger(path)):
        pytest.skip("dppca.privacy.ledger.Ledger does not store releases yet")
    first = AppState(random_state=rng, ledger=Ledger(path))
    first.load("toy", frame)
    made = first.release("directions", eps=0.3, delta=1e-6)
    again = AppState(ledger=Ledger(path))  # another process, after a restart
    again.load("toy", frame)
    np.testing.assert_array_equal(
        directions_of(again.latest("directions").result).directions,
        directions_of(made.result).directions,
    )


def test_a_stored_release_edited_in_the_file_is_not_shown_again(tmp_path, frame, rng):
    # The stored text lies outside the ledger's hash chain; the content hash
    # recorded with the charge still tells an edited text from the paid one.
    import sqlite3

    ledger = _ledger(tmp_path / "ledger.sqlite")
    state = AppState(random_state=rng, ledger=ledger)
    state.load("toy", frame)
    state.release("directions", eps=0.3, delta=1e-6)
    state.release("scree", eps=0.3, delta=1e-6, k=2)
    fp = state.budget.fp
    assert [number for number, _, _ in ledger.stored_releases(fp)] == [1, 2]
    con = sqlite3.connect(tmp_path / "ledger.sqlite")
    with con:
        con.execute("UPDATE charges SET payload = replace(payload, '0', '1') WHERE id = 1")
    con.close()
    assert [number for number, _, _ in ledger.stored_releases(fp)] == [2]
    assert [r.number for r in restore_releases(ledger, fp)] == [2]
