"""Missing values under ``missing="zero"``: zero terms, public n, and replace-one neighbours.

The kernels are checked against plain pair loops in which a coordinate
missing in either row of a pair adds nothing (the term is formed from the
coordinates present in both; a tie in its column for Kendall's tau), the
pre-noise statistics against their sensitivities when one row gains a
missing cell, and every face (library, command line, app) for the promise
that matters: two neighbouring tables, one with a missing cell, get the same
n, noise and cost. Issue 29, items 2 and 8.
"""

from __future__ import annotations

import io
import math
import re
import warnings

import numpy as np
import pandas as pd
import pytest

from dppca import dp_loading, dp_pc_dir, dp_score, dp_scree, report
from dppca.cli import main
from dppca.kernels.kendall import kendall_matrix
from dppca.kernels.pair_moments import (
    clipped_moments_all_pairs,
    clipped_moments_disjoint,
    moment_sensitivity,
    paired_differences,
)
from dppca.kernels.tau import kendall_tau_matrix
from dppca.privacy.mechanisms import kendall_sensitivity, random_pairing
from dppca.privacy.quantiles import em_quantile
from dppca.releases.directions.scales import draw_private_scales

PRIV = ["--eps", "1", "--delta", "1e-5"]


def _table(n: int = 40, p: int = 3, seed: int = 0, holes: int = 5) -> np.ndarray:
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, p)) @ rng.normal(size=(p, p))
    cells = rng.choice(n * p, size=holes, replace=False)
    x.flat[cells] = np.nan
    return x


def _kendall_loop(x: np.ndarray, pairs: list[tuple[int, int]], weight: float) -> np.ndarray:
    """The plain definition: u u^T per pair, from the coordinates present in both rows."""
    p = x.shape[1]
    total = np.zeros((p, p))
    for i, j in pairs:
        d = x[i] - x[j]
        d[np.isnan(d)] = 0.0
        if not np.any(d):
            continue
        u = d / np.linalg.norm(d)
        total += np.outer(u, u)
    return total * weight


def _tau_loop(x: np.ndarray, pairs: list[tuple[int, int]], weight: float) -> np.ndarray:
    """Kendall's tau with a missing cell a tie in its column (sign 0)."""
    p = x.shape[1]
    total = np.zeros((p, p))
    for i, j in pairs:
        s = np.sign(x[i] - x[j])
        s[np.isnan(s)] = 0.0
        total += np.outer(s, s)
    return total * weight


def _all_pairs(n: int) -> list[tuple[int, int]]:
    return [(i, j) for i in range(n) for j in range(i + 1, n)]


def _design_pairs(order: np.ndarray, m: int) -> list[tuple[int, int]]:
    n = order.size
    return [(int(order[q]), int(order[(q + k) % n])) for q in range(n) for k in range(1, m + 1)]


# ------------------------------------------------------------------ kernels: zero terms


@pytest.mark.parametrize("holes", [5, 60])
def test_exact_kendall_forms_each_pair_term_from_its_present_coordinates(holes):
    x = _table(holes=holes)  # 60 holes: most rows incomplete, a pair may share none
    n = x.shape[0]
    got = kendall_matrix(x, ties="zero")
    want = _kendall_loop(x, _all_pairs(n), 2.0 / (n * (n - 1)))
    np.testing.assert_allclose(got, want, atol=1e-12)


def test_a_missing_cell_is_not_a_tie():
    # with ties="error" a pair with a missing cell raises nothing: it is no tie
    x = _table()
    n = x.shape[0]
    kendall_matrix(x, ties="error")
    order = random_pairing(n, 3)
    kendall_matrix(x, ties="error", design="balanced", m=4, order=order)


def test_balanced_kendall_draws_its_pairs_over_every_row():
    x = _table(seed=1)
    n, m = x.shape[0], 4
    order = random_pairing(n, 5)
    got = kendall_matrix(x, ties="zero", design="balanced", m=m, order=order, block_size=7)
    want = _kendall_loop(x, _design_pairs(order, m), 1.0 / (n * m))
    np.testing.assert_allclose(got, want, atol=1e-12)


@pytest.mark.parametrize("design", ["exact", "balanced"])
def test_tau_treats_a_missing_cell_as_a_tie(design):
    x = _table(seed=2)
    n, m = x.shape[0], 3
    if design == "exact":
        got = kendall_tau_matrix(x)
        want = _tau_loop(x, _all_pairs(n), 2.0 / (n * (n - 1)))
    else:
        order = random_pairing(n, 1)
        got = kendall_tau_matrix(x, design="balanced", m=m, order=order)
        want = _tau_loop(x, _design_pairs(order, m), 1.0 / (n * m))
    np.testing.assert_allclose(got, want, atol=1e-12)


