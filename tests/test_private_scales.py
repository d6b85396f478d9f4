"""Private per-variable scales: ``scale="private"`` on a direction release."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from dppca import dp_loading, dp_pc_dir, dp_score, dp_scree
from dppca.cli import main
from dppca.releases.directions import plan_pc_dir
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
    for r in (0, 57, 100):
        Y = X.copy()
        Y[r] = rng.standard_normal(4) * 1e6
        dx, dy = pair_differences(X), pair_differences(Y)
        assert np.sum(np.any(dx != dy, axis=1)) <= 1  # one pair of the public pairing
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
