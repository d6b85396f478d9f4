"""Tests of the post-release check: do the released PCs stand out from the noise?"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import dppca.releases.directions.plan as release_module
from dppca import Budget, dp_loading, dp_pc_dir, dp_score
from dppca.cli import main
from dppca.core.exceptions import AccuracyWarning, InaccurateReleaseError
from dppca.datasets import load_gau
from dppca.plotting._caption import RESOLVABILITY_GID
from dppca.privacy.mechanisms import symmetric_gaussian_noise
from dppca.releases.resolvability import (
    QUANTILE,
    TAU_METHOD,
    TAU_QUANTILE,
    THRESHOLD,
    Resolvability,
    assess_directions,
    dominant_column,
    resolvability_rng,
    shrunk_eigenvalues,
)


def tiny_gap_table(n: int = 600, seed: int = 3) -> pd.DataFrame:
    """PC1 stands out; PC2 lies in a flat bulk of nine equal variances (gaps of sampling size)."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, 10)) * np.sqrt([9.0] + [1.0] * 9)
    return pd.DataFrame(x, columns=list("abcdefghij"))


def _sin(a, b):
    s = np.linalg.svd(a.T @ b, compute_uv=False)
    return float(np.sqrt(max(0.0, 1.0 - s.min() ** 2)))


def _simulate(lams, sigma, m, seed):
    """Releases of the mechanism on diag(lams): (true top-2 sinTheta, flagged) per release."""
    rng = np.random.default_rng(seed)
    p = len(lams)
    truth = np.eye(p)[:, :2]
    out = []
    for _ in range(m):
        g = rng.standard_normal((p, p))
        noisy = np.diag(lams) + sigma * 0.5 * (g + g.T)
        top = np.linalg.eigh(noisy)[1][:, ::-1][:, :2]
        check = assess_directions(noisy, sigma, 2, random_state=int(rng.integers(2**32)))
        out.append((_sin(top, truth), not check.ok))
    return np.array(out)


def test_warning_fires_on_a_tiny_eigengap():
    with pytest.warns(AccuracyWarning, match=r"PC2 is not separated from the privacy noise"):
        res = dp_pc_dir(tiny_gap_table(), 2, eps=1.0, delta=1e-6, random_state=0)
    assert isinstance(res.resolvability, Resolvability)
    assert not res.resolvability.ok and 2 in res.resolvability.unresolved
    assert res.resolvability.method == "parametric bootstrap"


def test_no_warning_on_gau_at_eps_half():
    with warnings.catch_warnings():
        warnings.simplefilter("error", AccuracyWarning)
        for seed in range(3):
            res = dp_pc_dir(load_gau(), 2, eps=0.5, delta=1e-6, random_state=seed)
            assert res.resolvability.ok and res.resolvability.unresolved == ()
            assert res.resolvability.subspace_sin <= THRESHOLD


def test_all_directions_judge_the_plane_of_pc1_and_pc2():
    with warnings.catch_warnings():
        warnings.simplefilter("error", AccuracyWarning)
        res = dp_pc_dir(load_gau(), eps=0.5, delta=1e-6, random_state=0)
    check = res.resolvability
    assert check.subspace_dim == 2 and check.k == 20
    assert 20 in check.unresolved  # the flat tail of gau is noise, and says so per PC
    frame = check.to_frame()
    assert list(frame.index[:2]) == ["PC1", "PC2"] and frame.index[-1] == "top-2 subspace"


def test_check_reads_only_the_released_matrix(monkeypatch):
    """After the noise is drawn the data and the pre-noise matrix are destroyed."""
    data = np.array(tiny_gap_table(), dtype=np.float64)
    real_noise = release_module.symmetric_gaussian_noise

    def noise_then_poison(p, sigma, rng, *, value=None):
        noisy = real_noise(p, sigma, rng, value=value)
        data.fill(np.nan)  # any later read of the data gives NaN, which the check refuses
        if value is not None:
            np.asarray(value).fill(np.nan)

        def refuse(*args, **kwargs):
            raise AssertionError("the check must not recompute the Kendall matrix")

        monkeypatch.setattr(release_module, "kendall_matrix", refuse)
        return noisy

    monkeypatch.setattr(release_module, "symmetric_gaussian_noise", noise_then_poison)
    res = dp_pc_dir(data, 2, eps=1.0, delta=1e-6, random_state=5, accuracy="ignore")
    assert np.isnan(data).all()
    again = assess_directions(res.noisy_matrix, res.sigma, 2, random_state=resolvability_rng(5))
    np.testing.assert_array_equal(res.resolvability.pc_sin, again.pc_sin)
    assert res.resolvability.subspace_sin == again.subspace_sin