def test_pair_moments_add_zero_terms_and_keep_the_public_count():
    x = _table(seed=3)
    n = x.shape[0]
    v = np.linalg.qr(np.random.default_rng(0).normal(size=(3, 2)))[0]
    clip = 2.0
    w, s = clipped_moments_all_pairs(x, v, clip)
    tw, ts = np.zeros(2), 0.0
    for i, j in _all_pairs(n):
        z = (x[i] - x[j]) / math.sqrt(2.0)
        z[np.isnan(z)] = 0.0  # a missing coordinate adds nothing
        if not np.any(z):
            continue
        c = min(1.0, clip / float(z @ z))
        tw += c * (z @ v) ** 2
        ts += min(float(z @ z), clip)
    count = n * (n - 1) / 2
    np.testing.assert_allclose(w, tw / count, atol=1e-12)
    assert s == pytest.approx(ts / count, abs=1e-12)
    # disjoint pairs: the same terms, each pair still one of n // 2
    order = random_pairing(n, 2)
    z = paired_differences(x, order)
    dw, ds = clipped_moments_disjoint(z, v, clip)
    filled = np.where(np.isnan(z), 0.0, z)
    sq = np.einsum("ij,ij->i", filled, filled)
    c = np.minimum(1.0, clip / np.where(sq > 0, sq, 1.0))
    np.testing.assert_allclose(dw, ((filled @ v) ** 2 * c[:, None]).mean(axis=0), atol=1e-12)
    assert ds == pytest.approx(np.minimum(sq, clip).mean(), abs=1e-12)


# ------------------------------------------------------------------ replace one: sensitivities


def _neighbours(n: int = 30, seed: int = 4) -> tuple[np.ndarray, np.ndarray]:
    """A table without gaps and its neighbour whose row 7 gains a missing cell."""
    x = np.random.default_rng(seed).normal(size=(n, 3))
    y = x.copy()
    y[7, 1] = np.nan
    return x, y


def test_a_row_gaining_a_missing_cell_moves_each_statistic_within_its_sensitivity():
    x, y = _neighbours()
    n = x.shape[0]
    bound = kendall_sensitivity(n, "tight")  # 2 sqrt(2) / n
    move = np.linalg.norm(kendall_matrix(x, ties="zero") - kendall_matrix(y, ties="zero"))
    assert 0 < move <= bound
    order = random_pairing(n, 9)
    kb = [kendall_matrix(t, ties="zero", design="balanced", m=5, order=order) for t in (x, y)]
    assert 0 < np.linalg.norm(kb[0] - kb[1]) <= bound
    p = x.shape[1]
    tau_move = np.linalg.norm(kendall_tau_matrix(x) / p - kendall_tau_matrix(y) / p)
    assert 0 < tau_move <= bound
    v = np.linalg.qr(np.random.default_rng(1).normal(size=(3, 2)))[0]
    clip = 1.5
    a = np.append(*clipped_moments_all_pairs(x, v, clip))
    b = np.append(*clipped_moments_all_pairs(y, v, clip))
    l2 = moment_sensitivity(n, clip, all_pairs=True, norm="l2")
    assert 0 < np.linalg.norm(a - b) <= l2


def test_the_frame_centre_aims_at_the_median_of_the_present_scores():
    # 100 present values spread over (0, 1) and 100 absent ones: each absent value
    # counts as half a value below every edge, so the choice (at an eps that makes
    # its noise negligible) is the bin of the present values' median; counting the
    # absent ones nowhere would aim at rank 100 of the public 200, the top bin.
    x = np.concatenate([np.linspace(0.005, 0.995, 100), np.full(100, np.nan)])
    edges = np.linspace(0.0, 1.0, 11)
    lo, hi = em_quantile(
        x, edges, q=0.5, eps=500.0, rng=np.random.default_rng(0), present=~np.isnan(x)
    )
    assert (lo, hi) in ((0.4, 0.5), (0.5, 0.6))


