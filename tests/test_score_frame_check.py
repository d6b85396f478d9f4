"""Post-release checks of standalone ``dp_score`` frames: wrong ones say so, right ones do not."""

from __future__ import annotations

import math
import warnings
from types import SimpleNamespace

import numpy as np
import pytest
from scipy import stats

from dppca import AccuracyWarning, InaccurateReleaseError, ScoreResult, dp_score
from dppca.release_io import load_release, save_release
from dppca.releases.score.frame_check import (
    EDGE_SHARE,
    FrameLadders,
    centre_share_bound,
    edge_share_bound,
    gaussian_shares,
    score_frame_problem,
)

# Fixed public directions (orthonormal, not from the data): no directions are
# released, so the only warnings left are the frame's.
PUBLIC = np.linalg.qr(np.random.default_rng(7).normal(size=(4, 2)))[0]


def _table(rng: np.random.Generator, n: int, shift: float = 0.0) -> np.ndarray:
    cov = np.diag([1.0, 9.0, 0.25, 4.0])
    return rng.multivariate_normal(np.zeros(4), cov, size=n) + shift


def _frame_warnings(caught: list[warnings.WarningMessage]) -> list[str]:
    return [str(w.message) for w in caught if w.category is AccuracyWarning]


@pytest.mark.parametrize("shift", [1e3, 1e5])
def test_a_frame_far_from_zero_warns_and_raises_after_the_charge(rng, shift):
    # The scores sit near shift * sum(v); the public ladder of centres has bins 20 %
    # of their distance from zero wide there, hundreds of times the scores' spread.
    # Before this check, 37 of 40 such releases at n=500, eps=1 were silent.
    X = _table(rng, 500, shift)
    with pytest.warns(AccuracyWarning, match="ladder of centres is coarse"):
        dp_score(X, eps=1.0, delta=1e-6, directions=PUBLIC, random_state=0)
    with pytest.raises(InaccurateReleaseError, match="coarse") as info:
        dp_score(X, eps=1.0, delta=1e-6, directions=PUBLIC, random_state=0, accuracy="error")
    assert isinstance(info.value.result, ScoreResult)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        dp_score(X, eps=1.0, delta=1e-6, directions=PUBLIC, random_state=0, accuracy="ignore")


def test_a_collapsed_frame_warns(rng):
    # score_range=1e-3 caps the half-width ladder far below the scores' size (about
    # 1): the frame collapses and every row is counted in the corner bins.
    X = _table(rng, 500)
    with pytest.warns(AccuracyWarning, match="end of its public ladder") as caught:
        res = dp_score(X, eps=1.0, delta=1e-6, directions=PUBLIC, score_range=1e-3, random_state=0)
    assert res.xlim[1] - res.xlim[0] < 0.1
    assert any("outer bins" in text for text in _frame_warnings(caught))


@pytest.mark.parametrize(("n", "eps"), [(500, 1.0), (500, 2.0), (2000, 1.0)])
def test_right_frames_stay_quiet(rng, n, eps):
    # Unshifted, and shifted by a few sds of the scores: the frame is right (within
    # 2x of the scores' central 99 % range) and nothing may warn.
    for shift in (0.0, 10.0):
        X = _table(rng, n, shift)
        for seed in range(3):
            with warnings.catch_warnings():
                warnings.simplefilter("error")  # any warning fails
                res = dp_score(
                    X, eps=eps, delta=1e-6, directions=PUBLIC, compare=True, random_state=seed
                )
            s = np.asarray(res.nonprivate.scores)
            for a, lim in enumerate((res.xlim, res.ylim)):
                lo, hi = np.quantile(s[:, a], [0.005, 0.995])
                assert 0.5 < (lim[1] - lim[0]) / (hi - lo) < 2.0


def test_a_wide_frame_asked_for_is_not_blamed_on_the_centre(rng):
    # inflate=20 makes the frame about 17 times the scores' range on purpose; the
    # centre is near zero, so the centre check stays quiet; the Gaussian baseline of
    # the central bin follows the same inflate, so the histogram check does too.
    X = _table(rng, 2000)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        res = dp_score(X, eps=2.0, delta=1e-6, directions=PUBLIC, inflate=20.0, random_state=0)
    assert res.xlim[1] - res.xlim[0] > 50.0


def test_public_frames_and_bounds_are_not_judged(rng):
    X = _table(rng, 500, 1e4)
    box = np.array([[1e4 - 50.0, 1e4 + 50.0]] * 4)  # a codebook domain
    frame = ((-1e5, 1e5), (-1e5, 1e5))  # a (bad) public frame: the caller vouches
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        a = dp_score(X, eps=1.0, delta=1e-6, directions=PUBLIC, bounds=box, random_state=0)
        b = dp_score(X, eps=1.0, delta=1e-6, directions=PUBLIC, frame=frame, random_state=0)
    assert (a.frame_source, b.frame_source) == ("bounds", "public")


# ------------------------------------------------------------------ the pieces


def _fake(grid: np.ndarray, sigma: float, frame_source: str = "private") -> SimpleNamespace:
    my, mx = grid.shape
    return SimpleNamespace(
        probs={"add": (grid / grid.sum()).ravel()[None, :]},
        noise={"add": {"sigma": sigma}},
        bins=(mx, my),
        frame_source=frame_source,
        components=(1, 2),
        xlim=(-1.0, 1.0),
        ylim=(-1.0, 1.0),
    )


def _released(counts: np.ndarray, sigma: float, rng: np.random.Generator) -> np.ndarray:
    """The "add" histogram as released: max(0, c + N(0, sigma^2))."""
    return np.maximum(counts + rng.normal(0.0, sigma, counts.shape), 0.0)


