"""Private scree and proportion-of-variance estimates along PC directions.

The eigenvalues of the (noisy) spherical Kendall matrix are not variances, so
the variance along each private direction is estimated in a separate private
step. The target is mean-free: rows are paired in a data-independent order and
``z_i = (x_a - x_b) / sqrt(2)`` has ``E[(v' z_i)^2] = v' Sigma v`` whatever the
mean, so no sample mean is ever subtracted.

The code lives in the package's modules, along the stages of a release (each
name is imported from the module that defines it):

* ``controls``: the estimators' settings and the checks of ``method`` and
  ``control``;
* ``result``: :class:`ScreeResult` and its proportions of variance;
* ``statistics``: the pre-noise statistics, whose sensitivities the tests
  check;
* ``clip``: the public ladder and level of the clip scan, and the choice of
  noise of the joint moment release;
* ``estimators``: the draws of each estimator (clipped moments, PMWM,
  Huber) and the cost records of the extra ones;
* ``budget``: the split of (eps, delta) over the parts and their costs;
* ``forecast``: the accuracy forecast of a plan;
* ``options``: :class:`ScreeOptions`, the release's own settings, checked once;
* ``plan``: :func:`plan_scree` and :class:`ScreePlan`, which price and
  forecast a release from those two, all without data;
* ``draw``: the draws of a plan, which read its public settings only;
* ``release``: :func:`dp_scree`, which runs the plan.
"""

from __future__ import annotations

__all__: list[str] = []
