"""Tests of resolve_directions, the direction check shared by dp_scree and dp_score."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from dppca import dp_pc_dir, dp_score, dp_scree, pc_dir
from dppca.releases.directions.given import resolve_directions


@pytest.fixture
def data(rng):
    return rng.normal(size=(300, 4)) * np.array([3.0, 2.0, 1.0, 0.5])


def test_none_means_the_caller_releases_directions():
    assert resolve_directions(None, p=4, k=2) == (None, None)


def test_private_release_gives_a_copy_of_its_leading_columns(data):
    res = dp_pc_dir(data, 3, eps=0.5, delta=1e-5, random_state=0)
    matrix, release = resolve_directions(res, p=4, k=2)
    assert release is res
    assert np.array_equal(matrix, res.directions[:, :2])
    matrix[0, 0] = 99.0  # a fresh, writable copy: the release is untouched
    assert res.directions[0, 0] != 99.0


@pytest.mark.parametrize("kind", ["array", "frame"])
def test_public_matrix_is_accepted_without_a_release(kind):
    q = np.linalg.qr(np.random.default_rng(1).normal(size=(4, 3)))[0]
    given = q if kind == "array" else pd.DataFrame(q)
    matrix, release = resolve_directions(given, p=4, k=3)
    assert release is None and np.allclose(matrix, q)


def test_nonprivate_result_needs_the_public_declaration(data):
    with pytest.raises(ValueError, match=r"non-private.*public_directions"):
        resolve_directions(pc_dir(data), p=4, k=2)
    matrix, release = resolve_directions(pc_dir(data), p=4, k=2, public_directions=True)
    assert release is None and matrix.shape == (4, 2)
    with pytest.raises(TypeError, match="public_directions"):
        resolve_directions(pc_dir(data), p=4, k=2, public_directions="yes")


@pytest.mark.parametrize(
    "directions, match",
    [
        (np.ones((4, 2)), "orthonormal"),
        (np.array([[np.nan, 0.0], [0.0, 1.0], [0.0, 0.0], [0.0, 0.0]]), "finite"),
        (np.eye(3)[:, :2], "one row per variable"),
        (np.eye(4)[:, :1], "PC2"),
        (np.eye(4)[0], "shape"),
        ("abc", "directions must be None"),
    ],
)
def test_bad_matrices_are_refused_with_the_fix(directions, match):
    with pytest.raises((TypeError, ValueError), match=match):
        resolve_directions(directions, p=4, k=2)


def test_result_for_other_columns_or_too_few_pcs_is_refused(data):
    res = dp_pc_dir(data[:, :3], 2, eps=0.5, delta=1e-5, random_state=0)
    with pytest.raises(ValueError, match="p=3"):
        resolve_directions(res, p=4, k=2)
    res = dp_pc_dir(data, 1, eps=0.5, delta=1e-5, random_state=0)
    with pytest.raises(ValueError, match="PC2"):
        resolve_directions(res, p=4, k=2)


@pytest.mark.parametrize("caller", ["scree", "score"])
def test_scree_and_score_apply_the_same_checks(data, caller):
    def run(**kwargs):
        if caller == "scree":
            return dp_scree(data, 2, eps=0.5, delta=1e-5, random_state=0, **kwargs)
        return dp_score(
            data, eps=0.5, delta=1e-5, frame=((-9, 9), (-9, 9)), random_state=0, **kwargs
        )

    with pytest.raises(ValueError, match="orthonormal"):
        run(directions=np.ones((4, 2)))
    with pytest.raises(ValueError, match="public_directions"):
        run(directions=pc_dir(data))
    with pytest.raises(ValueError, match="these same data"):  # not public at all
        run(directions=pc_dir(data), public_directions=True)
    public = pc_dir(data[: len(data) // 2])  # stands in for directions from public data
    res = run(directions=public, public_directions=True)
    assert res.directions_source in ("public", "public (caller)")
    assert np.allclose(res.directions, public.directions[:, :2])
