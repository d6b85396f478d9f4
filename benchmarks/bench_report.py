"""CPU cost of ``dppca.report`` on a small and a mid-sized table, fresh interpreter.

Each run starts a new interpreter (imports, font set-up and the page's
figures included, as a user's first call pays them) and reads the child's CPU
time (user + system, from ``os.wait4``). With ``--baseline SRC`` the same runs
use another checkout's ``src`` as well, alternating the two so that a drift of
the shared machine hits both; the script prints the medians and their ratio.
The last column says whether the run loaded ``scipy.stats`` (the page needs
none of it).

Run:  python benchmarks/bench_report.py [--repeat 5] [--baseline /path/to/other/src]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
from pathlib import Path

SRC = str(Path(__file__).resolve().parents[1] / "src")

_CODE = """
import sys
import numpy as np
from dppca import report
from dppca.datasets import load_gau
X = load_gau()
X = X.iloc[:{rows}, :{cols}] if hasattr(X, "iloc") else np.asarray(X)[:{rows}, :{cols}]
report(X, eps=1, delta=1e-5, random_state=0)
print("scipy.stats" in sys.modules, file=sys.stderr)
"""

TABLES = {"240 x 4": (240, 4), "5000 x 20 (gau)": (5000, 20)}


def child_cpu(src: str, rows: int, cols: int) -> tuple[float, str]:
    """CPU seconds of one fresh interpreter making one report, and its scipy.stats flag."""
    env = {
        **os.environ,
        "PYTHONPATH": src,
        "MPLBACKEND": "Agg",
        "OMP_NUM_THREADS": "1",
        "OPENBLAS_NUM_THREADS": "1",
        "MKL_NUM_THREADS": "1",
    }
    proc = subprocess.Popen(
        [sys.executable, "-c", _CODE.format(rows=rows, cols=cols)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    _, status, usage = os.wait4(proc.pid, 0)
    err = proc.stderr.read().strip().splitlines()
    proc.stderr.close()
    if status != 0:
        raise RuntimeError(f"the child failed: {err[-1] if err else status}")
    return usage.ru_utime + usage.ru_stime, err[-1] if err else "?"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--baseline", help="another checkout's src directory to compare")
    args = parser.parse_args()
    print(f"median CPU-s of {args.repeat} fresh interpreters, one report each")
    print(f"{'table':<18} {'this':>6} {'base':>6} {'ratio':>6}  scipy.stats loaded")
    for name, (rows, cols) in TABLES.items():
        this, base, flag = [], [], "?"
        for _ in range(args.repeat):
            t, flag = child_cpu(SRC, rows, cols)
            this.append(t)
            if args.baseline:
                base.append(child_cpu(args.baseline, rows, cols)[0])
        a = statistics.median(this)
        b = statistics.median(base) if base else float("nan")
        print(f"{name:<18} {a:>6.2f} {b:>6.2f} {a / b:>6.2f}  {flag}")


if __name__ == "__main__":
    main()
