"""Checks of the options of a score release: group labels and their count.

Split out of :mod:`dppca._validation`, which re-exports every name here, to
keep that module short; as everywhere in dppca, messages name the argument
and the requirement and never quote a data value.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ._lazy import pandas as pd

__all__ = ["check_group_count", "check_group_labels"]


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
