"""Privacy audit of the scree and score releases.

Each test checks a property the privacy argument rests on: the noise drawn is
the noise the recorded cost pays for, an extreme neighbour moves the
pre-noise statistics by no more than their sensitivities, and nothing about
the data's values decides an error or a warning.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from dppca import dp_score
from dppca import mechanisms as mech
from dppca import score as score_mod
from dppca.score import bin_counts


def _leaf(cost, word):
    (leaf,) = [c for c in cost.leaves() if word in c.released]
    return leaf


# --------------------------------------------------------------------------- score


@pytest.mark.parametrize("given_directions", [False, True])
@pytest.mark.parametrize("public_frame", [False, True])
def test_group_size_noise_is_the_one_the_cost_records(
    monkeypatch, rng, given_directions, public_frame
):
    # Replacing a row can move it between groups: two sizes move by one, L1
    # sensitivity 2, so the recorded eps_g must come with Laplace(2 / eps_g).
    X = rng.normal(size=(600, 3))
    groups = np.repeat(["a", "b", "c"], 200)
    scales = []

    def spy(value, scale, gen):
        scales.append(scale)
        return mech.laplace_noise(value, scale, gen)

    monkeypatch.setattr(score_mod, "laplace_noise", spy)
    kwargs = {}
    if given_directions:
        kwargs["directions"] = np.linalg.qr(rng.normal(size=(3, 2)))[0]
    if public_frame:
        kwargs["frame"] = ((-5.0, 5.0), (-5.0, 5.0))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", score_mod.AccuracyWarning)
        res = dp_score(X, eps=0.5, delta=1e-5, groups=groups, random_state=3, **kwargs)
    eps_g = _leaf(res.cost, "group sizes").eps
    assert scales == [pytest.approx(2.0 / eps_g, rel=1e-12)]


def test_replacing_a_row_empties_at_most_one_cell_and_fills_at_most_one(rng):
    # The stability histogram's delta is paid once per ordered pair of
    # neighbours: only the cell the row leaves can be non-empty in D and empty
    # in D' (and only the cell it enters the other way round).
    n, mx, my, g = 300, 6, 5, 3
    edges_x, edges_y = np.linspace(-2, 2, mx + 1), np.linspace(-2, 2, my + 1)
    for _ in range(200):
        s = rng.standard_t(2, size=(n, 2))
        codes = rng.integers(g, size=n)
        s2, codes2 = s.copy(), codes.copy()
        row = rng.integers(n)
        s2[row] = rng.standard_t(1, size=2) * 10
        codes2[row] = rng.integers(g)
        c1 = bin_counts(s, edges_x, edges_y, codes, g).ravel()
        c2 = bin_counts(s2, edges_x, edges_y, codes2, g).ravel()
        assert np.sum((c1 > 0) & (c2 == 0)) <= 1
        assert np.sum((c1 == 0) & (c2 > 0)) <= 1
        assert np.abs(c1 - c2).sum() <= 2
