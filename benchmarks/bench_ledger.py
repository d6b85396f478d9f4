"""How the ledger's commands scale with its size (issue 33 item 3).

Builds a ledger holding N charges (default 100,000) on one table and a few on
an unrelated one, then times, as whole processes (``python -m dppca``; the
median of ``--repeat`` runs after one warm-up, wall seconds and the child's
CPU seconds from ``os.wait4``, since the machine may be shared):

- ``dppca ledger`` (every dataset) and ``dppca ledger --verify`` (every record);
- ``dppca ledger big.csv`` (the table's last releases and its budget);
- ``dppca directions big.csv --dry-run`` (the plan alone: no ledger, no data values);
- one new charge to the big table: ``dppca directions big.csv`` and, for the
  ledger's part alone, ``Ledger(path).charge(...)`` in a fresh process;
- one charge to the unrelated table (same two ways);
- the app's budget panel: ``LedgerBudget.headroom().describe()``;

then the same operations inside one process with the imports done (wall and
CPU seconds), which is the ledger's own share, and ``Ledger.verify()``.

Also compares with ``dppca directions`` against an empty ledger, so the
ledger's own share is visible as a difference in one run. Usage::

    python3 benchmarks/bench_ledger.py [--charges 100000] [--repeat 5]

The ledger is built through the store's own insert (the same rows, digests
and summaries a charge writes) in one transaction, to keep the build short;
every charge has its own time (one a minute), as in a ledger used for real.
"""

from __future__ import annotations

import argparse
import datetime
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

from dppca import plan_pc_dir
from dppca.privacy.fingerprint import fingerprint
from dppca.privacy.ledger import Ledger


def _build(path: Path, big: pd.DataFrame, small: pd.DataFrame, charges: int) -> None:
    led = Ledger(path)
    fp_big, fp_small = fingerprint(big), fingerprint(small)
    led.set_total(fp_big, 1e6, 1e-3, name="big.csv")
    led.set_total(fp_small, 1.0, 1e-6, name="small.csv")
    cost = plan_pc_dir(len(big), big.shape[1], eps=1e-3, delta=1e-9).cost
    start = datetime.datetime(2026, 1, 1, tzinfo=datetime.timezone.utc)
    with led._connect() as con:
        con.execute("BEGIN IMMEDIATE")
        for i in range(charges):  # one charge a minute: each record has its own time
            time = (start + datetime.timedelta(minutes=i)).isoformat(timespec="seconds")
            led._insert_charge(con, fp_big, cost, time=time, kind="directions", name="big.csv")
        con.execute("COMMIT")
    led.charge(fp_small, plan_pc_dir(len(small), 3, eps=0.1, delta=1e-8).cost, kind="directions")


