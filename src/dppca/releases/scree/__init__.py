"""Private scree and proportion-of-variance estimates along PC directions.

The eigenvalues of the (noisy) spherical Kendall matrix are not variances, so
the variance along each private direction is estimated in a separate private
step. The target is mean-free: rows are paired in a data-independent order and
``z_i = (x_a - x_b) / sqrt(2)`` has ``E[(v' z_i)^2] = v' Sigma v`` whatever the
mean, so no sample mean is ever subtracted.

This package is the public home of every name below; the code lives in its
modules, along the stages of a release:

* ``_controls``: the estimators' settings and the checks of ``method`` and
  ``control``;
* ``_result``: :class:`ScreeResult` and its proportions of variance;
* ``_statistics``: the pre-noise statistics, whose sensitivities the tests
  check;
* ``_clip``: the public ladder and level of the clip scan, and the choice of
  noise of the joint moment release;
* ``_estimators``: the draws of each estimator (clipped moments, PMWM,
  Huber) and the cost records of the extra ones;
* ``_budget``: the split of (eps, delta) over the parts and their costs;
* ``_forecast``: the accuracy forecast of a plan;
* ``_plan``: :func:`plan_scree` and :class:`ScreePlan`, which price and
  forecast a release from those two, all without data;
* ``_draw``: the draws of a plan, which read its public settings only;
* ``_release``: :func:`dp_scree`, which runs the plan.

The classes name ``dppca.releases.scree`` as their module, so release files keep
naming them here. Private helpers stay reachable as attributes of this
package for the tests and benchmarks that use them; to replace one (a
benchmark swapping ``scale_to_tight``), patch the module that calls it.
"""

from __future__ import annotations

from ..splits import ScreeSplit
from ._clip import _CLIP_QUANTILE as _CLIP_QUANTILE
from ._clip import _CLIP_QUANTILE_MAX as _CLIP_QUANTILE_MAX
from ._clip import _CLIPPED_PAIRS as _CLIPPED_PAIRS
from ._clip import _LADDER_BOUNDED as _LADDER_BOUNDED
from ._clip import _LADDER_HIGH as _LADDER_HIGH
from ._clip import _LADDER_LOW as _LADDER_LOW
from ._clip import _SCAN_MARGIN as _SCAN_MARGIN
from ._clip import _SCAN_SHARE_MAX as _SCAN_SHARE_MAX
from ._clip import _SCAN_SHARE_MIN as _SCAN_SHARE_MIN
from ._clip import _auto_scan_share as _auto_scan_share
from ._clip import _clip_ladder as _clip_ladder
from ._clip import _joint_noise as _joint_noise
from ._clip import _scan_failure as _scan_failure
from ._clip import _scan_level as _scan_level
from ._clip import _unit_sd as _unit_sd
from ._controls import _CONTROLS as _CONTROLS
from ._controls import METHODS, ClippedControl, HuberControl, PMWMControl
from ._controls import ScreeMethod as ScreeMethod
from ._controls import _resolve_controls as _resolve_controls
from ._controls import _resolve_methods as _resolve_methods
from ._estimators import _PAIRINGS as _PAIRINGS
from ._estimators import _TARGET_MARGIN as _TARGET_MARGIN
from ._estimators import _halves as _halves
from ._estimators import _huber as _huber
from ._estimators import _huber_settings as _huber_settings
from ._estimators import _method_cost as _method_cost
from ._estimators import _moment_release as _moment_release
from ._estimators import _mono as _mono
from ._estimators import _pmwm as _pmwm
from ._plan import ScreePlan, plan_scree
from ._release import dp_scree
from ._result import ScreeResult
from ._result import _pve as _pve
from ._result import _pve_total as _pve_total
from ._statistics import _dyadic_bins as _dyadic_bins
from ._statistics import _huber_gradient as _huber_gradient
from ._statistics import _m2_histogram as _m2_histogram
from ._statistics import _m2_median_utility as _m2_median_utility
from ._statistics import _m2_values as _m2_values
from ._statistics import _paired_differences as _paired_differences
from ._statistics import _sigma as _sigma
from ._statistics import _winsorized_statistic as _winsorized_statistic

__all__ = [
    "METHODS",
    "ClippedControl",
    "HuberControl",
    "PMWMControl",
    "ScreePlan",
    "ScreeResult",
    "ScreeSplit",
    "dp_scree",
    "plan_scree",
]

# The public home of the classes, named by release files and pickles.
for _cls in (ClippedControl, HuberControl, PMWMControl, ScreePlan, ScreeResult):
    _cls.__module__ = __name__
del _cls
