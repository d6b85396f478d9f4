"""Shared fixtures: a seeded generator, small datasets, a headless matplotlib."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

import matplotlib
import numpy as np
import pandas as pd
import pytest

matplotlib.use("Agg")


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(20240601)


@pytest.fixture
def small_data(rng: np.random.Generator) -> np.ndarray:
    """200 rows, 5 variables with clearly separated variances."""
    return rng.normal(size=(200, 5)) * np.array([3.0, 2.0, 1.0, 0.5, 0.25])


@pytest.fixture
def small_frame(small_data: np.ndarray) -> pd.DataFrame:
    return pd.DataFrame(small_data, columns=["a", "b", "c", "d", "e"])


@pytest.fixture(autouse=True)
def _private_ledger(tmp_path_factory):
    """Every test gets its own privacy ledger file, never the user's.

    A MonkeyPatch of its own, so that a test's ``monkeypatch.undo()`` keeps it.
    """
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("DPPCA_LEDGER", str(tmp_path_factory.mktemp("ledger") / "ledger.sqlite"))
        yield


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    import matplotlib.pyplot as plt

    plt.close("all")


@pytest.fixture
def check_data_calls(monkeypatch) -> list[tuple]:
    """Records every call of ``check_data``, wherever it was imported, as (args, data)."""
    from dppca.core.data_checks import check_data

    calls: list[tuple] = []

    def spy(*args, **kwargs):
        out = check_data(*args, **kwargs)
        calls.append((args, out[0]))
        return out

    for name, module in list(sys.modules.items()):
        if name.startswith("dppca") and getattr(module, "check_data", None) is check_data:
            monkeypatch.setattr(module, "check_data", spy)
    return calls


@pytest.fixture
def loaded_after(tmp_path) -> Callable[[str, Sequence[str]], set[str]]:
    """Run code in a fresh interpreter; return which of the watched modules it loaded.

    Checking ``sys.modules`` is robust where timing an import is not. The
    code runs with this checkout's ``src`` first on the path, in ``tmp_path``.
    """
    src = str(Path(__file__).resolve().parents[1] / "src")

    def run(code: str, watched: Sequence[str]) -> set[str]:
        report = f"print('loaded:' + ','.join(m for m in {tuple(watched)!r} if m in sys.modules))"
        env = {**os.environ, "PYTHONPATH": src, "MPLBACKEND": "Agg"}
        done = subprocess.run(
            [sys.executable, "-c", f"{code}\nimport sys\n{report}\n"],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
        )
        assert done.returncode == 0, done.stderr
        last = done.stdout.strip().splitlines()[-1]
        assert last.startswith("loaded:"), done.stdout
        return set(filter(None, last.removeprefix("loaded:").split(",")))

    return run


def pytest_collection_modifyitems(config, items):
    """Collect the files with browser tests first.

    With ``--dist loadfile`` each file runs on one worker in collection
    order; the browser file is the longest single file, so starting it first
    keeps the other worker busy with everything else meanwhile. The order of
    the tests within a file is unchanged.
    """
    browser_files = {item.path for item in items if item.get_closest_marker("browser")}
    items.sort(key=lambda item: item.path not in browser_files)
