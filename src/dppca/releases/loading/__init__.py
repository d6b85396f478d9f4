"""Loading coordinates of private PC directions, for loading plots and heatmaps.

Everything here is post-processing of a released :class:`DirectionsResult`
(its directions, noisy matrix and noise scale), apart from the optional
non-private comparison, which is marked as such wherever it appears.

:mod:`~dppca.releases.loading.result` holds :class:`LoadingResult`,
:mod:`~dppca.releases.loading.sensitivity` the re-perturbation view
(:class:`NoiseSensitivity`), :mod:`~dppca.releases.loading.plan` the data-free
:func:`plan_loading` and :mod:`~dppca.releases.loading.release` :func:`dp_loading`.
"""

from __future__ import annotations

__all__: list[str] = []
