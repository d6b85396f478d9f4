"""A ledger another process is writing is busy, not damaged (issue 33 item 2).

A second process holds the ledger's write lock; a charge waits the documented
time (``DPPCA_LEDGER_TIMEOUT``, here shortened) and then says the ledger is
busy, recording nothing. And a release never holds the lock while it computes.
"""

from __future__ import annotations

import contextlib
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from dppca import plan_pc_dir
from dppca.cli import main
from dppca.privacy.ledger import Ledger
from dppca.privacy.ledger_store import LedgerError, ledger_timeout

_HOLD = """
import sqlite3, sys, time
con = sqlite3.connect(sys.argv[1], isolation_level=None)
con.execute("BEGIN EXCLUSIVE")
print("held", flush=True)
time.sleep(float(sys.argv[2]))
con.execute("ROLLBACK")
"""


@contextlib.contextmanager
def _held(path: Path, seconds: float = 8.0) -> Iterator[None]:
    """Another process holds the ledger's write lock (an EXCLUSIVE transaction)."""
    with subprocess.Popen(
        [sys.executable, "-c", _HOLD, str(path), str(seconds)], stdout=subprocess.PIPE, text=True
    ) as proc:
        try:
            assert proc.stdout is not None and proc.stdout.readline().strip() == "held"
            yield
        finally:
            proc.kill()


def _cost(eps: float = 0.1):
    return plan_pc_dir(1000, 5, eps=eps, delta=1e-7).cost


def test_the_wait_is_ten_seconds_unless_set(monkeypatch) -> None:
    monkeypatch.delenv("DPPCA_LEDGER_TIMEOUT", raising=False)
    assert ledger_timeout() == 10.0
    monkeypatch.setenv("DPPCA_LEDGER_TIMEOUT", "2.5")
    assert ledger_timeout() == 2.5
    monkeypatch.setenv("DPPCA_LEDGER_TIMEOUT", "soon")
    with pytest.raises(LedgerError, match="DPPCA_LEDGER_TIMEOUT"):
        ledger_timeout()


def test_a_held_ledger_is_called_busy_after_the_wait(tmp_path: Path) -> None:
    path = tmp_path / "l.sqlite"
    led = Ledger(path)
    led.set_total("fp", 1.0, 1e-5)
    with _held(path):
        start = time.monotonic()
        with pytest.raises(LedgerError, match="is busy") as busy:
            Ledger(path, timeout=0.5).charge("fp", _cost(), kind="directions")
        waited = time.monotonic() - start
    assert 0.4 <= waited < 5
    text = str(busy.value)
    assert "damaged" not in text and "0.5 s" in text and "DPPCA_LEDGER_TIMEOUT" in text
    assert Ledger(path).spent("fp") == (0.0, 0.0)  # nothing recorded


def test_the_command_line_says_busy(tmp_path: Path, monkeypatch, capsys) -> None:
    path = tmp_path / "l.sqlite"
    Ledger(path)
    monkeypatch.setenv("DPPCA_LEDGER_TIMEOUT", "0.3")
    with _held(path):
        status = main(["ledger", "--ledger", str(path)])
    err = capsys.readouterr().err
    assert status == 2 and "is busy" in err and "damaged" not in err


@pytest.mark.slow
def test_a_release_does_not_hold_the_lock_while_it_computes(tmp_path: Path, monkeypatch) -> None:
    from dppca import dp_pc_dir

    path = tmp_path / "l.sqlite"
    led = Ledger(path)
    led.set_total("fp", 5.0, 1e-5)
    led.set_total("other", 5.0, 1e-5)
    plan_type = type(plan_pc_dir(50, 3, eps=0.5, delta=1e-7))
    draw = plan_type.draw
    seen = []

    def drawing(self, data, rng):  # another writer gets in while the noise is drawn
        Ledger(path, timeout=0.2).charge("other", _cost(), kind="directions")
        seen.append(True)
        return draw(self, data, rng)

    monkeypatch.setattr(plan_type, "draw", drawing)
    X = np.random.default_rng(1).normal(size=(50, 3))
    dp_pc_dir(X, eps=0.5, delta=1e-7, random_state=1, budget=led.budget("fp"), accuracy="ignore")
    assert seen and len(led.releases("other")) == 1 and len(led.releases("fp")) == 1
