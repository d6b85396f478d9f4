"""Private score plots: a private frame, DP two-dimensional histograms, groups.

The scores ``s_i = V^T x_i`` of the rows on two PC directions are not released.
What is released is a frame (a rectangle chosen with pure-DP quantiles of the
scores), a grid fixed by that frame before any histogram noise, and noisy bin
probabilities, per histogram method and per group.

The parts live in their own modules: :mod:`~dppca.releases.score.result` (the result
and synthetic points), :mod:`~dppca.releases.score.plan` (the plan, built without
data from :mod:`~dppca.releases.score.settings`, :mod:`~dppca.releases.score.costs`
and :mod:`~dppca.releases.score.forecast`), :mod:`~dppca.releases.score.frame`,
:mod:`~dppca.releases.score.groups`, :mod:`~dppca.releases.score.histograms`,
:mod:`~dppca.releases.score.draw` (the draws, which read the settings but not the
plan module) and :mod:`~dppca.releases.score.release` (:func:`dp_score`, which runs
them in a fixed order).
"""

from __future__ import annotations

__all__: list[str] = []
