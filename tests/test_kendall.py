"""Tests of the spherical Kendall matrix against the plain pairwise definition."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from dppca import TiedRowsError, spherical_kendall
from dppca.privacy.mechanisms import random_pairing


def _order(design: str, n: int, seed: int) -> dict:
    """The balanced design's row order as a keyword (none for the exact design)."""
    return {"order": random_pairing(n, seed)} if design == "balanced" else {}


TINY, HUGE = np.finfo(np.float64).tiny, np.finfo(np.float64).max


def plain_kendall(X: np.ndarray, ties: str = "error") -> np.ndarray:
    """The definition, one pair at a time: 2/(n(n-1)) sum_{i<j} u u^T."""
    X = np.asarray(X, dtype=np.float64)
    n, p = X.shape
    total = np.zeros((p, p))
    for i in range(n - 1):
        for j in range(i + 1, n):
            with np.errstate(over="ignore", invalid="ignore"):  # overflow: a tie
                diff = X[i] - X[j]
                top = np.max(np.abs(diff))
            if not (0 < top < np.inf):  # zero or not finite: cannot be normalised, a tie
                if ties == "error":
                    raise ValueError("tie")
                continue
            diff = diff / top  # the direction has no unit: any scale may be divided out
            u = diff / np.sqrt(np.sum(diff * diff))
            total += np.outer(u, u)
    return total * 2.0 / (n * (n - 1))


