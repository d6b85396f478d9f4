"""Tests of the persistent SQLite privacy ledger."""

from __future__ import annotations

import math
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from dppca import Accountant, Budget, BudgetExceededError, PrivacyCost, compose, dp_pc_dir
from dppca.privacy.fingerprint import fingerprint
from dppca.privacy.ledger import Ledger
from dppca.privacy.ledger_budget import LedgerBudget
from dppca.privacy.ledger_store import LedgerError, default_ledger_path

SRC = Path(__file__).resolve().parents[1] / "src"


def _cost(eps: float, delta: float = 1e-6, what: str = "directions") -> PrivacyCost:
    return PrivacyCost(eps, delta, "gaussian (analytic)", what)


@pytest.fixture
def path(tmp_path: Path) -> Path:
    return tmp_path / "state" / "ledger.sqlite"


def test_fingerprint_depends_on_values_shape_and_names_only():
    x = np.arange(12.0).reshape(4, 3)
    fp = fingerprint(x, ["a", "b", "c"])
    assert fp == fingerprint(x.copy(order="F"), ("a", "b", "c"))
    assert fp == fingerprint(x.astype(np.int64), ["a", "b", "c"])  # same values as float64
    assert fp != fingerprint(x, ["a", "b", "d"])
    assert fp != fingerprint(x.reshape(3, 4)[:, :3], ["a", "b", "c"])
    y = x.copy()
    y[2, 1] += 1e-12
    assert fp != fingerprint(y, ["a", "b", "c"])
    z = x.copy()
    z[0, 0] = -0.0
    assert fp == fingerprint(z, ["a", "b", "c"])
    with pytest.raises(ValueError, match="columns must name every column"):
        fingerprint(x, ["a"])


def test_fingerprint_of_a_frame_uses_every_numeric_column():
    frame = pd.DataFrame({"a": [1.0, 2.0], "b": [3, 4], "g": ["x", "y"]})
    assert fingerprint(frame) == fingerprint(np.array([[1.0, 3], [2, 4]]), ["a", "b"])
    assert fingerprint(frame) != fingerprint(frame[["a"]])
    assert fingerprint(np.eye(2)) == fingerprint(np.eye(2), ["V1", "V2"])


def test_fingerprint_ignores_the_order_of_rows_and_columns(rng):
    x = rng.normal(size=(50, 4))
    x[3] = x[7]  # a repeated row counts twice
    x[5, 2] = np.nan
    fp = fingerprint(x, list("abcd"))
    assert fp == fingerprint(x[rng.permutation(50)], list("abcd"))
    assert fp == fingerprint(x[:, [2, 0, 3, 1]], list("cadb"))
    assert fp != fingerprint(np.delete(x, 7, axis=0), list("abcd"))
    y = x.copy()
    y[7] = x[8]  # the same set of rows, another multiset
    assert fp != fingerprint(y, list("abcd"))


def test_default_path_follows_the_environment(monkeypatch, tmp_path):
    monkeypatch.setenv("DPPCA_LEDGER", str(tmp_path / "x.sqlite"))
    assert default_ledger_path() == tmp_path / "x.sqlite"
    monkeypatch.delenv("DPPCA_LEDGER")
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "st"))
    assert default_ledger_path() == tmp_path / "st" / "dppca" / "ledger.sqlite"


def test_ledger_persists_across_objects(path):
    led = Ledger(path)
    led.set_total("fp1", 1.0, 1e-5, name="gau")
    number = led.charge("fp1", compose([_cost(0.3), _cost(0.1, 0.0, "counts")]), kind="scree")
    assert number == 1
    again = Ledger(path)
    assert again.total("fp1") == (1.0, 1e-5)
    assert again.spent("fp1") == pytest.approx((0.4, 1e-6))
    # the tight total at the unspent delta is a little below the basic 0.4
    assert again.remaining("fp1") == pytest.approx((0.6, 9e-6), rel=1e-4)
    assert again.remaining("fp1")[0] >= 0.6
    frame = again.entries("fp1")
    assert list(frame.columns) == [
        "release",
        "time",
        "dataset",
        "kind",
        "released",
        "mechanism",
        "eps",
        "delta",
    ]
    assert list(frame["released"]) == ["directions", "counts"]
    assert set(frame["release"]) == {1} and set(frame["dataset"]) == {"gau"}
    assert frame["time"][0].endswith("+00:00")
    assert again.datasets()["spent_eps"].tolist() == pytest.approx([0.4], rel=1e-4)
    assert again.total("other") is None and again.spent("other") == (0.0, 0.0)


