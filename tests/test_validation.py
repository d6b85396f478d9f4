"""Tests of the shared input checks."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from dppca.core.data_checks import check_data
from dppca.core.scalar_checks import check_bool, check_open_unit, check_positive_float, check_real
from dppca.core.score_checks import check_bins, check_frame, check_methods, check_split
from dppca.core.validation import (
    check_compare,
    check_components,
    check_delta,
    check_eps,
    check_random_state,
)


def test_check_data_returns_owned_float_copy_and_labels():
    X = np.arange(6).reshape(3, 2)
    data, variables = check_data(X)
    assert data.dtype == np.float64 and variables == ("V1", "V2")
    data[0, 0] = 99
    assert X[0, 0] == 0


def test_check_data_keeps_dataframe_labels_and_integer_columns():
    frame = pd.DataFrame({"age": [30, 40, 50], "income": [1.0, 2.0, 3.5]})
    data, variables = check_data(frame)
    assert variables == ("age", "income")
    np.testing.assert_array_equal(data[:, 0], [30, 40, 50])


@pytest.mark.parametrize(
    "frame, word",
    [
        (pd.DataFrame({"b": ["x", "y"]}), "non-numeric"),
        (pd.DataFrame({"a": [1.0, None]}), "NaN"),
        (pd.Series([1.0, 2.0]), "Series"),
    ],
)
def test_check_data_rejects_bad_frames(frame, word):
    with pytest.raises((TypeError, ValueError), match=word):
        check_data(frame)


def test_check_data_error_does_not_quote_values():
    X = np.array([[123456.789, 1.0], [np.nan, 2.0]])
    with pytest.raises(ValueError) as info:
        check_data(X)
    assert "123456" not in str(info.value)


def test_check_data_row_and_column_minimums():
    with pytest.raises(ValueError, match="at least 2 rows"):
        check_data(np.ones((1, 3)))
    with pytest.raises(ValueError, match="column"):
        check_data(np.ones((3, 0)))
    with pytest.raises(ValueError, match="at least 3 column"):
        check_data(np.ones((3, 2)), min_cols=3)


@pytest.mark.parametrize(
    "components, exc",
    [
        ((1, 1), ValueError),
        ((0, 2), ValueError),
        ((1, 6), ValueError),
        ((1.0, 2), TypeError),
        ("12", TypeError),
        ((1, 2, 3), ValueError),
        (1, TypeError),
    ],
)
def test_check_components_rejects(components, exc):
    with pytest.raises(exc, match="components"):
        check_components(components, 5)


def test_check_components_accepts_pairs():
    assert check_components((2, 1), 5) == (2, 1)
    assert check_components(np.array([1, 3]), 5) == (1, 3)


def test_check_random_state_kinds():
    gen = np.random.default_rng(0)
    assert check_random_state(gen) is gen
    assert isinstance(check_random_state(None), np.random.Generator)
    a, b = check_random_state(5), check_random_state(5)
    assert a.random() == b.random()
    with pytest.raises(TypeError):
        check_random_state(np.random.RandomState(0))


@pytest.mark.parametrize(
    "kwargs, value, text",
    [
        ({}, float("nan"), "x must be finite; got nan."),
        ({"low": 0.0, "low_open": True}, 0.0, "x must be finite and > 0; got 0.0."),
        ({"low": 0.0}, -1.0, "x must be finite and >= 0; got -1.0."),
        ({"high": 1.0, "high_open": True}, 1.0, "x must be finite and < 1; got 1.0."),
        (
            {"low": 0.0, "high": 1.0, "low_open": True, "high_open": True},
            1.0,
            "x must be in the open interval (0, 1); got 1.0.",
        ),
        (
            {"low": 0.0, "high": 0.5, "high_open": True},
            0.5,
            "x must be finite and in [0, 0.5); got 0.5.",
        ),
    ],
)
def test_check_real_states_the_interval_in_words(kwargs, value, text):
    with pytest.raises(ValueError) as info:
        check_real(value, "x", **kwargs)
    assert str(info.value) == text


def test_real_checkers_share_one_rule_and_one_wording():
    # The named checkers are check_real with fixed intervals: same values, same messages.
    for check, kwargs in [
        (check_positive_float, {"low": 0.0, "low_open": True}),
        (check_eps, {"low": 0.0, "low_open": True}),
        (check_open_unit, {"low": 0.0, "high": 1.0, "low_open": True, "high_open": True}),
        (check_delta, {"low": 0.0, "high": 1.0, "low_open": True, "high_open": True}),
    ]:
        for value in (0.5, np.float32(0.25), 3, -1.0, 1.0, 0.0, float("inf"), True, "a"):
            try:
                expected = check_real(value, "v", **kwargs)
            except (TypeError, ValueError) as exc:
                with pytest.raises(type(exc)) as info:
                    check(value, "v")
                assert str(info.value) == str(exc)
            else:
                assert check(value, "v") == expected
    with pytest.raises(ValueError) as info:
        check_eps(-1.0)
    assert str(info.value) == "eps must be finite and > 0; got -1.0."


@pytest.mark.parametrize("value", [1, 0, "yes", None, np.array([True])])
def test_check_bool_refuses_non_booleans(value):
    with pytest.raises(TypeError, match="flag must be True or False"):
        check_bool(value, "flag")


def test_check_bool_accepts_python_and_numpy_booleans():
    assert check_bool(True, "flag") is True and check_bool(np.bool_(False), "flag") is False


@pytest.mark.parametrize(
    "odd, analysed",
    [
        (np.array([1 + 2j, 3j, 1.0, 2.0]), False),  # complex: no order, left out
        (np.array([True, False, True, True]), True),  # booleans: analysed as 0/1
    ],
    ids=["complex", "bool"],
)
def test_one_rule_for_numeric_columns_in_the_api_the_cli_and_the_app(odd, analysed):
    from dppca import DataWarning
    from dppca.app.data import numeric_columns
    from dppca.cli._common import numeric_part

    frame = pd.DataFrame({"a": [1.0, 2.0, 4.0, 3.0], "b": [0, 1, 3, 2], "odd": odd})
    expected = ["a", "b", "odd"] if analysed else ["a", "b"]
    if analysed:
        data, variables = check_data(frame)
        np.testing.assert_array_equal(data[:, 2], odd.astype(float))
    else:
        with pytest.warns(DataWarning, match="left out non-numeric column\\(s\\) 'odd'"):
            data, variables = check_data(frame)
    assert list(variables) == expected
    assert numeric_columns(frame) == expected
    assert list(numeric_part(frame).columns) == expected


def test_the_score_option_checks_keep_their_messages():
    assert check_bins(None, 5000) == (8, 8) == check_bins("J", 5000)
    assert check_bins((3, np.int64(4)), 10) == (3, 4)
    with pytest.raises(TypeError, match="bins must be None, 'W', 'J'"):
        check_bins(2.5, 10)
    assert check_methods(["sparse", "add", "sparse"], ("add", "sparse")) == ("sparse", "add")
    with pytest.raises(ValueError, match="method must be among 'add', 'sparse'; got 'x'"):
        check_methods(["add", "x"], ("add", "sparse"))
    with pytest.raises(TypeError, match="method must be 'add', 'sparse' or a list of them"):
        check_methods([], ("add", "sparse"))
    used, defaults = ("a", "b"), {"a": 1.0, "b": 3.0}
    assert check_split({"a": 3}, used, defaults, keys=("a", "b", "c")) == {"a": 0.5, "b": 0.5}
    with pytest.raises(ValueError, match="split keys must be among"):
        check_split({"d": 1}, used, defaults, keys=("a", "b", "c"))
    assert check_frame([(-1, 1), (np.float32(0), 2)]) == ((-1.0, 1.0), (0.0, 2.0))
    with pytest.raises(ValueError, match="frame limits must be finite with min < max"):
        check_frame(((1, 1), (0, 2)))


@pytest.mark.parametrize("value", [True, np.False_])
def test_check_compare_takes_booleans_or_none(value):
    assert check_compare(value, True, "it") is bool(value)
    assert check_compare(None, False, "it") is False
    with pytest.raises(ValueError, match="compare=True needs it"):
        check_compare(True, False, "it")
    with pytest.raises(TypeError, match="compare must be True or False"):
        check_compare(1, True, "it")


@pytest.mark.parametrize("n", [50, 5000])
def test_large_delta_message_suggests_the_real_default(n):
    from dppca.core.defaults import default_delta
    from dppca.core.validation import check_delta_for_n

    with pytest.raises(ValueError, match="allow_large_delta=True") as info:
        check_delta_for_n(0.5, n)
    suggested = float(str(info.value).split("for example ")[1].split(",")[0])
    assert suggested == default_delta(n) < 1.0 / n
    assert "min(1e-6, 1/(10 n^1.5))" in str(info.value) and "1.1" not in str(info.value)
    assert check_delta_for_n(default_delta(n), n) == default_delta(n)
