"""What still fits, said the same on every face (issue 33 items 3, 4 and 7; issue 29 item 3)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from dppca import Budget, BudgetExceededError, PrivacyCost, plan_pc_dir, tight_total
from dppca.cli import main
from dppca.privacy.fingerprint import fingerprint
from dppca.privacy.ledger import Ledger
from dppca.privacy.mechanisms import analytic_gaussian_sigma
from dppca.privacy.tally import Tally


def _gauss(eps: float, delta: float) -> PrivacyCost:
    sigma = analytic_gaussian_sigma(1.0, eps, delta)
    return PrivacyCost(eps, delta, "gaussian", "x", kind="gaussian", sensitivity=1.0, sigma=sigma)


def test_the_largest_gaussian_that_fits_fits_and_a_larger_one_does_not() -> None:
    budget = Budget(1.0, 1e-5)
    for _ in range(2):
        budget.spend(_gauss(0.4, 4e-6))
    room = budget.headroom()
    x, y = room.gaussian_eps, room.gaussian_delta
    assert y == 4e-6 and x > 1.0 - budget.spent_tight[0]  # not a subtraction
    assert budget.can_afford(_gauss(x * (1 - 1e-4), y))
    assert not budget.can_afford(_gauss(x * 1.01, y))
    n = room.repeats
    assert n is not None and n >= 1
    assert budget.can_afford(_more(budget, n))
    assert not budget.can_afford(_more(budget, n + 1))
    text = room.describe()
    assert f"{n:,} more release(s) like the last" in text and "tight composition" in text
    assert "remaining delta" not in text


def _more(budget: Budget, n: int) -> PrivacyCost:
    """n more releases like the last, as one composed cost."""
    last = budget.ledger[-1]
    return PrivacyCost(last.eps * n, last.delta * n, "m", "r", (last,) * n, kind="composed")


def test_a_spent_budget_says_nothing_fits() -> None:
    budget = Budget(1.0, 1e-5)
    budget.spend(_gauss(0.99, 1e-6))
    room = budget.headroom(like=_gauss(5.0, 1e-6))
    assert room.repeats == 0
    with pytest.raises(BudgetExceededError, match=r"still fits|nothing more fits"):
        budget.check(_gauss(5.0, 1e-6))


@pytest.mark.slow
def test_the_summary_agrees_with_a_full_recomputation(tmp_path: Path) -> None:
    # Many charges of every kind: the running summary gives the tight total of
    # the whole list, and verify() recomputes it from the records.
    costs = [
        _gauss(0.01, 1e-9),
        PrivacyCost(0.002, 0.0, "exp", "q", kind="pure"),
        PrivacyCost(0.003, 1e-9, "m", "generic"),
        PrivacyCost(0.01, 0.0, "lap", "l", kind="laplace", sensitivity=1.0, scale=100.0),
    ] * 4
    led = Ledger(tmp_path / "l.sqlite")
    led.set_total("fp", 50.0, 1e-5)
    for c in costs:
        led.charge("fp", c, kind="x")
    led.verify()
    eps = led.spent_tight("fp")[0]
    assert eps == pytest.approx(tight_total(costs, 1e-5)[0], rel=2e-3)  # PLD grid vs exact
    assert Tally.of(costs).agrees(Ledger(tmp_path / "l.sqlite")._tally_of("fp"))
    with sqlite3.connect(tmp_path / "l.sqlite") as con:
        plan = con.execute("EXPLAIN QUERY PLAN SELECT * FROM parts WHERE charge = 3").fetchall()
        assert "parts_charge" in str(plan)  # no scan of every part


def test_a_changed_middle_charge_is_found_by_verify(tmp_path: Path) -> None:
    from dppca.privacy.ledger_store import LedgerError

    path = tmp_path / "l.sqlite"
    led = Ledger(path)
    led.set_total("fp", 5.0, 1e-5)
    for _ in range(3):
        led.charge("fp", _gauss(0.3, 1e-7), kind="x")
    with sqlite3.connect(path) as con:
        con.execute("UPDATE parts SET eps = 0.01 WHERE charge = 2")
    with pytest.raises(LedgerError, match="damaged"):
        Ledger(path).verify()


# -------------------------------------------------------------- faces and totals


@pytest.fixture
def table(tmp_path: Path) -> Path:
    path = tmp_path / "t.csv"
    frame = pd.DataFrame(np.random.default_rng(3).normal(size=(200, 3)), columns=list("abc"))
    frame.to_csv(path, index=False)
    return path


def _run(table: Path, ledger: Path, eps: str, *more: str, kind: str = "directions") -> int:
    args = [kind, str(table), "--eps", eps, "--delta", "1e-7", "--seed", "1"]
    return main([*args, "--ledger", str(ledger), "--accuracy", "ignore", *more])


def test_the_command_line_and_the_ledger_print_the_same_budget(table, tmp_path, capsys) -> None:
    ledger = tmp_path / "l.sqlite"
    assert _run(table, ledger, "0.3") == 0
    err = capsys.readouterr().err
    text = Ledger(ledger).headroom(fingerprint(pd.read_csv(table))).describe()
    assert f"dppca: ledger: {text}" in err
    assert main(["ledger", str(table), "--ledger", str(ledger)]) == 0
    assert f"t.csv: {text}" in capsys.readouterr().out


def test_a_first_release_never_sets_the_total_from_its_eps(table, tmp_path, capsys) -> None:
    ledger = tmp_path / "l.sqlite"
    assert _run(table, ledger, "8") == 2
    err = capsys.readouterr().err
    assert "no total budget" in err and "--budget-eps 8 --budget-delta 1e-06" in err
    assert Ledger(ledger).datasets().empty  # nothing written
    assert _run(table, ledger, "8", "--budget-eps", "8", "--budget-delta", "1e-6") == 0
    assert Ledger(ledger).datasets()["total_eps"].tolist() == [8.0]


def test_the_default_total_delta_is_far_below_one_over_n(table, tmp_path, capsys) -> None:
    ledger = tmp_path / "l.sqlite"
    assert _run(table, ledger, "0.2") == 0
    assert "(eps=1, delta=1e-06)" in capsys.readouterr().err  # n = 200
    assert _run(table, ledger, "0.2", "--budget-eps", "1", "--budget-delta", "0.01") == 2
    assert "below 1/n" in capsys.readouterr().err


def test_a_report_with_delta_of_one_over_n_or_more_is_refused(table, tmp_path, capsys) -> None:
    from dppca import plan_report

    with pytest.raises(ValueError, match="below 1/n"):
        plan_report(200, 3, eps=1.0, delta=0.5)
    args = ["report", str(table), "--eps", "1", "--delta", "0.5", "--ledger"]
    assert main([*args, str(tmp_path / "l.sqlite"), "--out", str(tmp_path / "r.html")]) == 2
    assert "below 1/n" in capsys.readouterr().err
    assert not (tmp_path / "l.sqlite").exists() or Ledger(tmp_path / "l.sqlite").datasets().empty


def test_a_conflicting_first_total_is_refused_with_the_recorded_one(table, tmp_path, capsys):
    # Two first commands declared totals 1 and 3; both passed their checks
    # before either charged. The second to charge is refused, naming the first.
    ledger = tmp_path / "l.sqlite"
    from dppca.cli._ledger_budget import _CLIBudget

    led = Ledger(ledger)
    fp = led.key(pd.read_csv(table))
    cost = plan_pc_dir(200, 3, eps=0.2, delta=1e-7).cost
    a = _CLIBudget(led, fp, kind="d", name="t.csv", total=(1.0, 1e-6), declared=True)
    b = _CLIBudget(Ledger(ledger), fp, kind="d", name="t.csv", total=(3.0, 1e-6), declared=True)
    a.check(cost)
    b.check(cost)
    a.spend(cost)
    from dppca.privacy.ledger_store import LedgerError

    with pytest.raises(LedgerError, match=r"already \(eps=1, delta=1e-06\)"):
        b.spend(cost)
    assert led.total(fp) == (1.0, 1e-6) and len(led.releases(fp)) == 1


def test_many_equal_parts_are_composed_once_within_the_grid() -> None:
    # Above _EXPAND_MAX non-Gaussian events the PLD self-composes each kind
    # once; against composing them one by one the pessimistic grids differ by
    # at most one grid step per part (relative 1e-4 / 2 each), so 2e-3 here.
    from dppca.privacy.composition import _tight_eps
    from dppca.privacy.tally import _grouped_pld_eps

    events = ((("pure", 0.01), 20), (("laplace", 50.0), 10))
    grouped = _grouped_pld_eps(0.04, events, 1e-6)
    one_by_one = _tight_eps(
        tuple(sorted([e for e, c in events for _ in range(c)] + [("gaussian", 5.0)], key=repr)),
        1e-6,
    )
    assert grouped == pytest.approx(one_by_one, rel=2e-3)
