"""Tests of dp_loading, LoadingResult and the noise-sensitivity view."""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from dppca import (
    Budget,
    DirectionsResult,
    LoadingResult,
    dp_loading,
    dp_pc_dir,
    pc_dir,
    plan_loading,
)
from dppca.datasets import load_wine
from dppca.privacy.mechanisms import reperturbed_matrices, symmetric_gaussian_noise
from dppca.releases.loading.sensitivity import NoiseSensitivity, match_signs


def test_coordinates_equal_the_direction_entries(small_frame):
    res = dp_loading(small_frame, eps=0.5, delta=1e-5, random_state=3)
    V = res.directions.directions
    for a, b in [(1, 2), (2, 1), (1, 5), (4, 3)]:
        frame = res.coordinates(a, b)
        assert list(frame.columns) == [f"PC{a}", f"PC{b}"]
        assert list(frame.index) == list("abcde")
        np.testing.assert_array_equal(frame.to_numpy(), V[:, [a - 1, b - 1]])
    pd.testing.assert_frame_equal(res.to_frame(), res.coordinates(1, 2))


@pytest.mark.parametrize(
    "options",
    [
        {},
        {"calibration": "classic"},
        {"sensitivity": "seed"},
        {"design": "balanced"},
        {"design": "balanced", "m": 7},
        {"k": 3, "components": (3, 2)},
    ],
)
def test_plan_loading_is_the_cost_the_release_records(small_frame, options):
    n, p = small_frame.shape
    plan = plan_loading(n, p, eps=0.5, delta=1e-5, **options)
    res = dp_loading(small_frame, eps=0.5, delta=1e-5, random_state=3, **options)
    assert plan.cost == res.cost == res.directions.cost  # every part, mechanism and noise
    assert plan.sigma == res.directions.sigma and plan.k == res.k
    assert plan.forecast.quantities == res.directions.forecast.quantities
    assert plan.components == res.components


def test_plan_loading_refuses_what_the_release_refuses():
    with pytest.raises(ValueError, match="components"):
        plan_loading(100, 5, eps=0.5, delta=1e-5, k=2, components=(1, 3))
    with pytest.raises(ValueError, match="k must"):
        plan_loading(100, 5, eps=0.5, delta=1e-5, k=6)
    with pytest.raises(ValueError, match="design"):
        plan_loading(100, 5, eps=0.5, delta=1e-5, design="all")


@pytest.mark.parametrize("compare", [False, True])
def test_the_data_are_checked_once_and_an_array_is_not_copied(
    small_data, small_frame, check_data_calls, compare
):
    res = dp_loading(small_frame, eps=0.5, delta=1e-5, random_state=11, compare=compare)
    assert len(check_data_calls) == 1
    again = dp_loading(small_data, eps=0.5, delta=1e-5, random_state=11, compare=compare)
    assert len(check_data_calls) == 2 and np.shares_memory(check_data_calls[1][1], small_data)
    np.testing.assert_array_equal(res.directions.noisy_matrix, again.directions.noisy_matrix)
    assert (res.nonprivate is not None) is compare


def test_same_seed_gives_the_dp_pc_dir_release(small_frame):
    res = dp_loading(small_frame, eps=0.5, delta=1e-5, random_state=11)
    ref = dp_pc_dir(small_frame, eps=0.5, delta=1e-5, random_state=11)
    np.testing.assert_array_equal(res.directions.directions, ref.directions)
    np.testing.assert_array_equal(res.directions.noisy_matrix, ref.noisy_matrix)
    assert (res.eps, res.delta) == (0.5, 1e-5) and res.cost == ref.cost
    assert res.private and not res.has_comparison
    assert repr(res) == "LoadingResult(p=5, k=5, components=(1, 2), n=200, eps=0.5, delta=1e-05)"


def test_private_coordinates_use_no_sample_mean(small_data):
    # The release depends on the data only through the (translation-invariant)
    # Kendall matrix: shifting every row changes nothing but rounding.
    a = dp_loading(small_data, eps=0.5, delta=1e-5, random_state=4)
    b = dp_loading(small_data + 1e3, eps=0.5, delta=1e-5, random_state=4)
    np.testing.assert_allclose(a.coordinates(1, 2), b.coordinates(1, 2), atol=1e-9)


