"""The data-free plan of a scree release: its checks, settings, cost and forecast."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ...core.data_checks import check_data
from ...core.options import (
    DESIGN_DEFAULTS,
    DesignOptions,
    PrivacyOptions,
    evolve,
    split_settings,
)
from ...core.scalar_checks import check_bool, check_positive_int
from ...core.validation import check_delta_for_n, check_k
from ...kernels.pair_moments import all_pairs_pay
from ...privacy.cost import PrivacyCost
from ..directions.given import refuse_own_directions, resolve_directions
from ..directions.plan import DirectionsPlan, plan_own_directions, resolve_design
from ..directions.tau import released_text
from ..engine import CheckedData, Part, parts_of
from ..forecast import Forecast
from .budget import Split, SplitInputs, price_split
from .checks import enforce_scree
from .clip import _CLIP_QUANTILE, _auto_scan_share, _clip_ladder, _scan_level
from .draw import run_scree
from .forecast import _forecast_scree
from .options import ScreeOptions


def plan_scree(
    n: int,
    p: int,
    k: int | None = None,
    *,
    directions_given: bool = False,
    variables: tuple[str, ...] | None = None,
    **settings: Any,
) -> ScreePlan:
    """Price and forecast a :func:`dp_scree` call without any data.

    Parameters are those of :func:`dp_scree` that shape the release, with the
    data replaced by its public size ``n`` x ``p`` and ``directions`` by
    whether they are given. ``bounds`` take the forms of :func:`dp_scree`
    (mappings name the ``variables``, by default ``V1 .. Vp``). The settings
    become option objects (checked there, once) for :func:`plan_scree_options`.

    Returns
    -------
    ScreePlan
        ``cost`` (what the call records), ``forecast``, ``parts`` and the
        sub-plan of its ``directions``; :func:`dppca.releases.engine.execute` runs it.

    Examples
    --------
    >>> plan = plan_scree(5000, 20, 3, eps=1.0, delta=1e-6)
    >>> plan.forecast.ok, round(plan.cost.eps, 6)
    (True, 1.0)
    """
    privacy, options, design = split_settings(
        "plan_scree", {"k": k, **settings}, ScreeOptions, DesignOptions
    )
    given = check_bool(directions_given, "directions_given")
    return plan_scree_options(n, p, privacy, options, given, variables, design)


def plan_scree_options(
    n: int,
    p: int,
    privacy: PrivacyOptions,
    options: ScreeOptions,
    directions_given: bool = False,
    variables: tuple[str, ...] | None = None,
    design: DesignOptions = DESIGN_DEFAULTS,
) -> ScreePlan:
    """The plan of a scree release from checked option objects.

    Checks only what needs the shape (``k``, ``delta`` against 1/n, the
    bounds against the names, ``design.m`` against n); the automatic
    pairing and clip-scan share follow from the shape and eps.
    """
    n = check_positive_int(n, "n")
    p = check_positive_int(p, "p")
    k = check_k(options.k, p)
    privacy = evolve(privacy, delta=check_delta_for_n(privacy.delta, n, privacy.allow_large_delta))
    pairing = options.pairing or ("all" if all_pairs_pay(n, p) else "random")
    options = evolve(options, k=k, pairing=pairing)
    names = variables if variables is not None else tuple(f"V{j + 1}" for j in range(p))
    box = privacy.box(names)
    controls = options.control
    public_clip = controls["clipped"].clip if "clipped" in controls else None
    direction_share = 0.0 if directions_given else options.split.directions
    trace_share = options.split.clip
    if public_clip is not None:
        trace_share = 0.0
    elif trace_share is None:
        trace_share = _auto_scan_share(n, privacy.eps, _clip_ladder(box).size)
    if direction_share + trace_share >= 1:
        raise ValueError(
            f"split.directions + split.clip must be < 1 to leave budget for the scree; "
            f"got {direction_share!r} + {trace_share!r}."
        )
    inputs = SplitInputs(
        n=n,
        p=p,
        privacy=privacy,
        options=options,
        direction_share=direction_share,
        trace_share=trace_share,
        directions_text=released_text(
            "kendall", p, *resolve_design(design.design, design.m, n, p)
        ),
    )
    # the budget split and its price (see budget.price_split); the clip scan's
    # level follows from its share of eps, unless the clip level is public
    split, cost = price_split(inputs, options.method)
    ladder = _clip_ladder(box)
    level = _CLIP_QUANTILE
    if public_clip is None:
        level = _scan_level(n // 2, split.eps_scan, split.eps_m)
    directions = None
    if split.eps_dir > 0:
        directions = plan_own_directions(
            n, p, privacy, split.eps_dir, split.delta_dir, design.directions(k=k)
        )
    return ScreePlan(
        inputs=inputs,
        split=split,
        ladder=ladder,
        scan_level=level,
        cost=cost,
        forecast=_forecast_scree(inputs, split, ladder, level),
        box=box,
        directions=directions,
    )


@dataclass(frozen=True)
class ScreePlan:
    """The data-free side of a scree release: budget split, ladder, cost and forecast.

    Built by :func:`plan_scree` from public quantities only; :func:`dp_scree`
    runs exactly this plan.
    """

    inputs: SplitInputs
    split: Split
    ladder: NDArray[np.float64]
    scan_level: float
    cost: PrivacyCost
    forecast: Forecast
    box: Any = None
    directions: DirectionsPlan | None = None
    kind: str = "scree"

    # The settings and the split read through the objects they come from.
    n = property(lambda self: self.inputs.n, doc="Rows of the table (public).")
    p = property(lambda self: self.inputs.p, doc="Columns of the table.")
    k = property(lambda self: self.inputs.k, doc="Components released.")
    eps_dir = property(lambda self: self.split.eps_dir, doc="eps of the directions.")
    delta_dir = property(lambda self: self.split.delta_dir, doc="delta of the directions.")
    eps_scan = property(lambda self: self.split.eps_scan, doc="eps of the clip scan.")
    eps_m = property(lambda self: self.split.eps_m, doc="eps of each method.")
    delta_m = property(lambda self: self.split.delta_m, doc="delta of each method.")
    noise = property(lambda self: self.split.noise, doc="The joint release's noise.")
    calibration = property(lambda self: self.inputs.privacy.calibration, doc="Calibration.")
    ties = property(lambda self: self.inputs.privacy.ties, doc="What a tied pair does.")
    accuracy = property(lambda self: self.inputs.privacy.accuracy, doc="Forecast action.")
    missing = property(lambda self: self.inputs.privacy.missing, doc="Missing cells.")
    methods = property(lambda self: self.inputs.options.method, doc="Methods, in order.")
    pairing = property(lambda self: self.inputs.options.pairing, doc="The pairing rule.")
    mono = property(lambda self: self.inputs.options.mono, doc="Monotone fit or not.")
    compare = property(lambda self: self.inputs.options.compare, doc="Non-private too.")

    @property
    def controls(self) -> Mapping[str, Any]:
        """Each method's control (read-only)."""
        return MappingProxyType(self.inputs.controls)

    @property
    def parts(self) -> tuple[Part, ...]:
        """The noise draws, in order: directions (if released here), clip, moments, methods."""
        return parts_of(self.cost)

    def check_input(
        self, X: Any, *, directions: Any = None, public_directions: bool = False
    ) -> CheckedData:
        """Check the table (n >= 4, in memory) and the given ``directions`` once.

        A CheckedData whose ``extra`` already holds the directions passes
        through. ``directions`` must match the plan: given exactly when it
        was priced with ``directions_given=True``.
        """
        if isinstance(X, CheckedData) and X.extra is not None:
            given, release = X.extra
        else:
            table = (
                X
                if isinstance(X, CheckedData)
                else CheckedData(*check_data(X, min_rows=4, missing=self.missing))
            )
            given, release = resolve_directions(
                directions,
                p=table.shape[1],
                k=self.k,
                public_directions=check_bool(public_directions, "public_directions"),
            )
            X = CheckedData(table.values, table.variables, (given, release))
        if (given is None) != (self.directions is not None):
            raise ValueError(
                "the plan was priced "
                + ("with directions given" if self.directions is None else "to release them")
                + "; build it with directions_given matching the directions passed."
            )
        return X

    def screen(self, data: CheckedData) -> None:
        """Before any noise: refuse "public" directions that are the data's own."""
        given, release = data.extra
        if given is not None and release is None:
            refuse_own_directions(data.values, given, range(1, self.k + 1))

    def review(self, result: Any) -> Any:
        """Refuse to present impossible values as estimates (see :mod:`.checks`).

        The directions' own check is kept on ``result.directions_release`` but
        not acted on: the variances are measured along whatever directions
        were released, so they stay right when a direction is one of several
        of equal variance.
        """
        return enforce_scree(result, self.accuracy)

    def draw(self, data: CheckedData, rng: np.random.Generator) -> Any:
        """Draw the parts in order (see :func:`dppca.releases.scree.draw.run_scree`)."""
        return run_scree(self, data, rng)
