"""Start-up cost of ``import dppca`` and of the ``dppca`` command.

Each command runs in a fresh interpreter, several times; the script prints the
least CPU time of the child process (user + system, from ``os.wait4``), the
same minus a bare ``python -c pass``, and which heavy modules the command left
loaded. CPU time, not wall time, because the machine may be shared.

Run:  python benchmarks/bench_startup.py [--repeat 7]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

SRC = str(Path(__file__).resolve().parents[1] / "src")
HEAVY = ("pandas", "scipy", "scipy.optimize", "scipy.stats", "matplotlib", "pyarrow", "numba")

_REPORT = "import sys; print(','.join(m for m in {heavy!r} if m in sys.modules), file=sys.stderr)"

COMMANDS = {
    "python -c pass": "pass",
    "import numpy": "import numpy",
    "import dppca": "import dppca",
    "dppca --help": "from dppca.cli import main; main(['--help'])",
    "dppca loading --help": "from dppca.cli import main; main(['loading', '--help'])",
}


def child_cpu(code: str) -> tuple[float, str]:
    """CPU seconds of one fresh interpreter running ``code``, and the heavy modules it loaded."""
    env = {**os.environ, "PYTHONPATH": SRC + os.pathsep + os.environ.get("PYTHONPATH", "")}
    if "main(" in code:  # --help exits; report the modules on the way out
        script = (
            "import atexit, sys\n"
            f"atexit.register(lambda: exec({_REPORT.format(heavy=HEAVY)!r}))\n{code}\n"
        )
    else:
        script = f"{code}\n{_REPORT.format(heavy=HEAVY)}\n"
    proc = subprocess.Popen(
        [sys.executable, "-c", script],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    _, _, usage = os.wait4(proc.pid, 0)
    loaded = proc.stderr.read().strip().splitlines()
    proc.stderr.close()
    return usage.ru_utime + usage.ru_stime, loaded[-1] if loaded else ""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    print(f"least CPU-s of {args.repeat} fresh interpreters (shared machine: CPU, not wall)")
    print(f"{'command':<24} {'CPU-s':>6} {'- bare':>7}  heavy modules loaded")
    base = None
    for name, code in COMMANDS.items():
        runs = [child_cpu(code) for _ in range(args.repeat)]
        best = min(t for t, _ in runs)
        if base is None:
            base = best
        print(f"{name:<24} {best:>6.3f} {best - base:>7.3f}  {runs[-1][1] or '-'}")


if __name__ == "__main__":
    main()