def _hostile_cases() -> dict[str, np.ndarray]:
    rng = np.random.default_rng(7)
    n, p = 150, 6
    base = rng.normal(size=(n, p))
    near = base.copy()
    near[1::2] = near[::2] + 1e-6 * rng.normal(size=(n // 2, p))  # separation ~1e-6 ...
    near *= 1e3  # ... at scale 1e3
    clustered = base.copy()
    clustered[::3] += 1e4
    return {
        "standard": base,
        "near_duplicates_scale_1e3": near,
        "offset_1e6": base + 1e6,
        "small_spread_offset_1e6": 1e-3 * base + 1e6,
        "column_scales_1e-3_to_1e3": base * np.logspace(-3, 3, p),
        "column_scales_and_offset": base * np.logspace(-3, 3, p) + 1e6,
        "two_far_clusters": clustered,
        "one_column": rng.normal(size=(n, 1)),
    }


@pytest.mark.parametrize("name", list(_hostile_cases()))
@pytest.mark.parametrize("block_size", [None, 16, 37])
def test_matches_plain_definition_on_hostile_data(name, block_size):
    X = _hostile_cases()[name]
    fast = spherical_kendall(X, block_size=block_size)
    assert np.max(np.abs(fast - plain_kendall(X))) <= 1e-10


def test_is_translation_invariant(small_data):
    shift = np.arange(1, 6) * 1e3
    np.testing.assert_allclose(
        spherical_kendall(small_data - shift), spherical_kendall(small_data), atol=1e-12
    )


def test_is_symmetric_psd_with_unit_trace(small_data):
    K = spherical_kendall(small_data)
    np.testing.assert_array_equal(K, K.T)
    assert np.linalg.eigvalsh(K).min() > -1e-12
    assert np.trace(K) == pytest.approx(1.0, abs=1e-12)


def test_accepts_dataframe_and_leaves_input_untouched(small_frame):
    before = small_frame.copy()
    K_frame = spherical_kendall(small_frame)
    pd.testing.assert_frame_equal(small_frame, before)
    np.testing.assert_allclose(K_frame, spherical_kendall(small_frame.to_numpy()), atol=1e-15)


def test_does_not_modify_array(small_data):
    before = small_data.copy()
    spherical_kendall(small_data)
    np.testing.assert_array_equal(small_data, before)


def test_tie_raises_with_count_and_example():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(40, 3))
    X[25] = X[4]  # exact duplicates
    X[31] = X[9]
    with pytest.raises(TiedRowsError, match="ties='zero'") as info:
        spherical_kendall(X, block_size=8)
    assert info.value.n_pairs == 2
    assert info.value.example in {(4, 25), (9, 31)}


def test_tie_decision_is_made_on_explicit_differences_far_from_origin():
    # At offset 1e8 a Gram-based distance has an absolute error ~1e0 and could not
    # tell 1e-8 from 2e-8; the explicit difference can.
    rng = np.random.default_rng(5)
    X = rng.normal(size=(30, 2)) + 1e8
    X = np.round(X * 4) / 4  # keep every value exactly representable at this scale
    X[10] = X[3]
    with pytest.raises(TiedRowsError) as info:
        spherical_kendall(X)
    assert info.value.n_pairs >= 1
    np.testing.assert_allclose(
        spherical_kendall(X, ties="zero"), plain_kendall(X, ties="zero"), atol=1e-10
    )


def test_ties_zero_drops_tied_pairs_only():
    rng = np.random.default_rng(4)
    X = rng.normal(size=(50, 4))
    X[20] = X[2]
    K = spherical_kendall(X, ties="zero", block_size=16)
    np.testing.assert_allclose(K, plain_kendall(X, ties="zero"), atol=1e-12)
    n = X.shape[0]
    assert np.trace(K) == pytest.approx(1 - 2 / (n * (n - 1)), abs=1e-12)


def test_only_exact_duplicates_are_ties():
    # Differences far below sqrt(DBL_MIN) (squared norm subnormal) are normalised.
    X = np.array([[0.0, 0.0], [1e-300, 0.0], [5.0, 1.0], [0.0, 1e-320]])
    np.testing.assert_allclose(spherical_kendall(X), plain_kendall(X), atol=1e-12)
    X[1] = X[0]  # an exact duplicate
    with pytest.raises(TiedRowsError) as info:
        spherical_kendall(X)
    assert info.value.n_pairs == 1
    # 2 * DBL_MAX overflows; halving both rows keeps its direction: not a tie
    Y = np.array([[HUGE, 0.0], [-HUGE, 0.0], [0.0, HUGE]])
    Z = np.array([[1.0, 0.0], [-1.0, 0.0], [0.0, 1.0]])
    for kwargs in ({}, {"design": "balanced", "order": random_pairing(3, 0), "m": 1}):
        np.testing.assert_allclose(
            spherical_kendall(Y, **kwargs), spherical_kendall(Z, **kwargs), atol=1e-15
        )


@pytest.mark.parametrize("design", ["exact", "balanced"])
@pytest.mark.parametrize("factor", [1e155, 1e-160, 1e300, 1e-300])
def test_kendall_is_scale_invariant_at_extreme_magnitudes(backend, design, factor):
    X = _hostile_cases()["near_duplicates_scale_1e3"][:60] * 1e-3
    kwargs = {"design": design, **_order(design, 60, 0), "m": 9} if design == "balanced" else {}
    with np.errstate(all="raise"):  # nothing is reported either
        K = spherical_kendall(X * factor, block_size=16, **kwargs)
    # X * factor rounds each entry (relative 1.1e-16); the near duplicates
    # (separation 1e-6 of the scale) turn that into 1e-10 of their direction,
    # worth 2 / (n (n - 1)) each: far below the tolerance.
    np.testing.assert_allclose(K, spherical_kendall(X, block_size=16, **kwargs), atol=1e-12)
    if design == "exact":
        assert np.max(np.abs(K - plain_kendall(X))) <= 1e-10


def test_rows_1e_9_apart_are_not_ties():
    # The old absolute cutoff (1.49e-8) called these a tie; the rule now has no unit.
    rng = np.random.default_rng(3)
    X = rng.normal(size=(40, 3))
    X[31] = X[9] + 1e-9
    np.testing.assert_allclose(spherical_kendall(X), plain_kendall(X), atol=1e-12)


def test_replacing_one_row_moves_matrix_by_at_most_4_over_n():
    rng = np.random.default_rng(11)
    n, p = 120, 5
    X = rng.normal(size=(n, p))
    K = spherical_kendall(X)
    worst = 0.0
    for value in (1e6, -1e6, 0.0):
        Y = X.copy()
        Y[0] = value + rng.normal(size=p)
        worst = max(worst, np.linalg.norm(spherical_kendall(Y) - K, "fro"))
    assert worst <= 4.0 / n


@pytest.mark.parametrize(
    "bad, exc",
    [
        (np.ones((1, 3)), ValueError),
        (np.ones(5), ValueError),
        (np.array([[1.0, np.nan], [2.0, 3.0]]), ValueError),
        (np.array([[1.0, np.inf], [2.0, 3.0]]), ValueError),
        ("abc", TypeError),
        (None, TypeError),
        (np.array([["a", "b"], ["c", "d"]]), TypeError),
        (pd.DataFrame({"y": ["a", "b"]}), TypeError),  # no numeric column left
    ],
)
def test_bad_input_raises(bad, exc):
    with pytest.raises(exc, match="X"):
        spherical_kendall(bad)


@pytest.mark.parametrize("ties", ["drop", None, 0])
def test_bad_ties_option_raises(small_data, ties):
    with pytest.raises(ValueError, match="ties"):
        spherical_kendall(small_data, ties=ties)


@pytest.mark.parametrize("block_size, exc", [(0, ValueError), (2.5, TypeError), (True, TypeError)])
def test_bad_block_size_raises(small_data, block_size, exc):
    with pytest.raises(exc, match="block_size"):
        spherical_kendall(small_data, block_size=block_size)


@pytest.mark.parametrize("design", ["exact", "balanced"])
def test_values_near_the_float_limit_are_normalised_not_ties(design):
    # A row near DBL_MAX once made its squared norms overflow, so all its pairs
    # were ties. Its differences are finite and are now normalised like any
    # other, with no numpy warning (which would reveal the extreme row through
    # a side channel) and no NaN in the matrix.
    rng = np.random.default_rng(21)
    X = rng.normal(size=(40, 3))
    X[5] = [1e308, -1e308, 1e308]
    kwargs = {"design": design, "order": random_pairing(40, 0)} if design == "balanced" else {}
    with np.errstate(all="raise"):
        K = spherical_kendall(X, **kwargs)  # ties="error": no pair is a tie
    assert np.isfinite(K).all()
    assert np.trace(K) == pytest.approx(1.0, abs=1e-12)  # every pair counted
    if design == "exact":
        np.testing.assert_allclose(K, plain_kendall(X), atol=1e-10)


# --- compiled and fallback kernels, threads, unit-free ties -------------------------------------


@pytest.fixture(params=["numpy", "numba"])
def backend(request, monkeypatch):
    """Run a test with the numpy fallback and with the fused numba pass, forced."""
    if request.param == "numba":
        pytest.importorskip("numba")
    monkeypatch.setenv("DPPCA_KERNEL", request.param)
    return request.param


@pytest.mark.parametrize("name", list(_hostile_cases()))
@pytest.mark.parametrize("block_size", [None, 16, 37])
def test_each_backend_matches_plain_definition_on_hostile_data(backend, name, block_size):
    from dppca.kernels.tiles import kernel_backend

    assert kernel_backend(1) == backend
    X = _hostile_cases()[name]
    fast = spherical_kendall(X, block_size=block_size, n_jobs=2)
    assert np.max(np.abs(fast - plain_kendall(X))) <= 1e-10


@pytest.mark.parametrize("name", list(_hostile_cases()))
def test_numba_and_numpy_kernels_are_bit_identical(monkeypatch, name):
    pytest.importorskip("numba")
    X = _hostile_cases()[name]
    results = []
    for which in ("numpy", "numba"):
        monkeypatch.setenv("DPPCA_KERNEL", which)
        results.append(spherical_kendall(X, block_size=32))
    np.testing.assert_array_equal(results[0], results[1])


@pytest.mark.parametrize("design", ["exact", "balanced"])
def test_threads_give_bit_identical_results(backend, design):
    # Tiles are merged in a fixed order and BLAS is held to one thread, so the
    # number of threads changes nothing, not even rounding.
    X = _hostile_cases()["column_scales_and_offset"]
    kwargs = {"design": design, "block_size": 16, **_order(design, len(X), 3)}
    serial = spherical_kendall(X, n_jobs=1, **kwargs)
    for n_jobs in (2, 3, None):
        np.testing.assert_array_equal(spherical_kendall(X, n_jobs=n_jobs, **kwargs), serial)


@pytest.mark.parametrize("n_jobs, exc", [(0, ValueError), (1.5, TypeError), (True, TypeError)])
def test_bad_n_jobs_raises(small_data, n_jobs, exc):
    with pytest.raises(exc, match="n_jobs"):
        spherical_kendall(small_data, n_jobs=n_jobs)


def test_numpy_fallback_runs_when_numba_is_absent(tmp_path):
    import subprocess
    import sys
    from pathlib import Path

    src = str(Path(__file__).resolve().parents[1] / "src")
    code = (
        "import sys; sys.modules['numba'] = None\n"  # import numba now raises ImportError
        "import numpy as np\n"
        "from dppca import spherical_kendall\n"
        "from dppca.kernels.tiles import kernel_backend\n"
        "assert kernel_backend() == 'numpy', kernel_backend()\n"
        "X = np.random.default_rng(0).normal(size=(300, 4)) + 1e6\n"
        "K = spherical_kendall(X, block_size=64, n_jobs=2)\n"
        "assert abs(np.trace(K) - 1) < 1e-12\n"
    )
    env = {**__import__("os").environ, "PYTHONPATH": src, "DPPCA_KERNEL": "numba"}
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr


@pytest.mark.parametrize("design", ["exact", "balanced"])
@pytest.mark.parametrize("scale", [1e-9, 1e9])
def test_rescaling_the_data_changes_nothing(backend, design, scale):
    # The tie rule and the close-pair test are relative: no absolute cutoff remains.
    X = _hostile_cases()["near_duplicates_scale_1e3"] * 1e-3  # separations ~1e-6
    kwargs = {"design": design, "block_size": 32, **_order(design, len(X), 4)}
    K = spherical_kendall(X, **kwargs)
    K_scaled = spherical_kendall(X * scale, **kwargs)
    assert np.max(np.abs(K_scaled - K)) <= 1e-12 * np.max(np.abs(K))


def test_rescaling_leaves_private_directions_unchanged():
    from dppca import dp_pc_dir

    X = _hostile_cases()["standard"]
    base = dp_pc_dir(X, 2, eps=0.5, delta=1e-5, random_state=9)
    for scale in (1e-9, 1e9):
        other = dp_pc_dir(X * scale, 2, eps=0.5, delta=1e-5, random_state=9)
        assert other.sigma == base.sigma  # the noise scale has no unit
        np.testing.assert_allclose(other.directions, base.directions, atol=1e-10)


@pytest.mark.parametrize("design", ["exact", "balanced"])
def test_exact_duplicates_are_still_ties(backend, design):
    X = _hostile_cases()["standard"] * 1e-9
    X[7] = X[70]
    kwargs = (
        {"design": design, "m": 74, **_order(design, len(X), 0)} if design == "balanced" else {}
    )
    with pytest.raises(TiedRowsError) as info:
        spherical_kendall(X, **kwargs)
    assert info.value.n_pairs == 1


@pytest.mark.parametrize("design", ["exact", "balanced"])
@pytest.mark.parametrize("far", [1e150, 8e153, 1e154, 1.3e154, 1.4e154, 1e155, 1e200])
def test_no_floating_point_warning_escapes(backend, design, far):
    # A row about 1e154 away once made `sq_i.max() + sq_j.max()` overflow with a
    # RuntimeWarning, while its neighbour 1e155 did not: a side channel on the data.
    # No warning (filterwarnings=error) and no FloatingPointError, whatever the
    # caller's numpy error state.
    rng = np.random.default_rng(21)
    X = rng.normal(size=(40, 3))
    X[5, 0] = far  # squared norm 1e308 (1e154) overflows when two are added; 1.4e154 not
    kwargs = {"design": design, "order": random_pairing(40, 0)} if design == "balanced" else {}
    with np.errstate(all="raise"):
        K = spherical_kendall(X, ties="zero", block_size=16, **kwargs)
    assert np.isfinite(K).all()
    if design == "exact":
        np.testing.assert_allclose(K, plain_kendall(X, ties="zero"), atol=1e-10)


def test_default_block_depends_on_p_and_cache_only():
    from dppca.kernels.exact_pairs import default_block

    for p in (1, 20, 256, 257, 5000):
        b = default_block(p)
        assert b >= 64 and b & (b - 1) == 0  # a power of two
        assert b == default_block(p)
    assert default_block(1000) >= 512


@pytest.mark.parametrize("factor", [1e155, 1e-160])
def test_dp_pc_dir_gives_the_same_directions_at_extreme_magnitudes(factor):
    from dppca import dp_pc_dir

    X = _hostile_cases()["column_scales_1e-3_to_1e3"][:80]
    ref = dp_pc_dir(X, 3, eps=1.0, delta=1e-6, random_state=5)
    out = dp_pc_dir(X * factor, 3, eps=1.0, delta=1e-6, random_state=5)
    # the same noise on matrices 1e-12 apart (the rounding of X * factor)
    np.testing.assert_allclose(out.noisy_matrix, ref.noisy_matrix, atol=1e-12)
    np.testing.assert_allclose(out.directions, ref.directions, atol=1e-9)


def test_partial_eigensolver_gives_the_full_solvers_directions():
    from dppca.kernels.eigen import top_eigh
    from dppca.releases.directions.plan import top_eigen
    from dppca.releases.directions.result import orient_signs

    rng = np.random.default_rng(11)
    p = 200
    A = rng.normal(size=(p, p)) * 0.01
    A = (A + A.T) / 2 + np.diag(np.linspace(0.0, 1.0, p))  # gaps of 5e-3 at the top
    values, vectors = np.linalg.eigh(A)
    for k in (1, 2, 25):
        top, vec = top_eigh(A, k)  # partial for 8 k <= p
        np.testing.assert_allclose(top, values[::-1][:k], rtol=0, atol=1e-13)
        signs = np.sign(np.sum(vec * vectors[:, ::-1][:, :k], axis=0))
        np.testing.assert_allclose(vec * signs, vectors[:, ::-1][:, :k], atol=1e-11)
        # with the sign convention applied after, the same directions as the full solver
        full = orient_signs(vectors[:, ::-1][:, :k])
        np.testing.assert_allclose(top_eigen(A, k)[1], full, atol=1e-11)


def test_lanczos_gives_the_full_solvers_eigenpairs(monkeypatch):
    from dppca.kernels import eigen

    rng = np.random.default_rng(12)
    p = 300
    A = rng.normal(size=(p, p)) * 0.01
    A = (A + A.T) / 2 + np.diag(np.linspace(0.0, 1.0, p))  # gaps of 3e-3 at the top
    values, vectors = np.linalg.eigh(A)
    monkeypatch.setattr(eigen, "LANCZOS_MIN_P", p)  # Lanczos for k <= p / 50
    called = []
    original = __import__("scipy.sparse.linalg", fromlist=["eigsh"]).eigsh
    monkeypatch.setattr(
        "scipy.sparse.linalg.eigsh", lambda *a, **kw: called.append(1) or original(*a, **kw)
    )
    for k in (1, 2, 6):
        top, vec = eigen.top_eigh(A, k)
        # ARPACK to full accuracy: residuals near eps ||A||, so vectors to eps ||A|| / gap
        np.testing.assert_allclose(top, values[::-1][:k], rtol=0, atol=1e-13)
        signs = np.sign(np.sum(vec * vectors[:, ::-1][:, :k], axis=0))
        np.testing.assert_allclose(vec * signs, vectors[:, ::-1][:, :k], atol=1e-10)
    assert len(called) == 3
    np.testing.assert_array_equal(eigen.top_eigh(A, 2)[1], eigen.top_eigh(A, 2)[1])


@pytest.mark.parametrize("env", [None, "1", "4"])
@pytest.mark.parametrize("blas", [True, False])
def test_without_threadpoolctl_blas_tasks_run_in_threads_only_if_blas_is_held(
    monkeypatch, env, blas
):
    import sys

    from dppca.kernels import threads

    monkeypatch.setitem(sys.modules, "threadpoolctl", None)  # import fails
    for name in threads._BLAS_THREAD_VARS:
        monkeypatch.delenv(name, raising=False)
    if env is not None:
        monkeypatch.setenv("OPENBLAS_NUM_THREADS", env)
    with threads._runner(2, 4, blas=blas) as run:
        threaded = run is not map
        assert list(run(lambda t: t * t, range(4))) == [0, 1, 4, 9]  # in task order
    # BLAS calls in threads would each start BLAS's own threads: serial then
    assert threaded == (not blas or env == "1")


def test_kernel_results_do_not_depend_on_threadpoolctl(monkeypatch):
    import sys

    X = _hostile_cases()["column_scales_and_offset"]
    with_ctl = spherical_kendall(X, block_size=16, n_jobs=2)
    monkeypatch.setitem(sys.modules, "threadpoolctl", None)
    monkeypatch.setenv("OPENBLAS_NUM_THREADS", "1")
    np.testing.assert_array_equal(spherical_kendall(X, block_size=16, n_jobs=2), with_ctl)


# BLAS's thread limit is process-wide: a release still running in a thread of an
# in-process app left by another test (or a kernel generator not yet collected)
# would share it. These two tests therefore run in a fresh interpreter each.
_BLAS_HOLD_RELEASE = """
import numpy as np, threadpoolctl
from dppca import dp_pc_dir
from dppca.releases.directions import plan as directions_plan
seen = []
original = directions_plan.top_eigen
def spy(*args, **kwargs):
    seen.extend(i["num_threads"] for i in threadpoolctl.threadpool_info()
                if i["user_api"] == "blas")
    return original(*args, **kwargs)
directions_plan.top_eigen = spy
X = np.random.default_rng(0).standard_normal((60, 4))
# the caller allows two threads; the release's eigensolver still gets one
with threadpoolctl.threadpool_limits(limits=2, user_api="blas"):
    dp_pc_dir(X, 2, eps=1.0, delta=1e-6, estimator=ESTIMATOR, random_state=0,
              accuracy="ignore")
assert seen and set(seen) == {1}, seen
"""

_BLAS_HOLDS_OVERLAP = """
import numpy  # loads the BLAS that the holds limit
import threadpoolctl
from dppca.kernels.threads import hold_blas
def blas_threads():
    info = threadpoolctl.threadpool_info()
    return {i["num_threads"] for i in info if i["user_api"] == "blas"}
with threadpoolctl.threadpool_limits(limits=2, user_api="blas"):
    first, second = hold_blas(), hold_blas()
    first.__enter__()  # two releases in two sessions, overlapping, not nested
    second.__enter__()
    first.__exit__(None, None, None)
    assert blas_threads() == {1}, blas_threads()  # still held for the second
    second.__exit__(None, None, None)
    # the caller's limit, not the first holder's 1
    assert blas_threads() == {2}, blas_threads()
"""


def _run_fresh(code: str) -> None:
    import os
    import subprocess
    import sys
    from pathlib import Path

    src = str(Path(__file__).resolve().parents[1] / "src")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([src, os.environ.get("PYTHONPATH", "")])}
    for name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        env.pop(name, None)  # the caller's limit is the test's own
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


@pytest.mark.parametrize("estimator", ["kendall", "tau"])
def test_a_release_holds_blas_to_one_thread_outside_the_kernels(estimator):
    pytest.importorskip("threadpoolctl")
    _run_fresh(_BLAS_HOLD_RELEASE.replace("ESTIMATOR", repr(estimator)))


def test_overlapping_blas_holds_restore_the_callers_limit():
    pytest.importorskip("threadpoolctl")
    _run_fresh(_BLAS_HOLDS_OVERLAP)
