"""After a scree release: released values that are not estimates, and pooling that hides order.

Post-processing only: the checks read the released variances, the released
total variance and clip level, their public noise scales and the public
ladder of candidate clip levels.

- **Off the ladder.** A clip level scanned to the lowest or highest rung of
  its ladder did not find the data's scale: the quantile lies outside the
  ladder, or the scan's noise threw it there. The variances are then clipped
  to nothing or swamped by noise scaled to an absurd level.
- **Zero total beside positive variances.** The total variance is
  released with noise and clipped at 0; a 0 beside positive variances gives
  PVE values that mean nothing.
- **Off the clip level's scale.** A clipped pair moment is at most the clip
  level ``C``, and for a scan that worked the variances add up to a fair
  fraction of ``C`` (the forecast assumes ``C`` near 3 times the total). A
  total above ``C`` (beyond three noise sds) or below ``C / 1000`` is not a
  measurement at that clip level.
- **Pooling across a misordering.** The monotone fit pools neighbours whose
  variances increase. When a later PC's unpooled variance exceeds an
  earlier one's by more than :data:`MISORDER_Z` noise sds of their
  difference, the private directions are out of variance order (for
  example an outlier axis released as PC3): pooling would hide it, so the
  result says so and keeps the unpooled values.

The first three are problems (``ScreeResult.problems``): the figure shows no
curve, only what went wrong, and the release warns (or, with
``accuracy="error"``, raises after the spend with the result attached). The
last is a note (``ScreeResult.order_note``) with a warning; the figure draws
the unpooled values with their noise intervals.
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ...core.exceptions import AccuracyWarning, InaccurateReleaseError
from ...core.warnings import _user_stacklevel

__all__ = ["MISORDER_Z", "enforce_scree", "misorder_note", "scree_problems"]

#: Noise sds of a difference of two unpooled variances beyond which an
#: increase is called a misordering (two-sided normal tail about 6e-5).
MISORDER_Z = 4.0
#: A total variance below this fraction of the clip level is off its scale.
SCALE_FLOOR = 1e-3


def scree_problems(
    values: NDArray[np.float64],
    trace: float,
    trace_sd: float,
    clip: float,
    ladder: NDArray[np.float64] | None,
) -> tuple[str, ...]:
    """Sentences naming why released scree values are not estimates (empty when fine).

    ``values`` are the first method's variances, ``ladder`` the candidate clip
    levels of a scan (None for a public clip level).
    """
    out = []
    if ladder is not None and ladder.size and clip in (float(ladder[0]), float(ladder[-1])):
        end = "lowest" if clip == float(ladder[0]) else "highest"
        out.append(
            f"the clip-level scan stopped at the {end} rung of its ladder ({clip:.3g}), so it "
            "did not find the data's scale; give a public clip level or public bounds"
        )
    positive = bool(np.any(values > 0))
    if trace <= 0 and positive:
        out.append("the released total variance is 0 beside positive variances")
    total = max(float(np.sum(np.maximum(values, 0.0))), trace)
    if total > clip + 3.0 * trace_sd or (positive and total < SCALE_FLOOR * clip):
        out.append(
            f"the released variances (total {total:.3g}) are off the scale of the clip "
            f"level {clip:.3g} they were clipped to"
        )
    return tuple(out)


def misorder_note(unpooled: NDArray[np.float64], sd: NDArray[np.float64]) -> str | None:
    """The sentence saying pooling merged misordered PCs, or None."""
    k = unpooled.shape[0]
    worst = None
    for i in range(k):
        for j in range(i + 1, k):
            z = (unpooled[j] - unpooled[i]) / math.hypot(sd[i], sd[j])
            if z > MISORDER_Z and (worst is None or z > worst[0]):
                worst = (z, i, j)
    if worst is None:
        return None
    _, i, j = worst
    return (
        f"the variance order differs from the directions' order: PC{j + 1}'s unpooled "
        f"variance {unpooled[j]:.3g} (noise sd {sd[j]:.2g}) exceeds PC{i + 1}'s "
        f"{unpooled[i]:.3g} (noise sd {sd[i]:.2g}); the monotone fit pools them, so read "
        "the unpooled estimates (result.unpooled_values)"
    )


def enforce_scree(result: Any, accuracy: str) -> Any:
    """Warn (or raise after the spend, ``accuracy="error"``) on a scree's problems; return it."""
    problems = tuple(result.problems)
    note = result.order_note
    if accuracy == "ignore" or not (problems or note):
        return result
    if problems:
        text = "the private scree release is not an estimate: " + "; ".join(problems) + "."
        if accuracy == "error":
            raise InaccurateReleaseError(
                text + " The release was made and its cost recorded; it is on this error's "
                "`result`.",
                result=result,
            )
    else:
        text = f"the private scree release: {note}."
    warnings.warn(text, AccuracyWarning, stacklevel=_user_stacklevel())
    return result
