"""``standardize=True`` for the one-picture releases: each is one private PCA fit.

:func:`dppca.dp_loading`, :func:`dppca.dp_scree` and :func:`dppca.dp_score`
(and the command line's ``--standardize``) do not decide the standardised
analysis themselves: they run the fit of :func:`dppca.dp_pca` with
``standardize=True`` and only the parts their picture needs, and return that
picture. So the directions come from Kendall's tau, the scree is the fit's
sin-transformed scree of the same release (no scree budget), and the score
plot reads the table divided by the fit's scales (public bounds' widths or
private scales): tau directions never carry a scree or a score in raw units.

The picture of ``dp_scree(X, standardize=True, ...)`` is the scree of
``dp_pca(X, standardize=True, score=False, ...)`` for the same seed, and that
of ``dp_score(X, standardize=True, ...)`` is the score plot of
``dp_pca(X, standardize=True, ...)``: the same plan, the same draws. The
returned result records the whole fit's cost.
"""

from __future__ import annotations

import dataclasses
import inspect
from collections.abc import Callable, Mapping
from typing import Any, Literal

import numpy as np

from ..core.data_checks import check_data
from ..core.tables import check_missing
from ..privacy.accounting import Accountant
from ._fit_registry import _FIT_PLANNER
from .engine import CheckedData, execute

__all__ = [
    "plan_standardized",
    "refuse_options",
    "release_standardized",
    "standardized_release",
]

Picture = Literal["loading", "scree", "score"]


def refuse_options(function: str, given: Mapping[str, tuple[object, object]]) -> None:
    """Refuse the options a standardised picture does not take (given value, default).

    Raised before any data are read, naming every such option.
    """
    clashes = [name for name, (value, default) in given.items() if not _same(value, default)]
    if clashes:
        raise ValueError(
            f"{function}(standardize=True) is one private PCA fit (dppca.dp_pca), which "
            f"decides {', '.join(clashes)} itself; drop {'it' if len(clashes) == 1 else 'them'} "
            "or pass standardize=False."
        )


# The settings a one-picture release passes on to the fit, when it has them.
_SETTINGS = (
    "eps",
    "delta",
    "k",
    "components",
    "bins",
    "bounds",
    "compare",
    "calibration",
    "accuracy",
    "budget",
    "random_state",
    "allow_large_delta",
    "missing",
    "dropna",
    "sign_reference",
)


def standardized_release(
    function: Callable[..., Any],
    picture: Picture,
    arguments: Mapping[str, Any],
    fixed: str,
) -> Any:
    """``function(..., standardize=True)``: refuse the ``fixed`` options, then run the fit.

    ``arguments`` are the call's arguments by name (the function's
    ``locals()`` on entry); the options named in ``fixed`` (separated by
    spaces) must keep the defaults
    of ``function``'s signature, as the fit decides them itself.
    """
    defaults = inspect.signature(function).parameters
    given = {name: (arguments[name], defaults[name].default) for name in fixed.split()}
    refuse_options(function.__name__, given)
    settings = {name: arguments[name] for name in _SETTINGS if name in arguments}
    return release_standardized(picture, arguments["X"], **settings)


def _same(value: object, default: object) -> bool:
    if value is None or default is None:
        return value is default
    try:
        return bool(value == default)
    except (TypeError, ValueError):  # arrays and other values without a plain ==
        return False


def plan_standardized(
    picture: Picture,
    n: int,
    p: int,
    *,
    compare: bool = False,
    variables: tuple[str, ...] | None = None,
    **settings: Any,
) -> Any:
    """The fit's plan for one picture: only the parts that picture needs.

    ``settings`` are those of the picture's function that the fit takes
    (``eps``, ``delta``, ``k``, ``components``, ``bins``, ``bounds``,
    ``calibration``, ``accuracy``, ``allow_large_delta``, ``missing``).
    ``"score"`` keeps the score plot (and the private scales it reads
    without bounds); ``"loading"`` and ``"scree"`` need only the tau
    directions, whose release gives the scree at no extra cost.
    """
    if not _FIT_PLANNER:  # pragma: no cover - filled when the package is imported
        raise RuntimeError("no private PCA planner registered; import dppca first.")
    return _FIT_PLANNER[0](
        n,
        p,
        standardize=True,
        score=picture == "score",
        compare=compare and picture != "loading",
        variables=variables,
        **settings,
    )


def picture_of(fit: Any, picture: Picture, *, cost_of_fit: bool = True) -> Any:
    """The picture's result from the fit, recording the whole fit's cost."""
    if picture == "loading":
        return fit.loading
    result = fit.scree if picture == "scree" else fit.score
    return dataclasses.replace(result, cost=fit.cost) if cost_of_fit else result


def release_standardized(
    picture: Picture,
    X: Any,
    *,
    budget: Accountant | None = None,
    random_state: Any = None,
    dropna: bool = False,
    sign_reference: str = "private",
    **settings: Any,
) -> Any:
    """Run the fit for one picture and return that picture (see the module docstring).

    ``settings`` are those :func:`plan_standardized` takes.
    """
    settings["missing"] = check_missing(settings.get("missing", "refuse"), dropna)
    data, variables = check_data(X, min_rows=4, min_cols=2, missing=settings["missing"])
    n, p = data.shape
    plan = plan_standardized(picture, n, p, variables=variables, **settings)
    fit = execute(plan, CheckedData(data, variables), budget=budget, random_state=random_state)
    result = picture_of(fit, picture)
    if picture == "loading" and settings.get("compare", False):
        result = dataclasses.replace(
            result,
            nonprivate=_correlation_directions(data, variables),
            sign_reference=sign_reference,
        )
    return result


def _correlation_directions(data: np.ndarray, variables: tuple[str, ...]) -> Any:
    """The NON-private correlation PCA directions (the matching comparison)."""
    from .directions.release import pc_dir_checked

    sd = data.std(axis=0, ddof=1)
    return pc_dir_checked(data / np.where(sd > 0, sd, 1.0), variables)


def standardized_report_releases(
    X: Any,
    *,
    budget: Accountant | None = None,
    random_state: Any = None,
    missing: str = "refuse",
    dropna: bool = False,
    **settings: Any,
) -> Any:
    """The fit behind ``report(..., standardize=True)``: every part, with its score plot.

    The report shows all pictures, so the fit keeps its score plot (on the
    widths of ``bounds`` or private scales) whatever the forecast says; the
    forecast's warning and the frame check's note reach the page.
    ``settings`` are the fit's options the report passes on (``eps``,
    ``delta``, ``k``, ``components``, ``bounds``, ``calibration``, ``accuracy``).
    """
    missing = check_missing(missing, dropna)
    data, variables = check_data(X, min_rows=4, min_cols=2, missing=missing)
    if not _FIT_PLANNER:  # pragma: no cover - filled when the package is imported
        raise RuntimeError("no private PCA planner registered; import dppca first.")
    n, p = data.shape
    plan = _FIT_PLANNER[0](
        n, p, standardize=True, score=True, variables=variables, missing=missing, **settings
    )
    return execute(plan, CheckedData(data, variables), budget=budget, random_state=random_state)