def test_check_draws_from_its_own_stream():
    x = tiny_gap_table()
    gen = np.random.default_rng(11)
    dp_pc_dir(x, 2, eps=1.0, delta=1e-6, random_state=gen, accuracy="ignore")
    after = gen.bit_generator.state
    # The same noise alone advances a fresh generator to the same state: the
    # check never drew from the release's stream.
    ref = np.random.default_rng(11)
    release_module.symmetric_gaussian_noise(10, 0.01, ref)
    assert after == ref.bit_generator.state
    a = dp_pc_dir(x, 2, eps=1.0, delta=1e-6, random_state=4, accuracy="ignore")
    b = dp_pc_dir(x, 2, eps=1.0, delta=1e-6, random_state=4, accuracy="ignore")
    np.testing.assert_array_equal(a.resolvability.pc_sin, b.resolvability.pc_sin)
    # the check's stream is none of the children other post-processing spawns
    child = np.random.default_rng(np.random.SeedSequence(4).spawn(1)[0])
    assert resolvability_rng(4).random() != child.random()
    assert resolvability_rng(4).random() != np.random.default_rng(4).random()


def test_error_raises_after_the_spend_with_the_result():
    budget = Budget(2.0, 1e-5)
    with pytest.raises(InaccurateReleaseError, match="cost recorded") as info:
        dp_pc_dir(
            tiny_gap_table(),
            2,
            eps=1.0,
            delta=1e-6,
            random_state=0,
            budget=budget,
            accuracy="error",
        )
    assert info.value.result is not None and info.value.result.resolvability is not None
    assert budget.spent[0] == pytest.approx(1.0)


def test_loading_and_score_warn_and_figures_say_so():
    import matplotlib.pyplot as plt

    x = tiny_gap_table()
    with pytest.warns(AccuracyWarning, match="not separated"):
        res = dp_loading(x, k=2, eps=1.0, delta=1e-6, random_state=0, components=(1, 2))
    ax = res.plot()
    lines = [a for a in ax.artists if a.get_gid() == RESOLVABILITY_GID]
    assert len(lines) == 1 and "PC2" in lines[0].txt.get_text()
    with pytest.warns(AccuracyWarning, match="score release: PC2"):
        dp_score(x, eps=2.0, delta=1e-6, random_state=0)
    _, quiet = plt.subplots()
    with warnings.catch_warnings():
        warnings.simplefilter("error", AccuracyWarning)
        good = dp_loading(load_gau(), k=2, eps=0.5, delta=1e-6, random_state=0)
    good.plot(ax=quiet)
    assert not [a for a in quiet.artists if a.get_gid() == RESOLVABILITY_GID]


def test_cli_prints_the_warning_on_stderr(tmp_path, capsys):
    path = tmp_path / "data.csv"
    tiny_gap_table().to_csv(path, index=False)
    argv = ["directions", str(path), "--eps", "1", "--delta", "1e-6", "-k", "2", "--seed", "0"]
    assert main(argv) == 0
    err = capsys.readouterr().err
    assert "dppca: accuracy warning:" in err and "PC2 is not separated" in err


def test_rule_is_quiet_when_gaps_dwarf_the_noise():
    # Gaps 0.3 and 0.25 against a noise norm sigma sqrt(2p) = 0.014: sinTheta
    # about 0.02, far below the threshold. Were 1 % of releases flagged, the
    # count in 200 would exceed the binomial 1 - 1e-6 quantile with chance 1e-6.
    out = _simulate([0.6, 0.3, 0.05, 0.05], 0.005, 200, seed=1)
    assert out[:, 1].sum() <= stats.binom.ppf(1 - 1e-6, 200, 0.01)


