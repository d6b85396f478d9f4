"""Tests of the scree / PVE plot."""

from __future__ import annotations

from dataclasses import replace
from types import SimpleNamespace

import matplotlib.pyplot as plt
import numpy as np
import pytest
from matplotlib.collections import LineCollection, PathCollection, PolyCollection
from scipy import stats

from dppca import dp_scree
from dppca.plotting import plot_scree
from dppca.plotting._caption import find_caption
from dppca.plotting.scree import BELOW_NOISE_GID, TIED_GID
from dppca.releases.scree.result import _pve, _pve_total


@pytest.fixture
def result(small_data):
    return dp_scree(small_data, 4, eps=0.5, delta=1e-5, method=["clipped", "pmwm"], random_state=0)


@pytest.fixture
def compared(small_data):
    return dp_scree(small_data, 3, eps=0.5, delta=1e-5, compare=True, random_state=0)


def test_pve_plot_draws_one_line_per_method_on_the_given_axes(result):
    _, ax = plt.subplots()
    out = plot_scree(result, kind="pve", ax=ax)
    assert out is ax
    assert len(ax.get_lines()) == 2
    np.testing.assert_array_equal(ax.get_lines()[0].get_xdata(), [1, 2, 3, 4])
    np.testing.assert_allclose(ax.get_lines()[1].get_ydata(), result.pve_values[1])
    assert list(ax.get_xticks()) == [1, 2, 3, 4]
    assert ax.get_ylim() == (0.0, 1.0)
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert labels == ["Clipped", "PMWM"]


def test_pve_total_plot_uses_the_private_trace(result):
    ax = plot_scree(result, kind="pve_total")
    np.testing.assert_allclose(ax.get_lines()[0].get_ydata(), result.pve_total_values[0])
    assert ax.get_ylim() == (0.0, 1.0)


def test_scree_limits_come_from_private_values_only(result):
    ax = result.plot(kind="scree", interval=None)
    assert ax.get_ylim() == pytest.approx((0.0, 1.05 * float(np.max(result.values))))


def test_default_kind_is_pve_of_the_total_variance(result):
    for ax in (plot_scree(result), result.plot()):
        assert ax.get_ylabel() == "Proportion of total variance"
        np.testing.assert_allclose(ax.get_lines()[0].get_ydata(), result.pve_total_values[0])


def test_no_nonprivate_curve_without_compare(compared):
    ax = plot_scree(compared)
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert "Non-private" not in labels and len(ax.get_lines()) == 1


def test_compare_adds_a_labelled_nonprivate_curve(compared):
    ax = plot_scree(compared, kind="scree", compare=True, interval=None)
    lines = ax.get_lines()
    assert [ln.get_label() for ln in lines] == ["Clipped", "Non-private"]
    np.testing.assert_allclose(lines[1].get_ydata(), compared.nonprivate_values)
    top = 1.05 * max(float(np.max(compared.values)), float(np.max(compared.nonprivate_values)))
    assert ax.get_ylim() == pytest.approx((0.0, top))


def test_compare_needs_a_result_with_comparison(result):
    with pytest.raises(ValueError, match="compare=True"):
        plot_scree(result, compare=True)


def test_compare_takes_numpy_booleans_and_refuses_numbers(compared):
    ax = plot_scree(compared, kind="scree", compare=np.True_, interval=None)
    assert [ln.get_label() for ln in ax.get_lines()] == ["Clipped", "Non-private"]
    for value in (1, "yes", None):
        with pytest.raises(TypeError, match="compare must be True or False"):
            plot_scree(compared, compare=value)


def test_labels_and_kwargs_are_passed_and_caller_dicts_untouched(result):
    labels = {"pmwm": "winsorized"}
    ax = plot_scree(result, labels=labels, linewidth=3)
    assert labels == {"pmwm": "winsorized"}
    assert [ln.get_label() for ln in ax.get_lines()] == ["Clipped", "winsorized"]
    assert all(ln.get_linewidth() == 3 for ln in ax.get_lines())


