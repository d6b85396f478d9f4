"""Tests of the clipped pair moments behind the private scree (dppca.kernels.pair_moments)."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

from dppca.kernels import moments
from dppca.kernels.pair_moments import (
    ALL_PAIRS_WORK,
    all_pairs_pay,
    clipped_moments_all_pairs,
    clipped_moments_disjoint,
    clipped_moments_pairings,
    moment_sensitivity,
    paired_differences,
)
from dppca.privacy.knorm import moment_knorm

_DBL_MAX = float(np.finfo(np.float64).max)


def plain_moments(X, V, clip, pairs=None):
    """The definition, pair by pair: mean of c (V'z)^2 and of min(||z||^2, clip)."""
    n = X.shape[0]
    if pairs is None:
        pairs = [(a, b) for a in range(n) for b in range(a + 1, n)]
    w, s = np.zeros(V.shape[1]), 0.0
    for a, b in pairs:
        z = (X[a] - X[b]) / math.sqrt(2.0)
        q = float(z @ z)
        c = min(1.0, clip / q) if q > 0 else 1.0
        w += c * (z @ V) ** 2
        s += min(q, clip)
    return w / len(pairs), s / len(pairs)


def _directions(rng, p, k):
    return np.linalg.qr(rng.normal(size=(p, k)))[0]


@pytest.mark.parametrize("clip", [0.05, 1.0, 30.0, 1e6])
@pytest.mark.parametrize("case", ["plain", "offset", "scales", "near_duplicates", "p1"])
def test_all_pairs_match_the_plain_definition(rng, clip, case):
    X = rng.normal(size=(41, 4))
    shift = None
    if case == "offset":
        X = X + 1e6
        shift = np.full(4, 1e6)  # a public shift (the centre of public bounds)
    elif case == "scales":
        X = X * np.array([1e-3, 1.0, 10.0, 1e3])
    elif case == "near_duplicates":
        X[1] = X[0] + 1e-9
        X[2] = X[0]
    elif case == "p1":
        X = X[:, :1]
    V = _directions(rng, X.shape[1], min(2, X.shape[1]))
    w, s = clipped_moments_all_pairs(X, V, clip, shift)
    w_ref, s_ref = plain_moments(X, V, clip)
    # Gram products lose about eps * ||x||^2 per pair; relative to the values:
    scale = max(1.0, float(np.max(np.abs(X - (0 if shift is None else shift))))) ** 2
    np.testing.assert_allclose(w, w_ref, rtol=1e-10, atol=1e-12 * scale)
    assert s == pytest.approx(s_ref, rel=1e-10, abs=1e-12 * scale)


def test_disjoint_and_several_pairings_match_the_definition(rng):
    X = rng.normal(size=(31, 3)) * [3.0, 1.0, 0.2]
    V = _directions(rng, 3, 2)
    orders = [rng.permutation(31) for _ in range(3)]
    for clip in (0.3, 5.0):
        w, s = clipped_moments_disjoint(paired_differences(X, orders[0]), V, clip)
        pairs = list(zip(orders[0][0:30:2], orders[0][1:30:2], strict=True))
        w_ref, s_ref = plain_moments(X, V, clip, pairs)
        np.testing.assert_allclose(w, w_ref, rtol=1e-12)
        assert s == pytest.approx(s_ref, rel=1e-12)
        w3, s3 = clipped_moments_pairings(X, V, clip, orders)
        parts = [
            plain_moments(X, V, clip, list(zip(o[0:30:2], o[1:30:2], strict=True))) for o in orders
        ]
        np.testing.assert_allclose(w3, np.mean([p[0] for p in parts], axis=0), rtol=1e-12)
        assert s3 == pytest.approx(np.mean([p[1] for p in parts]), rel=1e-12)


def test_unclipped_all_pairs_moments_are_the_sample_variances(rng):
    # Averaged over all pairs, (v'(x_a - x_b))^2 / 2 is exactly v' S v (sample
    # covariance S with denominator n - 1), and ||.||^2 / 2 is trace(S).
    X = rng.normal(size=(60, 5)) * [4.0, 2.0, 1.0, 0.5, 0.1] + 7.0
    V = _directions(rng, 5, 3)
    S = np.cov(X, rowvar=False)
    w, s = clipped_moments_all_pairs(X, V, clip=np.inf)
    np.testing.assert_allclose(w, np.einsum("jl,jk,kl->l", V, S, V), rtol=1e-10)
    assert s == pytest.approx(np.trace(S), rel=1e-10)


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("all_pairs", [True, False])
def test_replacing_a_row_moves_the_moments_by_at_most_the_sensitivity(seed, all_pairs):
    rng = np.random.default_rng(seed)
    n, p, k, clip = 57, 4, 3, 2.5
    X = rng.normal(size=(n, p)) * [3.0, 1.0, 0.5, 0.1]
    V = _directions(rng, p, k)
    order = rng.permutation(n)
    row = int(order[int(rng.integers(n - 1))])  # a paired row
    replacements = [
        rng.normal(size=p) * 1e3,
        np.full(p, 1e160),  # squares overflow
        np.array([_DBL_MAX, -_DBL_MAX, 0.0, 1.0]),  # differences overflow
        X[(row + 1) % n],  # a tie
    ]
    for new in replacements:
        Y = X.copy()
        Y[row] = new
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # no data-dependent warning either
            if all_pairs:
                a, b = clipped_moments_all_pairs(X, V, clip), clipped_moments_all_pairs(Y, V, clip)
            else:
                za, zb = paired_differences(X, order), paired_differences(Y, order)
                a, b = clipped_moments_disjoint(za, V, clip), clipped_moments_disjoint(zb, V, clip)
        d = np.append(a[0] - b[0], a[1] - b[1])
        assert np.all(np.isfinite(d))
        l1 = moment_sensitivity(n, clip, all_pairs=all_pairs, norm="l1")
        l2 = moment_sensitivity(n, clip, all_pairs=all_pairs, norm="l2")
        knorm = moment_sensitivity(n, clip, all_pairs=all_pairs, norm="knorm")
        assert np.abs(d).sum() <= l1 * (1 + 1e-9)
        assert np.linalg.norm(d) <= l2 * (1 + 1e-9)
        assert moment_knorm(d) <= knorm * (1 + 1e-9)  # what the K-norm noise is calibrated to


def test_the_l1_l2_and_knorm_sensitivities_are_attained():
    # Every other row at the origin; the changed row at sqrt(2 C) e1 in X and at
    # the origin in Y. Each of its n - 1 pairs goes from the polytope vertex
    # (C e1, C) (norm clipped exactly at the level) to 0, distance sqrt(2) C.
    n, clip = 30, 2.0
    V = np.eye(3)[:, :2]
    X = np.zeros((n, 3))
    Y = X.copy()
    X[0] = [2.0, 0.0, 0.0]  # ||z||^2 = 4 / 2 = 2 = C
    a, b = clipped_moments_all_pairs(X, V, clip), clipped_moments_all_pairs(Y, V, clip)
    d = np.append(a[0] - b[0], a[1] - b[1])
    l2 = moment_sensitivity(n, clip, all_pairs=True, norm="l2")
    l1 = moment_sensitivity(n, clip, all_pairs=True, norm="l1")
    assert np.linalg.norm(d) == pytest.approx(l2, rel=1e-12)
    assert np.abs(d).sum() == pytest.approx(l1, rel=1e-12)
    knorm = moment_sensitivity(n, clip, all_pairs=True, norm="knorm")
    assert moment_knorm(d) == pytest.approx(knorm, rel=1e-12)


def test_each_pair_stays_in_the_polytope_whatever_the_rounding():
    # Far from the origin without a shift the Gram products lose every digit of
    # the squared norms; the projections are still bounded by the norm used.
    rng = np.random.default_rng(3)
    X = rng.normal(size=(40, 3)) + 1e9
    V = _directions(rng, 3, 3)  # k = p: the projections add up to the whole norm
    w, s = clipped_moments_all_pairs(X, V, 1.0)
    assert np.all(w >= 0) and w.sum() <= s * (1 + 1e-12) and s <= 1.0


def reference_moments(X, V, clip, shift=None):
    """Pair by pair, each contribution from its own difference, overflow as (0, clip)."""
    n = X.shape[0]
    Y = X if shift is None else X - shift
    w, s = np.zeros(V.shape[1]), 0.0
    with np.errstate(over="ignore", invalid="ignore"):
        for a in range(n):
            for b in range(a + 1, n):
                z = (Y[a] - Y[b]) / math.sqrt(2.0)
                q = float(z @ z)
                if not math.isfinite(q):
                    s += clip
                    continue
                c = min(1.0, clip / q) if q > 0 else 1.0
                w += c * (z @ V) ** 2
                s += min(q, clip)
    return w / (n * (n - 1) / 2), s / (n * (n - 1) / 2)


def _hostile(rng, case):
    X = rng.normal(size=(37, 4)) * np.array([1e-3, 1.0, 10.0, 1e3])
    shift = None
    if case == "near_duplicates":
        X[1] = X[0] * (1 + 1e-12)
        X[3] = X[2]  # a tie
        X[4] = X[2] + 1e-300
    elif case == "offset":
        X = X + 1e8
        shift = np.full(4, 1e8)  # the centre of public bounds
    elif case == "huge_rows":
        X[5] = 1e160  # squared norms overflow: contribution (0, clip)
        X[6] = -1e160
    return X, shift


@pytest.mark.parametrize("case", ["scales", "near_duplicates", "offset", "huge_rows"])
@pytest.mark.parametrize("clip", [1e-4, 1.0, 1e4, np.inf])
def test_all_pairs_match_the_reference_on_hostile_data(rng, case, clip):
    X, shift = _hostile(rng, case)
    V = _directions(rng, 4, 3)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # nothing data-dependent is reported
        w, s = clipped_moments_all_pairs(X, V, clip, shift)
    w_ref, s_ref = reference_moments(X, V, clip, shift)
    # Sums of n^2 / 2 non-negative terms in two orders: each within
    # (n^2 / 2) eps_machine ~ 8e-14 of the exact sum, relative; projections
    # from differences of x V lose about eps |x| / |x_a - x_b| per pair,
    # which the near duplicates (|x| / |x_a - x_b| ~ 1e12) and the tie make
    # visible only in pairs worth 1e-24 of the total.
    np.testing.assert_allclose(w, w_ref, rtol=1e-12, atol=0)
    assert s == pytest.approx(s_ref, rel=1e-12, abs=0)


@pytest.mark.parametrize("case", ["scales", "near_duplicates", "offset", "huge_rows"])
@pytest.mark.parametrize("repeat", [1, 3])  # k = 4 and k = 12: both loops of the kernel
def test_numba_and_numpy_moments_are_bit_identical_for_every_thread_count(
    rng, monkeypatch, case, repeat
):
    pytest.importorskip("numba")
    X, shift = _hostile(rng, case)
    X = np.hstack([np.vstack([X] * 5)] * repeat)  # 185 rows: several tasks of rows
    shift = None if shift is None else np.tile(shift, repeat)
    V = _directions(rng, 4 * repeat, 4 * repeat)
    results = []
    for kernel in ("numpy", "numba"):
        monkeypatch.setenv("DPPCA_KERNEL", kernel)
        for n_jobs in (1, 2, 3):
            results.append(clipped_moments_all_pairs(X, V, 0.7, shift, n_jobs=n_jobs))
    assert moments.moment_backend(185) == "numba"
    for w, s in results[1:]:
        assert np.array_equal(w, results[0][0]) and s == results[0][1]


def plain_row_sums(Y, P, clip):
    """Row a's sums over partners b > a, pair by pair from the definition (no blocks)."""
    n, k = P.shape
    out = np.zeros((n, k + 1))
    with np.errstate(over="ignore", invalid="ignore"):
        for a in range(n):
            for b in range(a + 1, n):
                h = float(np.sum((Y[a] - Y[b]) ** 2)) / 2.0
                q = (P[a] - P[b]) ** 2 / 2.0
                t = max(h if h == h else math.inf, float(q.sum()))
                if not math.isfinite(t):  # overflow: the pair adds (0, clip)
                    out[a, k] += clip
                    continue
                c = clip / t if t > clip else 1.0
                out[a, :k] += c * q
                out[a, k] += min(t, clip)
    return out


@pytest.mark.parametrize("case", ["scales", "near_duplicates", "huge_rows"])
@pytest.mark.parametrize("k", [3, 7])  # k = p: no direction left over
def test_compiled_row_blocks_match_the_plain_pair_loop_and_numpy(rng, monkeypatch, case, k):
    # 150 rows: row blocks of 8 with a short last block (rows 64..85 in the second
    # task), partners in two chunks; p = 7 and k = 3 leave a column and a
    # direction after the kernel's passes of four.
    pytest.importorskip("numba")
    X, _ = _hostile(rng, case)
    X = np.hstack([np.vstack([X] * 5)[:150], rng.normal(size=(150, 3))])
    X[100:110] = X[100]  # a run of tied rows inside one block
    V = _directions(rng, 7, k)
    Y = X @ V
    ref = plain_row_sums(X, Y, 0.7)
    tables = []
    for kernel in ("numpy", "numba"):
        monkeypatch.setenv("DPPCA_KERNEL", kernel)
        for n_jobs in (1, 2):
            tables.append(moments.moment_rows(X, Y, 0.7, n_jobs=n_jobs))
    for table in tables[1:]:
        assert np.array_equal(table, tables[0])
    # Each entry sums at most 149 non-negative terms, each formed by the same
    # operations in both; only the order of the sums differs, so they agree to
    # 149 eps_machine ~ 3.3e-14, relative.
    np.testing.assert_allclose(tables[0], ref, rtol=1e-12, atol=0)


def test_the_pairing_switch_is_a_rule_on_n_and_p():
    # all pairs while n (n - 1) / 2 (p + 10) <= ALL_PAIRS_WORK, monotone in both
    assert all_pairs_pay(14142, 50) and not all_pairs_pay(14143, 50)
    assert all_pairs_pay(4000, 50) and not all_pairs_pay(4000, 1000)
    assert not any(all_pairs_pay(n, 50) for n in (20000, 40000))
    assert ALL_PAIRS_WORK == 6e9
