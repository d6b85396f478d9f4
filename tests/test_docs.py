"""The documentation's promises that can be checked without building it.

The Sphinx build itself (``.ci/run``: ``python3 -m sphinx -W --keep-going -b html docs
docs/_build/html``) executes the gallery; these tests are the cheap part: every public
name is in the API index, the README's picture is what its command draws, the
README's two commands are the ones CI runs, and CITATION.cff is well formed.
"""

from __future__ import annotations

import importlib.util
import re
import shlex
from pathlib import Path

import pytest

import dppca
import dppca.datasets
import dppca.plotting
import dppca.privacy.ledger

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
README = (ROOT / "README.md").read_text(encoding="utf-8")

INSTALL_AND_RUN = (
    'python3 -m pip install ".[hardened]" && '
    "dppca loading --eps 0.5 --delta 1e-5 --out loading.png"
)
INSTALL_AND_TEST = 'python3 -m pip install -e ".[test]" && python3 -m pytest'


def _autosummary_entries(rst: str) -> set[str]:
    """Fully qualified names listed in the autosummary blocks of an rST page."""
    names: set[str] = set()
    module = ""
    lines = rst.splitlines()
    for i, line in enumerate(lines):
        if line.startswith(".. currentmodule::"):
            module = line.split("::", 1)[1].strip()
        if line.startswith(".. autosummary::"):
            for entry in lines[i + 1 :]:
                if entry.strip() and not entry.startswith("   "):
                    break
                text = entry.strip()
                if text and not text.startswith(":"):
                    names.add(f"{module}.{text}")
    return names


def _script(name: str):
    spec = importlib.util.spec_from_file_location(name, ROOT / "scripts" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_public_name_is_in_the_api_index():
    listed = _autosummary_entries((DOCS / "api.rst").read_text(encoding="utf-8"))
    public = {f"dppca.{name}" for name in dppca.__all__ if name != "__version__"}
    missing = sorted(public - listed)
    assert not missing, f"add to docs/api.rst: {missing}"
    # The lazily loaded estimator and the modules users import from directly.
    assert "dppca.DPPCA" in listed
    for module in (dppca.datasets, dppca.privacy.ledger, dppca.plotting):
        names = {f"{module.__name__}.{n}" for n in module.__all__ if callable(getattr(module, n))}
        assert not sorted(names - listed), sorted(names - listed)


def test_every_api_entry_exists():
    # A name that was renamed or removed must leave the index too (autosummary would
    # only warn, after a full build).
    for qualified in sorted(_autosummary_entries((DOCS / "api.rst").read_text("utf-8"))):
        module_name, _, attribute = qualified.rpartition(".")
        module = importlib.import_module(module_name)
        assert getattr(module, attribute, None) is not None, qualified


def test_the_gallery_has_at_least_eight_examples_that_draw():
    examples = sorted((ROOT / "examples").glob("plot_*.py"))
    assert len(examples) >= 8, examples
    for path in examples:
        text = path.read_text(encoding="utf-8")
        assert text.startswith('"""'), f"{path.name}: sphinx-gallery needs a docstring title"
        assert ".plot(" in text or "plt.subplots(" in text, f"{path.name} draws no figure"


def test_every_image_the_docs_use_exists():
    for page in [ROOT / "README.md", *DOCS.rglob("*.rst")]:
        if {"_build", "generated", "auto_examples"} & set(page.parts):
            continue
        text = page.read_text(encoding="utf-8")
        for target in re.findall(r"!\[[^\]]*\]\(([^)]+)\)|\.\. (?:figure|image):: (\S+)", text):
            ref = next(t for t in target if t)
            assert (page.parent / ref).is_file(), f"{page.name} shows a missing image {ref}"


def test_readme_shows_the_two_commands_and_ci_runs_the_second_verbatim():
    assert INSTALL_AND_RUN in README
    assert INSTALL_AND_TEST in README
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8").rstrip().splitlines()
    assert ci[-1] == INSTALL_AND_TEST


def test_readme_command_is_the_one_the_cli_understands():
    # The main promise: with the bundled data and no other argument the command works.
    argv = shlex.split(INSTALL_AND_RUN.split("&&")[1])
    assert argv[0] == "dppca"
    from dppca.cli import main

    assert main([*argv[1:-2], "--dry-run"]) == 0


@pytest.mark.slow
def test_readme_picture_is_what_its_command_draws_today(tmp_path, capsys):
    # scripts/make_readme_figure.py reads the command from README.md and runs it; a
    # picture drawn by older code (another frame, another layout) differs by far more
    # than the tolerance (another noise draw alone differs by about 16 RMS).
    script = _script("make_readme_figure")
    fresh = tmp_path / "readme_loading.png"
    script.draw(fresh)
    reason = script.differs(ROOT / script.FIGURE, fresh)
    assert reason is None, f"run python scripts/make_readme_figure.py: {reason}"


def test_readme_picture_check_can_fail(tmp_path):
    # The comparison is not vacuous: a release with another seed is another picture.
    script = _script("make_readme_figure")
    from dppca.cli import main

    other = tmp_path / "other.png"
    argv = script.readme_command()
    argv[argv.index("--seed") + 1] = "1"
    argv[argv.index("--out") + 1] = str(other)
    assert main([*argv, "--no-ledger"]) == 0
    assert script.differs(ROOT / script.FIGURE, other) is not None


def test_citation_file_is_well_formed():
    # .ci/run validates CITATION.cff against the CFF 1.2.0 schema with cffconvert (in a
    # throwaway environment); this checks what the issue asks it to say.
    yaml = pytest.importorskip("yaml")
    cff = yaml.safe_load((ROOT / "CITATION.cff").read_text(encoding="utf-8"))
    assert cff["cff-version"] == "1.2.0"
    for key in ("message", "title", "authors", "version", "license"):
        assert cff[key], key
    assert cff["version"] == dppca.__version__
    dois = {ref.get("doi") for ref in cff["references"]}
    assert "10.1002/sam.70053" in dois
    assert any("yejinjo0220/dppca" in str(ref.get("repository-code")) for ref in cff["references"])


def test_docs_extra_installs_what_conf_py_loads():
    tomllib = pytest.importorskip("tomllib")  # Python 3.11+
    with (ROOT / "pyproject.toml").open("rb") as fh:
        extras = tomllib.load(fh)["project"]["optional-dependencies"]
    wanted = {"sphinx", "numpydoc", "sphinx-gallery", "pydata-sphinx-theme", "sphinx-copybutton"}
    names = {re.split(r"[\[<>=!~; ]", r, maxsplit=1)[0].lower() for r in extras["docs"]}
    assert wanted <= names, wanted - names
    # The gallery's scikit-learn example needs the estimator's extra.
    assert "dppca[sklearn]" in extras["docs"]
