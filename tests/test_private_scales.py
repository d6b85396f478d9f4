"""Private per-variable scales: ``scale="private"`` on a direction release."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from dppca import dp_loading, dp_pc_dir, dp_score, dp_scree
from dppca.cli import main
from dppca.datasets import load_iris
from dppca.privacy.mechanisms import random_pairing
from dppca.releases.directions.plan import plan_pc_dir
from dppca.releases.directions.scales import (
    NORMAL_FACTOR,
    ZERO_FLOOR,
    draw_private_scales,
    pair_differences,
    scale_ladder,
)


def test_replacing_one_row_moves_each_ladder_count_by_at_most_one(rng):
    X = rng.standard_normal((101, 4)) * np.array([1e-3, 1.0, 50.0, 1e4])
    ladder = scale_ladder()
    order = random_pairing(101, 7)  # drawn without the data: the same for both neighbours
    for r in (0, 57, 100):
        Y = X.copy()
        Y[r] = rng.standard_normal(4) * 1e6
        dx, dy = pair_differences(X, order), pair_differences(Y, order)
        assert np.sum(np.any(dx != dy, axis=1)) <= 1  # one pair of the pairing
        for j in range(4):
            cx = np.searchsorted(np.sort(np.maximum(dx[:, j], ZERO_FLOOR)), ladder, "right")
            cy = np.searchsorted(np.sort(np.maximum(dy[:, j], ZERO_FLOOR)), ladder, "right")
            assert np.abs(cx - cy).max() <= 1


def test_private_scales_follow_the_columns_units(rng):
    sd = np.array([1e-3, 1.0, 30.0, 5e3])
    X = rng.standard_normal((2000, 4)) * sd
    s = draw_private_scales(X, eps_each=10.0, units=np.ones(4), rng=rng)
    # m = 1000 differences: the 0.75-quantile of a half-normal has relative SE
    # 0.914 / sqrt(1000) = 2.9%, so 5 SE is 15%; the scan returns the ladder
    # candidate at or above it (up to 1.15x more) and at eps 10 its rank noise
    # is a few of 1000 ranks.
    ratio = s.values / sd
    assert np.all((0.85 <= ratio) & (ratio <= 1.15 * 1.15)), ratio
    assert not s.constant.any()
    assert NORMAL_FACTOR == pytest.approx(np.sqrt(2) * stats.norm.ppf(0.875), rel=1e-12)


def test_constant_column_is_left_unscaled_with_a_note(rng):
    X = rng.standard_normal((400, 3)) * np.array([1.0, 100.0, 1.0])
    X[:, 2] = 7.0
    res = dp_pc_dir(X, 2, eps=4.0, delta=1e-6, random_state=1, scale="private")
    assert res.scales is not None and res.scales[2] == 1.0  # divided by 1: left as it is
    assert res.scale_note is not None and "V3" in res.scale_note
    assert np.isfinite(res.directions).all()


def test_private_scale_plan_charges_scales_and_kendall_within_eps():
    plan = plan_pc_dir(500, 6, 2, eps=2.0, delta=1e-6, scale="private")
    kinds = [part.noise for part in plan.parts]
    assert kinds == ["pure"] * 6 + ["gaussian"]
    # Half the budget each, both stretched by one factor c >= 1 ...
    scale_eps = sum(part.eps for part in plan.parts[:6])
    assert scale_eps == pytest.approx(plan.parts[-1].eps)
    assert scale_eps >= 1.0
    # ... up to the tight composition at eps (the bisection stops within 1%).
    assert 2.0 * 0.98 <= plan.cost.eps <= 2.0 and plan.cost.delta == 1e-6
    assert plan_pc_dir(500, 6, 2, eps=2.0, delta=1e-6).sigma < plan.sigma


def test_private_scales_recover_standardised_directions(rng):
    # Two correlated blocks on scales 1e-2 .. 1e3: raw units make the 1e3
    # column all of PC1; privately scaled, the top-2 subspace of the
    # standardised table is found (sin theta < 0.5) at n = 3000, eps = 4.
    n = 3000
    z = rng.standard_normal((n, 2))
    X = np.column_stack([z[:, 0], z[:, 0], z[:, 1], z[:, 1]]) + 0.5 * rng.standard_normal((n, 4))
    X = X * np.array([1e-2, 1e3, 1.0, 10.0])
    res = dp_pc_dir(X, 2, eps=4.0, delta=1e-6, random_state=3, scale="private")
    truth = np.array([[1, 1, 0, 0], [0, 0, 1, 1]], dtype=float).T / np.sqrt(2)
    s = np.linalg.svd(truth.T @ res.directions, compute_uv=False)
    assert np.sqrt(1 - s.min() ** 2) < 0.5


def test_private_scales_are_reproducible_and_checked(rng):
    X = rng.standard_normal((200, 3))
    a = dp_pc_dir(X, 2, eps=2.0, delta=1e-6, random_state=5, scale="private", accuracy="ignore")
    b = dp_pc_dir(X, 2, eps=2.0, delta=1e-6, random_state=5, scale="private", accuracy="ignore")
    np.testing.assert_array_equal(a.scales, b.scales)
    assert a.scales is not None and not a.scales.flags.writeable
    with pytest.raises(ValueError, match="scale must be None or 'private'"):
        dp_pc_dir(X, 2, eps=1.0, delta=1e-6, scale="sd")
    with pytest.raises(ValueError, match="scale_share"):
        dp_pc_dir(X, 2, eps=1.0, delta=1e-6, scale="private", scale_share=1.0)


def test_cli_directions_takes_scale_private(tmp_path, capsys):
    path = tmp_path / "t.csv"
    rng = np.random.default_rng(0)
    X = rng.standard_normal((600, 3)) * np.array([1.0, 1e3, 1e-3])
    np.savetxt(path, X, delimiter=",", header="a,b,c", comments="")
    scaled = ["--eps", "2", "--delta", "1e-6", "--scale", "private", "--seed", "1"]
    quiet = ["--accuracy", "ignore", "--no-ledger"]
    code = main(["directions", str(path), *scaled, *quiet])
    captured = capsys.readouterr()
    assert code == 0
    assert "private scales: a=" in captured.err
    out = tmp_path / "load.png"
    code = main(["loading", str(path), *scaled, *quiet, "--out", str(out)])
    assert code == 0 and out.exists()
    capsys.readouterr()
    for command in ("scree", "score"):
        code = main([command, str(path), *scaled, "--no-ledger", "--dry-run"])
        assert code == 0
        assert "private scale of" in capsys.readouterr().out  # the plan lists the scales
    page = tmp_path / "report.html"
    code = main(["report", str(path), *scaled, *quiet, "--out", str(page)])
    assert code == 0 and "Private scales" in page.read_text()


def test_loading_scree_and_score_take_private_scales(rng):
    X = rng.standard_normal((2000, 4)) * np.array([1.0, 1e3, 1e-2, 5.0])
    kw = {"eps": 2.0, "delta": 1e-6, "random_state": 0, "scale": "private", "accuracy": "ignore"}
    loading = dp_loading(X, compare=True, **kw)
    scree = dp_scree(X, 2, **kw)
    score = dp_score(X, **kw)
    # The same seed draws the same scales first in every release.
    for res in (scree, score):
        np.testing.assert_array_equal(res.scales, loading.directions.scales)
    # The recorded cost composes the 4 scale parts with the release's own.
    for cost in (loading.directions.cost, scree.cost, score.cost):
        assert cost.kind == "composed" and cost.eps <= 2.0 + 1e-12
        assert sum(leaf.kind == "pure" for leaf in cost.leaves()) >= 4
    # The scores are in the scaled units: all four columns have SD about 1,
    # so the frame is a few units wide, not thousands.
    assert max(abs(v) for v in (*score.xlim, *score.ylim)) < 50


def test_scree_and_score_refuse_private_scales_with_bounds(rng):
    X = rng.standard_normal((300, 3))
    with pytest.raises(ValueError, match="scale='private' with bounds"):
        dp_scree(X, 2, eps=1.0, delta=1e-6, scale="private", bounds=(-5, 5))
    with pytest.raises(ValueError, match="own directions"):
        dp_score(X, eps=1.0, delta=1e-6, scale="private", directions=np.eye(3)[:, :2])


def test_wide_table_with_constant_columns_runs_with_private_scales():
    datasets = pytest.importorskip("sklearn.datasets")
    X = datasets.load_digits().data  # 1797 x 64 pixel counts, several columns all zero
    res = dp_pc_dir(X, 2, eps=2.0, delta=1e-6, random_state=0, scale="private")
    assert np.isfinite(res.directions).all()
    assert res.scale_note is not None and "constant" in res.scale_note
    always_zero = np.flatnonzero(np.ptp(X, axis=0) == 0)
    assert always_zero.size and np.all(res.scales[always_zero] == 1.0)


def test_release_files_keep_the_private_scales(rng, tmp_path):
    from dppca.release_io import load_release, save_release

    X = rng.standard_normal((400, 3)) * np.array([1.0, 100.0, 0.01])
    res = dp_pc_dir(X, 2, eps=2.0, delta=1e-6, random_state=0, scale="private", accuracy="ignore")
    path = save_release(res, tmp_path / "r.json", data=X)
    back = load_release(path)
    np.testing.assert_array_equal(back.scales, res.scales)


def _pairs_of_equal_values(n: int) -> np.ndarray:
    """A column ``0, 0, 1, 1, 2, 2, ...`` stored sorted (n rows, n even)."""
    return np.repeat(np.arange(n // 2, dtype=np.float64), 2)


def _sorted_neighbours(n: int = 400) -> tuple[np.ndarray, np.ndarray]:
    """A table stored sorted by its column and its neighbour, also stored sorted.

    The neighbour replaces one of the two smallest values by a value above
    all others. Paired by position, the first table's pairs are all equal
    (scale about 0) and the neighbour's, shifted by one row, all differ by 1.
    """
    x = _pairs_of_equal_values(n)
    y = np.sort(np.append(x[1:], n))
    return x[:, None], y[:, None]


def test_sorted_table_and_its_neighbour_release_scales_of_one_law():
    X, Y = _sorted_neighbours()
    eps = 0.2
    draws = 300
    sx = [
        draw_private_scales(X, eps_each=eps, units=np.ones(1), rng=np.random.default_rng(s))
        for s in range(draws)
    ]
    sy = [
        draw_private_scales(
            Y, eps_each=eps, units=np.ones(1), rng=np.random.default_rng(s + draws)
        )
        for s in range(draws)
    ]
    a = np.array([s.values[0] for s in sx])
    b = np.array([s.values[0] for s in sy])
    # eps-DP bounds the total variation between the two laws by tanh(eps / 2)
    # (0.1 here), hence the Kolmogorov distance of their CDFs. Each empirical
    # CDF of 300 draws is within x / 2 of its law except with probability
    # 2 exp(-2 * 300 * (x / 2)^2) (Dvoretzky-Kiefer-Wolfowitz); x = 0.3 makes
    # both hold but with probability 1e-5. Paired by position the two laws
    # are point masses far apart (distance 1).
    ks = stats.ks_2samp(a, b).statistic
    assert ks <= np.tanh(eps / 2) + 0.3, (ks, np.median(a), np.median(b))
    # and the scale is that of the column, not of neighbours in rank: two
    # random rows of 0 .. 199 differ by 100 or more a quarter of the time
    assert 20 < np.median(a) < 200


def test_every_face_pairs_the_rows_at_random():
    # column a: pairs of equal values, stored sorted (a scale of about 0 when
    # paired by position, which marks it constant); b, c: noise
    n = 400
    rng = np.random.default_rng(11)
    X = np.column_stack([_pairs_of_equal_values(n), rng.standard_normal((n, 2))])
    kw = {"eps": 6.0, "delta": 1e-6, "random_state": 2, "scale": "private", "accuracy": "ignore"}
    results = {
        "directions": dp_pc_dir(X, 2, **kw).scales,
        "scree": dp_scree(X, 2, **kw).scales,
        "score": dp_score(X, **kw).scales,
    }
    from dppca import report

    results["report"] = report(X, **kw).directions.scales
    # the column's SD is 115; the ladder and the quantile's noise stay within 2x
    for face, scales in results.items():
        assert 50 < scales[0] < 250, (face, scales)


def test_cli_scales_a_sorted_column_by_its_spread(tmp_path, capsys):
    n = 400
    path = tmp_path / "sorted.csv"
    rng = np.random.default_rng(4)
    X = np.column_stack([_pairs_of_equal_values(n), rng.standard_normal(n)])
    np.savetxt(path, X, delimiter=",", header="a,b", comments="")
    args = ["--eps", "6", "--delta", "1e-6", "--scale", "private", "--seed", "1"]
    code = main(["directions", str(path), *args, "--accuracy", "ignore", "--no-ledger"])
    err = capsys.readouterr().err
    assert code == 0
    value = float(err.split("private scales: a=")[1].split(",")[0].split()[0])
    assert 50 < value < 250, err


def _iris_scale_medians(table: np.ndarray, seeds: range) -> np.ndarray:
    """Median over seeds of each column's released scale (eps 1 per column)."""
    out = [
        draw_private_scales(
            table, eps_each=1.0, units=np.ones(4), rng=np.random.default_rng(s)
        ).values
        for s in seeds
    ]
    return np.median(out, axis=0)


