"""The installed version of dppca, read once from the package metadata.

A module of its own so that modules inside the package (release files record
the version that wrote them) need not import the package's ``__init__``.
"""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version

__all__ = ["__version__"]

try:
    __version__ = version("dppca")
except PackageNotFoundError:  # pragma: no cover - running from a source tree
    __version__ = "0+unknown"
