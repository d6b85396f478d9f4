"""The version of dppca: one literal, which the package metadata also reads.

A module of its own so that modules inside the package (release files record
the version that wrote them) need not import the package's ``__init__``. It is
a literal rather than a lookup in the installed metadata, which would cost a
short command about 40 ms of imports (``importlib.metadata``);
``pyproject.toml`` takes the package's version from here, and a test checks
that the installed metadata agrees.
"""

from __future__ import annotations

__all__ = ["__version__"]

__version__ = "0.1.0"
