"""Groups in a score release: labels, codes per row and the group sizes.

Without ``group_labels`` the set of labels found in the data is released as
it is (not private); with them the released labels are the caller's public
list. Group sizes are exact when the caller declares them public, else
released with Laplace noise.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

from ...core.lazy import is_dataframe
from ...core.lazy import pandas as pd
from ...core.score_checks import check_group_count, check_group_labels
from ...core.types import Data
from ...privacy.mechanisms import laplace_noise


def _resolve_groups(X: Data, groups: object) -> tuple[Data, Any]:
    if groups is None:
        return X, None
    if isinstance(groups, str):
        if not is_dataframe(X):
            raise TypeError("groups can name a column only when X is a pandas DataFrame.")
        if groups not in X.columns:
            raise ValueError(f"groups names no column of X; got {groups!r}.")
        return X.drop(columns=groups), X[groups].to_numpy()
    labels = np.asarray(groups, dtype=object) if not isinstance(groups, np.ndarray) else groups
    if labels.ndim != 1:
        raise ValueError(f"groups must be one label per row (1-D); got {labels.ndim} dimensions.")
    return X, labels


def _group_codes(
    labels: Any, n: int, public: tuple[Any, ...] | None = None
) -> tuple[tuple[Any, ...], NDArray[np.int64]]:
    """Levels and a code per row; with ``public`` levels, other labels get -1 (no group)."""
    if len(labels) != n:
        raise ValueError(f"groups must hold one label per row of X ({n}); got {len(labels)}.")
    if public is not None:
        index = pd.Index(list(public), dtype=object)
        codes = index.get_indexer(pd.Series(labels, dtype=object))
        return public, np.asarray(codes, dtype=np.int64)
    if pd.isna(pd.Series(labels, dtype=object)).any():
        raise ValueError("groups must not contain missing labels; drop or label those rows.")
    values = pd.unique(pd.Series(labels, dtype=object))
    try:
        levels = tuple(sorted(values))
    except TypeError:
        levels = tuple(sorted(values, key=str))
    codes = pd.Categorical(pd.Series(labels, dtype=object), categories=list(levels)).codes
    return levels, np.asarray(codes, dtype=np.int64)


def resolve_group_codes(
    labels: Any, group_labels: object, n: int
) -> tuple[tuple[Any, ...] | None, tuple[Any, ...] | None, NDArray[np.int64] | None]:
    """The public label list, the released levels and a code per row (internal).

    Returns ``(public_levels, levels, codes)``: the caller's ``group_labels``
    (None if not given), the labels of the release (None without groups) and
    each row's index into them (-1 for a row outside ``group_labels``).
    """
    public_levels = check_group_labels(group_labels)
    check_group_count(labels, public_levels, n)
    if public_levels is not None and labels is None:
        raise ValueError("group_labels needs groups; pass the group of each row as well.")
    if labels is None:
        return public_levels, None, None
    levels, codes = _group_codes(labels, n, public_levels)
    return public_levels, levels, codes


def release_group_sizes(
    codes: NDArray[np.int64] | None,
    levels: tuple[Any, ...] | None,
    n: int,
    *,
    private: bool,
    eps_g: float,
    rng: np.random.Generator,
) -> tuple[NDArray[np.int64], NDArray[np.float64] | None]:
    """Exact group sizes and the released ones (internal).

    The released sizes are None without groups, the exact sizes when the
    caller declared them public, and otherwise the counts with Laplace(2 /
    eps_g) noise, rounded and clipped at zero: a row that changes group moves
    two counts by one (L1 sensitivity 2), so they are eps_g-DP. Without groups
    the exact "size" is ``[n]`` and nothing is drawn.
    """
    n_groups = 1 if levels is None else len(levels)
    exact = (
        np.bincount(codes[codes >= 0], minlength=n_groups) if codes is not None else np.array([n])
    )
    if levels is None:
        return exact, None
    if private:
        noisy = laplace_noise(exact.astype(np.float64), 2.0 / eps_g, rng)
        return exact, np.maximum(np.round(noisy), 0.0)
    return exact, exact.astype(np.float64)