def _time(command: list[str], repeat: int, env: dict[str, str]) -> tuple[float, float]:
    """Median wall and CPU seconds (user + system, of the child) of ``repeat`` runs."""
    walls, cpus = [], []
    for i in range(repeat + 1):  # the first run warms the file cache and is not counted
        start = time.perf_counter()
        proc = subprocess.Popen(
            command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
        )
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        err = proc.stderr.read() if proc.stderr else ""
        if proc.stderr:
            proc.stderr.close()
        if os.waitstatus_to_exitcode(status) != 0:
            raise SystemExit(f"{command} failed: {err}")
        if i:
            walls.append(wall)
            cpus.append(usage.ru_utime + usage.ru_stime)
    return statistics.median(walls), statistics.median(cpus)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--charges", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    rng = np.random.default_rng(33)
    env = {**os.environ, "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"}
    py = sys.executable
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        big = pd.DataFrame(rng.normal(size=(200, 4)), columns=list("abcd"))
        small = pd.DataFrame(rng.normal(size=(200, 3)), columns=list("xyz"))
        big.to_csv(d / "big.csv", index=False)
        small.to_csv(d / "small.csv", index=False)
        big, small = pd.read_csv(d / "big.csv"), pd.read_csv(d / "small.csv")
        path = d / "ledger.sqlite"
        start = time.perf_counter()
        _build(path, big, small, args.charges)
        print(f"built a ledger of {args.charges:,} charges in {time.perf_counter() - start:.1f} s"
              f" ({path.stat().st_size / 1e6:.1f} MB)")  # fmt: skip
        cli = [py, "-m", "dppca"]
        rel = ["--eps", "0.001", "--delta", "1e-9", "--seed", "1", "--accuracy", "ignore"]
        charge = (
            "import sys; from dppca import plan_pc_dir; import pandas as pd;"
            "from dppca.privacy.ledger import Ledger, fingerprint;"
            "f = pd.read_csv(sys.argv[2]); led = Ledger(sys.argv[1]);"
            "led.charge(fingerprint(f), plan_pc_dir(200, f.shape[1], eps=1e-3,"
            " delta=1e-9).cost, kind='directions')"
        )
        panel = (
            "import sys; import pandas as pd;"
            "from dppca.privacy.ledger import Ledger, fingerprint;"
            "f = pd.read_csv(sys.argv[2]);"
            "print(Ledger(sys.argv[1]).budget(fingerprint(f)).headroom().describe())"
        )
        empty = d / "empty.sqlite"
        rows = [
            ("dppca ledger", [*cli, "ledger", "--ledger", str(path)]),
            ("dppca ledger --verify", [*cli, "ledger", "--verify", "--ledger", str(path)]),
            ("dppca ledger big.csv", [*cli, "ledger", str(d / "big.csv"), "--ledger", str(path)]),
            ("dppca directions big.csv --dry-run",
             [*cli, "directions", str(d / "big.csv"), *rel, "--dry-run"]),
            ("dppca directions big.csv (new charge)",
             [*cli, "directions", str(d / "big.csv"), *rel, "--ledger", str(path)]),
            ("dppca directions small.csv (unrelated table)",
             [*cli, "directions", str(d / "small.csv"), *rel, "--ledger", str(path)]),
            ("dppca directions big.csv, empty ledger (reference)",
             [*cli, "directions", str(d / "big.csv"), *rel, "--ledger", str(empty),
              "--budget-eps", "1e6", "--budget-delta", "1e-3"]),
            ("Ledger.charge, big table (fresh process)",
             [py, "-c", charge, str(path), str(d / "big.csv")]),
            ("Ledger.charge, unrelated table (fresh process)",
             [py, "-c", charge, str(path), str(d / "small.csv")]),
            ("budget panel text, big table (fresh process)",
             [py, "-c", panel, str(path), str(d / "big.csv")]),
            ("python -c 'import dppca' (reference)", [py, "-c", "import dppca"]),
        ]  # fmt: skip
        print(f"{'command (whole process), median of runs':<52} {'wall s':>8} {'cpu s':>7}")
        for label, command in rows:
            wall, cpu = _time(command, args.repeat, env)
            print(f"{label:<52} {wall:>8.3f} {cpu:>7.3f}")
        _in_process(path, d, args.repeat)


def _in_process(path: Path, d: Path, repeat: int) -> None:
    """The same operations inside one process, imports done: the ledger's own share."""
    import contextlib
    import io

    from dppca.cli import main as cli

    big, small = pd.read_csv(d / "big.csv"), pd.read_csv(d / "small.csv")
    cost = plan_pc_dir(200, 4, eps=1e-3, delta=1e-9).cost
    small_cost = plan_pc_dir(200, 3, eps=1e-3, delta=1e-9).cost
    quiet = io.StringIO()

    def run(*argv: str) -> None:
        with contextlib.redirect_stdout(quiet), contextlib.redirect_stderr(quiet):
            assert cli(list(argv)) == 0

    cases = {
        "dppca ledger": lambda: run("ledger", "--ledger", str(path)),
        "dppca ledger big.csv": lambda: run("ledger", str(d / "big.csv"), "--ledger", str(path)),
        "open + key + charge, big table": lambda: (led := Ledger(path)).charge(
            led.key(big), cost, kind="directions"
        ),
        "open + key + charge, unrelated table": lambda: (led := Ledger(path)).charge(
            led.key(small), small_cost, kind="directions"
        ),
        "open + budget panel text, big table": lambda: (
            Ledger(path).budget(fingerprint(big)).headroom().describe()
        ),
        "Ledger.verify() (every record, linear)": lambda: Ledger(path).verify(),
    }
    print(f"{'in one process, imports done':<52} {'best wall s':>11} {'cpu s':>7}")
    for label, call in cases.items():
        best = (float("inf"), float("inf"))
        for _ in range(repeat):
            wall, cpu = time.perf_counter(), time.process_time()
            call()
            best = min(best, (time.perf_counter() - wall, time.process_time() - cpu))
        print(f"{label:<52} {best[0]:>11.3f} {best[1]:>7.3f}")


if __name__ == "__main__":
    main()
