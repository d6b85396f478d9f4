"""Every result type round-trips through pickle, read-only and unchanged."""

from __future__ import annotations

import dataclasses
import pickle
from collections.abc import Mapping
from types import MappingProxyType

import numpy as np
import pytest

import dppca
from dppca.datasets import load_iris

PRIV = {"eps": 1.0, "delta": 1e-6}


def _same(a, b, path="") -> None:
    """``a`` and ``b`` hold the same content (arrays bit for bit, NaN == NaN)."""
    assert type(a) is type(b), path
    if isinstance(a, np.ndarray):
        np.testing.assert_array_equal(a, b, err_msg=path)
        assert a.dtype == b.dtype and a.flags.writeable == b.flags.writeable, path
    elif dataclasses.is_dataclass(a):
        for f in dataclasses.fields(a):
            _same(getattr(a, f.name), getattr(b, f.name), f"{path}.{f.name}")
    elif isinstance(a, Mapping):
        assert list(a) == list(b), path
        for key in a:
            _same(a[key], b[key], f"{path}[{key!r}]")
    elif isinstance(a, tuple | list):
        assert len(a) == len(b), path
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            _same(x, y, f"{path}[{i}]")
    elif isinstance(a, float) and np.isnan(a):
        assert np.isnan(b), path
    elif hasattr(a, "__dict__") and not callable(a):
        _same(vars(a), vars(b), path)
    else:
        assert a == b, path


def _read_only_everywhere(res, path="res") -> None:
    """Every array is read-only and every mapping a read-only view, as after release."""
    if isinstance(res, np.ndarray):
        assert not res.flags.writeable, path
    elif dataclasses.is_dataclass(res):
        for f in dataclasses.fields(res):
            _read_only_everywhere(getattr(res, f.name), f"{path}.{f.name}")
    elif isinstance(res, Mapping):
        assert isinstance(res, MappingProxyType), path
        for key, value in res.items():
            _read_only_everywhere(value, f"{path}[{key!r}]")
    elif isinstance(res, tuple):
        for i, item in enumerate(res):
            _read_only_everywhere(item, f"{path}[{i}]")


@pytest.fixture(scope="module")
def table():
    return load_iris().iloc[:, :4]


CASES = {
    "directions": lambda X: dppca.dp_pc_dir(X, random_state=1, **PRIV),
    "loading": lambda X: dppca.dp_loading(X, compare=True, random_state=1, **PRIV),
    "scree": lambda X: dppca.dp_scree(X, random_state=1, **PRIV),
    "score": lambda X: dppca.dp_score(X, compare=True, random_state=1, **PRIV),
    "pca_standardized": lambda X: dppca.dp_pca(X, random_state=1, **PRIV),
    "pca_units": lambda X: dppca.dp_pca(X, standardize=False, random_state=1, **PRIV),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_result_round_trips_through_pickle(name, table):
    res = CASES[name](table)
    again = pickle.loads(pickle.dumps(res, protocol=pickle.HIGHEST_PROTOCOL))
    _same(res, again)
    _read_only_everywhere(again)
    assert repr(again) == repr(res)


@pytest.mark.slow
def test_report_round_trips_through_pickle(table):
    rep = dppca.report(table, random_state=1, **PRIV)
    again = pickle.loads(pickle.dumps(rep))
    _same(rep, again)
    _read_only_everywhere(again.score)


def test_fitted_estimator_pickles_with_its_fit(table):
    pytest.importorskip("sklearn")
    est = dppca.DPPCA(n_components=2, random_state=3, public_transform=True).fit(table)
    again = pickle.loads(pickle.dumps(est))
    _same(est.pca_, again.pca_)
    np.testing.assert_array_equal(again.components_, est.components_)
    np.testing.assert_array_equal(again.transform(table), est.transform(table))
