"""Fast start: ``import dppca`` and the command line load heavy modules only when used."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from dppca.core.lazy import LazyModule, is_dataframe, is_series, lazy_attribute

SRC = str(Path(__file__).resolve().parents[1] / "src")
HEAVY = ("pandas", "scipy.optimize", "matplotlib", "pyarrow", "numba")


def _loaded_after(code: str, tmp_path: Path) -> set[str]:
    """Heavy modules in sys.modules after running ``code`` in a fresh interpreter."""
    report = f"print('loaded:' + ','.join(m for m in {HEAVY!r} if m in sys.modules))"
    script = f"{code}\nimport sys\n{report}\n"
    env = {**os.environ, "PYTHONPATH": SRC, "MPLBACKEND": "Agg"}
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=tmp_path, env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    last = done.stdout.strip().splitlines()[-1]
    assert last.startswith("loaded:"), done.stdout
    return set(filter(None, last.removeprefix("loaded:").split(",")))


def test_import_dppca_loads_no_heavy_module(tmp_path):
    assert _loaded_after("import dppca", tmp_path) == set()


def test_cli_help_loads_no_heavy_module(tmp_path):
    code = (
        "import contextlib, io\n"
        "from dppca.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    try:\n"
        "        main(['--help'])\n"
        "    except SystemExit:\n"
        "        pass\n"
    )
    assert _loaded_after(code, tmp_path) == set()


def test_kernel_on_an_array_needs_no_pandas(tmp_path):
    code = (
        "import numpy as np\n"
        "from dppca import spherical_kendall\n"
        "spherical_kendall(np.random.default_rng(0).normal(size=(50, 3)))\n"
    )
    assert _loaded_after(code, tmp_path) == set()


def test_pandas_is_imported_when_first_used(tmp_path):
    code = (
        "import numpy as np\n"
        "from dppca import pc_dir\n"
        "pc_dir(np.random.default_rng(0).normal(size=(50, 3)), 2).to_frame()\n"
    )
    assert "pandas" in _loaded_after(code, tmp_path)


def test_lazy_module_forwards_attributes():
    lazy = LazyModule("json")
    assert lazy.dumps([1]) == "[1]"
    assert "json" in repr(lazy)
    assert lazy.__file__.endswith("__init__.py")  # a few dunders are forwarded
    with pytest.raises(AttributeError):
        lazy.__wrapped__  # noqa: B018 - dunder lookups do not import


def test_lazy_attribute_calls_through():
    norm = lazy_attribute("numpy.linalg", "norm")
    assert norm.__name__ == "norm"
    assert norm(np.array([3.0, 4.0])) == 5.0


def test_pandas_type_checks(small_frame):
    assert is_dataframe(small_frame) and not is_series(small_frame)
    assert is_series(small_frame["a"]) and not is_dataframe(small_frame["a"])
    assert not is_dataframe(np.zeros((2, 2)))


def test_the_scree_commands_estimators_are_the_releases():
    # cli/scree.py names them itself, so that building the parser imports no release
    from dppca.cli.scree import _METHODS
    from dppca.releases.scree._controls import METHODS

    assert _METHODS == METHODS


def test_public_names_load_on_first_use(tmp_path):
    code = (
        "import dppca, sys\n"
        "assert 'dppca.releases.directions' not in sys.modules\n"
        "from dppca import dp_pc_dir, plan_pca\n"
        "assert dppca.dp_pc_dir is dp_pc_dir and 'dppca.releases.directions' in sys.modules\n"
        "assert set(dppca.__all__) <= set(dir(dppca))\n"
        "from dppca.releases.standardized import _FIT_PLANNER\n"
        "assert _FIT_PLANNER  # the one fit's planner is there without importing it\n"
    )
    assert _loaded_after(code, tmp_path) == set()


def test_subpackages_are_attributes_after_a_bare_import(tmp_path):
    code = (
        "import dppca, sys\n"
        "assert 'dppca.datasets' not in sys.modules\n"
        "assert len(dppca.datasets.load_iris()) == 150\n"
        "assert callable(dppca.plotting.plot_biplot)\n"
    )
    assert "matplotlib" in _loaded_after(code, tmp_path)  # the plotting package, on use
