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

# The ``name as name`` imports keep internal names that the app, the tests and
# the benchmarks import from dppca.releases.score importable from it.
from ..splits import ScoreSplit
from .frame import bounds_frame, frame_eps_needed, frame_failure_bound
from .frame import private_frame as private_frame
from .histograms import ScoreMethod as ScoreMethod
from .histograms import add_counts as add_counts
from .histograms import bin_counts as bin_counts
from .histograms import bin_rule
from .histograms import sparse_counts as sparse_counts
from .plan import ScorePlan, plan_score
from .release import dp_score
from .result import NonPrivateScores, ScoreResult, sample_points
from .result import SampleKind as SampleKind

__all__ = [
    "NonPrivateScores",
    "ScorePlan",
    "ScoreResult",
    "ScoreSplit",
    "bin_rule",
    "bounds_frame",
    "dp_score",
    "frame_eps_needed",
    "frame_failure_bound",
    "plan_score",
    "sample_points",
]
