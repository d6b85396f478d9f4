"""Kendall's tau estimator of the direction release (``estimator="tau"``).

The kernel against a plain pair loop and scipy, its invariance to column
scales, the replace-one audit of the sensitivity (and the pair that attains
it), an empirical DP audit, plan equals charge, the refusals, the command
line and the release file.
"""

from __future__ import annotations

import importlib.util
import math
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from dppca import Budget, dp_loading, dp_pc_dir, load_release, plan_pc_dir, save_release
from dppca.cli import main
from dppca.kernels import tau as tau_kernel
from dppca.kernels.tau import kendall_tau_matrix
from dppca.privacy.mechanisms import analytic_gaussian_sigma, random_pairing
from dppca.releases.directions.tau import tau_sensitivity


def _audit_helpers():
    """tests/test_dp_audit.py, whose audit of the Kendall release this file reuses."""
    spec = importlib.util.spec_from_file_location(
        "_dp_audit", Path(__file__).with_name("test_dp_audit.py")
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_AUDIT = _audit_helpers()
N, _bulk_triu_noise, audit = _AUDIT.N, _AUDIT._bulk_triu_noise, _AUDIT.audit


def loop_tau(X: np.ndarray) -> np.ndarray:
    """The definition, pair by pair: 2 / (n (n - 1)) sum_{i<j} s_ij s_ij^T."""
    n, p = X.shape
    total = np.zeros((p, p))
    for i in range(n):
        for j in range(i + 1, n):
            s = np.sign(X[i] - X[j])
            total += np.outer(s, s)
    return total * 2.0 / (n * (n - 1))


def loop_balanced(X: np.ndarray, order: np.ndarray, m: int) -> np.ndarray:
    """The balanced design by its definition: position q with q + 1 .. q + m (mod n)."""
    n, p = X.shape
    total = np.zeros((p, p))
    for q in range(n):
        for step in range(1, m + 1):
            s = np.sign(X[order[q]] - X[order[(q + step) % n]])
            total += np.outer(s, s)
    return total / (n * m)


def tied_table(rng: np.random.Generator, n: int = 41, p: int = 4) -> np.ndarray:
    """Small integers: ties in every column and some equal rows."""
    X = rng.integers(0, 4, size=(n, p)).astype(np.float64)
    X[5] = X[3]
    return X


def pre_noise(X: np.ndarray, **kwargs) -> np.ndarray:
    """The matrix the tau release adds its noise to, T / p (through the plan)."""
    n, p = X.shape
    plan = plan_pc_dir(n, p, eps=1.0, delta=1e-6, estimator="tau", accuracy="ignore", **kwargs)
    order = random_pairing(n, 0) if plan.design == "balanced" else None
    return plan.matrix(X, order)


# --------------------------------------------------------------------------- kernel


def test_kernel_equals_the_pair_loop_with_ties(rng):
    X = tied_table(rng)
    T = kendall_tau_matrix(X)
    # sums of integers in float64: exact, so equal up to the final scaling's rounding
    np.testing.assert_allclose(T, loop_tau(X), rtol=0, atol=1e-15)
    assert np.all(np.diag(T) < 1)  # ties lower the diagonal


def loop_tau_missing(X: np.ndarray) -> np.ndarray:
    """The definition with missing cells as ties: signs by comparison, NaN gives 0."""
    n, p = X.shape
    total = np.zeros((p, p))
    for i in range(n):
        for j in range(i + 1, n):
            s = np.greater(X[i], X[j]).astype(np.float64) - np.less(X[i], X[j])
            total += np.outer(s, s)
    return total * (2.0 / (n * (n - 1.0)))


def hostile_table(rng: np.random.Generator, n: int, p: int = 6) -> np.ndarray:
    """Ties, a constant column, huge and tiny scales, equal rows and missing cells."""
    X = rng.integers(0, 4, size=(n, p)).astype(np.float64)
    X[:, 1] = 7.0  # constant
    X[:, 2] = rng.standard_normal(n) * 1e300
    X[:, 3] = 1e-300 * rng.integers(-2, 3, size=n)
    X[n // 2] = X[n // 3]  # equal rows
    X[rng.random((n, p)) < 0.15] = np.nan
    X[:, -1] = np.nan  # a column with one cell present
    X[0, -1] = 1.0
    return X


@pytest.mark.parametrize("backend", ["products", "merge", "numba"])
@pytest.mark.parametrize("n", [2, 3, 17, 64])
def test_every_backend_equals_the_pair_loop_bit_for_bit(rng, backend, n):
    if backend == "numba":
        pytest.importorskip("numba")
    X = hostile_table(rng, n)
    if backend == "products":
        total = tau_kernel._product_sum(X, None)
    else:
        fn = tau_kernel._compile_numba() if backend == "numba" else tau_kernel._count_numpy
        total = tau_kernel._sorted_sum(X, fn, None, 2)
    # integer counts times one factor: the same float64, not just close
    np.testing.assert_array_equal(total * (2.0 / (n * (n - 1.0))), loop_tau_missing(X))


@pytest.mark.parametrize("kernel", ["numba", "numpy"])
def test_the_public_kernel_follows_the_forced_backend(rng, kernel, monkeypatch):
    if kernel == "numba":
        pytest.importorskip("numba")
    monkeypatch.setenv("DPPCA_KERNEL", kernel)
    X = hostile_table(rng, 40, p=4)
    assert tau_kernel.tau_backend(40, 4) == {"numba": "numba", "numpy": "merge"}[kernel]
    np.testing.assert_array_equal(kendall_tau_matrix(X), loop_tau_missing(X))


def test_missing_cells_count_only_pairs_present_in_both_columns(rng):
    X = rng.standard_normal((30, 2))
    X[:10, 1] = np.nan
    T = kendall_tau_matrix(X)
    sub = stats.kendalltau(X[10:, 0], X[10:, 1])[0]  # tau over the 20 complete rows
    # the sum runs over 20 * 19 / 2 pairs, the factor stays 2 / (30 * 29)
    assert T[0, 1] == pytest.approx(sub * (20 * 19) / (30 * 29), abs=1e-14)
    assert T[1, 1] == pytest.approx((20 * 19) / (30 * 29), abs=1e-15)
    assert T[0, 0] == 1.0


def test_balanced_kernel_treats_missing_cells_as_ties(rng):
    X = hostile_table(rng, 23, p=4)
    order = random_pairing(23, 4)
    got = kendall_tau_matrix(X, design="balanced", m=5, order=order)
    # integer sums times the kernel's factor 1 / (n m): the same float64
    np.testing.assert_array_equal(got, loop_balanced_missing(X, order, 5) * (1.0 / (23 * 5)))


def loop_balanced_missing(X: np.ndarray, order: np.ndarray, m: int) -> np.ndarray:
    """The balanced design's sum of sign products, signs by comparison (NaN gives 0)."""
    n, p = X.shape
    total = np.zeros((p, p))
    for q in range(n):
        for step in range(1, m + 1):
            a, b = X[order[q]], X[order[(q + step) % n]]
            s = np.greater(a, b).astype(np.float64) - np.less(a, b)
            total += np.outer(s, s)
    return total


def test_kernel_does_not_depend_on_the_block_size(rng, monkeypatch):
    X = tied_table(rng, n=57, p=3)
    whole = kendall_tau_matrix(X)
    for values in (1, 7, 3 * 57 + 1):
        monkeypatch.setattr(tau_kernel, "_CHUNK_VALUES", values)
        np.testing.assert_array_equal(kendall_tau_matrix(X), whole)


def test_kernel_equals_scipy_kendalltau_on_tie_free_data(rng):
    X = rng.standard_normal((120, 5))  # continuous: no ties, so tau-a = tau-b
    T = kendall_tau_matrix(X)
    for a in range(5):
        for b in range(5):
            assert T[a, b] == pytest.approx(stats.kendalltau(X[:, a], X[:, b])[0], abs=1e-13)
    np.testing.assert_allclose(np.diag(T), 1.0, rtol=0, atol=1e-15)
    assert np.trace(T / 5) == pytest.approx(1.0, abs=1e-14)  # trace 1, like the Kendall matrix


def test_balanced_kernel_equals_its_definition(rng):
    X = tied_table(rng, n=23, p=3)
    order = random_pairing(23, 4)
    for m in (1, 5, 11):
        got = kendall_tau_matrix(X, design="balanced", m=m, order=order)
        np.testing.assert_allclose(got, loop_balanced(X, order, m), rtol=0, atol=1e-15)


def test_kernel_compares_without_overflow():
    X = np.array([[-1.7e308, 1.0], [1.7e308, 2.0], [0.0, 3.0]])
    with np.errstate(over="ignore"):  # the loop's differences overflow to +-inf: same signs
        expected = loop_tau(X)
    with np.errstate(all="raise"):  # the kernel compares, it never subtracts
        np.testing.assert_array_equal(kendall_tau_matrix(X), expected)


def test_tau_matrix_is_the_same_in_any_units(rng):
    X = rng.standard_normal((200, 6)) @ rng.standard_normal((6, 6))
    factors = np.array([1e-3, 0.07, 1.0, 3.0, 250.0, 1e3])
    np.testing.assert_array_equal(kendall_tau_matrix(X * factors), kendall_tau_matrix(X))
    a = dp_pc_dir(X, 2, eps=1.0, delta=1e-6, estimator="tau", random_state=3, accuracy="ignore")
    b = dp_pc_dir(
        X * factors, 2, eps=1.0, delta=1e-6, estimator="tau", random_state=3, accuracy="ignore"
    )
    np.testing.assert_array_equal(a.noisy_matrix, b.noisy_matrix)  # the same release


# --------------------------------------------------------------------------- sensitivity


@pytest.mark.parametrize("p", [4, 3, 5])
@pytest.mark.parametrize("design", ["exact", "balanced"])
def test_replacing_one_row_moves_tau_over_p_by_at_most_the_sensitivity(rng, design, p):
    n = 31
    bound = tau_sensitivity(n, p)
    assert bound == pytest.approx(2 * math.sqrt(2) / n * math.sqrt(1 - (p % 2) / p**2))
    worst = 0.0
    for trial in range(60):
        X = tied_table(rng, n, p) if trial % 2 else rng.standard_normal((n, p))
        base = pre_noise(X, design=design)
        i = int(rng.integers(n))
        for row in (
            rng.standard_normal(p) * 100,
            X[int(rng.integers(n))],  # a copy of another row: ties
            np.full(p, 1e9) * rng.choice([-1.0, 1.0], p),  # beyond everything
            np.zeros(p),
        ):
            Y = X.copy()
            Y[i] = row
            worst = max(worst, float(np.linalg.norm(pre_noise(Y, design=design) - base)))
    assert worst <= bound * (1 + 1e-12)
    assert worst > 0.5 * bound  # the search reaches the bound's order (the test can fail)


@pytest.mark.parametrize("n, p", [(2, 2), (9, 4), (40, 6)])
def test_the_bound_is_attained_for_even_p(n, p):
    X = np.zeros((n, p))
    X[0] = 1.0  # above every other row in every coordinate
    Y = X.copy()
    Y[0, : p // 2], Y[0, p // 2 :] = 1.0, -1.0  # above in half, below in the other half
    gap = float(np.linalg.norm(pre_noise(Y) - pre_noise(X)))
    assert gap == pytest.approx(tau_sensitivity(n), rel=1e-12)


@pytest.mark.parametrize("n, p", [(2, 3), (9, 5), (40, 9)])
def test_the_bound_is_attained_for_odd_p(n, p):
    # The even-p construction cannot make s.t = 0 with p odd entries of +-1: the
    # closest is (p + 1) / 2 coordinates above and (p - 1) / 2 below (s.t = 1),
    # which attains 2 sqrt(2) sqrt(1 - 1/p^2) / n, below the even-p constant.
    X = np.zeros((n, p))
    X[0] = 1.0
    Y = X.copy()
    Y[0, (p + 1) // 2 :] = -1.0
    gap = float(np.linalg.norm(pre_noise(Y) - pre_noise(X)))
    assert gap == pytest.approx(tau_sensitivity(n, p), rel=1e-12)
    assert gap < tau_sensitivity(n) * (1 - 1e-3)


def test_odd_p_bound_holds_over_every_pair_of_sign_vectors():
    # The proof's core, checked exhaustively at p = 3 and 5: over all s, t in
    # {-1, 0, 1}^p, ||s s^T - t t^T||_F^2 <= 2 p^2 - 2, with equality reached.
    import itertools

    for p in (3, 5):
        signs = np.array(list(itertools.product((-1, 0, 1), repeat=p)), dtype=float)
        outer = np.einsum("ia,ib->iab", signs, signs).reshape(len(signs), -1)
        sq = (outer**2).sum(1)
        worst = max(float(np.max(sq[i] + sq - 2 * (outer @ outer[i]))) for i in range(len(signs)))
        assert worst == 2 * p**2 - 2


def test_a_tau_release_of_odd_p_adds_the_smaller_noise():
    plan3 = plan_pc_dir(200, 3, eps=1.0, delta=1e-6, estimator="tau")
    plan4 = plan_pc_dir(200, 4, eps=1.0, delta=1e-6, estimator="tau")
    assert plan3.cost.sensitivity == pytest.approx(tau_sensitivity(200, 3), rel=1e-12)
    assert plan3.sigma == pytest.approx(plan4.sigma * math.sqrt(1 - 1 / 9), rel=1e-9)


def test_tau_release_passes_the_dp_audit_and_half_noise_is_caught():
    # The same audit as the Kendall release (tests/test_dp_audit.py) on the
    # pair that attains the bound at n = p = 2.
    eps, delta, n, p = 1.0, 1e-5, 2, 2
    plan = plan_pc_dir(n, p, eps=eps, delta=delta, estimator="tau", accuracy="ignore")
    A = plan.matrix(np.array([[0.0, 0.0], [1.0, 1.0]]), None)
    A2 = plan.matrix(np.array([[0.0, 0.0], [1.0, -1.0]]), None)
    diff = A2 - A
    gap = float(np.linalg.norm(diff))
    assert gap == pytest.approx(tau_sensitivity(n), rel=1e-12)
    sigma = analytic_gaussian_sigma(gap, eps, delta)  # the least noise a sound rule may add
    assert plan.sigma >= sigma * (1 - 1e-12)
    u = diff / gap
    rows, cols = np.triu_indices(p)
    weights = np.where(rows == cols, 1.0, 2.0) * u[rows, cols]  # <E, u>_F ~ N(0, sigma^2)
    rng = np.random.default_rng(11)
    proj0 = _bulk_triu_noise(rng, N, p, 1.0) @ weights
    proj1 = _bulk_triu_noise(rng, N, p, 1.0) @ weights
    for factor, caught in ((plan.sigma / sigma, False), (0.5, True)):
        s = factor * sigma
        eps_lb = audit(s * proj0, gap + s * proj1, gap, sigma / 2, delta)
        assert (eps_lb > eps) is caught, (factor, eps_lb)


# --------------------------------------------------------------------------- the release


def test_plan_is_what_the_release_charges(rng):
    X = rng.standard_normal((300, 5)) * [1e3, 1.0, 1e-2, 5.0, 0.3]
    plan = plan_pc_dir(300, 5, 2, eps=0.8, delta=1e-6, estimator="tau", accuracy="ignore")
    budget = Budget(1.0, 1e-5)
    res = dp_pc_dir(
        X,
        2,
        eps=0.8,
        delta=1e-6,
        estimator="tau",
        budget=budget,
        random_state=1,
        accuracy="ignore",
    )
    assert budget.ledger == (res.cost,)
    assert res.cost == plan.cost and res.sigma == plan.sigma
    assert res.cost.released == "noisy Kendall's tau matrix / p, off the diagonal (5 x 5)"
    assert res.estimator == "tau"
    kendall = plan_pc_dir(300, 5, 2, eps=0.8, delta=1e-6, accuracy="ignore")
    # the same price, less noise: at odd p tau's sensitivity is sqrt(1 - 1/p^2) smaller
    assert kendall.cost.eps == plan.cost.eps
    assert plan.sigma == pytest.approx(kendall.sigma * math.sqrt(1 - 1 / 25), rel=1e-9)
    assert dp_pc_dir(X, 2, eps=0.8, delta=1e-6, random_state=1).estimator == "kendall"


def test_balanced_design_is_priced_and_recorded(rng):
    X = rng.standard_normal((200, 3))
    res = dp_pc_dir(
        X,
        eps=1.0,
        delta=1e-6,
        estimator="tau",
        design="balanced",
        m=7,
        random_state=2,
        accuracy="ignore",
    )
    assert (
        res.cost.released
        == "noisy Kendall's tau matrix / p, off the diagonal (3 x 3, balanced design, m=7)"
    )
    kendall = plan_pc_dir(200, 3, eps=1.0, delta=1e-6).sigma  # the balanced bound is the same
    assert res.sigma == pytest.approx(kendall * math.sqrt(1 - 1 / 9), rel=1e-9)


def test_dp_loading_honours_the_estimator(rng):
    X = rng.standard_normal((150, 4)) * [1e3, 1.0, 1e-3, 10.0]
    res = dp_loading(X, eps=1.0, delta=1e-6, estimator="tau", random_state=0, accuracy="ignore")
    assert res.directions.estimator == "tau" and "tau" in res.cost.released


@pytest.mark.parametrize(
    "kwargs, words",
    [
        ({"scale": "private"}, "does not change"),
        ({"scale": "robust"}, "scale must be None or 'private'"),  # its own check first
        ({"sensitivity": "seed"}, "sensitivity='tight'"),
        ({"ties": "error"}, "ties='zero'"),
    ],
)
def test_settings_tau_does_not_have_are_refused(kwargs, words):
    with pytest.raises(ValueError, match=words):
        plan_pc_dir(100, 3, eps=1.0, delta=1e-6, estimator="tau", **kwargs)


@pytest.mark.parametrize("bad", ["Tau", "spearman", None, 1])
def test_an_unknown_estimator_is_refused(bad):
    with pytest.raises(ValueError, match="estimator must be 'kendall' or 'tau'"):
        plan_pc_dir(100, 3, eps=1.0, delta=1e-6, estimator=bad)


def test_dask_data_are_refused_before_anything_is_spent(rng):
    da = pytest.importorskip("dask.array")
    budget = Budget(1.0, 1e-5)
    with pytest.raises(TypeError, match="in-memory data only"):
        dp_pc_dir(
            da.from_array(rng.standard_normal((50, 3)), chunks=25),
            eps=1.0,
            delta=1e-6,
            estimator="tau",
            budget=budget,
        )
    assert budget.ledger == ()


def test_release_file_keeps_the_estimator(rng, tmp_path):
    res = dp_pc_dir(
        rng.standard_normal((100, 3)),
        eps=1.0,
        delta=1e-6,
        estimator="tau",
        random_state=0,
        accuracy="ignore",
    )
    again = load_release(save_release(res, tmp_path / "tau.json"))
    assert again.estimator == "tau" and again.cost == res.cost
    np.testing.assert_array_equal(again.noisy_matrix, res.noisy_matrix)


# --------------------------------------------------------------------------- command line


@pytest.mark.parametrize("command", ["directions", "loading"])
def test_cli_passes_the_estimator_through(command, tmp_path, capsys):
    release = tmp_path / "r.json"
    args = [command, "--eps", "1", "--delta", "1e-6", "--seed", "1", "--accuracy", "ignore"]
    assert main([*args, "--estimator", "tau", "--save-release", str(release)]) == 0
    loaded = load_release(release)
    directions = loaded if command == "directions" else loaded.directions
    assert directions.estimator == "tau"
    capsys.readouterr()
    assert main([*args, "--estimator", "tau", "--dry-run"]) == 0
    assert "Kendall's tau" in capsys.readouterr().out


@pytest.mark.parametrize("scale", ["private", "1,2,3"])
def test_cli_refuses_scale_with_tau(scale, capsys):
    args = ["directions", "--eps", "1", "--delta", "1e-6", "--estimator", "tau"]
    assert main([*args, "--scale", scale]) == 2
    assert "--scale cannot be used with --estimator tau" in capsys.readouterr().err


def test_tau_release_publishes_the_off_diagonal_only(rng):
    # The diagonal of the released matrix is the public constant 1/p, whatever
    # the data: none of the diagonal noise reaches the directions.
    X = rng.normal(size=(80, 6)) * np.array([1e-3, 1.0, 1e3, 2.0, 5.0, 0.1])
    res = dp_pc_dir(X, eps=1.0, delta=1e-6, estimator="tau", random_state=1, accuracy="ignore")
    np.testing.assert_array_equal(np.diag(res.noisy_matrix), np.full(6, 1 / 6))
    np.testing.assert_array_equal(res.noisy_matrix, res.noisy_matrix.T)
    values, vectors = np.linalg.eigh(res.noisy_matrix)
    top = vectors[:, np.argsort(values)[::-1][: res.k]]
    np.testing.assert_allclose(np.abs(top.T @ res.directions), np.eye(res.k), atol=1e-8)