def test_bad_kind_raises(result):
    with pytest.raises(ValueError, match="kind"):
        plot_scree(result, kind="bar")


def test_importing_dppca_does_not_load_matplotlib():
    import subprocess
    import sys

    code = "import sys, dppca; print('matplotlib' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


# --------------------------------------------------------------------------
# Noise bands and caption, on a hand-built result (independent of dp_scree)
# --------------------------------------------------------------------------


def _stub(noise_sd=None, trace_sd=None, mono=True):
    values = np.array([[4.0, 2.0, 1.0], [3.5, 2.5, 0.2]])
    return SimpleNamespace(
        methods=("clipped", "pmwm"),
        values=values,
        trace=10.0,
        k=3,
        n=400,
        eps=0.7,
        delta=1e-6,
        private=True,
        mono=mono,
        has_comparison=False,
        pve_values=_pve(values),
        pve_total_values=_pve_total(values, 10.0),
        noise_sd=noise_sd,
        trace_sd=trace_sd,
    )


def _bands(ax):
    return [c for c in ax.collections if isinstance(c, PolyCollection)]


def _band_limits(band):
    """(x, lower, upper) of a fill_between band drawn at integer x."""
    xy = band.get_paths()[0].vertices
    xs = np.unique(np.round(xy[:, 0], 9))
    lower = [xy[np.isclose(xy[:, 0], x), 1].min() for x in xs]
    upper = [xy[np.isclose(xy[:, 0], x), 1].max() for x in xs]
    return xs, np.array(lower), np.array(upper)


def test_scree_band_is_value_plus_minus_z_sd():
    sd = np.array([[0.5, 0.5, 0.5], [1.0, 1.0, 1.0]])
    res = _stub(noise_sd=sd, trace_sd=2.0)
    ax = plot_scree(res, kind="scree", interval=0.8)
    bands = _bands(ax)
    assert len(bands) == 2
    z = stats.norm.ppf(0.9)
    for i, band in enumerate(bands):
        xs, lo, hi = _band_limits(band)
        np.testing.assert_array_equal(xs, [1, 2, 3])
        np.testing.assert_allclose(hi, res.values[i] + z * sd[i])
        np.testing.assert_allclose(lo, np.maximum(res.values[i] - z * sd[i], 0.0))
        # the band takes its line's colour
        assert np.allclose(
            band.get_facecolor()[0][:3],
            plt.matplotlib.colors.to_rgb(ax.get_lines()[i].get_color()),
        )
    # the axis reaches above the band (limits from released values and public scales)
    assert ax.get_ylim()[1] == pytest.approx(1.05 * float(np.max(res.values + z * sd)))
    assert "80%" in find_caption(ax).get_text()


@pytest.mark.parametrize("kind", ["pve_total", "pve"])
def test_pve_band_holds_the_released_pve_and_is_reproducible(kind):
    res = _stub(noise_sd=np.full((2, 3), 0.3), trace_sd=1.0)
    ax = plot_scree(res, kind=kind)
    again = plot_scree(res, kind=kind)
    series = res.pve_total_values if kind == "pve_total" else res.pve_values
    for i, (band, other) in enumerate(zip(_bands(ax), _bands(again), strict=True)):
        _, lo, hi = _band_limits(band)
        assert np.all((lo <= series[i] + 1e-12) & (series[i] - 1e-12 <= hi))
        assert np.all((lo >= 0) & (hi <= 1))
        assert np.all(hi - lo > 0)
        # a fixed internal seed: the same result gives the same band
        np.testing.assert_array_equal(band.get_paths()[0].vertices, other.get_paths()[0].vertices)
    assert ax.get_ylim() == (0.0, 1.0)


def test_pve_total_band_reflects_the_trace_noise():
    narrow = _band_limits(_bands(plot_scree(_stub(np.full((2, 3), 0.01), 0.01)))[0])
    wide = _band_limits(_bands(plot_scree(_stub(np.full((2, 3), 0.01), 3.0)))[0])
    assert np.all((wide[2] - wide[1]) > 5 * (narrow[2] - narrow[1]))


