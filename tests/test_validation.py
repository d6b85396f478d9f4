"""Tests of the shared input checks."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from dppca._validation import check_components, check_data, check_random_state


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
        (pd.DataFrame({"a": [1.0, 2.0], "b": ["x", "y"]}), "non-numeric"),
        (pd.DataFrame({"a": [1.0, 2.0], "b": [True, False]}), "non-numeric"),
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
    [((1, 1), ValueError), ((0, 2), ValueError), ((1, 6), ValueError), ((1.0, 2), TypeError),
     ("12", TypeError), ((1, 2, 3), ValueError), (1, TypeError)],
)  # fmt: skip
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
