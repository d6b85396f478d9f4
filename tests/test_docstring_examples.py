"""Every name on the API pages has a summary line and an Examples section that runs.

The names are those docs/api.rst lists (``dppca.__all__``, the estimator, the
plotting functions, the datasets and the ledger). The examples themselves
run as doctests of their modules (pytest's ``--doctest-modules`` over
``src/dppca``); the checks here make sure each one is collected there, so a
new public name without a runnable example fails this file.
"""

from __future__ import annotations

import doctest
import importlib
import inspect
import re
import sys
from pathlib import Path

import pytest

import dppca

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src" / "dppca"


def _api_names() -> list[tuple[str, str]]:
    """(module, name) of every entry of the autosummary lists in docs/api.rst."""
    module, names = "dppca", []
    for line in (ROOT / "docs" / "api.rst").read_text().splitlines():
        current = re.match(r"\.\. currentmodule:: (\S+)", line)
        if current:
            module = current.group(1)
        elif re.fullmatch(r"   [A-Za-z_]\w*", line):
            names.append((module, line.strip()))
    return names


API = _api_names()


def _object(module: str, name: str) -> object:
    if name == "DPPCA":
        pytest.importorskip("sklearn")
    return getattr(importlib.import_module(module), name)


def test_the_api_page_lists_every_public_name():
    listed = {name for module, name in API if module == "dppca"}
    assert len(API) > 60
    assert set(dppca.__all__) - {"__version__"} <= listed  # the version has its own section


@pytest.mark.parametrize(("module", "name"), API, ids=[f"{m}.{n}" for m, n in API])
def test_public_name_has_a_summary_and_an_example(module, name):
    doc = inspect.getdoc(_object(module, name)) or ""
    lines = doc.splitlines()
    assert lines and lines[0].strip(), f"{module}.{name} has no summary line"
    assert re.search(r"^Examples\n--------\n", doc, re.M), f"{module}.{name}: no Examples"
    section = doc.split("\nExamples\n--------\n", 1)[-1]
    assert ">>> " in section, f"{module}.{name}: its Examples section has no doctest"


@pytest.mark.parametrize(("module", "name"), API, ids=[f"{m}.{n}" for m, n in API])
def test_public_example_is_collected_as_a_doctest(module, name):
    # pytest --doctest-modules runs the docstrings found in each module of
    # src/dppca under the object's own module: find the example there.
    obj = _object(module, name)
    home = sys.modules[obj.__module__]
    assert Path(home.__file__).resolve().is_relative_to(SRC), obj.__module__
    found = {t.name: t for t in doctest.DocTestFinder().find(home) if t.examples}
    assert f"{obj.__module__}.{obj.__qualname__}" in found


def test_the_suite_runs_the_doctests_of_src():
    # read as text: tomllib is not in Python 3.10, which the package supports
    config = (ROOT / "pyproject.toml").read_text()
    options = config.split("[tool.pytest.ini_options]", 1)[1].split("\n[", 1)[0]
    assert re.search(r'^addopts = ".*--doctest-modules', options, re.M)
    assert re.search(r"^testpaths = \[.*\"src/dppca\"", options, re.M)
