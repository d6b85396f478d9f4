"""Fast start: ``import dppca`` and the command line load heavy modules only when used."""

from __future__ import annotations

import numpy as np
import pytest

from dppca.core.lazy import LazyModule, is_dataframe, is_series, lazy_attribute

HEAVY = ("pandas", "scipy.optimize", "matplotlib", "pyarrow", "numba")


def test_import_dppca_loads_no_heavy_module(loaded_after):
    assert loaded_after("import dppca", HEAVY) == set()


def test_cli_help_loads_no_heavy_module(loaded_after):
    code = (
        "import contextlib, io\n"
        "from dppca.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    try:\n"
        "        main(['--help'])\n"
        "    except SystemExit:\n"
        "        pass\n"
    )
    assert loaded_after(code, HEAVY) == set()


def test_kernel_on_an_array_needs_no_pandas(loaded_after):
    code = (
        "import numpy as np\n"
        "from dppca import spherical_kendall\n"
        "spherical_kendall(np.random.default_rng(0).normal(size=(50, 3)))\n"
    )
    assert loaded_after(code, HEAVY) == set()


def test_pandas_is_imported_when_first_used(loaded_after):
    code = (
        "import numpy as np\n"
        "from dppca import pc_dir\n"
        "pc_dir(np.random.default_rng(0).normal(size=(50, 3)), 2).to_frame()\n"
    )
    assert "pandas" in loaded_after(code, HEAVY)


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
    from dppca.releases.scree.controls import METHODS

    assert _METHODS == METHODS


def test_public_names_load_on_first_use(loaded_after):
    code = (
        "import dppca, sys\n"
        "assert 'dppca.releases.directions' not in sys.modules\n"
        "from dppca import dp_pc_dir, plan_pca\n"
        "assert dppca.dp_pc_dir is dp_pc_dir and 'dppca.releases.directions' in sys.modules\n"
        "assert set(dppca.__all__) <= set(dir(dppca))\n"
        "from dppca.releases.standardized import _FIT_PLANNER\n"
        "assert _FIT_PLANNER  # the one fit's planner is there without importing it\n"
    )
    assert loaded_after(code, HEAVY) == set()


def test_subpackages_are_attributes_after_a_bare_import(loaded_after):
    code = (
        "import dppca, sys\n"
        "assert 'dppca.datasets' not in sys.modules\n"
        "assert len(dppca.datasets.load_iris()) == 150\n"
        "assert callable(dppca.plotting.plot_biplot)\n"
    )
    assert "matplotlib" in loaded_after(code, HEAVY)  # the plotting package, on use


def test_the_installed_metadata_has_the_packages_version():
    # pyproject.toml reads the version from dppca._version; an install from an
    # older checkout, or a hand-edited pyproject, would disagree here
    from importlib.metadata import version

    import dppca

    assert version("dppca") == dppca.__version__
