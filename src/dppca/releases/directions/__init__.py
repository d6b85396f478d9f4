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

__all__: list[str] = []