def test_rule_catches_most_wrong_releases_on_a_hard_spectrum():
    # Gap 0.08 between PC2 and PC3 against a noise norm of 0.085: a large share
    # of releases is wrong. Calibrated rate of wrong and silent releases here is
    # about 4 % (simulation); the bound is the binomial 1 - 1e-6 quantile at 5 %.
    # A rule that never warned would leave every wrong release silent.
    out = _simulate([0.45, 0.25, 0.17, 0.13], 0.03, 300, seed=2)
    wrong = out[:, 0] > 0.5
    assert wrong.sum() >= stats.binom.ppf(1e-6, 300, 0.08)
    silent = wrong & (out[:, 1] == 0)
    assert silent.sum() <= stats.binom.ppf(1 - 1e-6, 300, 0.05)
    assert silent.sum() < 0.5 * wrong.sum()


def test_bad_arguments_name_themselves():
    with pytest.raises(ValueError, match="noisy_matrix"):
        assess_directions(np.ones((2, 3)), 0.1, 1)
    with pytest.raises(ValueError, match="k must"):
        assess_directions(np.eye(3), 0.1, 4)
    with pytest.raises(ValueError, match="sigma"):
        assess_directions(np.eye(3), 0.0, 1)


def test_app_release_notes_list_what_the_check_found():
    pytest.importorskip("shiny")
    from dppca.app.plans import check_lines

    res = dp_loading(tiny_gap_table(), k=2, eps=1.0, delta=1e-6, random_state=0, accuracy="ignore")
    lines = check_lines(res)
    assert len(lines) == 1 and lines[0].startswith("PC2 is not separated")
    good = dp_loading(load_gau(), k=2, eps=0.5, delta=1e-6, random_state=0)
    assert check_lines(good) == ()


# --------------------------------------------------------------- a dominant column


def test_a_column_in_large_units_is_named_after_the_release():
    # Breast cancer's ten "mean" features in their own units: the area column
    # (SD 352, against 0.007 for the smallest) is nearly all of the Kendall
    # matrix's trace. The release says so, from the released matrix alone.
    datasets = pytest.importorskip("sklearn.datasets")
    bunch = datasets.load_breast_cancer()
    X = pd.DataFrame(bunch.data[:, :10], columns=bunch.feature_names[:10])
    with pytest.warns(AccuracyWarning, match="'mean area' carries 9[0-9]%"):
        dp_pc_dir(X, 2, eps=2.0, delta=1e-6, random_state=0)
    # standardised, or the tau matrix (the same in any units): no such note
    for kw in ({}, {"estimator": "tau"}):
        Y = X if kw else X / X.std()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            res = dp_pc_dir(Y, 2, eps=8.0, delta=1e-6, random_state=0, accuracy="warn", **kw)
        assert not any("carries" in str(w.message) for w in caught), kw
        assert dominant_column(res.noisy_matrix, 0.0, list(X)) is None


def test_the_dominance_rule_allows_for_the_noise():
    # diag 0.6 of trace 1 is named with no noise, not when two sds bring it under 0.5
    noisy = np.diag([0.6, 0.2, 0.2])
    assert dominant_column(noisy, 0.0, ["a", "b", "c"]).startswith("column 'a' carries 60%")
    assert dominant_column(noisy, 0.06, ["a", "b", "c"]) is None


def test_the_number_of_draws_falls_with_p():
    from dppca.releases.resolvability import MIN_REPLICATES, REPLICATES, replicates_for

    assert replicates_for(10) == replicates_for(256) == REPLICATES
    assert replicates_for(512) == 16
    assert replicates_for(1024) == replicates_for(5000) == MIN_REPLICATES
    # the draws' total work, replicates * p^2 per matrix-vector pass, no longer grows
    # as p^3 (p = 1000 made 16 full p x p decompositions before)
    assert replicates_for(1000) * 1000**2 <= 2 * REPLICATES * 256**2


def test_a_wide_release_skips_the_check_and_says_nothing(monkeypatch):
    from dppca.releases import resolvability

    monkeypatch.setattr(resolvability, "CHECK_MAX_P", 5)
    rng = np.random.default_rng(4)
    X = rng.standard_normal((40, 6))  # mostly noise at this n: the check would warn
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always", AccuracyWarning)
        res = dp_pc_dir(X, 2, eps=1.0, delta=1e-6, random_state=0, accuracy="warn")
    assert res.resolvability is None
    assert not [w for w in seen if "separated" in str(w.message)]  # the forecast may warn
    monkeypatch.setattr(resolvability, "CHECK_MAX_P", 6)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always", AccuracyWarning)
        res = dp_pc_dir(X, 2, eps=1.0, delta=1e-6, random_state=0, accuracy="warn")
    assert res.resolvability is not None
    assert [w for w in seen if "separated" in str(w.message)]


