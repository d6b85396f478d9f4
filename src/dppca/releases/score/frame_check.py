"""Post-release checks of a score frame from released values only.

A private frame can be wrong in ways its data-free forecast cannot see: a
centre far from zero is found only on a coarse public ladder, so the frame can
be many times wider than the scores; a frame that misses the scores piles the
rows in its outer bins (rows outside the frame are counted there, see
:func:`dppca.releases.score.histograms.bin_counts`). The checks here read the
released histogram, its public noise level, the released frame, the public
ladders and n, never the data: they are post-processing and cost nothing.

- :func:`edge_share_bound`: a lower bound on the share of rows in the outer
  ring of bins (one implementation, used by :func:`dppca.dp_pca` and
  :func:`dppca.dp_score`);
- :func:`centre_share_bound`: the same bound on the central cell, for frames
  far wider than the scores' spread;
- :class:`FrameLadders`: the public ladders a private frame was drawn on;
  its ``centre_slack`` says how much of the frame's width the centre
  ladder's resolution alone may account for, its ``ladder_end`` whether a
  half width sits at the top (or bottom) of its ladder, where the frame is
  set by ``score_range`` rather than the scores;
- :func:`score_frame_problem`: the sentence :func:`dppca.dp_score` warns (or
  raises) with after the release (:func:`review_frame`).
"""

from __future__ import annotations

import dataclasses
import math
import warnings
from dataclasses import dataclass
from statistics import NormalDist
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ...core.exceptions import AccuracyWarning, InaccurateReleaseError
from ...core.warnings import _user_stacklevel
from .frame import _WIDTH_RATIO, _centre_ladder, _stretch, _width_ladder, frame_level

__all__ = [
    "EDGE_SHARE",
    "WIDE_LIMIT",
    "FrameLadders",
    "centre_share_bound",
    "edge_share_bound",
    "gaussian_shares",
    "review_frame",
    "score_frame_problem",
]

#: A score plot whose released histogram shows, beyond its noise, at least this
#: share of the rows in the outer ring of bins (more than a frame fitted to the
#: scores holds there, for :func:`dppca.dp_score`) is taken to cut rows off.
EDGE_SHARE = 0.2
#: A private frame that may be more than this many times wider than the scores'
#: spread, given the centre ladder's resolution, is not drawn as if it were right
#: (the limit of the fit's own frame check, ``FRAME_LIMIT``).
WIDE_LIMIT = 10.0
# The default inflation of dp_score's frame (see score_frame_problem).
_INFLATE = 0.2
# Noise sds of the lower bounds (about 2.3 % one-sided each).
_EDGE_SDS = 2.0
# The mean and variance of max(0, Z) for a standard normal Z.
_POS_MEAN = 1.0 / math.sqrt(2.0 * math.pi)
_POS_VAR = 0.5 - 1.0 / (2.0 * math.pi)


def _released_grid(score: Any, complete: bool) -> tuple[NDArray[np.float64], float] | None:
    """The ``"add"`` histogram as a (my, mx) grid of probabilities and its sigma, or None."""
    if score is None or not complete or "add" not in score.probs:
        return None
    if score.frame_source == "bounds":
        return None
    probs = np.asarray(score.probs["add"], dtype=np.float64)
    sigma = float(score.noise.get("add", {}).get("sigma", math.nan))
    if probs.shape[0] != 1 or not math.isfinite(sigma):
        return None
    mx, my = score.bins
    if mx < 3 or my < 3:
        return None
    return probs[0].reshape(my, mx), sigma


def _cells_share_bound(
    grid: NDArray[np.float64], cells: NDArray[np.bool_], sigma: float, n: int
) -> float:
    """A lower bound (about 95 %) on the share of rows in ``cells`` of the released grid.

    The released counts are ``max(0, c_b + e_b)`` with ``e_b`` independent
    N(0, sigma^2) and ``sum_b c_b = n``, normalised by their sum ``S`` to the
    probabilities ``q``. For ``c >= 0``, ``max(0, c + e) <= c + max(0, e)``,
    so the true count in the set ``A`` of cells is at least ``q_A S -
    sum_A max(0, e_b)``, and ``S >= n + sum_b e_b``. With ``B`` cells,
    ``B_A`` of them in ``A`` and ``z = 2`` sds of each sum (``max(0, Z)``
    has mean ``1 / sqrt(2 pi)`` and variance ``1/2 - 1/(2 pi)``), the count
    is at least ``q_A (n - z sigma sqrt(B)) - B_A sigma / sqrt(2 pi) - z
    sigma sqrt(B_A (1/2 - 1/(2 pi)))`` unless one of two one-sided 2-sd
    events happens (probability at most about 0.046). Returned over n.
    """
    share = float(grid[cells].sum())
    inside, total = int(cells.sum()), grid.size
    count = (
        share * (n - _EDGE_SDS * sigma * math.sqrt(total))
        - inside * sigma * _POS_MEAN
        - _EDGE_SDS * sigma * math.sqrt(inside * _POS_VAR)
    )
    return count / n


