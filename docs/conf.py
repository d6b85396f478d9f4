"""Sphinx configuration for the dppca documentation.

Build (warnings are errors, as in ``.ci/run``)::

    python3 -m pip install ".[docs]"
    python3 -m sphinx -W --keep-going -b html docs docs/_build/html

The example gallery (``examples/``) is executed on the bundled datasets during the
build, so an example that no longer runs fails the build.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

ROOT = Path(__file__).resolve().parents[1]
# Document the source tree next to this file, whatever copy of dppca is installed.
sys.path.insert(0, str(ROOT / "src"))

import dppca  # noqa: E402

project = "dppca"
author = "dppca developers"
copyright = "dppca developers, MIT licence"
release = dppca.__version__
version = ".".join(release.split(".")[:2])

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.intersphinx",
    "sphinx.ext.mathjax",
    # MathJax shipped with the site (a PyPI package copies it into _static): sensitive data
    # is often analysed on machines without internet, so the math renders offline.
    "sphinx-mathjax-offline",
    "numpydoc",
    "sphinx_gallery.gen_gallery",
    "sphinx_copybutton",
]

templates_path = ["_templates"]
exclude_patterns = ["_build", "Thumbs.db", ".DS_Store", "**/README.rst"]
source_suffix = {".rst": "restructuredtext"}
root_doc = "index"
default_role = "literal"
nitpicky = False

# -- API reference -------------------------------------------------------------
autosummary_generate = True
autosummary_imported_members = True
autodoc_typehints = "none"  # the numpydoc Parameters sections carry the types
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = False
numpydoc_validation_checks: set[str] = set()

intersphinx_mapping: dict[str, tuple[str, str | None]] = {}
# No network in the build: cross-references to numpy, pandas and matplotlib stay plain
# text. Set DPPCA_DOCS_INTERSPHINX=1 to link them where the network is available.
if os.environ.get("DPPCA_DOCS_INTERSPHINX") == "1":
    intersphinx_mapping = {
        "python": ("https://docs.python.org/3", None),
        "numpy": ("https://numpy.org/doc/stable", None),
        "pandas": ("https://pandas.pydata.org/docs", None),
        "matplotlib": ("https://matplotlib.org/stable", None),
    }

# -- Example gallery -----------------------------------------------------------
sphinx_gallery_conf = {
    "examples_dirs": [str(ROOT / "examples")],
    "gallery_dirs": ["auto_examples"],
    "filename_pattern": r"/plot_",
    "within_subsection_order": "FileNameSortKey",
    "download_all_examples": False,
    "remove_config_comments": True,
    "abort_on_example_error": False,  # -W --keep-going reports every broken example
    "only_warn_on_example_error": False,
    "matplotlib_animations": False,
    "image_scrapers": ("matplotlib",),
    "reset_modules": ("matplotlib",),
    "show_memory": False,
    # No execution-times pages: they load jQuery tables from a CDN (the site works offline).
    "write_computation_times": False,
    # Each API page lists the gallery examples that use its name ("Examples using ...").
    "doc_module": ("dppca",),
    "backreferences_dir": "generated/backreferences",
    "capture_repr": (),  # print() output only: no "<Axes: ...>" after each plot call
    "plot_gallery": "True",
}

# -- HTML ----------------------------------------------------------------------
html_theme = "pydata_sphinx_theme"
html_title = f"dppca {release}"
html_static_path: list[str] = []
html_theme_options = {
    "navigation_with_keys": False,
    "show_toc_level": 2,
    "secondary_sidebar_items": ["page-toc"],
    "footer_start": ["copyright"],
    "footer_end": ["sphinx-version"],
}
html_show_sourcelink = False
copybutton_prompt_text = r">>> |\.\.\. |\$ "
copybutton_prompt_is_regexp = True
