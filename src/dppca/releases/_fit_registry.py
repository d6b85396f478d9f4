"""The slot that names the private PCA fit's planner (``dppca.plan_pca``).

The fit sits above the one-picture releases (it composes them), so they reach
it through this slot, filled once by the package (``dppca/__init__.py``),
instead of an import that would close a loop through the fit's own imports of
those releases. A module of its own, with no imports, so that filling it costs
``import dppca`` nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["register_fit_planner"]

_FIT_PLANNER: list[Callable[..., Any]] = []


def register_fit_planner(planner: Callable[..., Any]) -> None:
    """Name the one function that plans a private PCA fit (``dppca.plan_pca``)."""
    _FIT_PLANNER[:] = [planner]
