"""Checks of the options of a score release: bins, methods, split, groups, frame, sampling.

As everywhere in dppca, messages name the argument
and the requirement and never quote a data value.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from .lazy import pandas as pd
from .scalar_checks import check_positive_float, check_positive_int, check_real

__all__ = [
    "bin_rule",
    "check_bins",
    "check_frame",
    "check_group_count",
    "check_group_labels",
    "check_methods",
    "check_sample_options",
    "check_split",
]


def bin_rule(n: int, rule: str = "W") -> int:
    """Bins per axis from the number of rows only (public under replacement).

    ``"W"``: ``max(1, round(n ** (1/4)))``; ``"J"``: ``max(1, round((n / ln n) ** (1/3)))``.

    Examples
    --------
    >>> from dppca.core.score_checks import bin_rule
    >>> bin_rule(5000), bin_rule(5000, "J")
    (8, 8)
    """
    n = check_positive_int(n, "n")
    if rule == "W":
        return max(1, round(n**0.25))
    if rule == "J":
        return max(1, round((n / math.log(n)) ** (1 / 3))) if n > 1 else 1
    raise ValueError(f"bins rule must be 'W' or 'J'; got {rule!r}.")


def check_bins(bins: object, n: int) -> tuple[int, int]:
    """Bins per axis of a score grid: a rule name (None is ``"W"``), an integer or a pair."""
    if bins is None or isinstance(bins, str):
        m = bin_rule(n, "W" if bins is None else bins)
        return m, m
    if isinstance(bins, numbers.Integral) and not isinstance(bins, bool):
        m = check_positive_int(bins, "bins")
        return m, m
    if isinstance(bins, Sequence | np.ndarray) and len(bins) == 2:
        mx, my = (check_positive_int(b, "bins") for b in bins)
        return mx, my
    raise TypeError(
        f"bins must be None, 'W', 'J', an integer or a pair of integers; got {bins!r}."
    )


def check_methods(method: object, allowed: Sequence[str]) -> tuple[str, ...]:
    """One method name or a list of them, each among ``allowed``; repeats dropped, order kept."""
    shown = ", ".join(repr(m) for m in allowed)
    items = [method] if isinstance(method, str) else method
    if not isinstance(items, Sequence) or not items:
        raise TypeError(f"method must be {shown} or a list of them; got {method!r}.")
    out: list[str] = []
    for m in items:
        if m not in allowed:
            raise ValueError(f"method must be among {shown}; got {m!r}.")
        if m not in out:
            out.append(m)
    return tuple(out)


def check_split(
    split: object, used: tuple[str, ...], defaults: dict[str, float], *, keys: tuple[str, ...]
) -> dict[str, float]:
    """Epsilon fractions of the parts in ``used`` (weights, normalised to sum 1).

    ``split`` maps some of ``keys`` to positive weights that replace the
    ``defaults``; None keeps the defaults.
    """
    weights = dict(defaults)
    if split is not None:
        if not isinstance(split, Mapping):
            raise TypeError(f"split must be a mapping such as {defaults!r}; got {split!r}.")
        for key, value in split.items():
            if key not in keys:
                raise ValueError(f"split keys must be among {keys!r}; got {key!r}.")
            weights[key] = check_positive_float(value, f"split[{key!r}]")
    total = math.fsum(weights[k] for k in used)
    return {k: weights[k] / total for k in used}


def check_frame(frame: object) -> tuple[tuple[float, float], tuple[float, float]]:
    """A public frame ``((xmin, xmax), (ymin, ymax))`` of finite numbers with min < max."""
    try:
        (x0, x1), (y0, y1) = frame  # type: ignore[misc]
        values = [float(v) for v in (x0, x1, y0, y1)]  # type: ignore[has-type]
    except (TypeError, ValueError):
        raise TypeError(
            f"frame must be ((xmin, xmax), (ymin, ymax)) of public numbers; got {frame!r}."
        ) from None
    if (
        not all(math.isfinite(v) for v in values)
        or values[0] >= values[1]
        or (values[2] >= values[3])
    ):
        raise ValueError(f"frame limits must be finite with min < max; got {frame!r}.")
    return (values[0], values[1]), (values[2], values[3])


def check_sample_options(
    method: str | None,
    size: int | None,
    kind: str,
    bandwidth: float | None,
    *,
    methods: Sequence[str],
    n: int,
    bandwidths: Mapping[str, float],
) -> tuple[str, int, float]:
    """Method (the first of ``methods`` by default), size (n), bandwidth of sampled points.

    ``bandwidths`` maps each point kind to its default bandwidth.
    """
    method = methods[0] if method is None else method
    if method not in methods:
        raise ValueError(f"method must be one of {list(methods)!r}; got {method!r}.")
    size = n if size is None else check_positive_int(size, "size")
    if kind not in bandwidths:
        raise ValueError(f"kind must be 'center' or 'uniform'; got {kind!r}.")
    if bandwidth is None:
        return method, size, bandwidths[kind]
    return method, size, check_real(bandwidth, "bandwidth", low=0.0)


def check_group_labels(group_labels: object) -> tuple[Any, ...] | None:
    """The public group labels of a score release as a tuple, or None when not given."""
    if group_labels is None:
        return None
    if isinstance(group_labels, str | bytes) or not isinstance(
        group_labels, Sequence | np.ndarray | pd.Index
    ):
        raise TypeError(
            "group_labels must be a list of the public group labels, such as ['a', 'b']; "
            f"got {type(group_labels).__name__}."
        )
    levels = tuple(group_labels)
    if not levels:
        raise ValueError("group_labels must name at least one group.")
    if pd.isna(pd.Series(levels, dtype=object)).any():
        raise ValueError("group_labels must not contain missing values.")
    if len(set(levels)) != len(levels):
        raise ValueError("group_labels must name each group once.")
    return levels


def check_group_count(labels: Any, public: tuple[Any, ...] | None, n: int) -> None:
    """Refuse a grouping with more than 5 labels per 100 rows (and more than 10).

    Such a column is usually an identifier, and a group of one row has a
    histogram that shows where that row lies. Without ``group_labels`` the label
    set is released anyway (see :func:`dppca.dp_score`), so counting it reveals
    nothing more; with them only the public list is counted.
    """
    if labels is None:
        return
    count = len(public) if public is not None else len(pd.unique(pd.Series(labels, dtype=object)))
    limit = max(10, n // 20)
    if count > limit:
        raise ValueError(
            f"groups has {count} labels for {n} rows (more than {limit}): it looks like an "
            "identifier column, and a group of a few rows would show where those rows lie. "
            "Group by a column with fewer labels."
        )
