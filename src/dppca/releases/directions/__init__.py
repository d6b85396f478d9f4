"""Principal component directions: private (g-DPPCA, spherical) and ordinary.

:mod:`~dppca.releases.directions.result` holds :class:`DirectionsResult`,
:mod:`~dppca.releases.directions.plan` the plan of the private release
(:func:`plan_pc_dir`), :mod:`~dppca.releases.directions.tau` its scale-free
estimator (``estimator="tau"``) and the proof of its sensitivity,
:mod:`~dppca.releases.directions.release` the release
(:func:`dp_pc_dir`) and the ordinary :func:`pc_dir`, and
:mod:`~dppca.releases.directions.given` the checks on directions that a caller hands to
another release (:func:`dppca.dp_scree`, :func:`dppca.dp_score`).
"""

from __future__ import annotations

# The ``name as name`` imports keep internal names that other modules and the
# tests import from dppca.releases.directions importable from it.
from .given import refuse_own_directions as refuse_own_directions
from .given import resolve_directions as resolve_directions
from .plan import DirectionsPlan, plan_pc_dir
from .plan import forecast_directions as forecast_directions
from .release import dp_pc_dir, pc_dir
from .release import pc_dir_checked as pc_dir_checked
from .result import DirectionsResult, orient_signs

__all__ = [
    "DirectionsPlan",
    "DirectionsResult",
    "dp_pc_dir",
    "orient_signs",
    "pc_dir",
    "plan_pc_dir",
]
