"""Typed budget splits: ScreeSplit and ScoreSplit, and the deprecated spellings."""

from __future__ import annotations

import dataclasses
import math
import pickle

import numpy as np
import pytest

import dppca
from dppca import ScoreSplit, ScreeSplit
from dppca import score as score_mod
from dppca import scree as scree_mod
from dppca.score.plan import _SPLIT_KEYS


@pytest.fixture
def table(rng: np.random.Generator) -> np.ndarray:
    return rng.normal(size=(400, 4)) * [3.0, 2.0, 1.0, 0.5]


# --------------------------------------------------------------------------
# the objects
# --------------------------------------------------------------------------


def test_splits_are_public_frozen_and_pickle_under_dppca():
    assert dppca.ScreeSplit is scree_mod.ScreeSplit is ScreeSplit
    assert dppca.ScoreSplit is score_mod.ScoreSplit is ScoreSplit
    assert {"ScreeSplit", "ScoreSplit"} <= set(dppca.__all__)
    for split in (ScreeSplit(0.3, 0.1), ScoreSplit(frame=2.0)):
        assert type(split).__module__ == "dppca"
        assert pickle.loads(pickle.dumps(split)) == split
        with pytest.raises(dataclasses.FrozenInstanceError):
            split.directions = 0.5  # type: ignore[misc]


def test_scree_split_defaults_are_todays_defaults():
    assert ScreeSplit() == ScreeSplit(directions=0.35, clip=None)


def test_score_split_fields_are_the_score_parts():
    assert tuple(f.name for f in dataclasses.fields(ScoreSplit)) == _SPLIT_KEYS
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


def test_score_split_from_a_mapping_names_the_allowed_keys():
    assert ScoreSplit.from_mapping({"frame": 1}) == ScoreSplit(frame=1.0)
    with pytest.raises(ValueError, match="split keys must be among"):
        ScoreSplit.from_mapping({"scree": 1.0})