def test_the_check_reuses_the_released_vectors(rng):
    M = np.diag([0.5, 0.3, 0.1, 0.05, 0.05]) + 0.01 * np.ones((5, 5))
    vectors = np.linalg.eigh(M)[1][:, ::-1][:, :2] * np.array([1.0, -1.0])  # any signs
    a = assess_directions(M, 0.02, 2, random_state=1)
    b = assess_directions(M, 0.02, 2, random_state=1, vectors=vectors)
    np.testing.assert_allclose(a.pc_sin, b.pc_sin, atol=1e-12)
    assert a.subspace_sin == pytest.approx(b.subspace_sin, abs=1e-12)


def test_tau_rule_catches_the_releases_the_quartile_rule_missed():
    # A tau-like release (public diagonal, noise off it) whose PC2 and PC3 lie a
    # few noise sds apart: the eigenvalues repel, so the released matrix looks
    # better separated than the noise-free one. With these seeds the upper-
    # quartile rule lets wrong releases through (the test can fail); the
    # gap-corrected rule flags every release that is wrong.
    rng = np.random.default_rng(0)
    p, sigma = 6, 0.05
    basis = np.linalg.qr(rng.standard_normal((p, p)))[0]
    K = (basis * np.array([0.5, 0.22, 0.14, 0.07, 0.045, 0.025])) @ basis.T
    missed = {"kendall": 0, "tau": 0}
    wrong = 0
    for seed in range(40):
        A = symmetric_gaussian_noise(p, sigma, rng, value=K)
        A = 0.5 * (A + A.T)
        np.fill_diagonal(A, np.diag(K))
        top = np.linalg.eigh(A)[1][:, ::-1][:, :2]
        err = math.sqrt(
            max(0.0, 1 - np.linalg.svd(top.T @ basis[:, :2], compute_uv=False).min() ** 2)
        )
        wrong += err >= 0.5
        for rule in missed:
            check = assess_directions(
                A, sigma, p, random_state=seed, estimator=rule, replicates=32
            )
            missed[rule] += err >= 0.5 and check.ok
    assert wrong >= 5
    assert missed["kendall"] >= 1 and missed["tau"] == 0


def test_tau_release_uses_the_tau_rule():
    X = np.random.default_rng(1).standard_normal((200, 4)) @ np.diag([3.0, 2.0, 1.0, 0.5])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", AccuracyWarning)
        res = dp_pc_dir(X, 2, eps=1.0, delta=1e-6, estimator="tau", random_state=0)
        kendall = dp_pc_dir(X, 2, eps=1.0, delta=1e-6, random_state=0)
    assert res.resolvability.method == TAU_METHOD and res.resolvability.quantile == TAU_QUANTILE
    assert kendall.resolvability.method == "parametric bootstrap"
    assert kendall.resolvability.quantile == QUANTILE


def test_shrunk_eigenvalues_keep_order_and_the_bottom():
    values = np.array([0.6, 0.3, 0.29, 0.05, 0.0])
    out = shrunk_eigenvalues(values, 0.02)
    assert out[-1] == values[-1] and np.all(np.diff(out) <= 0)
    gaps = -np.diff(out)
    np.testing.assert_allclose(gaps**2, np.maximum((-np.diff(values)) ** 2 - 4 * 0.02**2, 0))


def test_the_warning_names_the_gap_correction_only_where_it_was_made():
    # one table whose top two eigenvalues are tied: both rules call the release unresolved
    rng = np.random.default_rng(4)
    basis = np.linalg.qr(rng.standard_normal((5, 5)))[0]
    K = basis @ np.diag([0.3, 0.3, 0.2, 0.15, 0.05]) @ basis.T
    said = {}
    for rule in ("kendall", "tau"):
        check = assess_directions(K, 0.05, 2, random_state=0, estimator=rule, replicates=32)
        assert not check.ok
        said[rule] = check.problem()
    assert "corrected for the noise" in said["tau"]
    assert "corrected for the noise" not in said["kendall"]
