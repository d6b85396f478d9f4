"""Tests of noise calibration and the noise generators."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import integrate, optimize, stats

import dppca.privacy.mechanisms as mech
from dppca import PrivacyWarning
from dppca.core.validation import HardenedGenerator, check_random_state, post_processing_rng
from dppca.privacy import hardened as _hardened
from dppca.privacy.mechanisms import (
    analytic_gaussian_sigma,
    classic_gaussian_sigma,
    gaussian_sigma,
    kendall_sigma,
    laplace_noise,
    symmetric_gaussian_noise,
)
from dppca.privacy.noise_time import noise_seconds
from dppca.privacy.quantiles import unbounded_quantile, unbounded_quantile_upper


def hockey_stick_delta(sigma: float, eps: float, sensitivity: float = 1.0) -> float:
    """delta(sigma) = integral of max(0, p(x) - e^eps q(x)) dx, computed by quadrature.

    p = N(0, sigma^2), q = N(sensitivity, sigma^2): the definition of the privacy
    profile, independent of the closed form used by the package.
    """
    p = stats.norm(0.0, sigma).pdf
    q = stats.norm(sensitivity, sigma).pdf
    # p - e^eps q changes sign once; find the crossing from the density ratio.
    crossing = optimize.brentq(
        lambda x: (-(x**2) + (x - sensitivity) ** 2) / (2 * sigma**2) - eps,
        -1e3 * sigma - 1e3,
        1e3 * sigma + 1e3,
    )
    value, _ = integrate.quad(
        lambda x: p(x) - math.exp(eps) * q(x), -np.inf, crossing, epsabs=1e-14, epsrel=1e-10
    )
    return value


def test_classic_sigma_formula():
    assert classic_gaussian_sigma(2.0, 0.5, 1e-5) == pytest.approx(
        2.0 * math.sqrt(2 * math.log(1.25 / 1e-5)) / 0.5, rel=1e-15
    )


def test_kendall_sigma_reproduces_the_reference_formula():
    n, eps, delta = 5000, 0.5, 1e-5
    expected = 4 * math.sqrt(2 * math.log(1.25 / delta)) / (n * eps)
    assert kendall_sigma(n, eps, delta, "classic", "seed") == pytest.approx(expected, rel=1e-15)
    # the default: the tight sensitivity with the analytic calibration
    tight = analytic_gaussian_sigma(2 * math.sqrt(2) / n, eps, delta)
    assert kendall_sigma(n, eps, delta) == pytest.approx(tight, rel=1e-15)


@pytest.mark.parametrize("eps", [0.1, 0.5, 1.0, 3.0, 10.0])
@pytest.mark.parametrize("delta", [1e-3, 1e-5, 1e-9])
def test_analytic_sigma_meets_delta_exactly(eps, delta):
    sigma = analytic_gaussian_sigma(1.0, eps, delta)
    # Valid: the independently integrated profile is at most delta (quadrature error
    # ~1e-10 relative) ...
    assert hockey_stick_delta(sigma, eps) <= delta * (1 + 1e-6)
    # ... and tight: 0.1% less noise already breaks delta.
    assert hockey_stick_delta(0.999 * sigma, eps) > delta


def test_analytic_sigma_scales_with_sensitivity():
    assert analytic_gaussian_sigma(0.004, 2.0, 1e-6) == pytest.approx(
        0.004 * analytic_gaussian_sigma(1.0, 2.0, 1e-6), rel=1e-12
    )


@pytest.mark.parametrize("eps", [0.05, 0.3, 0.9])
def test_analytic_never_needs_more_noise_than_classic(eps):
    assert analytic_gaussian_sigma(1.0, eps, 1e-5) < classic_gaussian_sigma(1.0, eps, 1e-5)


def test_classic_calibration_warns_from_eps_one():
    with pytest.warns(PrivacyWarning, match="analytic"):
        gaussian_sigma(1.0, 1.0, 1e-5, calibration="classic")
    with pytest.warns(PrivacyWarning, match="analytic") as record:
        gaussian_sigma(1.0, 5.0, 1e-5, calibration="classic")
    assert record[0].filename == __file__  # attributed to the caller's line


def test_analytic_calibration_and_small_eps_do_not_warn():
    gaussian_sigma(1.0, 5.0, 1e-5, calibration="analytic")
    gaussian_sigma(1.0, 0.99, 1e-5)


@pytest.mark.parametrize("calibration", ["gauss", None, "Classic"])
def test_bad_calibration_raises(calibration):
    with pytest.raises(ValueError, match="calibration"):
        gaussian_sigma(1.0, 0.5, 1e-5, calibration=calibration)


def test_symmetric_noise_is_exactly_symmetric_and_reproducible():
    a = symmetric_gaussian_noise(7, 0.3, np.random.default_rng(1))
    b = symmetric_gaussian_noise(7, 0.3, np.random.default_rng(1))
    np.testing.assert_array_equal(a, a.T)
    np.testing.assert_array_equal(a, b)


def test_symmetric_noise_moments():
    p, m, sigma = 4, 4000, 0.7
    rng = np.random.default_rng(2024)
    draws = np.stack([symmetric_gaussian_noise(p, sigma, rng) for _ in range(m)])
    rows, cols = np.triu_indices(p)
    entries = draws[:, rows, cols]  # (m, 10) independent coordinates
    variance = np.where(rows == cols, sigma**2, sigma**2 / 2)
    n_tests = 2 * entries.shape[1]
    alpha = 1e-6 / n_tests  # Bonferroni over all mean and variance checks
    # Mean: sqrt(m) * mean / sd ~ N(0, 1).
    z = np.sqrt(m) * entries.mean(axis=0) / np.sqrt(variance)
    assert np.all(np.abs(z) <= stats.norm.ppf(1 - alpha / 2))
    # Known mean 0: sum(e^2) / var ~ chi2(m); accept the central 1 - alpha interval.
    ss = (entries**2).sum(axis=0) / variance
    lo, hi = stats.chi2.ppf([alpha / 2, 1 - alpha / 2], df=m)
    assert np.all((lo <= ss) & (ss <= hi))
    # Off-diagonal entries are independent of each other: correlation ~ N(0, 1/m).
    corr = np.corrcoef(entries, rowvar=False)[np.triu_indices(entries.shape[1], 1)]
    assert np.all(np.abs(corr) * np.sqrt(m) <= stats.norm.ppf(1 - alpha / 2) + 0.5)


def test_laplace_noise_scale():
    rng = np.random.default_rng(9)
    m, b = 20000, 2.5
    draws = laplace_noise(np.zeros(m), b, rng)
    # |Z| ~ Exp(mean b), so 2 sum|Z| / b ~ chi2(2m); central 1 - 1e-6 interval.
    stat = 2 * np.abs(draws).sum() / b
    lo, hi = stats.chi2.ppf([5e-7, 1 - 5e-7], df=2 * m)
    assert lo <= stat <= hi


def test_unbounded_quantile_is_accurate_at_large_eps():
    rng = np.random.default_rng(12)
    x = rng.exponential(10.0, size=20000)
    est = unbounded_quantile_upper(x, lower=0.0, beta=1.01, q=0.5, eps1=50, eps2=50, rng=rng)
    true = np.quantile(x, 0.5)
    # Output is a bin edge beta^i - 1; with eps=50 the count noise is < 1 row,
    # so the answer is within a bin (factor beta) of the true quantile.
    assert (true + 1) / 1.01 - 1 - 0.05 <= est <= (true + 1) * 1.01**2 - 1


def test_unbounded_quantile_two_sided_respects_range_and_symmetry():
    rng = np.random.default_rng(1)
    x = rng.normal(size=5000)
    lo = unbounded_quantile(
        x, lower=-100.0, upper=100.0, beta=1.001, q=0.05, eps1=5, eps2=5, rng=rng
    )
    hi = unbounded_quantile(
        x, lower=-100.0, upper=100.0, beta=1.001, q=0.95, eps1=5, eps2=5, rng=rng
    )
    assert -2.2 < lo < -1.2 and 1.2 < hi < 2.2
    clipped = unbounded_quantile(
        x + 500, lower=-100.0, upper=100.0, beta=1.001, q=0.9, eps1=5, eps2=5, rng=rng
    )
    assert clipped == 100.0


def test_unbounded_quantile_values_below_range_land_in_first_bin():
    rng = np.random.default_rng(0)
    out = unbounded_quantile_upper(
        np.full(100, -5.0), lower=0.0, beta=1.5, q=0.5, eps1=10, eps2=10, rng=rng
    )
    # Every value is clamped into bin 1 = [lower + beta - 1, lower + beta^2 - 1); the
    # scan passes the target (50 + Exp noise of mean 0.1) at i = 2, whose edge is
    # beta^2 - 1. Stopping at i = 1 would need Exp(rate 10) > 50: probability e^-500.
    assert out == pytest.approx(1.5**2 - 1)


# --------------------------------------------------------------------------- level cap


def test_capped_quantile_level_keeps_the_target_margin_below_n() -> None:
    from dppca.privacy.quantiles import capped_quantile_level

    assert capped_quantile_level(0.99, 10_000, 1.0) == 0.99  # 100 values above: no cap
    # 1 - 1 / (0.01 * 5000) = 0.98: eps1 N (1 - level) = 1 = margin
    assert capped_quantile_level(0.995, 5000, 0.01) == pytest.approx(0.98)
    assert capped_quantile_level(0.995, 5000, 0.01, margin=2.0) == pytest.approx(0.96)
    assert capped_quantile_level(0.995, 10, 0.01) == 0.5  # never below the median


@pytest.mark.parametrize("eps1", [0.1, 0.2])
def test_quantile_overshoot_bound_matches_the_scan(eps1: float) -> None:
    from dppca.privacy.quantiles import quantile_overshoot_bound

    # 100 values in bin 1 (x = 0, lower = 0, beta = 1.5): H = 100 from bin 2 on. With
    # q = 0.99 the target 99 + Exp(eps1) passes 100 with probability exp(-eps1); then
    # the scan passes k = 20 more bins unstopped (output >= beta^(k + 2) - 1) with
    # probability exp(-eps1) r B(r, k + 1), r = eps1 / eps2. Stopping at bin 1 needs
    # Exp(eps2) > 99 (probability < e^-9.9). Binomial with 4000 draws: 4.5 sd.
    x, k, eps2, reps = np.zeros(100), 20, 0.1, 4000
    rng = np.random.default_rng(7)
    out = np.array(
        [
            unbounded_quantile_upper(x, lower=0.0, beta=1.5, q=0.99, eps1=eps1, eps2=eps2, rng=rng)
            for _ in range(reps)
        ]
    )
    p = quantile_overshoot_bound(k, 100, 0.99, eps1, eps2)
    r = eps1 / eps2
    assert p == pytest.approx(
        math.exp(-eps1) * r * math.gamma(r) * math.gamma(k + 1) / math.gamma(r + k + 1)
    )
    hits = np.count_nonzero(out >= 1.5 ** (k + 2) - 1 - 1e-9)
    assert abs(hits - reps * p) <= 4.5 * math.sqrt(reps * p * (1 - p))


# --------------------------------------------------------------------------- hardened noise


def test_unseeded_generator_is_hardened_and_seeded_ones_are_not():
    gen = check_random_state(None)
    assert isinstance(gen, HardenedGenerator) and isinstance(gen, np.random.Generator)
    assert not getattr(check_random_state(3), "hardened", False)
    given = np.random.default_rng(3)
    assert check_random_state(given) is given and mech.noise_sampler(given) == "numpy"


def test_post_processing_stream_is_separate_and_reproducible():
    # An int seed: a child stream, not the noise's default_rng(seed) stream.
    a, b = post_processing_rng(7).random(5), post_processing_rng(7).random(5)
    np.testing.assert_array_equal(a, b)
    assert not np.any(a == np.random.default_rng(7).random(5))
    # A Generator: spawning a child leaves the parent's own draws unchanged.
    g1, g2 = np.random.default_rng(9), np.random.default_rng(9)
    post_processing_rng(g1).random(10)
    np.testing.assert_array_equal(g1.random(3), g2.random(3))
    # None or a hardened generator: a fresh numpy generator, not hardened.
    for rs in (None, HardenedGenerator()):
        assert not getattr(post_processing_rng(rs), "hardened", False)
    with pytest.raises(TypeError, match="random_state"):
        post_processing_rng("seed")
    with pytest.raises(ValueError, match="random_state"):
        post_processing_rng(-1)


def test_no_privacy_noise_is_drawn_outside_the_noise_functions():
    # Gaussian and Laplace draws anywhere else would bypass the hardened path.
    import pathlib
    import re

    src = pathlib.Path(mech.__file__).parent
    pattern = re.compile(r"\.(standard_normal|normal|laplace)\(")
    for path in src.rglob("*.py"):
        # plotting draws only from released values with its own fixed seed
        # (noise bands: post-processing), never privacy noise
        if path.name == "mechanisms.py" or "plotting" in path.parts:
            continue
        lines = [ln for ln in path.read_text().splitlines() if ">>>" not in ln]  # doctests
        hits = [ln for ln in lines if pattern.search(ln)]
        assert not hits, f"{path.name}: {hits}"


def test_hardened_generator_without_opendp_falls_back_and_says_so_once(monkeypatch):
    monkeypatch.setattr(mech, "_dp", False)  # as if the import had failed
    monkeypatch.setattr(mech, "_warned_no_opendp", False)
    gen = HardenedGenerator()
    with pytest.warns(PrivacyWarning, match="OpenDP is not installed"):
        assert mech.noise_sampler(gen) == "numpy"
    assert mech.noise_sampler(gen) == "numpy"  # no second warning (errors would fail)
    assert mech.gaussian_noise(np.zeros(3), 1.0, gen).shape == (3,)


def test_import_dppca_does_not_import_opendp_or_dp_accounting():
    import subprocess
    import sys

    code = "import sys, dppca; print('opendp' in sys.modules, 'dp_accounting' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "False"]


class TestOpenDPSamplers:
    @pytest.fixture(autouse=True)
    def _needs_opendp(self):
        pytest.importorskip("opendp")

    def test_gaussian_noise_has_the_right_variance(self):
        # (m - 1) s^2 / sigma^2 ~ chi2(m - 1): accept the central 1 - 1e-6 interval;
        # the mean is N(value, sigma^2 / m): accept |z| < 5.
        m, sigma = 4000, 0.37
        gen = HardenedGenerator()
        assert mech.noise_sampler(gen) == "opendp"
        out = mech.gaussian_noise(np.full((40, 100), 2.0), sigma, gen)
        assert out.shape == (40, 100)
        s2 = out.var(ddof=1)
        lo, hi = stats.chi2.ppf([5e-7, 1 - 5e-7], df=m - 1) / (m - 1)
        assert lo <= s2 / sigma**2 <= hi
        assert abs(out.mean() - 2.0) < 5 * sigma / math.sqrt(m)

    def test_laplace_noise_has_the_right_scale(self):
        # sum |X_i - value| ~ Gamma(m, b) for Laplace(b): central 1 - 1e-6 interval.
        m, b = 3000, 1.7
        out = mech.laplace_noise(np.full(m, -5.0), b, HardenedGenerator())
        total = np.abs(out + 5.0).sum()
        lo, hi = stats.gamma.ppf([5e-7, 1 - 5e-7], a=m, scale=b)
        assert lo <= total <= hi
        scalar = mech.laplace_noise(1.0, b, HardenedGenerator())
        assert scalar.shape == ()

    def test_symmetric_noise_is_symmetric_with_half_variance_off_diagonal(self):
        # diagonal: chi2(p) / p of sigma^2; off-diagonal: chi2(q) / q of
        # sigma^2 / 2 with q = p (p - 1) / 2 (known mean 0, so no ddof).
        p, sigma = 60, 0.05
        value = np.full((p, p), 0.25)
        out = symmetric_gaussian_noise(p, sigma, HardenedGenerator(), value=value)
        np.testing.assert_array_equal(out, out.T)
        noise = out - value
        d = np.mean(np.diag(noise) ** 2) / sigma**2
        iu = np.triu_indices(p, k=1)
        q = iu[0].size
        o = np.mean(noise[iu] ** 2) / (sigma**2 / 2)
        assert stats.chi2.ppf(5e-7, p) / p <= d <= stats.chi2.ppf(1 - 5e-7, p) / p
        assert stats.chi2.ppf(5e-7, q) / q <= o <= stats.chi2.ppf(1 - 5e-7, q) / q
        alone = symmetric_gaussian_noise(p, sigma, HardenedGenerator())
        np.testing.assert_array_equal(alone, alone.T)

    def test_opendp_feature_flags_are_left_as_they_were(self):
        import opendp.mod as dp

        _hardened.measurement.cache_clear()
        before = set(dp.GLOBAL_FEATURES)
        mech.gaussian_noise(np.zeros(3), 1.0, HardenedGenerator())
        assert set(dp.GLOBAL_FEATURES) == before
        assert "floating-point" not in dp.GLOBAL_FEATURES

    def test_seeded_noise_never_calls_opendp_and_views_never_do(self, monkeypatch):
        def boom(*args, **kwargs):
            raise AssertionError("OpenDP used")

        monkeypatch.setattr(mech, "_opendp_add", boom)
        mech.gaussian_noise(np.zeros(3), 1.0, np.random.default_rng(0))
        mech.laplace_noise(np.zeros(3), 1.0, np.random.default_rng(0))
        symmetric_gaussian_noise(3, 1.0, np.random.default_rng(0), value=np.eye(3))
        # reperturbed copies are post-processing views: numpy, even when unseeded
        assert mech.reperturbed_matrices(np.eye(3), 0.1, 2, HardenedGenerator()).shape == (2, 3, 3)

    def test_unseeded_release_draws_its_noise_from_opendp(self, monkeypatch):
        from dppca import dp_pc_dir

        calls = []
        real = mech._opendp_add

        def spy(kind, value, scale):
            calls.append((kind, value.size, scale))
            return real(kind, value, scale)

        monkeypatch.setattr(mech, "_opendp_add", spy)
        X = np.random.default_rng(1).normal(size=(80, 5))
        res = dp_pc_dir(X, 2, eps=1.0, delta=1e-5, calibration="analytic")
        assert [c[:2] for c in calls] == [("gaussian", 5), ("gaussian", 10)]
        assert calls[0][2] == res.sigma
        assert calls[1][2] == pytest.approx(res.sigma / math.sqrt(2), rel=1e-15)


def test_seeded_symmetric_noise_with_value_is_bit_identical_to_adding_it():
    v = np.random.default_rng(2).normal(size=(6, 6))
    v = v + v.T
    a = symmetric_gaussian_noise(6, 0.3, np.random.default_rng(4), value=v)
    b = v + symmetric_gaussian_noise(6, 0.3, np.random.default_rng(4))
    np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("kind", ["gaussian", "laplace"])
@pytest.mark.parametrize("scale", [1e-9, 0.01, 3.0, 1e6])
@pytest.mark.parametrize("count", [1, 10, 500500])
def test_hardened_grid_is_fine_enough_for_the_proof(kind, scale, count):
    # add_noise's proof needs g d <= scale 2^-68, with g a power of two
    g = 2.0 ** _hardened.grid_exponent(kind, scale, count)
    assert g * count <= scale * 2.0**-_hardened.GRID_BITS
    assert g * count > scale * 2.0 ** -(_hardened.GRID_BITS + 1)  # and no finer than needed
    assert _hardened.GRID_BITS == 68 and _hardened.SCALE_SLACK == 2.0**-20


@pytest.mark.parametrize("eps", [1e-12, 1e-6, 0.1, 1.0, 8.0, 50.0])
@pytest.mark.parametrize("delta", [1e-300, 1e-15, 1e-6, 0.1])
def test_hardened_slack_covers_the_rounding_and_the_lattice(eps, delta):
    # add_noise, step 4: at scale' = sigma (1 + 2^-20) and sensitivity
    # D' = D (1 + 2^-28), the continuous Gaussian at eps - 2 gamma has delta
    # below delta e^-gamma - 3 beta, gamma = 21 2^-68, beta = 2 d e^-790 ~ 0.
    try:
        sigma = mech.gaussian_sigma(1.0, eps, delta)
    except ValueError:
        assert mech.analytic_multiplier(eps, delta) > 2.0**40  # refused: beyond the proof
        return
    gamma = 21 * 2.0**-68
    ratio = (1.0 + 2.0**-20) * sigma / (1.0 + 2.0**-28)  # scale' / D'
    achieved = mech._analytic_delta(ratio, eps - 2 * gamma)
    assert achieved * math.exp(gamma) <= delta


def test_noise_beyond_the_hardened_proof_is_refused_before_any_data():
    with pytest.raises(ValueError, match="more than 2\\^40 times the sensitivity"):
        mech.gaussian_sigma(1.0, 1e-12, 1e-15)
    from dppca import plan_pc_dir

    with pytest.raises(ValueError, match="raise eps"):
        plan_pc_dir(1000, 5, eps=1e-12, delta=1e-15)


@pytest.mark.parametrize("kind", ["gaussian", "laplace"])
def test_opendp_certificate_is_checked_against_the_calibration(kind):
    dp = _hardened.load_opendp()
    made = _hardened.measurement(dp, kind, 2.0 * (1 + _hardened.SCALE_SLACK), 7, 7)
    assert _hardened.certified(made, kind, 2.0)
    # a measurement drawn without the slack, at a coarse grid, is caught
    coarse = _hardened.measurement(dp, kind, 2.0, 7, 1)
    assert not _hardened.certified(coarse, kind, 2.0)


def test_sparse_histogram_grid_does_not_depend_on_the_non_empty_cells(monkeypatch):
    from dppca.releases.score.histograms import sparse_counts

    seen = []
    real = _hardened.add_noise

    def spy(dp, kind, value, scale, *, grid_count=None):
        seen.append(grid_count)
        return real(dp, kind, value, scale, grid_count=grid_count)

    monkeypatch.setattr(_hardened, "add_noise", spy)
    for counts in (np.array([[3, 0, 0, 5]]), np.array([[3, 1, 0, 5]])):
        sparse_counts(counts, 2.0, 5.0, HardenedGenerator())
    assert seen == [4, 4]  # the number of cells, public; not 2 against 3


def test_cli_release_does_not_import_opendp_prelude(tmp_path):
    import subprocess
    import sys

    path = tmp_path / "t.csv"
    np.savetxt(
        path,
        np.random.default_rng(0).normal(size=(200, 3)),
        delimiter=",",
        header="a,b,c",
        comments="",
    )
    code = (
        "import sys\n"
        "from dppca.cli import main\n"
        f"main(['directions', {str(path)!r}, '--eps', '1', '--delta', '1e-6', "
        "'--accuracy', 'ignore', '--no-ledger'])\n"
        "assert 'opendp.measurements' in sys.modules, 'not hardened'\n"
        "assert 'opendp.prelude' not in sys.modules and 'sklearn' not in sys.modules\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


def test_noise_seconds_forecasts_from_the_count_alone():
    count = 1000 * 1001 // 2
    assert noise_seconds(count) == pytest.approx(count * 12e-6)
    assert noise_seconds(count, kind="laplace") == pytest.approx(count * 6.5e-6)
    assert noise_seconds(count, hardened=False) < 0.05
