"""Tests of the balanced incomplete design of the spherical Kendall matrix."""

from __future__ import annotations

import io

import numpy as np
import pandas as pd
import pytest

from dppca import TiedRowsError, dp_pc_dir, spherical_kendall
from dppca.cli import main
from dppca.core.validation import default_m
from dppca.privacy.mechanisms import kendall_sigma, random_pairing, symmetric_gaussian_noise


def plain_balanced(X: np.ndarray, m: int, seed: int, ties: str = "error") -> np.ndarray:
    """The definition, one pair at a time: 1/(n m) sum_q sum_k u u^T over (pi_q, pi_{q+k})."""
    X = np.asarray(X, dtype=np.float64)
    n, p = X.shape
    order = random_pairing(n, np.random.default_rng(seed))
    total = np.zeros((p, p))
    for q in range(n):
        for k in range(1, m + 1):
            diff = X[order[q]] - X[order[(q + k) % n]]
            sq = np.sum(diff * diff)
            if not (np.finfo(np.float64).tiny <= sq <= np.finfo(np.float64).max):
                if ties == "error":
                    raise ValueError("tie")
                continue
            u = diff / np.sqrt(sq)
            total += np.outer(u, u)
    return total / (n * m)


def _hostile_cases() -> dict[str, np.ndarray]:
    rng = np.random.default_rng(11)
    n, p = 120, 5
    base = rng.normal(size=(n, p))
    near = base.copy()
    near[1::2] = near[::2] + 1e-6 * rng.normal(size=(n // 2, p))
    return {
        "standard": base,
        "near_duplicates_scale_1e3": near * 1e3,
        "offset_1e6": base + 1e6,
        "column_scales_1e-3_to_1e3": base * np.logspace(-3, 3, p) + 1e6,
    }


@pytest.mark.parametrize("name", list(_hostile_cases()))
@pytest.mark.parametrize("block_size", [None, 7])
def test_balanced_matches_plain_definition(name, block_size):
    X = _hostile_cases()[name]
    fast = spherical_kendall(
        X, design="balanced", m=9, order=random_pairing(len(X), 5), block_size=block_size
    )
    assert np.max(np.abs(fast - plain_balanced(X, 9, 5))) <= 1e-12


@pytest.mark.parametrize("n, m, block_size", [(41, 20, None), (41, 7, 3), (40, 13, 5), (9, 1, 2)])
def test_design_pairs_each_row_2m_times_once_and_never_with_itself(n, m, block_size):
    # With one-hot rows X = I_n, a pair (i, j) contributes u u^T with u = (e_i - e_j)/sqrt(2):
    # +1/2 at (i, i) and (j, j), -1/2 at (i, j) and (j, i). So n m K_B counts the pairs:
    # -2 n m K_B[i, j] is the number of times {i, j} is used and 2 n m K_B[i, i] the number
    # of pairs row i is in. A self-pair would be a tie and raise under ties="error".
    K = spherical_kendall(
        np.eye(n), design="balanced", m=m, order=random_pairing(n, 3), block_size=block_size
    )
    counts = -2.0 * n * m * K
    np.fill_diagonal(counts, 0.0)
    assert np.allclose(counts, np.round(counts), atol=1e-9)
    assert set(np.unique(np.round(counts))) <= {0.0, 1.0}  # no pair twice
    assert np.round(counts).sum() / 2 == n * m  # n m distinct pairs
    np.testing.assert_allclose(2.0 * n * m * np.diag(K), 2 * m, atol=1e-9)  # 2m pairs each


def test_full_balanced_design_equals_exact_matrix(rng):
    # n odd and m = (n - 1)/2: the n m = n (n - 1)/2 distinct pairs are all the pairs.
    X = rng.normal(size=(61, 4)) * [1e3, 1.0, 1e-3, 5.0] + 1e6
    K = spherical_kendall(X)
    KB = spherical_kendall(X, design="balanced", m=30, order=random_pairing(len(X), 8))
    assert np.max(np.abs(KB - K)) <= 1e-12


def test_replacing_one_row_moves_balanced_matrix_by_at_most_4_over_n(rng):
    n, p, m = 60, 4, 7
    X = rng.normal(size=(n, p))
    K = spherical_kendall(X, design="balanced", m=m, order=random_pairing(len(X), 2), ties="zero")
    worst = 0.0
    replacements = [rng.normal(size=p) * 100, X[1], X[0] + 1e-12, rng.standard_cauchy(size=p)]
    for i in range(0, n, 6):
        for new in replacements:
            Y = X.copy()
            Y[i] = new
            # the order depends on n and the seed only, so it is the same for both datasets
            KY = spherical_kendall(
                Y, design="balanced", m=m, order=random_pairing(len(Y), 2), ties="zero"
            )
            worst = max(worst, float(np.linalg.norm(KY - K)))
    assert worst <= 4.0 / n
    # the bound is not vacuous: one row moves the matrix by a sizeable part of it
    assert worst >= 0.1 * 4.0 / n


def test_balanced_is_reproducible_with_a_seed_and_varies_without(rng):
    X = rng.normal(size=(300, 3))
    a = spherical_kendall(X, design="balanced", m=4, order=random_pairing(len(X), 12))
    b = spherical_kendall(X, design="balanced", m=4, order=random_pairing(len(X), 12))
    c = spherical_kendall(X, design="balanced", m=4, order=random_pairing(len(X), 13))
    np.testing.assert_array_equal(a, b)
    assert np.max(np.abs(a - c)) > 0
    np.testing.assert_allclose(np.trace(a), 1.0, rtol=1e-12)


def test_balanced_tie_reports_original_row_indices(rng):
    X = rng.normal(size=(31, 3))
    X[17] = X[4]
    with pytest.raises(TiedRowsError, match="ties='zero'") as info:
        spherical_kendall(X, design="balanced", m=15, order=random_pairing(len(X), 0))
    assert info.value.n_pairs == 1 and set(info.value.example) == {4, 17}
    KB = spherical_kendall(
        X, design="balanced", m=15, order=random_pairing(len(X), 0), ties="zero"
    )
    assert np.trace(KB) == pytest.approx(1 - 1 / (31 * 15), rel=1e-12)


def test_balanced_does_not_modify_input(small_data):
    before = small_data.copy()
    spherical_kendall(small_data, design="balanced", order=random_pairing(len(small_data), 0))
    np.testing.assert_array_equal(small_data, before)


def test_default_m_depends_on_n_only():
    assert [default_m(n) for n in (3, 10, 41, 42, 10**7)] == [1, 4, 20, 20, 20]


@pytest.mark.parametrize(
    "kwargs, exc, word",
    [
        ({"m": 0}, ValueError, "m must"),
        ({"m": 100}, ValueError, r"\[1, 99\]"),
        ({"m": 2.0}, TypeError, "m must"),
        ({"m": True}, TypeError, "m must"),
        ({"design": "random"}, ValueError, "design"),
        ({"random_state": "x"}, TypeError, "random_state"),
        ({"progress": 3}, TypeError, "progress"),
    ],
)
def test_bad_design_arguments_raise(small_data, kwargs, exc, word):
    with pytest.raises(exc, match=word):
        spherical_kendall(small_data, **{"design": "balanced", **kwargs})


def test_balanced_needs_three_rows():
    with pytest.raises(ValueError, match="at least 3 rows"):
        spherical_kendall(np.eye(2), design="balanced")


def test_dp_pc_dir_draws_the_order_first_then_the_noise(small_data):
    res = dp_pc_dir(small_data, eps=0.5, delta=1e-5, design="balanced", m=6, random_state=21)
    rng = np.random.default_rng(21)
    KB = spherical_kendall(
        small_data, design="balanced", m=6, order=random_pairing(len(small_data), rng)
    )
    p = small_data.shape[1]
    noisy = KB + symmetric_gaussian_noise(p, kendall_sigma(200, 0.5, 1e-5), rng)
    np.testing.assert_allclose(res.noisy_matrix, noisy, rtol=0, atol=1e-15)
    assert res.sigma == kendall_sigma(200, 0.5, 1e-5)  # calibration unchanged
    assert "balanced design, m=6" in res.cost.released


def test_dp_pc_dir_balanced_is_reproducible(small_frame):
    a = dp_pc_dir(small_frame, 2, eps=0.5, delta=1e-5, design="balanced", random_state=4)
    b = dp_pc_dir(small_frame, 2, eps=0.5, delta=1e-5, design="balanced", random_state=4)
    np.testing.assert_array_equal(a.noisy_matrix, b.noisy_matrix)
    assert a.variables == ("a", "b", "c", "d", "e")


def test_cli_balanced_streams_csv_and_keeps_column_order(tmp_path, capsys, small_frame):
    path = tmp_path / "big.csv"
    small_frame.to_csv(path, index=False)
    argv = ["directions", str(path), "--eps", "0.5", "--delta", "1e-5", "--seed", "3"]
    argv += ["--design", "balanced", "--m", "5", "--columns", "c,a,b"]
    assert main(argv) == 0
    captured = capsys.readouterr()
    table = pd.read_csv(io.StringIO(captured.out), index_col=0)  # stdout: CSV only
    assert list(table.index) == ["c", "a", "b"]
    assert "eps=0.5" in captured.err
    # the same numbers as the library on the same columns and seed
    res = dp_pc_dir(
        small_frame[["c", "a", "b"]], eps=0.5, delta=1e-5, design="balanced", m=5, random_state=3
    )
    pd.testing.assert_frame_equal(table, res.to_frame(), check_names=False)


def test_chunked_csv_reader_matches_pandas(tmp_path, small_frame):
    from dppca.core.reading import read_numeric_file

    path = tmp_path / "t.csv"
    small_frame.to_csv(path, index=False)
    data, names = read_numeric_file(path, ["e", "a"], chunksize=7)
    np.testing.assert_array_equal(data, small_frame[["e", "a"]].to_numpy())
    assert names == ("e", "a") and data.flags.c_contiguous


@pytest.mark.parametrize(
    "content, extra, word",
    [
        ("a,b\n1,x\n", [], "non-numeric column"),
        ("a,b\n", [], "no rows"),
        ("a,b\n1,2\n3,4\n5,6\n", ["--columns", "a,z"], "unknown column"),
        ("", [], "empty"),
    ],
)
def test_cli_balanced_reports_bad_files_in_one_line(tmp_path, capsys, content, extra, word):
    path = tmp_path / "bad.csv"
    path.write_text(content)
    argv = ["directions", str(path), "--eps", "0.5", "--delta", "1e-5", "--design", "balanced"]
    assert main(argv + extra) == 2
    err = capsys.readouterr().err
    assert err.startswith("dppca: error:") and word in err and err.count("\n") == 1


def test_parquet_reader_matches_csv(tmp_path, small_frame):
    pytest.importorskip("pyarrow")
    from dppca.core.reading import read_numeric_file

    path = tmp_path / "t.parquet"
    small_frame.to_parquet(path)
    data, names = read_numeric_file(path, chunksize=13)
    np.testing.assert_array_equal(data, small_frame.to_numpy())
    assert names == tuple(small_frame.columns)


def test_parquet_without_pyarrow_is_a_clear_error(tmp_path, capsys, monkeypatch):
    import builtins

    real_import = builtins.__import__

    def no_pyarrow(name, *args, **kwargs):
        if name.startswith("pyarrow"):
            raise ImportError(name)
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_pyarrow)
    path = tmp_path / "t.parquet"
    path.write_bytes(b"PAR1")
    argv = ["directions", str(path), "--eps", "0.5", "--delta", "1e-5", "--design", "balanced"]
    assert main(argv) == 2
    assert "pyarrow" in capsys.readouterr().err


def test_balanced_on_frame_and_array_agree(small_frame):
    a = spherical_kendall(
        small_frame, design="balanced", order=random_pairing(len(small_frame), 1)
    )
    b = spherical_kendall(
        small_frame.to_numpy(), design="balanced", order=random_pairing(len(small_frame), 1)
    )
    np.testing.assert_array_equal(a, b)
    assert isinstance(small_frame, pd.DataFrame)