@pytest.mark.parametrize("sigma", [5.0, 30.0])
def test_centre_bound_is_a_lower_bound(rng, sigma):
    # 5 x 5 grid of 1000 rows, 60 % in the central cell.
    grid = np.full((5, 5), 400 / 24)
    grid[2, 2] = 600
    above, draws = 0, 400
    for _ in range(draws):
        bound = centre_share_bound(_fake(_released(grid, sigma, rng), sigma), 1000)
        assert bound is not None
        above += bound > 0.6
    # each of the bound's two 2-sd steps fails with probability <= 0.023, so at most
    # 0.046 overall; accept the binomial(400, 0.046) count up to its 1 - 1e-6 quantile
    assert above <= stats.binom.ppf(1 - 1e-6, draws, 0.046)


def test_histogram_checks_fire_on_piled_rows_and_not_on_a_gaussian_grid(rng):
    ring, centre = gaussian_shares((5, 5), 2.807 * 1.2)
    # the expected shares of a frame fitted to Gaussian scores: 99.5 % within
    # +-2.807 sd, widened by 1.2; these are the quiet baselines
    assert 0.05 < ring < 0.15 and 0.2 < centre < 0.3
    settings = {"bound": 1e6, "inflate": 0.2, "eps_frame": 0.3}
    edge = np.zeros((5, 5))
    edge[0, 0] = edge[-1, -1] = 1000  # a collapsed frame: rows in two corners
    middle = np.zeros((5, 5))
    middle[2, 2] = 2000  # a frame far too wide
    fitted = np.outer(*[np.diff(stats.norm.cdf(np.linspace(-3.37, 3.37, 6)))] * 2) * 2000
    sigma = 5.0
    texts = [
        score_frame_problem(_fake(_released(g, sigma, rng), sigma), 2000, **settings)
        for g in (edge, middle, fitted)
    ]
    assert texts[0] is not None and "outer bins" in texts[0]
    assert texts[1] is not None and "central bin" in texts[1]
    assert texts[2] is None
    assert edge_share_bound(_fake(edge, sigma), 2000) >= ring + EDGE_SHARE
    unscored = score_frame_problem(_fake(edge, sigma), 2000, complete=False, **settings)
    assert unscored is None  # missing="zero": the number of scored rows is not public
    assert score_frame_problem(_fake(edge, sigma, "bounds"), 2000, **settings) is None


@pytest.mark.parametrize("bins", [(6, 6), (6, 5), (5, 6)])
def test_the_centre_check_works_on_even_grids(rng, bins):
    # A grid with an even side has no central bin; the check reads the middle
    # two bins of that side (1 x 2, 2 x 1 or 2 x 2 cells meeting at the centre).
    mx, my = bins
    sigma, n = 5.0, 2000
    settings = {"bound": 1e6, "inflate": 0.2, "eps_frame": 0.3}
    _, centre = gaussian_shares(bins, 2.807 * 1.2)
    assert 0.1 < centre < 0.6  # the baseline of a frame fitted to Gaussian scores
    wide = np.zeros((my, mx))
    wide[my // 2 - (1 - my % 2) : my // 2 + 1, mx // 2 - (1 - mx % 2) : mx // 2 + 1] = 1.0
    wide *= n / wide.sum()  # a frame far too wide: every row in the central cells
    assert centre_share_bound(_fake(wide, sigma), n) > centre + EDGE_SHARE
    text = score_frame_problem(_fake(_released(wide, sigma, rng), sigma), n, **settings)
    assert text is not None and "central" in text
    edges = [np.linspace(-3.37, 3.37, m + 1) for m in (my, mx)]
    fitted = np.outer(*[np.diff(stats.norm.cdf(e)) for e in edges]) * n
    assert score_frame_problem(_fake(_released(fitted, sigma, rng), sigma), n, **settings) is None


def test_a_frame_problem_is_recorded_on_the_score_result(rng, tmp_path):
    # the release that warns (or raises) about its frame keeps the sentence
    X = _table(rng, 500, 1e3)
    with pytest.warns(AccuracyWarning, match="ladder of centres is coarse") as caught:
        res = dp_score(X, eps=1.0, delta=1e-6, directions=PUBLIC, random_state=0)
    assert len(res.notes) == 1 and res.notes[0] in _frame_warnings(caught)
    with pytest.raises(InaccurateReleaseError) as info:
        dp_score(X, eps=1.0, delta=1e-6, directions=PUBLIC, random_state=0, accuracy="error")
    assert info.value.result.notes == res.notes
    loaded = load_release(save_release(res, tmp_path / "score.json"))
    assert loaded.notes == res.notes  # the release file keeps them
    quiet = dp_score(_table(rng, 500), eps=1.0, delta=1e-6, directions=PUBLIC, random_state=0)
    assert quiet.notes == ()


def test_centre_slack_reads_the_ladder_resolution():
    ladders = FrameLadders(bound=1e6, n=500, eps=0.3, inflate=0.2)
    # near zero the centre ladder is fine (bins 20 % of 0.3 wide): close to 1
    assert 1.0 <= ladders.centre_slack(0.3, 4.0) < 1.05
    # at 2e4 the centre's bin is about 4e3 wide: a half width of 50 may be all error
    assert math.isinf(ladders.centre_slack(2e4, 50.0))
    assert 1.01 < ladders.centre_slack(2e4, 1e5) < 1.2
    tiny = FrameLadders(bound=1e-3, n=500, eps=0.3, inflate=0.2)
    assert tiny.ladder_end(1.0) == "top"  # 4e-3 cap
    assert ladders.ladder_end(1.0) is None