def _ring(shape: tuple[int, int]) -> NDArray[np.bool_]:
    cells = np.ones(shape, dtype=bool)
    cells[1:-1, 1:-1] = False
    return cells


def edge_share_bound(score: Any, n: int, *, complete: bool = True) -> float | None:
    """A lower bound on the share of rows in the score grid's outer ring of bins.

    Rows outside the frame are counted in the edge bins, so a frame that cuts
    rows off (or that misses the scores, or that collapsed to a sliver) piles
    them there. Reads the released bin probabilities, the public noise sd of
    the ``"add"`` histogram, the grid's shape and n only (post-processing);
    the bound holds with probability at least about 0.95 (see
    :func:`_cells_share_bound`).

    Parameters
    ----------
    score : ScoreResult
        The score release (its ``probs``, ``noise``, ``bins`` and
        ``frame_source`` are read).
    n : int
        The public number of rows.
    complete : bool, default=True
        Whether every row has a score. With ``missing="zero"`` the number of
        scored rows is not public and the bound needs it: None.

    Returns
    -------
    float or None
        None when the score plot has groups or no ``"add"`` histogram, a grid
        narrower than 3 bins, or a frame that is the range of the scores over
        public bounds (it holds every row: nothing is cut off).
    """
    released = _released_grid(score, complete)
    if released is None:
        return None
    grid, sigma = released
    return _cells_share_bound(grid, _ring(grid.shape), sigma, n)