def test_pve_band_matches_a_direct_simulation_without_mono():
    # Without the monotone fit the PVE of the total is v / max(trace, sum v):
    # check the band's ends against quantiles of an independent simulation.
    sd = np.full((2, 3), 0.4)
    res = _stub(noise_sd=sd, trace_sd=0.5, mono=False)
    ax = plot_scree(res, kind="pve_total", interval=0.5)
    gen = np.random.default_rng(1)
    draws = res.values[0] + gen.standard_normal((200_000, 3)) * sd[0]
    total = np.maximum(draws.sum(axis=1), 10.0 + 0.5 * gen.standard_normal(200_000))
    expected = np.quantile(draws / total[:, None], [0.25, 0.75], axis=0)
    _, lo, hi = _band_limits(_bands(ax)[0])
    # 2000 draws: a quartile's standard error is about 0.03 of the band's width here
    width = expected[1] - expected[0]
    np.testing.assert_allclose(lo, expected[0], atol=0.15 * width.max())
    np.testing.assert_allclose(hi, expected[1], atol=0.15 * width.max())


def test_no_band_without_noise_scales_or_with_interval_none():
    assert _bands(plot_scree(_stub())) == []
    assert _bands(plot_scree(_stub(np.ones((2, 3)), 1.0), interval=None)) == []
    assert "shaded" not in find_caption(plot_scree(_stub())).get_text()
    with pytest.raises(ValueError, match="interval"):
        plot_scree(_stub(np.ones((2, 3)), 1.0), interval=1.5)


def test_caption_states_eps_delta_and_n_under_the_title():
    ax = plot_scree(_stub(np.ones((2, 3)), 1.0))
    caption = find_caption(ax)
    assert caption.get_text().splitlines()[0] == "eps=0.7, delta=1e-06, n=400"
    assert "90%" in caption.get_text()
    ax.figure.canvas.draw()
    renderer = ax.figure.canvas.get_renderer()
    box, title = caption.get_window_extent(renderer), ax.title.get_window_extent(renderer)
    assert box.y0 >= ax.get_window_extent(renderer).y1  # above the axes
    assert title.y0 >= box.y1 - 0.5  # and under the title, not over it


def test_compare_caption_says_the_dashed_curve_is_not_private(compared):
    ax = plot_scree(compared, compare=True)
    assert "non-private" in find_caption(ax).get_text()


def test_bands_on_a_real_release(result):
    if getattr(result, "noise_sd", None) is None:
        pytest.skip("this ScreeResult does not carry noise_sd yet")
    for kind in ("scree", "pve", "pve_total"):
        ax = plot_scree(result, kind=kind)
        assert len(_bands(ax)) == len(result.methods)


# --------------------------------------------------------------------------
# Ties and zeros of the monotone fit (issue 21)
# --------------------------------------------------------------------------


@pytest.fixture
def tied_and_zero(small_data):
    # seed 4: the monotone fit pools PC1 and PC2, and PC4 and PC5 are clipped to 0
    return dp_scree(small_data, 5, eps=0.5, delta=1e-5, random_state=4)


def _marks(ax, gid, cls):
    return [a for a in ax.get_children() if isinstance(a, cls) and a.get_gid() == gid]