def test_total_is_fixed_once_something_is_spent(path):
    led = Ledger(path)
    led.set_total("fp", 1.0, 1e-5)
    led.set_total("fp", 2.0, 1e-5)  # nothing spent yet: allowed
    assert led.total("fp") == (2.0, 1e-5)
    led.charge("fp", _cost(0.5), kind="directions")
    led.set_total("fp", 2.0, 1e-5)  # the same total: fine
    with pytest.raises(LedgerError, match="fixed"):
        led.set_total("fp", 5.0, 1e-5)
    assert led.total("fp") == (2.0, 1e-5)
    with pytest.raises(ValueError, match="total eps"):
        led.set_total("new", -1.0, 1e-5)


def test_refusal_leaves_the_ledger_unchanged(path):
    led = Ledger(path)
    with pytest.raises(LedgerError, match="no total budget"):
        led.charge("fp", _cost(0.1), kind="directions")
    led.set_total("fp", 1.0, 1e-5)
    led.charge("fp", _cost(0.7), kind="directions")
    before = led.entries("fp")
    with pytest.raises(BudgetExceededError, match="remains"):
        led.charge("fp", _cost(0.4), kind="scree")
    with pytest.raises(BudgetExceededError):
        led.charge("fp", _cost(0.1, 1e-4), kind="scree")  # delta too large
    pd.testing.assert_frame_equal(led.entries("fp"), before)
    led.charge("fp", _cost(0.3, 9e-6), kind="scree")  # the exact rest fits
    assert led.remaining("fp") == pytest.approx((0.0, 0.0), abs=1e-9)


def _gaussian(eps: float, delta: float = 1e-6) -> PrivacyCost:
    from dppca import plan_pc_dir

    return plan_pc_dir(1000, 5, eps=eps, delta=delta).cost


def test_the_ledger_composes_tightly_like_a_budget(path):
    # Basic composition would refuse the third release (1.2 > 1); the three
    # Gaussians compose exactly to eps 0.66 at delta 1e-5.
    led = Ledger(path)
    led.set_total("fp", 1.0, 1e-5)
    memory = Budget(1.0, 1e-5)
    for eps in (0.5, 0.5, 0.2):
        led.charge("fp", _gaussian(eps), kind="directions")
        memory.spend(_gaussian(eps))
    again = Ledger(path)  # a restart: the stored parts compose as tightly
    assert again.spent("fp") == pytest.approx((1.2, 3e-6))  # the basic upper bound
    assert again.spent_tight("fp") == pytest.approx(memory.spent_tight, rel=1e-9)
    assert again.spent_tight("fp")[0] == pytest.approx(0.6594, abs=1e-3)
    assert again.remaining("fp") == pytest.approx(memory.remaining, rel=1e-9)
    assert again.budget("fp").spent_tight == pytest.approx(memory.spent_tight, rel=1e-9)
    with pytest.raises(BudgetExceededError, match="tight total") as refused:
        again.charge("fp", _gaussian(0.9), kind="directions")
    assert "Reuse an existing release" in str(refused.value)
    with pytest.raises(BudgetExceededError):
        memory.check(_gaussian(0.9))
    assert again.datasets()["spent_eps"].tolist() == pytest.approx([0.6594], abs=1e-3)


def test_ledger_budget_works_as_budget_argument(path, small_data):
    led = Ledger(path)
    fp = fingerprint(small_data, list("abcde"))
    led.set_total(fp, 1.0, 1e-5, name="small")
    budget = led.budget(fp, kind="directions")
    assert isinstance(budget, Accountant) and isinstance(budget, LedgerBudget)
    result = dp_pc_dir(small_data, eps=0.6, delta=5e-6, random_state=1, budget=budget)
    assert budget.spent == pytest.approx((0.6, 5e-6))
    assert (budget.eps, budget.delta) == (1.0, 1e-5)
    # remaining eps follows the tight total at delta 1e-5, below the basic 0.6
    assert budget.spent_tight[0] < 0.6
    assert budget.remaining == pytest.approx((1.0 - budget.spent_tight[0], 5e-6))
    assert len(budget.ledger) == 1 and budget.ledger[0].eps == pytest.approx(result.cost.eps)
    assert budget.to_frame()["kind"].tolist() == ["directions"]
    with pytest.raises(BudgetExceededError):  # 0.6 and 0.9 compose to more than 1
        dp_pc_dir(small_data, eps=0.9, delta=5e-6, random_state=1, budget=budget)
    assert len(Ledger(path).entries(fp)) == 1
    assert "LedgerBudget(eps=1" in repr(budget)