def test_a_private_scale_stays_within_reach_when_many_pairs_have_a_gap():
    # a quarter of the cells missing: about 44 % of the pairs miss one. Counted as
    # zero differences they leave the 0.75-rank of the public m in reach; the scale
    # (true SD 1, eps large) lands near the SD instead of at the ladder's top (1e8).
    rng = np.random.default_rng(3)
    x = rng.normal(size=(4000, 1))
    x[rng.random(4000) < 0.25, 0] = np.nan
    scales = draw_private_scales(x, eps_each=50.0, units=np.ones(1), rng=rng)
    assert 0.3 < scales.values[0] < 1.5


def test_a_row_with_a_missing_cell_lands_in_no_histogram_bin():
    # public directions and a public frame: only the binning differs; row 0 sits
    # alone in the corner cell, and with a missing cell it leaves it empty
    rng = np.random.default_rng(0)
    x = rng.uniform(0.3, 0.7, size=(200, 2))
    x[0] = [0.05, 0.05]
    y = x.copy()
    y[0, 1] = np.nan
    kw = {
        "eps": 1.0,
        "delta": 1e-5,
        "directions": np.eye(2),
        "public_directions": True,
        "frame": ((0.0, 1.0), (0.0, 1.0)),
        "bins": 4,
        "compare": True,
        "random_state": 0,
        "accuracy": "ignore",
    }
    a = dp_score(x, **kw)
    b = dp_score(y, missing="zero", **kw)
    assert a.nonprivate.prob[0, 0] == pytest.approx(1 / 200)
    assert b.nonprivate.prob[0, 0] == 0.0  # not in the corner, nor in any edge bin:
    counts = b.nonprivate.prob * 199  # the 199 rows with a score fill the grid
    np.testing.assert_allclose(counts, np.round(counts), atol=1e-9)
    assert a.n == b.n == 200


# ------------------------------------------------------------ every face: same n, noise, cost


@pytest.fixture
def pair_of_tables() -> tuple[pd.DataFrame, pd.DataFrame]:
    """Two 200-row neighbours: the second one's row 11 has a missing cell."""
    rng = np.random.default_rng(11)
    z = rng.normal(size=(200, 2))
    frame = pd.DataFrame(
        {"a": z[:, 0], "b": z[:, 0] - z[:, 1], "c": z[:, 1], "d": rng.normal(size=200)}
    )
    frame["g"] = np.where(rng.random(200) < 0.5, "u", "v")
    other = frame.copy()
    other.loc[11, "c"] = np.nan
    return frame, other