def test_compare_values_are_covariance_eigenvectors_up_to_sign(small_data):
    res = dp_loading(small_data, eps=0.5, delta=1e-5, random_state=0, compare=True)
    values, vectors = np.linalg.eigh(np.cov(small_data, rowvar=False))
    vectors = vectors[:, np.argsort(values)[::-1]]
    frame = res.coordinates(1, 3)
    for col, pc in (("nonprivate_PC1", 0), ("nonprivate_PC3", 2)):
        got = frame[col].to_numpy()
        sign = np.sign(got @ vectors[:, pc])
        np.testing.assert_allclose(got, sign * vectors[:, pc], atol=1e-10)
    # The private columns are untouched by the display sign matching.
    np.testing.assert_array_equal(frame["PC1"].to_numpy(), res.directions.directions[:, 0])
    assert frame.attrs["nonprivate_columns"] == ["nonprivate_PC1", "nonprivate_PC3"]
    assert not res.private and res.has_comparison and res.nonprivate is not None
    assert not res.nonprivate.private and "non-private" in repr(res)


@pytest.mark.parametrize("reference", ["private", "nonprivate"])
def test_display_signs_point_the_same_way(small_data, reference):
    # Seed 125 needs flips for PC1 and PC2 (asserted below), so matching is exercised.
    res = dp_loading(
        small_data, eps=0.5, delta=1e-5, random_state=125, compare=True, sign_reference=reference
    )
    main, other = res.display_vectors()
    raw = np.einsum("jl,jl->l", res.directions.directions, res.nonprivate.directions)
    assert np.all(raw[:2] < 0)
    assert np.all(np.einsum("jl,jl->l", main, other) >= 0)
    kept = main if reference == "private" else other
    source = res.directions if reference == "private" else res.nonprivate
    np.testing.assert_array_equal(kept, source.directions)
    # Flipping only changes signs: the absolute values are those of the originals.
    np.testing.assert_array_equal(np.abs(main), np.abs(res.directions.directions))
    np.testing.assert_array_equal(np.abs(other), np.abs(res.nonprivate.directions))


def test_match_signs_breaks_ties_with_plus_one():
    v = np.array([[1.0, 0.0], [0.0, 1.0]])
    ref = np.array([[-1.0, 1.0], [0.0, 0.0]])
    np.testing.assert_array_equal(match_signs(v, ref), [-1.0, 1.0])


def test_heatmap_table_selects_variables_and_pcs(small_frame):
    res = dp_loading(small_frame, eps=0.5, delta=1e-5, random_state=1, compare=True)
    table = res.heatmap_table(["c", "a"], [3, 1])
    assert list(table.index) == ["c", "a"] and list(table.columns) == ["PC3", "PC1"]
    V = res.directions.directions
    np.testing.assert_array_equal(table.to_numpy(), V[np.ix_([2, 0], [2, 0])])
    assert res.heatmap_table().shape == (5, 5)
    other = res.heatmap_table(components=[2], source="nonprivate")
    assert list(other.columns) == ["nonprivate_PC2"]
    with pytest.raises(ValueError, match="unknown"):
        res.heatmap_table(["zzz"])
    with pytest.raises(ValueError, match="repeat"):
        res.heatmap_table(components=[1, 1])
    with pytest.raises(ValueError, match=r"\[1, 5\]"):
        res.heatmap_table(components=[0])


def test_reuse_directions_spends_no_budget(small_frame):
    budget = Budget(eps=0.5, delta=1e-5)
    release = dp_pc_dir(small_frame, eps=0.5, delta=1e-5, random_state=0, budget=budget)
    first = dp_loading(None, directions=release, components=(1, 3))
    second = dp_loading(small_frame, directions=release, eps=0.5, delta=1e-5, compare=True)
    assert len(budget.ledger) == 1
    np.testing.assert_array_equal(first.directions.directions, release.directions)
    np.testing.assert_array_equal(second.coordinates(1, 3)["PC3"], release.directions[:, 2])
    assert first.components == (1, 3) and first.cost is release.cost
    with pytest.raises(ValueError, match="differs"):
        dp_loading(small_frame, directions=release, eps=0.25)
    with pytest.raises(ValueError, match="private release"):
        dp_loading(small_frame, directions=pc_dir(small_frame))
    with pytest.raises(ValueError, match="does not match"):
        dp_loading(
            small_frame[["a", "b", "c", "d", "e"]].rename(columns={"a": "z"}), directions=release
        )
    with pytest.raises(TypeError, match="X is required"):
        dp_loading(None, directions=release, compare=True)


def test_reuse_with_smaller_k(small_frame):
    release = dp_pc_dir(small_frame, eps=0.5, delta=1e-5, random_state=0)
    res = dp_loading(None, directions=release, k=2)
    assert res.k == 2
    np.testing.assert_array_equal(res.directions.directions, release.directions[:, :2])
    with pytest.raises(ValueError, match=r"\[1, 2\]"):
        dp_loading(None, directions=release, k=2, components=(1, 3))


def test_budget_is_charged_once(small_frame):
    budget = Budget(eps=1.0, delta=1e-5)
    dp_loading(small_frame, eps=0.5, delta=5e-6, random_state=0, budget=budget, compare=True)
    assert budget.spent == pytest.approx((0.5, 5e-6))