def test_a_file_that_is_not_a_ledger_is_refused(tmp_path):
    bad = tmp_path / "notes.sqlite"
    bad.write_text("hello, this is not a database\n" * 100)
    with pytest.raises(LedgerError, match="not a dppca ledger"):
        Ledger(bad)
    with pytest.raises(LedgerError, match="is a directory"):
        Ledger(tmp_path)


_WORKER = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    from dppca import PrivacyCost, BudgetExceededError
    from dppca.privacy.ledger import Ledger
    path, go, eps = sys.argv[1], Path(sys.argv[2]), float(sys.argv[3])
    led = Ledger(path)
    while not go.exists():
        time.sleep(0.005)
    try:
        led.charge("fp", PrivacyCost(eps, 1e-6, "gaussian", "directions"), kind="directions")
    except BudgetExceededError:
        print("refused")
    else:
        print("charged")
    """
)


def test_concurrent_processes_never_overspend(path, tmp_path):
    led = Ledger(path)
    led.set_total("fp", 1.0, 1e-5)
    led.charge("fp", _cost(0.3), kind="directions")  # 0.7 remains: one 0.6 fits, not two
    go = tmp_path / "go"
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(SRC), os.environ.get("PYTHONPATH", "")]),
    }
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", _WORKER, str(path), str(go), "0.6"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        for _ in range(3)
    ]
    import time

    time.sleep(1.0)  # let the workers import and wait at the start line
    go.touch()
    outs = [p.communicate(timeout=120) for p in procs]
    assert all(p.returncode == 0 for p in procs), [o[1] for o in outs]
    results = sorted(o[0].strip() for o in outs)
    assert results == ["charged", "refused", "refused"]
    assert led.spent("fp") == pytest.approx((0.9, 2e-6))


def test_stored_costs_keep_every_field_the_accountant_reads(path):
    noisy = PrivacyCost(
        0.3, 0.0, "laplace", "counts", kind="laplace", sensitivity=2.0, scale=2.0 / 0.3
    )
    relative = PrivacyCost(0.2, 1e-6, "gaussian", "view", kind="gaussian", multiplier=25.0)
    charged = compose([_gaussian(0.4), noisy, relative])
    led = Ledger(path)
    led.set_total("fp", 1.0, 1e-5)
    led.charge("fp", charged, kind="scree")
    (kept,) = Ledger(path).budget("fp").ledger
    assert kept.leaves() == charged.leaves()


def test_a_tightly_composed_release_counts_what_it_was_charged():
    from dppca import tight_total
    from dppca.releases.scree.plan import plan_scree

    cost = plan_scree(1000, 5, 2, eps=0.8, delta=1e-6).cost  # parts claim more than 0.8
    assert math.fsum(c.eps for c in cost.leaves()) > 0.8
    led = Ledger(":memory:")
    led.set_total("fp", 1.0, 1e-5)
    budget = led.budget("fp")
    budget.spend(cost)
    assert led.spent("fp") == pytest.approx((0.8, 1e-6))
    (kept,) = budget.ledger
    assert kept.eps == pytest.approx(0.8)
    assert [c.kind for c in kept.leaves()] == [c.kind for c in cost.leaves()]
    assert tight_total(budget.ledger, 1e-6)[0] == pytest.approx(0.8, rel=1e-6)


def test_bundled_datasets_are_public_and_never_refused(path):
    from dppca.datasets import DATASETS, load_wine

    led = Ledger(path)
    fp = led.key(load_wine())
    assert led.is_public(fp) and not led.is_public("fp")
    assert fingerprint(DATASETS["wine_g"]()) == fp  # the labels are not numeric
    led.set_total(fp, 1.0, 1e-5)
    budget = led.budget(fp, kind="directions")
    for _ in range(3):
        assert budget.can_afford(_gaussian(0.9))
        budget.check(_gaussian(0.9))
        budget.spend(_gaussian(0.9))
    assert led.spent(fp)[0] == pytest.approx(2.7)  # recorded as practice
    assert led.remaining(fp)[0] == 0.0


def test_a_scree_reusing_directions_counts_its_delta_in_the_ledger(path, small_frame):
    # The scree's parts are pure (delta 0, eps summing to a little over 0.6);
    # it was charged the tight pair (0.6, 1e-6). The ledger must keep that
    # pair, not the smaller eps of one statement with the smaller delta of
    # the other, (0.6, 0), which no statement supports.
    from dppca import dp_scree

    directions = dp_pc_dir(small_frame, 3, eps=0.5, delta=1e-6, random_state=1)
    scree = dp_scree(small_frame, 3, directions=directions, eps=0.6, delta=1e-6, random_state=2)
    assert all(leaf.delta == 0 for leaf in scree.cost.leaves())
    led = Ledger(path)
    fp = fingerprint(small_frame)
    led.set_total(fp, 2.0, 1e-5)
    memory = Budget(2.0, 1e-5)
    for cost in (directions.cost, scree.cost):
        led.charge(fp, cost, kind="release")
        memory.spend(cost)
    assert Ledger(path).spent(fp) == pytest.approx(memory.spent, rel=1e-12)
    assert Ledger(path).spent(fp)[1] == pytest.approx(2e-6)
    assert Ledger(path).spent_tight(fp) == pytest.approx(memory.spent_tight, rel=1e-12)


def test_only_an_exact_bundled_table_is_public(path):
    # issue 29 item 4: the labels of iris_g replaced by private ones, or a text
    # column added, make a private table, refused once its budget is spent.
    from dppca.datasets import bundled_name, load_iris_g

    exact = load_iris_g().sample(frac=1.0, random_state=3)  # rows in another order
    assert bundled_name(exact) == "iris_g"
    relabelled = exact.assign(species=np.where(exact["species"] == "setosa", "HIV+", "HIV-"))
    added = exact.assign(note="kept private")
    for table in (relabelled, added):
        assert bundled_name(table) is None
        led = Ledger(path)
        fp = led.key(table)
        assert fp == fingerprint(exact)  # the same numeric key, but not public
        assert not led.is_public(fp)
        led.set_total(fp, 1.0, 1e-5)
        budget = led.budget(fp, kind="directions")
        with pytest.raises(BudgetExceededError):
            for _ in range(3):
                budget.spend(_gaussian(0.9))


def test_one_accountant_answers_alike_over_both_stores(tmp_path):
    from dppca.privacy.accounting import MemoryStore
    from dppca.privacy.ledger import LedgerStore

    led = Ledger(tmp_path / "l.sqlite")
    led.set_total("fp", 1.0, 1e-5)
    stores = [MemoryStore(1.0, 1e-5), LedgerStore(led, "fp", kind="directions")]
    accountants = [Accountant(s, advice="(advice)") for s in stores]
    costs = [
        plan.cost
        for plan in (
            dppca_plan(eps=0.3, delta=1e-6),
            dppca_plan(eps=0.5, delta=2e-6),
            dppca_plan(eps=1.0, delta=1e-6),  # alone within the total, not with the two
        )
    ]
    messages = []
    for accountant in accountants:
        for cost in costs[:2]:
            accountant.spend(cost)
        with pytest.raises(BudgetExceededError) as refused:
            accountant.spend(costs[2])
        messages.append(str(refused.value))
    memory, ledger = accountants
    assert ledger.describe() == memory.describe()  # the same words, spent and what fits
    assert ledger.spent_tight == pytest.approx(memory.spent_tight, rel=1e-12)
    assert ledger.remaining == pytest.approx(memory.remaining, rel=1e-12)
    assert messages[0] == messages[1] and messages[0].endswith("(advice)")
    assert [c.eps for c in ledger.ledger] == [c.eps for c in memory.ledger] == [0.3, 0.5]
    assert len(ledger.history()) == len(memory.history()) == 2


def dppca_plan(*, eps: float, delta: float):
    from dppca import plan_pc_dir

    return plan_pc_dir(200, 4, eps=eps, delta=delta)
