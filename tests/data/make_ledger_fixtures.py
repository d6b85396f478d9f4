"""Rebuild the ledger files of earlier dppca versions kept as test fixtures.

Each released ledger schema has one fixture here, written by the dppca of that
time (its source taken from git history), so that the tests open exactly what
a user of that version has on disk:

- ``ledger_schema1.sqlite``: schema 1 (the first ledger, data keyed by
  fingerprint rule v1), written at commit 1737cf5;
- ``ledger_schema2.sqlite``: schema 2 (marks, digests, seals; fingerprint
  rule v2), written at commit ae5e502;
- ``ledger_schema3.sqlite``: schema 3 (per-dataset summaries and last
  digests; no key for release-file tags), written at commit 4ca2491;
- ``ledger_schema4.sqlite``: schema 4 (a key for release-file tags, made
  when first needed; no keys of table files), written at commit eddbf3e.

Each holds one release of eps 0.8 (delta 1e-6) from ``ledger_table.csv``
under a total of (1, 1e-5), charged by ``dppca directions``. Run from the
repository root (needs git and the repository's history)::

    python3 tests/data/make_ledger_fixtures.py

The table itself is made here too (fixed seed): 60 rows, three numeric
columns and a text label column.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
TABLE = HERE / "ledger_table.csv"
VERSIONS = {1: "1737cf5", 2: "ae5e502", 3: "4ca2491", 4: "eddbf3e"}


def make_table() -> None:
    rng = np.random.default_rng(33)
    frame = pd.DataFrame(rng.normal(size=(60, 3)).round(3), columns=["a", "b", "c"])
    frame["label"] = np.where(rng.random(60) < 0.5, "x", "y")
    frame.to_csv(TABLE, index=False)


def make_ledger(schema: int, commit: str) -> None:
    target = HERE / f"ledger_schema{schema}.sqlite"
    target.unlink(missing_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        archive = subprocess.run(
            ["git", "-C", str(ROOT), "archive", commit, "src"], check=True, capture_output=True
        ).stdout
        subprocess.run(["tar", "-x", "-C", tmp], input=archive, check=True)
        env = {**os.environ, "PYTHONPATH": str(Path(tmp) / "src")}
        command = [
            sys.executable, "-m", "dppca", "directions", str(TABLE), "--eps", "0.8",
            "--delta", "1e-6", "--seed", "1", "--ledger", str(target),
            "--budget-eps", "1", "--budget-delta", "1e-5", "--accuracy", "ignore",
        ]  # fmt: skip
        subprocess.run(command, check=True, env=env, cwd=tmp, stdout=subprocess.DEVNULL)


if __name__ == "__main__":
    # python3 tests/data/make_ledger_fixtures.py [SCHEMA ...]: only those (default all)
    wanted = {int(a) for a in sys.argv[1:]} or set(VERSIONS)
    if wanted == set(VERSIONS):
        make_table()
    for schema, commit in VERSIONS.items():
        if schema not in wanted:
            continue
        make_ledger(schema, commit)
        print(f"wrote ledger_schema{schema}.sqlite with dppca at {commit}")