@pytest.mark.parametrize(
    "components, exc, word",
    [
        ((1, 1), ValueError, "different"),
        ((0, 2), ValueError, r"\[1, 5\]"),
        ((1, 6), ValueError, r"\[1, 5\]"),
        ((1.0, 2), TypeError, "integers"),
        ((True, 2), TypeError, "integers"),
        ((1, 2, 3), ValueError, "exactly two"),
        ("12", TypeError, "pair"),
    ],
)
def test_invalid_components_raise_before_any_noise(small_frame, components, exc, word):
    rng = np.random.default_rng(0)
    state = rng.bit_generator.state
    with pytest.raises(exc, match=word):
        dp_loading(small_frame, eps=0.5, delta=1e-5, components=components, random_state=rng)
    assert rng.bit_generator.state == state  # nothing was drawn


def test_components_beyond_k_and_coordinate_errors(small_frame):
    with pytest.raises(ValueError, match=r"\[1, 2\]"):
        dp_loading(small_frame, eps=0.5, delta=1e-5, k=2, components=(1, 3))
    res = dp_loading(small_frame, eps=0.5, delta=1e-5, random_state=0)
    with pytest.raises(ValueError, match="different"):
        res.coordinates(2, 2)
    with pytest.raises(TypeError, match="integers"):
        res.coordinates(1.5, 2)


def test_other_argument_errors(small_frame):
    with pytest.raises(TypeError, match="eps and delta"):
        dp_loading(small_frame, eps=0.5)
    with pytest.raises(TypeError, match="compare"):
        dp_loading(small_frame, eps=0.5, delta=1e-5, compare="yes")
    with pytest.raises(ValueError, match="sign_reference"):
        dp_loading(small_frame, eps=0.5, delta=1e-5, sign_reference="data")
    with pytest.raises(ValueError, match="eps"):
        dp_loading(small_frame, eps=-1.0, delta=1e-5)


def test_result_is_frozen_read_only_and_stores_no_seed(small_frame):
    res = dp_loading(small_frame, eps=0.5, delta=1e-5, random_state=0, compare=True)
    with pytest.raises(dataclasses.FrozenInstanceError):
        res.components = (2, 3)
    with pytest.raises(ValueError):
        res.directions.directions[0, 0] = 0.0
    assert not any("seed" in f.name or "random" in f.name for f in dataclasses.fields(res))


def test_input_is_not_modified(small_frame):
    before = small_frame.copy()
    dp_loading(small_frame, eps=0.5, delta=1e-5, random_state=0, compare=True)
    pd.testing.assert_frame_equal(small_frame, before)


def test_from_directions_wraps_without_computation(small_data):
    release = dp_pc_dir(small_data, 1, eps=0.5, delta=1e-5, random_state=0)
    single = LoadingResult.from_directions(release)
    assert single.components is None and single.heatmap_table().shape == (5, 1)
    with pytest.raises(ValueError, match="two directions"):
        single.coordinates()
    plain = LoadingResult.from_directions(pc_dir(small_data, 2))
    assert list(plain.coordinates().columns) == ["nonprivate_PC1", "nonprivate_PC2"]
    assert not plain.private and plain.cost is None
    with pytest.raises(TypeError, match="DirectionsResult"):
        LoadingResult.from_directions(np.eye(3))


def test_wine_loading_with_public_scales():
    # Order-of-magnitude unit scales, fixed before seeing the data: public.
    scales = np.array([10, 1, 1, 10, 100, 1, 1, 0.1, 1, 1, 1, 1, 1000.0])
    X = load_wine() / scales
    res = dp_loading(X, eps=0.5, delta=1e-5, random_state=0, compare=True)
    assert res.coordinates().shape == (13, 4)
    assert res.variables[-1] == "proline"


# -- noise sensitivity -----------------------------------------------------------------


def _fixed_release(matrix: np.ndarray, sigma: float) -> LoadingResult:
    """A private-looking result around a known matrix (for testing the re-perturbation)."""
    values, vectors = np.linalg.eigh(matrix)
    order = np.argsort(values)[::-1]
    from dppca.privacy.cost import PrivacyCost

    res = DirectionsResult(
        directions=vectors[:, order],
        eigenvalues=values[order],
        noisy_matrix=matrix.copy(),
        sigma=sigma,
        n=100,
        variables=tuple(f"V{j + 1}" for j in range(matrix.shape[0])),
        cost=PrivacyCost(0.5, 1e-5, "gaussian (classic)", "test"),
        calibration="classic",
    )
    return LoadingResult.from_directions(res)


