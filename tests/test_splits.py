"""Typed budget splits: ScreeSplit and ScoreSplit."""

from __future__ import annotations

import dataclasses
import math
import pickle

import numpy as np
import pytest

import dppca
from dppca import ScoreSplit, ScreeSplit, dp_score, dp_scree, plan_score, plan_scree
from dppca.releases.score.costs import SPLIT_KEYS


@pytest.fixture
def table(rng: np.random.Generator) -> np.ndarray:
    return rng.normal(size=(400, 4)) * [3.0, 2.0, 1.0, 0.5]


# --------------------------------------------------------------------------
# the objects
# --------------------------------------------------------------------------


def test_splits_are_public_frozen_and_pickle_under_dppca():
    assert dppca.ScreeSplit is ScreeSplit
    assert dppca.ScoreSplit is ScoreSplit
    assert {"ScreeSplit", "ScoreSplit"} <= set(dppca.__all__)
    for split in (ScreeSplit(0.3, 0.1), ScoreSplit(frame=2.0)):
        assert type(split).__module__ == "dppca"
        assert pickle.loads(pickle.dumps(split)) == split
        with pytest.raises(dataclasses.FrozenInstanceError):
            split.directions = 0.5  # type: ignore[misc]


def test_scree_split_defaults_are_todays_defaults():
    assert ScreeSplit() == ScreeSplit(directions=0.35, clip=None)


def test_score_split_fields_are_the_score_parts():
    assert tuple(f.name for f in dataclasses.fields(ScoreSplit)) == SPLIT_KEYS
    assert ScoreSplit().weights() == {}
    assert ScoreSplit(directions=1, histogram=np.float64(3)).weights() == {
        "directions": 1.0,
        "histogram": 3.0,
    }


def test_splits_normalise_their_numbers_to_float():
    split = ScreeSplit(directions=np.float32(0.25), clip=np.float64(0.125))
    assert type(split.directions) is float and type(split.clip) is float
    assert type(ScoreSplit(groups=2).groups) is float


@pytest.mark.parametrize(
    "kwargs, error, match",
    [
        ({"directions": 0.0}, ValueError, r"ScreeSplit\.directions"),
        ({"directions": 1.0}, ValueError, r"ScreeSplit\.directions"),
        ({"directions": math.nan}, ValueError, r"ScreeSplit\.directions"),
        ({"directions": True}, TypeError, r"ScreeSplit\.directions"),
        ({"directions": "0.3"}, TypeError, r"ScreeSplit\.directions"),
        ({"clip": 0.0}, ValueError, r"ScreeSplit\.clip"),
        ({"clip": 1.5}, ValueError, r"ScreeSplit\.clip"),
    ],
)
def test_scree_split_refuses_shares_outside_the_open_unit_interval(kwargs, error, match):
    with pytest.raises(error, match=match):
        ScreeSplit(**kwargs)


@pytest.mark.parametrize(
    "kwargs, error, match",
    [
        ({"directions": 0.0}, ValueError, r"ScoreSplit\.directions"),
        ({"frame": -1.0}, ValueError, r"ScoreSplit\.frame"),
        ({"groups": math.inf}, ValueError, r"ScoreSplit\.groups"),
        ({"histogram": False}, TypeError, r"ScoreSplit\.histogram"),
        ({"histogram": "1"}, TypeError, r"ScoreSplit\.histogram"),
    ],
)
def test_score_split_refuses_weights_that_are_not_positive(kwargs, error, match):
    with pytest.raises(error, match=match):
        ScoreSplit(**kwargs)


# --------------------------------------------------------------------------
# scree: split=
# --------------------------------------------------------------------------


def test_default_scree_split_is_the_default_release(table):
    assert plan_scree(600, 6, 3, eps=0.9, delta=1e-6, split=ScreeSplit()).cost == (
        plan_scree(600, 6, 3, eps=0.9, delta=1e-6).cost
    )
    a = dp_scree(table, 2, eps=0.9, delta=1e-6, random_state=1)
    b = dp_scree(table, 2, eps=0.9, delta=1e-6, random_state=1, split=ScreeSplit())
    np.testing.assert_array_equal(a.values, b.values)


@pytest.mark.parametrize("old", ["direction_share", "trace_share"])
def test_scree_has_no_old_share_arguments(table, old):
    with pytest.raises(TypeError, match=old):
        dp_scree(table, 2, eps=0.9, delta=1e-6, **{old: 0.3})
    with pytest.raises(TypeError, match=old):
        plan_scree(400, 4, 2, eps=0.9, delta=1e-6, **{old: 0.3})


@pytest.mark.parametrize("split", [{"directions": 0.3}, 0.3, ScoreSplit()])
def test_scree_split_of_another_type_is_refused(table, split):
    with pytest.raises(TypeError, match="split must be None or a ScreeSplit"):
        dp_scree(table, 2, eps=0.9, delta=1e-6, split=split)


def test_scree_split_shares_must_leave_budget_for_the_scree():
    with pytest.raises(ValueError, match=r"split\.directions \+ split\.clip must be < 1"):
        plan_scree(600, 6, 3, eps=0.9, delta=1e-6, split=ScreeSplit(0.7, 0.3))
    # with directions given the directions share is unused
    plan = plan_scree(
        600, 6, 3, eps=0.9, delta=1e-6, split=ScreeSplit(0.7, 0.3), directions_given=True
    )
    assert plan.cost.eps == 0.9


# --------------------------------------------------------------------------
# score: split=ScoreSplit
# --------------------------------------------------------------------------


def test_score_split_weights_are_normalised_over_the_parts_used():
    # public bounds: no frame part, so its weight is left out; histogram keeps 0.55
    plan = plan_score(5000, 6, eps=1.0, delta=1e-6, bounds_given=True, split=ScoreSplit(1, 5))
    assert dict(plan.shares) == pytest.approx({"directions": 1 / 1.55, "histogram": 0.55 / 1.55})
    plan = plan_score(
        5000, 6, eps=1.0, delta=1e-6, bounds_given=True, split=ScoreSplit(1, None, None, 3)
    )
    assert dict(plan.shares) == pytest.approx({"directions": 0.25, "histogram": 0.75})


@pytest.mark.parametrize("split", [0.5, ("directions", 1.0), {"directions": 1.0}, ScreeSplit()])
def test_score_split_of_another_type_is_refused(table, split):
    with pytest.raises(TypeError, match="split must be None or a ScoreSplit"):
        dp_score(table, eps=1.0, delta=1e-6, split=split)
    with pytest.raises(TypeError, match="split must be None or a ScoreSplit"):
        plan_score(400, 4, eps=1.0, delta=1e-6, split=split)