def _quiet(call, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return call(*args, **kwargs)


def _sigmas(cost) -> list[float | None]:
    return [leaf.sigma for leaf in cost.leaves()]


@pytest.mark.parametrize(
    ("release", "extra"),
    [
        (dp_pc_dir, {"k": 2}),
        (dp_pc_dir, {"k": 2, "design": "balanced"}),
        (dp_pc_dir, {"k": 2, "estimator": "tau"}),
        (dp_pc_dir, {"k": 2, "scale": "private"}),
        (dp_loading, {}),
        (dp_scree, {"k": 2}),
        (dp_score, {"groups": "g", "groups_public": True, "bins": 4}),
    ],
)
def test_neighbours_with_a_missing_cell_get_the_same_n_noise_and_cost(
    pair_of_tables, release, extra
):
    full, gappy = pair_of_tables
    kw = {"eps": 1.0, "delta": 1e-5, "random_state": 0, "accuracy": "ignore", **extra}
    if "groups" not in extra:
        full, gappy = full.drop(columns="g"), gappy.drop(columns="g")
    a = _quiet(release, full, missing="zero", **kw)
    b = _quiet(release, gappy, missing="zero", **kw)
    assert a.n == b.n == 200
    assert a.cost == b.cost and _sigmas(a.cost) == _sigmas(b.cost)
    assert getattr(a, "sigma", None) == getattr(b, "sigma", None)


@pytest.mark.slow  # about 15 s: the report's tight split is priced twice
def test_the_report_of_neighbours_has_the_same_n_and_cost(pair_of_tables):
    full, gappy = pair_of_tables
    kw = {"eps": 2.0, "delta": 1e-5, "groups": "g", "groups_public": True, "random_state": 0}
    a = _quiet(report, full, missing="zero", accuracy="ignore", **kw)
    b = _quiet(report, gappy, missing="zero", accuracy="ignore", **kw)
    assert a.directions.n == b.directions.n == a.score.n == b.score.n == 200
    assert a.cost == b.cost and a.directions.sigma == b.directions.sigma


@pytest.mark.parametrize("command", ["directions", "loading", "scree", "score"])
def test_the_command_line_prints_the_same_cost_for_neighbours(
    pair_of_tables, tmp_path, capsys, command
):
    lines = []
    for name, table in zip(("full", "gappy"), pair_of_tables, strict=True):
        path = tmp_path / f"{name}.csv"
        table.to_csv(path, index=False)
        argv = [command, str(path), *PRIV, "--missing", "zero", "--no-ledger", "--seed", "1"]
        if command == "score":
            argv += ["--groups", "g", "--groups-public", "--bins", "4"]
        else:
            argv += ["--exclude", "g"]
        assert main(argv) == 0
        err = capsys.readouterr().err
        lines.append([line for line in err.splitlines() if line.startswith("privacy cost")])
    assert lines[0] and lines[0] == lines[1]


def test_the_app_prices_neighbours_alike(pair_of_tables):
    from dppca.app.state import AppState

    previews = []
    for table in pair_of_tables:
        state = AppState(random_state=np.random.default_rng(0))
        state.load("t.csv", table.drop(columns="g"))
        sel = state.select(["a", "b", "c", "d"], missing="zero")
        preview = state.preview("directions", eps=1.0, delta=1e-5)
        previews.append((sel.n, preview.cost))
    assert previews[0][0] == previews[1][0] == 200
    assert previews[0][1] == previews[1][1]


# ------------------------------------------------------------------ column kinds (issue 29.8)


def test_a_numeric_column_with_one_unparseable_cell_is_analysed(tmp_path, capsys):
    rng = np.random.default_rng(5)
    frame = pd.DataFrame(rng.normal(size=(60, 3)), columns=["a", "b", "c"])
    frame["name"] = [f"p{i}" for i in range(60)]
    path = tmp_path / "t.csv"
    text = frame.to_csv(index=False).splitlines()
    text[5] = re.sub(r"^([^,]*),[^,]*,", r"\1,?,", text[5])  # row 3: b is '?'
    path.write_text("\n".join(text) + "\n")
    read = pd.read_csv(path)
    assert not pd.api.types.is_numeric_dtype(read["b"])  # pandas reads it as text
    kw = {"eps": 1.0, "delta": 1e-4, "random_state": 0, "accuracy": "ignore"}
    res = _quiet(dp_pc_dir, read, missing="zero", **kw)
    assert res.variables == ("a", "b", "c") and res.n == 60
    # the neighbour without the '?' analyses the same columns
    fixed = read.assign(b=pd.to_numeric(read["b"], errors="coerce").fillna(0.0))
    assert _quiet(dp_pc_dir, fixed, missing="zero", **kw).variables == res.variables
    with pytest.raises(ValueError, match=r"'b'.*pass missing='zero'"):
        _quiet(dp_pc_dir, read, **kw)
    status = main(["directions", str(path), *PRIV, "--missing", "zero", "--no-ledger"])
    out, err = capsys.readouterr()
    assert status == 0, err
    assert list(pd.read_csv(io.StringIO(out))["variable"]) == ["a", "b", "c"]
    status = main(["directions", str(path), *PRIV, "--no-ledger"])
    assert status == 2 and "'b'" in capsys.readouterr().err
    # read in chunks (the balanced design), and in the app, the same columns
    argv = ["directions", str(path), *PRIV, "--missing", "zero", "--no-ledger"]
    assert main([*argv, "--design", "balanced"]) == 0
    out = capsys.readouterr().out
    assert list(pd.read_csv(io.StringIO(out))["variable"]) == ["a", "b", "c"]
    from dppca.app.data import numeric_columns, select_data

    assert numeric_columns(read) == ["a", "b", "c"]
    assert select_data(read, ["a", "b", "c"], missing="zero").n == 60


def test_a_text_column_is_read_as_numbers_when_half_its_cells_are():
    frame = pd.DataFrame({"a": [1.0, 2.0, 3.0, 4.0], "b": ["1.5", "x", "2", "n/a"]})
    from dppca.core.tables import tidy_table

    table = tidy_table(frame, missing="zero")  # half of the cells parse
    assert table.variables == ("a", "b")
    np.testing.assert_array_equal(table.data[:, 1], [1.5, np.nan, 2.0, np.nan])
    mostly_text = frame.assign(b=["u", "x", "2", "n/a"])
    assert tidy_table(mostly_text, missing="zero").left_out == ("b",)
    with pytest.raises(TypeError, match="non-numeric column"):
        tidy_table(mostly_text, missing="zero", chosen=True)
    declared = frame.astype({"b": "string"})  # a declared text type stays text
    assert tidy_table(declared, missing="zero").left_out == ("b",)
