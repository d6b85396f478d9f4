"""Tests of the Dask backend: same matrix as in memory, on a LocalCluster and locally."""

from __future__ import annotations

import itertools
import subprocess
import sys

import numpy as np
import pytest

from dppca import TiedRowsError, dp_loading, dp_pc_dir, spherical_kendall
from dppca.privacy.mechanisms import random_pairing

dask = pytest.importorskip("dask")
da = pytest.importorskip("dask.array")
distributed = pytest.importorskip("distributed")


@pytest.fixture(scope="module")
def client():
    # distributed serves its HTTP routes even with dashboard_address=None, on the
    # default port 8787 (an error when another process holds it); ":0" asks for any
    # free port, so the tests run beside other clusters and on busy machines
    with (
        distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=False, dashboard_address=":0"
        ) as cluster,
        distributed.Client(cluster) as c,
    ):
        yield c


@pytest.fixture(scope="module")
def data() -> np.ndarray:
    rng = np.random.default_rng(99)
    X = rng.normal(size=(2503, 6)) * np.logspace(-2, 2, 6) + 1e5
    X[7] = X[1500] + 1e-7  # a close pair: the explicit-difference route
    return X


def test_exact_design_on_cluster_equals_in_memory(client, data):
    X = da.from_array(data, chunks=(600, 3))
    K = spherical_kendall(data)
    KD = spherical_kendall(X, block_size=512)
    assert np.max(np.abs(KD - K)) <= 1e-12


@pytest.mark.parametrize("m, block_size", [(20, None), (13, 250), (5, 2500)])
def test_balanced_design_on_cluster_equals_in_memory(client, data, m, block_size):
    X = da.from_array(data, chunks=(1000, 6))
    K = spherical_kendall(data, design="balanced", m=m, order=random_pairing(len(data), 31))
    KD = spherical_kendall(
        X, design="balanced", m=m, order=random_pairing(len(data), 31), block_size=block_size
    )
    assert np.max(np.abs(KD - K)) <= 1e-12


def test_dp_pc_dir_on_cluster_equals_in_memory(client, data):
    X = da.from_array(data, chunks=(900, 6))
    for design in ("exact", "balanced"):
        a = dp_pc_dir(data, 2, eps=0.5, delta=1e-5, random_state=5, design=design)
        b = dp_pc_dir(X, 2, eps=0.5, delta=1e-5, random_state=5, design=design)
        assert np.max(np.abs(a.noisy_matrix - b.noisy_matrix)) <= 1e-12
        assert a.sigma == b.sigma and a.n == b.n and b.variables == a.variables


def test_progress_fires_on_cluster(client, data):
    X = da.from_array(data[:700], chunks=(300, 6))
    calls = []
    spherical_kendall(X, block_size=256, progress=lambda d, t: calls.append((d, t)))
    # 3 row blocks -> 6 tiles, one call per finished tile, ending at all n(n-1)/2 pairs
    assert len(calls) == 6 and calls[-1] == (700 * 699 // 2, 700 * 699 // 2)
    assert all(a[0] < b[0] for a, b in itertools.pairwise(calls))


def test_local_scheduler_gives_the_same_matrix_and_progress(client, data):
    X = da.from_array(data[:700], chunks=(300, 6))
    K = spherical_kendall(data[:700], design="balanced", m=4, order=random_pairing(700, 0))
    calls = []
    with dask.config.set(scheduler="threads"):
        KD = spherical_kendall(
            X,
            design="balanced",
            m=4,
            block_size=100,
            order=random_pairing(700, 0),
            progress=lambda d, t: calls.append((d, t)),
        )
    assert np.max(np.abs(KD - K)) <= 1e-12
    # 7 chunks of 100 positions, 4 partners each
    assert len(calls) == 7 and calls[-1] == (2800, 2800)


def test_tie_on_cluster_reports_original_rows(client):
    rng = np.random.default_rng(3)
    X = rng.normal(size=(301, 3))
    X[250] = X[12]
    for design, m in (("exact", None), ("balanced", 150)):
        with pytest.raises(TiedRowsError) as info:
            order = random_pairing(301, 1) if design == "balanced" else None
            spherical_kendall(da.from_array(X, chunks=100), design=design, m=m, order=order)
        assert set(info.value.example) == {12, 250} and info.value.n_pairs == 1


def test_dp_loading_reduces_dask_input_on_the_cluster(client, data, check_data_calls):
    X = da.from_array(data, chunks=(900, 6))
    res = dp_loading(X, eps=0.5, delta=1e-5, random_state=5)
    assert check_data_calls == []  # never pulled into memory as a whole
    direct = dp_pc_dir(X, eps=0.5, delta=1e-5, random_state=5)
    np.testing.assert_array_equal(res.directions.noisy_matrix, direct.noisy_matrix)
    assert res.directions.cost == direct.cost and res.variables == direct.variables
    with pytest.raises(TypeError, match="compare=True needs X in memory"):
        dp_loading(X, eps=0.5, delta=1e-5, random_state=5, compare=True)


def test_dask_input_is_validated(client):
    X = np.ones((10, 2))
    X[3, 1] = np.nan
    with pytest.raises(ValueError, match="NaN or infinite values \\(columns 'V2'\\)"):
        spherical_kendall(da.from_array(X, chunks=5))
    with pytest.raises(ValueError, match="two-dimensional"):
        spherical_kendall(da.ones(10, chunks=5))
    with pytest.raises(TypeError, match="real numbers"):
        spherical_kendall(da.from_array(np.array([["a", "b"], ["c", "d"]])))


def test_dask_dataframe_input(client, data):
    dd = pytest.importorskip("dask.dataframe")
    import pandas as pd

    frame = pd.DataFrame(data[:500], columns=[f"x{j}" for j in range(6)])
    ddf = dd.from_pandas(frame, npartitions=3)
    res = dp_pc_dir(ddf, 2, eps=0.5, delta=1e-5, random_state=2)
    ref = dp_pc_dir(frame, 2, eps=0.5, delta=1e-5, random_state=2)
    assert np.max(np.abs(res.noisy_matrix - ref.noisy_matrix)) <= 1e-12
    assert res.variables == ref.variables


def test_import_dppca_does_not_import_dask():
    code = "import sys, dppca; print('dask' in sys.modules, 'distributed' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "False"]


@pytest.mark.parametrize("factor", [1e155, 1e-160])
def test_cluster_kernel_is_scale_invariant_at_extreme_magnitudes(client, data, factor):
    X = (data[:900] - 1e5) * factor  # per-tile power-of-two scaling on the cluster
    K = spherical_kendall(da.from_array(X, chunks=(300, 6)), block_size=300)
    # X * factor rounds each entry; the close pair (1e-7 of the scale) makes that
    # about 1e-9 of its own direction, weight 2 / (n (n - 1)) ~ 2.5e-6
    np.testing.assert_allclose(K, spherical_kendall(data[:900] - 1e5), atol=1e-12)