@pytest.mark.parametrize("kind", ["scree", "pve", "pve_total"])
def test_a_tied_run_and_zeros_are_marked_not_drawn_as_estimates(tied_and_zero, kind):
    res = tied_and_zero
    np.testing.assert_array_equal(res.tie_groups, [[1, 1, 0, 0, 0]])
    ax = plot_scree(res, kind=kind)
    series = {"scree": res.values, "pve": res.pve_values, "pve_total": res.pve_total_values}
    shown = series[kind][0]
    y = ax.get_lines()[0].get_ydata()
    np.testing.assert_allclose(y[:3], shown[:3])
    assert np.all(np.isnan(y[3:]))  # no point at 0
    # one bracket over PC1 and PC2, above them, labelled "tied"
    (bracket,) = _marks(ax, TIED_GID, LineCollection)
    (segment,) = bracket.get_segments()
    assert 0.5 < segment[:, 0].min() < 1 and 2 < segment[:, 0].max() < 2.5
    assert np.all(segment[:, 1] > shown[0])
    assert [t.get_text() for t in ax.texts if t.get_gid() == TIED_GID] == ["tied"]
    # PC4 and PC5: an upper marker at 2 noise sd, in the units of the axis
    (marker,) = _marks(ax, BELOW_NOISE_GID, PathCollection)
    values = res.values[0]
    total = {"scree": 1.0, "pve": values.sum(), "pve_total": max(values.sum(), res.trace)}
    level = 2 * res.noise_sd[0, 3] / total[kind]
    level = level if kind == "scree" else min(level, 1.0)  # PVE axes stop at 1
    np.testing.assert_allclose(marker.get_offsets(), [[4, level], [5, level]])
    assert ax.get_ylim()[1] >= level
    caption = find_caption(ax).get_text()
    assert "bracket: tied after the monotone fit" in caption
    assert "clipped to 0, below the noise level (2 sd)" in caption
    # the legend still names the methods only
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["Clipped"]


def test_the_zero_markers_come_from_the_public_noise_scale_alone(tied_and_zero):
    # The plot reads the released values and the noise sd (public, fixed by the
    # plan and the clip level): another sd moves the markers, and nothing else
    # the figure reads could (no data are kept on a result).
    res = replace(tied_and_zero, noise_sd=np.full((1, 5), 0.75))
    ax = plot_scree(res, kind="scree", interval=None)
    (marker,) = _marks(ax, BELOW_NOISE_GID, PathCollection)
    np.testing.assert_allclose(marker.get_offsets()[:, 1], [1.5, 1.5])
    # without noise scales the zeros stay off the line, and the caption says why
    ax = plot_scree(replace(tied_and_zero, noise_sd=None), kind="scree")
    assert _marks(ax, BELOW_NOISE_GID, PathCollection) == []
    assert np.all(np.isnan(ax.get_lines()[0].get_ydata()[3:]))
    assert "not drawn: values clipped to 0" in find_caption(ax).get_text()


def test_no_tie_marks_without_the_monotone_fit(tied_and_zero):
    ax = plot_scree(replace(tied_and_zero, mono=False), kind="scree")
    assert _marks(ax, TIED_GID, LineCollection) == []
    assert "tied" not in find_caption(ax).get_text()
    assert len(_marks(ax, BELOW_NOISE_GID, PathCollection)) == 1  # zeros are still clipped


def test_no_marks_on_a_release_without_ties_or_zeros():
    ax = plot_scree(_stub(noise_sd=np.ones((2, 3)), trace_sd=1.0), kind="scree")
    assert _marks(ax, TIED_GID, LineCollection) == []
    assert _marks(ax, BELOW_NOISE_GID, PathCollection) == []
    np.testing.assert_array_equal(ax.get_lines()[0].get_ydata(), [4.0, 2.0, 1.0])


def test_importing_the_plots_does_not_load_scipy_stats():
    # scipy.stats costs about 1 CPU-second to import and the plots need only
    # the normal quantile (scipy.special.ndtri): a report's page must not pay it.
    import subprocess
    import sys

    code = "import sys, dppca.plotting; print('scipy.stats' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


@pytest.mark.parametrize("level", [0.5, 0.8, 0.9, 0.95, 0.99])
def test_band_quantile_is_the_normal_quantile(level):
    from scipy import special

    # the plots' band uses special.ndtri (dppca.core.lazy.scipy_special), which is
    # what stats.norm.ppf computes for loc=0, scale=1: equal to the bit
    assert float(special.ndtri(0.5 + level / 2)) == float(stats.norm.ppf(0.5 + level / 2))