def test_noise_sensitivity_matches_first_order_perturbation_theory():
    # Eigenvalues 3, 2, 1, 0.5 on the axes. To first order, entry 2 of PC1 moves by
    # E_21 / (3 - 2) with E_21 ~ N(0, sigma^2 / 2); the second-order error is
    # O(sigma^2) = 1e-6 relative, far below the chi-square interval used below.
    sigma, draws = 1e-3, 400
    res = _fixed_release(np.diag([3.0, 2.0, 1.0, 0.5]), sigma)
    sens = res.noise_sensitivity(draws, random_state=5)
    assert isinstance(sens, NoiseSensitivity) and sens.samples.shape == (draws, 4, 4)
    x = sens.samples[:, 1, 0]
    target = sigma / np.sqrt(2.0)
    # (B - 1) s^2 / target^2 ~ chi2(B - 1): accept the central 1 - 1e-6 interval.
    lo, hi = stats.chi2.ppf([5e-7, 1 - 5e-7], df=draws - 1) / (draws - 1)
    ratio = x.var(ddof=1) / target**2
    assert lo <= ratio <= hi
    # Entry 4 of PC1 moves by E_41 / (3 - 0.5): a sd 2.5 times smaller.
    ratio4 = sens.samples[:, 3, 0].var(ddof=1) / (target / 2.5) ** 2
    assert lo <= ratio4 <= hi
    # Signs are turned towards the released vector.
    assert np.all(sens.samples[:, 0, 0] > 0)


def test_noise_sensitivity_is_repeatable_and_draws_through_mechanisms():
    res = _fixed_release(np.diag([3.0, 2.0, 1.0]), 0.05)
    a = res.noise_sensitivity(20, random_state=7)
    b = res.noise_sensitivity(20, random_state=np.random.default_rng(7))
    np.testing.assert_array_equal(a.samples, b.samples)
    # The draws are exactly the mechanism's symmetric noise, in order.
    rng = np.random.default_rng(7)
    stack = reperturbed_matrices(np.diag([3.0, 2.0, 1.0]), 0.05, 20, rng)
    rng2 = np.random.default_rng(7)
    first = np.diag([3.0, 2.0, 1.0]) + symmetric_gaussian_noise(3, 0.05, rng2)
    np.testing.assert_array_equal(stack[0], first)
    frame = a.to_frame(1, 2)
    assert list(frame.columns) == ["sd_PC1", "sd_PC2"] and frame.shape == (3, 2)
    assert repr(a).startswith("NoiseSensitivity(draws=20, p=3, k=3")
    with pytest.raises(ValueError):
        a.samples[0, 0, 0] = 1.0


def test_noise_sensitivity_argument_errors(small_data):
    res = dp_loading(small_data, eps=0.5, delta=1e-5, random_state=0)
    with pytest.raises(ValueError, match="draws"):
        res.noise_sensitivity(0)
    with pytest.raises(TypeError, match="draws"):
        res.noise_sensitivity(2.5)
    with pytest.raises(ValueError, match="at most"):
        res.noise_sensitivity(10**6)
    with pytest.raises(ValueError, match="not private"):
        LoadingResult.from_directions(pc_dir(small_data)).noise_sensitivity(5)


def test_balanced_design_is_passed_to_the_release(small_frame):
    res = dp_loading(small_frame, eps=0.5, delta=1e-5, design="balanced", m=3, random_state=0)
    same = dp_pc_dir(small_frame, eps=0.5, delta=1e-5, design="balanced", m=3, random_state=0)
    np.testing.assert_array_equal(res.directions.noisy_matrix, same.noisy_matrix)
    assert "balanced" in res.cost.released


def test_nonprivate_sign_reference_marks_the_dp_columns_nonprivate(small_data):
    # Flipping the DP vectors by the non-private signs publishes one bit per PC.
    res = dp_loading(
        small_data,
        eps=0.5,
        delta=1e-5,
        random_state=125,
        compare=True,
        sign_reference="nonprivate",
    )
    assert not res.main_private and not res.private
    frame = res.to_frame()
    assert list(frame.columns) == [
        "nonprivate_signs_PC1",
        "nonprivate_signs_PC2",
        "nonprivate_PC1",
        "nonprivate_PC2",
    ]
    assert frame.attrs["nonprivate_columns"] == list(frame.columns)
    assert list(res.heatmap_table(components=[1]).columns) == ["nonprivate_signs_PC1"]
    # the private reference keeps the DP columns private
    kept = dp_loading(small_data, eps=0.5, delta=1e-5, random_state=125, compare=True)
    assert kept.main_private and list(kept.to_frame().columns)[:2] == ["PC1", "PC2"]
    assert kept.to_frame().attrs["nonprivate_columns"] == ["nonprivate_PC1", "nonprivate_PC2"]