def _middle(m: int) -> slice:
    """The middle bin of an odd side, the middle two of an even one."""
    return slice(m // 2, m // 2 + 1) if m % 2 else slice(m // 2 - 1, m // 2 + 1)


def centre_share_bound(score: Any, n: int, *, complete: bool = True) -> float | None:
    """A lower bound on the share of rows in the grid's central cell.

    A frame many times wider than the scores puts them all in the bins around
    its centre. The same bound as :func:`edge_share_bound` on the central
    cell: the middle bin of each side, or its middle two bins when the side
    has an even number of bins (so a central block of 1, 2 or 4 bins, whose
    edges meet at the frame's centre). None where :func:`edge_share_bound`
    returns None.
    """
    released = _released_grid(score, complete)
    if released is None:
        return None
    grid, sigma = released
    my, mx = grid.shape
    cells = np.zeros(grid.shape, dtype=bool)
    cells[_middle(my), _middle(mx)] = True
    return _cells_share_bound(grid, cells, sigma, n)


def _centre_name(bins: tuple[int, int]) -> str:
    """``"central bin"`` on an odd grid, ``"central 2 bins"`` or ``"central 4 bins"``."""
    cells = math.prod(1 if m % 2 else 2 for m in bins)
    return "central bin" if cells == 1 else f"central {cells} bins"


def gaussian_shares(bins: tuple[int, int], half_sds: float) -> tuple[float, float]:
    """(outer ring, central cell) shares of a 2-D standard normal under a frame.

    The frame is centred on the mean with half width ``half_sds`` sds per
    axis, split into ``bins`` equal bins per axis. A public function of the grid and the
    frame's rule: what a frame fitted to Gaussian scores shows. The central
    cell is the one :func:`centre_share_bound` reads: on a side with an even
    number of bins, its middle two bins.
    """
    normal = NormalDist()

    def inside(half: float) -> float:
        return 2.0 * normal.cdf(half) - 1.0

    def middle(m: int) -> float:  # the middle bin's half width (two bins when m is even)
        return inside(half_sds * (1 if m % 2 else 2) / m)

    mx, my = bins
    ring = 1.0 - inside(half_sds * (1 - 2 / mx)) * inside(half_sds * (1 - 2 / my))
    return ring, middle(mx) * middle(my)


@dataclass(frozen=True)
class FrameLadders:
    """The public settings a private frame was drawn with, and what its ladders allow.

    ``bound`` is the release's ``score_range``, ``n`` its public row count,
    ``eps`` the frame's eps and ``inflate`` its inflation: together they fix
    the public ladders of centres and half widths and the widening factor
    from the scan's half width to the frame's (see ``private_frame``).
    """

    bound: float
    n: int
    eps: float
    inflate: float

    @property
    def widen(self) -> float:
        """The public factor from the scan's half width to the frame's."""
        return _widen(self.n, self.eps, self.inflate)

    def centre_slack(self, centre: float, half: float) -> float:
        """How many times wider a private frame axis may be than one centred on the median.

        The private centre ``c`` is the middle of a public ladder bin
        (:func:`dppca.releases.score.frame._centre_ladder`) chosen to hold the
        median ``m`` of the scores, so ``|m - c| <= b``, the bin's half width
        (about 10 % of ``|c|``). The released half width ``H`` is ``h w``, where
        ``w`` is the frame's public widening factor (the inflation and the
        Gaussian stretch of :func:`frame_level`) and ``h`` the scan's quantile
        of ``|s - c|``. By the triangle inequality the same quantile of the
        spread ``|s - m|`` is at least ``h - b``; so the frame may be up to
        ``h / (h - b)`` times wider than the same rule applied about the median
        (infinite when ``h <= b``: the centre's error alone may explain the whole
        width). Reads the released ``c`` and ``H`` and public settings only. A
        centre chosen outside the median's bin (the forecast's
        :func:`~dppca.releases.score.frame.frame_failure_bound`) is not covered;
        such a frame misses the scores, and the edge check sees that.
        """
        edges = _centre_ladder(self.bound)
        j = int(np.clip(np.searchsorted(edges, centre), 1, edges.size - 1))
        b = 0.5 * float(edges[j] - edges[j - 1])
        h = half / self.widen
        if not h > b:
            return math.inf
        return h / (h - b)

    def ladder_end(self, half: float) -> str | None:
        """``"top"`` or ``"bottom"`` when a private frame's half width ends its public ladder.

        The scan's half width ``h`` (the frame's ``half`` over the public
        widening factor) is a candidate of
        :func:`dppca.releases.score.frame._width_ladder`, from 40 octaves below
        ``2 score_range`` up to ``4 score_range``. At the top, the scan never
        reached its target: the scores may lie far beyond the frame, piled on its
        edge bins (``score_range`` too small for them). At the bottom, the frame
        is as fine as the ladder resolves. Released values and public settings
        only; None elsewhere.
        """
        ladder = _width_ladder(self.bound)
        h = half / self.widen
        if h >= ladder[-1] / _WIDTH_RATIO:
            return "top"
        if h <= ladder[0] * _WIDTH_RATIO:
            return "bottom"
        return None


def _widen(n: int, eps: float, inflate: float) -> float:
    """The public factor from the scan's half width to the frame's (see ``private_frame``)."""
    return _stretch(frame_level(n, eps)) * (1.0 + inflate)


def score_frame_problem(
    score: Any,
    n: int,
    *,
    bound: float,
    inflate: float,
    eps_frame: float,
    complete: bool = True,
) -> str | None:
    """A sentence when a private :func:`dppca.dp_score` frame is probably wrong, else None.

    Four checks, on released values and public settings only:

    0. the half width at an end of its ladder (:meth:`FrameLadders.ladder_end`);
    1. the centre's resolution (:meth:`FrameLadders.centre_slack`): a frame axis that may
       be more than ``WIDE_LIMIT`` times the scores' spread, counting the
       frame's own widening at the default ``inflate`` 0.2 at most (a wider
       frame asked for with a larger ``inflate`` is not held against it);
    2. the outer ring (:func:`edge_share_bound`): at least the share a frame
       fitted to Gaussian scores puts there (:func:`gaussian_shares`, public)
       plus ``EDGE_SHARE``, beyond the noise: rows cut off or missed;
    3. the central cell (:func:`centre_share_bound`): the same margin above a
       fitted frame's share, beyond the noise: a frame far too wide.

    Frames from public bounds or a public ``frame`` are not judged; the
    histogram checks need every row scored (``complete``; not with
    ``missing="zero"``). ``bound``, ``inflate`` and ``eps_frame`` are the
    release's public ``score_range``, ``inflate`` and the frame's eps.
    """
    if score is None or score.frame_source != "private":
        return None
    texts = []
    wide, ends = [], []
    ladders = FrameLadders(bound=bound, n=n, eps=eps_frame, inflate=inflate)
    for c, lim in zip(score.components, (score.xlim, score.ylim), strict=True):
        end = ladders.ladder_end(0.5 * (lim[1] - lim[0]))
        if end is not None:
            ends.append(f"PC{c} ({end})")
        slack = ladders.centre_slack(0.5 * (lim[0] + lim[1]), 0.5 * (lim[1] - lim[0]))
        if slack * _widen(n, eps_frame, min(inflate, _INFLATE)) > WIDE_LIMIT:
            wide.append(f"PC{c}")
    if ends:
        texts.append(
            "the private score frame's half width of "
            + " and ".join(ends)
            + " is at an end of its public ladder: at the top, the scores may lie far "
            "beyond the frame, piled on its edge bins (score_range is too small for "
            "them); at the bottom, the frame may be far narrower than the scores"
        )
    if wide:
        texts.append(
            "the private score frame of "
            + " and ".join(wide)
            + " is centred far from zero, where the public ladder of centres is coarse: "
            "the centre's possible error may make the frame more than "
            f"{WIDE_LIMIT:g} times wider than the scores (a mostly empty plot)"
        )
    half = NormalDist().inv_cdf(0.9975) * (1.0 + inflate)
    ring, centre = gaussian_shares(score.bins, half)
    edge = edge_share_bound(score, n, complete=complete)
    if edge is not None and edge >= ring + EDGE_SHARE:
        texts.append(
            f"the private score plot puts at least {edge:.0%} of the rows (beyond its "
            "noise) in the outer bins of its frame, where rows outside the frame are "
            f"counted (a frame fitted to the scores puts about {ring:.0%} there): the "
            "frame probably cuts off or misses the scores"
        )
    middle = centre_share_bound(score, n, complete=complete)
    if middle is not None and middle >= centre + EDGE_SHARE:
        texts.append(
            f"the private score plot puts at least {middle:.0%} of the rows (beyond its "
            f"noise) in the {_centre_name(score.bins)} of its frame (a frame fitted to the "
            "scores puts "
            f"about {centre:.0%} there): the frame is probably several times wider than the scores"
        )
    if not texts:
        return None
    return (
        "; ".join(texts) + ". Public bounds (bounds=...) or a public frame (frame=...) make "
        "the frame exact and free; a larger eps or more rows help."
    )


def review_frame(plan: Any, result: Any, accuracy: str | None = None) -> Any:
    """Act on :func:`score_frame_problem` after a score release: warn, raise or nothing.

    ``plan`` is the priced score plan (its ``settings``, ``eps_frame``, ``n``,
    ``missing`` and ``accuracy`` are read). The release has been made and
    charged by then, so ``accuracy="error"`` raises an
    :class:`~dppca.core.exceptions.InaccurateReleaseError` carrying the spent
    ``result``, as the directions' check does. Returns ``result``, with the
    problem added to its ``notes`` when there is one (the error's ``result``
    carries it too). ``accuracy`` replaces the plan's where a composite
    (the report) runs its parts quietly and judges them itself.
    """
    settings = plan.settings
    accuracy = plan.accuracy if accuracy is None else accuracy
    if settings is None or accuracy == "ignore":
        return result
    problem = score_frame_problem(
        result,
        plan.n,
        bound=settings.bound,
        inflate=settings.inflate,
        eps_frame=plan.eps_frame,
        complete=plan.missing == "refuse",
    )
    if problem is None:
        return result
    # recorded on the result as well: the spent release says what is wrong with it
    result = dataclasses.replace(result, notes=(*result.notes, problem))
    if accuracy == "error":
        raise InaccurateReleaseError(
            problem + " The release was made and its cost recorded; it is on this error's "
            "`result`. Pass accuracy='warn' to receive it with a warning instead.",
            result=result,
        )
    warnings.warn(problem, AccuracyWarning, stacklevel=_user_stacklevel())
    return result
