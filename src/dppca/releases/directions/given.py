"""Directions handed to another release: checked, and refused when they are the data's own.

:func:`dppca.dp_scree` and :func:`dppca.dp_score` can use directions the
caller gives instead of releasing them: an earlier private release, or a
matrix the caller vouches is public.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray

from ...core.lazy import is_dataframe
from ...core.tables import complete_rows
from .result import DirectionsResult

__all__ = ["refuse_own_directions", "resolve_directions"]

# A "public" direction closer than this (max abs entry, up to sign) to the
# data's own sample-covariance direction of the same PC is taken to be it.
_OWN_DIRECTION_TOL = 1e-8


def refuse_own_directions(
    data: NDArray[np.float64], matrix: NDArray[np.float64], pcs: Sequence[int]
) -> None:
    """Refuse public directions that are the data's own non-private directions (internal).

    Parameters
    ----------
    data : ndarray of shape (n, p)
        The validated data of the call (before any clipping to bounds).
    matrix : ndarray of shape (p, len(pcs))
        The caller's "public" directions, as the release would use them.
    pcs : sequence of int
        The PC number (from 1) each column stands for.

    Raises
    ------
    ValueError
        If a column equals, to 1e-8 in every entry and up to its sign, the
        direction of the same PC that :func:`~dppca.pc_dir` computes from ``data``.

    Notes
    -----
    Privacy: this is a check on the data, so its outcome is itself a function
    of the data; here is why it costs nothing that the caller had not already
    given away. The release treats ``matrix`` as fixed and public, and its
    (eps, delta) guarantee is for neighbouring datasets with the same
    ``matrix``. The check fires only on the data whose own sample-covariance
    direction lies within 1e-8 of a column: a caller who passes such a column
    has, except by a coincidence of probability zero for directions chosen
    without the data, computed it from these data, and the release (which
    publishes ``matrix`` as its directions) would have published a
    non-private statistic, so the guarantee was already void; the refusal
    stops that before anything is spent or drawn. For every other
    ``matrix`` the check passes on both neighbours alike and the guarantee is
    untouched. The residual: a ``matrix`` crafted by someone who knows every
    other row turns the refusal into a yes/no answer to "is the remaining row
    (almost exactly) this guess?"; only pass directions you trust to be
    public. No warning or error here depends on the data otherwise (a
    non-finite covariance, for example, simply passes).
    """
    if matrix.size == 0:
        return
    complete = complete_rows(data)  # the rows pc_dir compares (missing="zero")
    if complete is not None:
        data = data[complete]
    with np.errstate(all="ignore"):
        cov = np.cov(data, rowvar=False).reshape(data.shape[1], data.shape[1])
        if not np.isfinite(cov).all():
            return
        values, vectors = np.linalg.eigh(cov)
    order = np.argsort(values)[::-1]
    for j, pc in enumerate(pcs):
        own = vectors[:, order[pc - 1]]
        col = matrix[:, j]
        gap = min(np.max(np.abs(col - own)), np.max(np.abs(col + own)))
        if gap <= _OWN_DIRECTION_TOL:
            raise ValueError(
                "directions: a column passed as public equals the non-private direction "
                f"(pc_dir) of PC{pc} of these same data, so the release would not be "
                "private. Pass directions from public data, or a private release from "
                "dp_pc_dir (or directions=None to release them here)."
            )


def resolve_directions(
    directions: object, *, p: int, k: int, public_directions: bool = False
) -> tuple[NDArray[np.float64] | None, DirectionsResult | None]:
    """Check the directions a private summary is asked to use (internal).

    Shared by :func:`dppca.dp_scree` and :func:`dppca.dp_score`.

    Parameters
    ----------
    directions : None, DirectionsResult or array-like of shape (p, >=k)
        None: the caller releases private directions itself. A private
        ``DirectionsResult`` is an earlier release. A non-private one (from
        :func:`~dppca.pc_dir`) is refused unless ``public_directions`` is True. An
        array is taken as public directions.
    p : int
        Number of variables of the data.
    k : int
        Number of leading columns needed (for example the largest PC shown).
    public_directions : bool, default=False
        The caller's confirmation that a non-private ``DirectionsResult``
        comes from public data.

    Returns
    -------
    matrix : ndarray of shape (p, k) or None
        A fresh copy of the first k columns; None when ``directions`` is None.
    release : DirectionsResult or None
        The private release used, if one was given.

    Notes
    -----
    Privacy: every check looks at the directions and the shapes only, never at
    the data. The private summaries treat the directions as fixed, so they must
    be a private release (whose cost was counted when it was made) or truly
    public. A matrix must have orthonormal columns: the scree's default
    clipping level assumes unit directions, and scores on other axes are not
    PC scores (the score histograms would stay private either way).
    """
    if directions is None:
        return None, None
    if not isinstance(public_directions, bool):
        raise TypeError(f"public_directions must be True or False; got {public_directions!r}.")
    need = (
        f"shape (p, >= k) = ({p}, >= {k}): one row per variable and a column for each "
        f"PC up to PC{k}"
    )
    if isinstance(directions, DirectionsResult):
        if not directions.private and not public_directions:
            raise ValueError(
                "directions is a non-private result (from pc_dir); using it would make the "
                "release non-private. Pass a private release from dp_pc_dir, or "
                "public_directions=True if the directions come from public data."
            )
        if directions.p != p or directions.k < k:
            raise ValueError(
                f"directions must have {need}; got a result with p={directions.p}, "
                f"k={directions.k}. Release directions for these columns and enough PCs."
            )
        release = directions if directions.private else None
        return np.array(directions.directions[:, :k], dtype=np.float64), release
    if is_dataframe(directions):
        directions = directions.to_numpy()
    try:
        matrix = np.array(directions, dtype=np.float64)
    except (TypeError, ValueError):
        raise TypeError(
            "directions must be None, a DirectionsResult or a (p, k) numeric matrix; "
            f"got {type(directions).__name__}."
        ) from None
    if matrix.ndim != 2 or matrix.shape[0] != p or matrix.shape[1] < k:
        raise ValueError(f"directions must have {need}; got shape {matrix.shape}.")
    matrix = np.ascontiguousarray(matrix[:, :k])
    if not np.isfinite(matrix).all() or not np.allclose(
        matrix.T @ matrix, np.eye(k), rtol=0.0, atol=1e-6
    ):
        raise ValueError(
            "directions must be finite with orthonormal columns (unit length, mutually "
            "orthogonal); orthonormalise them first, e.g. with numpy.linalg.qr."
        )
    return matrix, None