def test_iris_in_file_order_and_shuffled_agree_within_one_rung():
    # iris is stored grouped by species: paired by position, petal length's
    # pairs fall within a species and its scale came out 4x too small.
    X = load_iris().to_numpy(dtype=np.float64)
    shuffled = X[np.random.default_rng(0).permutation(X.shape[0])]
    seeds = range(41)
    a, b = _iris_scale_medians(X, seeds), _iris_scale_medians(shuffled, seeds)
    # With a random pairing the two laws are equal (a uniform permutation of
    # a shuffle is uniform). Each draw's quantile of 75 differences has a
    # relative SE of about 0.914 / sqrt(75) = 11%; a median of 41 draws about
    # 1.25 * 11% / sqrt(41) = 2%, so the medians' ratio is within 1 +- 3%
    # for 1 SD; one ladder rung (1.3x) is 9 SD.
    assert np.all(np.abs(np.log(a / b)) < np.log(1.3)), (a, b)
    assert np.all(np.abs(np.log(a / X.std(axis=0))) < np.log(1.3 * 1.3)), a


def test_huge_rows_give_no_warning_with_private_scales():
    # A neighbour holding +-DBL_MAX used to warn "overflow encountered": a
    # warning only some tables give (warnings are errors in this suite).
    big = np.finfo(np.float64).max
    X = np.random.default_rng(3).standard_normal((200, 3))
    X[[10, 11, 12]] = [[big, -big, 0.5], [-big, big, -0.5], [big, big, 1e-300]]
    kw = {"eps": 2.0, "delta": 1e-6, "random_state": 0, "scale": "private", "accuracy": "ignore"}
    res = dp_pc_dir(X, 2, **kw)
    assert np.isfinite(res.scales).all()
    assert np.isfinite(dp_scree(X, 2, **kw).scales).all()
