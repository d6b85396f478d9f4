"""Variable labels beside arrow tips, pushed apart until none overlap.

Used by the loading plots. The placement is deterministic (the same result
and figure size give the same picture) and reads nothing but the drawn
coordinates and the label texts.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, cast

import numpy as np
from matplotlib.axes import Axes
from numpy.typing import NDArray

from ..core.validation import repel_iterations

__all__ = ["place_labels"]

_LABEL_OFFSET_PT = 4.0  # gap between an arrow tip (or point) and its label
_LABEL_PAD_PT = 1.5  # minimal gap kept between two labels
_LEADER_PT = 10.0  # draw a leader line when a label ends farther than this from its tip


def _renderer(fig: Any) -> Any:
    get = getattr(fig.canvas, "get_renderer", None)
    if get is not None:
        return get()
    return fig._get_renderer()  # pragma: no cover - non-Agg canvases


def place_labels(
    ax: Axes,
    tips: NDArray[np.float64],
    labels: Sequence[str],
    *,
    text_kws: dict[str, Any],
    leader_color: str,
    max_iter: int = 300,
) -> list[Any]:
    """Write ``labels`` next to ``tips`` (data coordinates) and push overlapping ones apart.

    Each label starts just beyond its tip, on the ray from the origin, inside
    the axes box. Then, in display units, every pair of overlapping label
    boxes is separated along the axis of least overlap, and a label lying on
    an arrow shaft is moved across it, all at once, until nothing overlaps
    (or ``max_iter`` rounds). A label that ends far from its tip gets a thin
    leader line. The rule is deterministic: the same result gives the same
    picture.
    """
    max_iter = repel_iterations(len(labels), max_iter)  # issue 14: O(m^2) rounds capped
    fig = ax.figure
    ax.apply_aspect()
    renderer = _renderer(fig)
    trans = ax.transData
    px_per_pt = fig.dpi / 72.0
    texts = [
        ax.text(x, y, lab, ha="center", va="center", clip_on=False, **text_kws)
        for (x, y), lab in zip(tips, labels, strict=True)
    ]
    if not texts:
        return texts
    sizes = np.array(
        [
            [t.get_window_extent(renderer).width, t.get_window_extent(renderer).height]
            for t in texts
        ]
    )
    tip_px = trans.transform(tips)
    origin_px = trans.transform(np.zeros((1, 2)))[0]
    ray = tip_px - origin_px
    norm = np.hypot(ray[:, 0], ray[:, 1])
    unit = np.where(norm[:, None] > 1e-9, ray / np.maximum(norm, 1e-9)[:, None], [1.0, 0.0])
    reach = _LABEL_OFFSET_PT * px_per_pt + np.abs(unit[:, 0]) * sizes[:, 0] / 2
    reach += np.abs(unit[:, 1]) * sizes[:, 1] / 2
    centre = tip_px + unit * reach[:, None]
    # Labels stay inside the axes box, so they never spill onto a neighbouring panel.
    box = ax.get_window_extent(renderer)
    low = np.array([box.x0, box.y0]) + sizes / 2
    high = np.maximum(np.array([box.x1, box.y1]) - sizes / 2, low)
    centre = np.clip(centre, low, high)
    pad = _LABEL_PAD_PT * px_per_pt
    half = sizes / 2 + pad / 2
    # Fixed obstacles: points along each segment from the origin to a tip (arrow shafts).
    fractions = np.linspace(0.0, 1.0, 12)
    obstacles = (origin_px + fractions[:, None, None] * ray[None, :, :]).reshape(-1, 2)
    normals = np.tile(np.column_stack([-unit[:, 1], unit[:, 0]]), (fractions.size, 1))
    obstacle_half = np.full(2, 1.5 * px_per_pt)
    centre = _repel(
        centre, half, (low, high), obstacles, normals, obstacle_half, max_iter=max_iter
    )
    inverse = trans.inverted()
    leader = _LEADER_PT * px_per_pt
    for j, text in enumerate(texts):
        text.set_position(cast(tuple[float, float], inverse.transform(centre[j])))
        nearest = np.clip(tip_px[j], centre[j] - sizes[j] / 2, centre[j] + sizes[j] / 2)
        if np.hypot(*(nearest - tip_px[j])) > leader:
            xy = inverse.transform(np.vstack([tip_px[j], nearest]))
            ax.plot(xy[:, 0], xy[:, 1], color=leader_color, lw=0.5, alpha=0.7, zorder=1)
    return texts


def _repel(
    centre: NDArray[np.float64],
    half: NDArray[np.float64],
    limits: tuple[NDArray[np.float64], NDArray[np.float64]],
    obstacles: NDArray[np.float64],
    normals: NDArray[np.float64],
    obstacle_half: NDArray[np.float64],
    *,
    max_iter: int,
) -> NDArray[np.float64]:
    """Label centres (display units) after pushing clashing boxes apart, all at once.

    Labels of half sizes ``half`` repel each other along their axis of least
    overlap, and move across an arrow shaft (points ``obstacles`` with shaft
    normals ``normals``) they lie on, staying within ``limits``; at most
    ``max_iter`` rounds, fewer once nothing clashes.
    """
    low, high = limits
    index = np.arange(centre.shape[0])
    for _ in range(max_iter):
        diff = centre[:, None, :] - centre[None, :, :]  # (m, m, 2): i minus j
        overlap = half[:, None, :] + half[None, :, :] - np.abs(diff)
        clash = (overlap[..., 0] > 0) & (overlap[..., 1] > 0) & (index[:, None] != index[None, :])
        # Direction of the push on i, away from j; exact ties go by index order.
        tie = np.where(index[:, None] < index[None, :], -1.0, 1.0)[..., None]
        step = _pushes(diff, overlap, clash, tie, share=0.5)
        odiff = centre[:, None, :] - obstacles[None, :, :]
        ooverlap = half[:, None, :] + obstacle_half - np.abs(odiff)
        oclash = (ooverlap[..., 0] > 0) & (ooverlap[..., 1] > 0)
        if not clash.any() and not oclash.any():
            break
        # A label on an arrow shaft moves across the shaft, not along it.
        along_n = np.sum(odiff * normals[None, :, :], axis=2)  # (m, n_obstacles)
        reach_n = half[:, None, 0] * np.abs(normals[None, :, 0])
        reach_n = reach_n + half[:, None, 1] * np.abs(normals[None, :, 1]) + obstacle_half[0]
        need = np.where(oclash, reach_n - np.abs(along_n), 0.0).clip(min=0.0)
        direction = np.where(along_n < 0, -1.0, 1.0)
        ostep = (need * direction)[..., None] * normals[None, :, :]
        hits = np.maximum(oclash.sum(axis=1), 1)[:, None]
        centre = centre + 0.6 * step.sum(axis=1) + 0.8 * ostep.sum(axis=1) / hits
        centre = np.clip(centre, low, high)
    return centre


def _pushes(
    diff: NDArray[np.float64],
    overlap: NDArray[np.float64],
    clash: NDArray[np.bool_],
    tie: NDArray[np.float64],
    *,
    share: float,
) -> NDArray[np.float64]:
    """Moves that separate clashing boxes along their axis of least overlap."""
    along_x = overlap[..., 0] <= overlap[..., 1]
    side = np.sign(diff)
    side = np.where(side == 0, tie, side)
    step = np.zeros_like(diff)
    step[..., 0] = np.where(clash & along_x, side[..., 0] * overlap[..., 0] * share, 0.0)
    step[..., 1] = np.where(clash & ~along_x, side[..., 1] * overlap[..., 1] * share, 0.0)
    return step
