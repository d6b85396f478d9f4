"""Tests of the loading plots (headless, Agg backend from conftest)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pytest
from matplotlib.colors import Normalize
from matplotlib.figure import Figure
from matplotlib.image import AxesImage
from matplotlib.patches import Ellipse, FancyArrow

import dppca
from dppca import LoadingResult, dp_loading, dp_pc_dir
from dppca.datasets import load_wine
from dppca.plotting import (
    plot_loading,
    plot_loading_heatmap,
    plot_loading_point,
    plot_loading_vector,
)
from dppca.plotting._caption import CAPTION_GID, find_caption


@pytest.fixture
def result(small_frame):
    return dp_loading(small_frame, eps=0.5, delta=1e-5, random_state=0)


@pytest.fixture
def compared(small_frame):
    return dp_loading(small_frame, eps=0.5, delta=1e-5, random_state=0, compare=True)


@pytest.fixture
def wide():
    """24 variables: enough to crowd the labels."""
    rng = np.random.default_rng(7)
    X = rng.normal(size=(300, 24)) * np.linspace(3.0, 0.5, 24)
    return dp_loading(X, eps=0.5, delta=1e-5, random_state=1)


def _texts(ax):
    """The label (and note) texts, without the privacy caption."""
    return [t for t in ax.texts if t.get_gid() != CAPTION_GID]


def _labels(ax):
    return [t.get_text() for t in _texts(ax)]


def _arrows(ax):
    return [p for p in ax.patches if isinstance(p, FancyArrow)]


def test_vector_plot_draws_one_labelled_arrow_per_variable(result):
    _, ax = plt.subplots()
    out = plot_loading(result, kind="vector", ax=ax)
    assert out is ax
    assert len(_arrows(ax)) == 5
    assert _labels(ax) == list("abcde")
    assert ax.get_xlim() == (-1.0, 1.0) and ax.get_ylim() == (-1.0, 1.0)
    assert ax.get_xlabel() == "PC1 (DP)" and ax.get_ylabel() == "PC2 (DP)"
    assert ax.get_title() == "DP loadings"
    assert find_caption(ax).get_text() == "eps=0.5, delta=1e-05, n=200"
    assert ax.get_aspect() == 1.0


def test_arrow_tips_are_the_coordinates(result):
    ax = plot_loading(result, kind="vector", components=(2, 3))
    tips = []
    for arrow in _arrows(ax):
        xy = arrow.get_xy()
        # The arrow polygon's farthest vertex from the origin is its tip.
        tips.append(xy[np.argmax(np.hypot(xy[:, 0], xy[:, 1]))])
    np.testing.assert_allclose(tips, result.coordinates(2, 3).to_numpy(), atol=1e-12)
    assert ax.get_xlabel() == "PC2 (DP)"


def test_point_plot(result):
    ax = plot_loading_point(result, color="k")
    offsets = ax.collections[0].get_offsets()
    np.testing.assert_allclose(offsets, result.coordinates().to_numpy())
    assert len(_arrows(ax)) == 0 and _labels(ax) == list("abcde")


def test_limits_do_not_depend_on_the_data(result):
    other = dp_loading(load_wine() / 100.0, eps=0.5, delta=1e-5, random_state=2)
    for kind in ("vector", "point"):
        a = plot_loading(result, kind=kind)
        b = plot_loading(other, kind=kind)
        assert a.get_xlim() == b.get_xlim() == (-1.0, 1.0)
        assert a.get_ylim() == b.get_ylim() == (-1.0, 1.0)
    ha = plot_loading(result, kind="heatmap").images[0]
    hb = plot_loading(other, kind="heatmap").images[0]
    assert ha.get_clim() == hb.get_clim() == (-1.0, 1.0)


def test_heatmap_signed_entries_and_annotations(result):
    ax = plot_loading_heatmap(result, components=[1, 3], variables=["b", "d"], annotate=True)
    image = next(a for a in ax.get_children() if isinstance(a, AxesImage))
    expected = result.heatmap_table(["b", "d"], [1, 3]).to_numpy()
    np.testing.assert_array_equal(image.get_array(), expected)
    assert image.get_clim() == (-1.0, 1.0)
    assert image.get_cmap().name == "RdBu_r"
    norm = image.norm
    assert isinstance(norm, Normalize) and (norm.vmin + norm.vmax) / 2 == 0.0  # centred at 0
    assert [t.get_text() for t in ax.get_yticklabels()] == ["b", "d"]
    assert [t.get_text() for t in ax.get_xticklabels()] == ["PC1\n(DP)", "PC3\n(DP)"]
    assert sorted(_labels(ax)) == sorted(
        f"{0.0 if round(v, 2) == 0 else v:.2f}" for v in expected.ravel()
    )


def test_heatmap_default_pcs(result):
    ax = plot_loading(result, kind="heatmap")
    assert len(ax.get_xticklabels()) == 4  # PC1..PC4 by default
    assert not _labels(ax)  # no annotations unless asked


def test_compare_draws_two_panels_with_shared_limits(compared):
    fig = plot_loading(compared, kind="vector")
    assert isinstance(fig, Figure)
    dp_ax, np_ax = fig.axes[:2]
    assert "DP" in dp_ax.get_title() and "eps=0.5" in find_caption(dp_ax).get_text()
    assert find_caption(np_ax).get_text().startswith("non-private, n=")
    assert "Non-private" in np_ax.get_title() and "not DP" in np_ax.get_title()
    assert np_ax.get_xlabel() == "PC1 (non-private)"
    assert dp_ax.get_xlim() == np_ax.get_xlim() == (-1.0, 1.0)
    assert len(_arrows(dp_ax)) == len(_arrows(np_ax)) == 5
    single = plot_loading(compared, kind="point", compare=False)
    assert single.get_title().startswith("DP loadings")
    heat = plot_loading(compared, kind="heatmap")
    assert isinstance(heat, Figure) and len(heat.axes) == 3  # two panels and a colour bar


def test_compare_into_given_axes_and_errors(compared, result):
    fig, axes = plt.subplots(1, 2)
    assert plot_loading(compared, ax=axes) is fig
    with pytest.raises(ValueError, match="pair of Axes"):
        plot_loading(compared, ax=axes[0])
    with pytest.raises(ValueError, match="compare=True"):
        plot_loading(result, compare=True)


def test_compare_takes_numpy_booleans_and_refuses_numbers(compared):
    assert isinstance(plot_loading(compared, compare=np.True_), Figure)
    single = plot_loading(compared, kind="point", compare=np.False_)
    assert single.get_title().startswith("DP loadings")
    for value in (1, "yes"):
        with pytest.raises(TypeError, match="compare must be True or False"):
            plot_loading(compared, compare=value)


def test_variable_selection_by_name_and_top(result):
    ax = plot_loading(result, variables=["e", "a"])
    assert _labels(ax) == ["e", "a"] and len(_arrows(ax)) == 2
    ax = plot_loading(result, top=2)
    length = np.hypot(*result.coordinates().to_numpy().T)
    expected = [result.variables[j] for j in sorted(np.argsort(-length)[:2])]
    assert _labels(ax) == expected
    with pytest.raises(ValueError, match="either"):
        plot_loading(result, variables=["a"], top=1)
    with pytest.raises(ValueError, match="unknown"):
        plot_loading(result, variables=["nope"])


def test_label_size_colour_title_and_kwargs(result):
    ax = plot_loading(result, label_size=13, color="red", title="mine", width=0.01)
    assert {t.get_fontsize() for t in _texts(ax)} == {13}
    assert ax.get_title() == "mine"
    assert np.allclose(_arrows(ax)[0].get_facecolor()[:3], (1.0, 0.0, 0.0))
    text_kws = {"fontstyle": "italic"}
    plot_loading(result, text_kws=text_kws)
    assert text_kws == {"fontstyle": "italic"}  # the caller's dict is untouched


def test_unit_circle_is_optional(result):
    with_circle = plot_loading(result)
    without = plot_loading(result, unit_circle=False)
    assert len(with_circle.patches) == len(without.patches) + 1


def test_labels_of_many_variables_do_not_overlap(wide):
    for kind in ("vector", "point"):
        ax = plot_loading(wide, kind=kind)
        renderer = ax.figure.canvas.get_renderer()
        texts = _texts(ax)
        boxes = [t.get_window_extent(renderer) for t in texts]
        assert len(boxes) == 24
        for i in range(len(boxes)):
            for j in range(i):
                assert not boxes[i].overlaps(boxes[j]), (texts[i], texts[j])


def test_no_eigenvalue_is_called_explained_variance(compared):
    for kind in ("vector", "heatmap"):
        fig = plot_loading(compared, kind=kind)
        words = " ".join(
            t.get_text()
            for ax in fig.axes
            for t in [*ax.texts, ax.title, ax.xaxis.label, ax.yaxis.label]
        )
        assert "explained" not in words.lower() and "variance" not in words.lower()


def test_uncertainty_ellipses_and_cloud(result):
    ax = plot_loading(result, uncertainty=30, random_state=0)
    ellipses = [p for p in ax.patches if type(p) is Ellipse]
    assert len(ellipses) == 5
    note = [t for t in ax.texts if "sampling variability" in t.get_text()]
    assert len(note) == 1 and "B=30" in note[0].get_text()
    sens = result.noise_sensitivity(30, random_state=0)
    ax2 = plot_loading(result, kind="point", uncertainty=sens, uncertainty_style="cloud")
    cloud = ax2.collections[0].get_offsets()
    assert cloud.shape == (30 * 5, 2)
    np.testing.assert_allclose(cloud, sens.coordinate_samples(1, 2).reshape(-1, 2))
    # The ellipse is centred at the mean of the recomputed coordinates.
    np.testing.assert_allclose(
        ellipses[0].center, sens.coordinate_samples(1, 2)[:, 0, :].mean(axis=0)
    )
    with pytest.raises(ValueError, match="heatmap"):
        plot_loading(result, kind="heatmap", uncertainty=5)
    with pytest.raises(ValueError, match="uncertainty_level"):
        plot_loading(result, uncertainty=5, uncertainty_level=1.5)


def test_uncertainty_is_repeatable_with_a_seed(result):
    a = plot_loading(result, uncertainty=10, random_state=3)
    b = plot_loading(result, uncertainty=10, random_state=3)
    ea = [p.center for p in a.patches if type(p) is Ellipse]
    eb = [p.center for p in b.patches if type(p) is Ellipse]
    np.testing.assert_array_equal(ea, eb)


@pytest.mark.parametrize("kind", ["vector", "point", "heatmap"])
@pytest.mark.parametrize("fmt", ["png", "svg", "pdf"])
def test_every_kind_renders_to_a_file(compared, tmp_path, kind, fmt):
    fig = compared.plot(kind=kind).figure
    path = tmp_path / f"plot.{fmt}"
    fig.savefig(path, format=fmt)
    assert path.stat().st_size > 1000


def test_result_plot_methods(result, small_frame):
    assert result.plot("point").get_xlabel() == "PC1 (DP)"
    release = dp_pc_dir(small_frame, eps=0.5, delta=1e-5, random_state=0)
    ax = release.plot("heatmap")
    assert ax.images[0].get_clim() == (-1.0, 1.0)
    assert plot_loading_vector(LoadingResult.from_directions(release)).get_xlim() == (-1, 1)
    with pytest.raises(ValueError, match="kind"):
        result.plot("pie")
    with pytest.raises(TypeError, match="LoadingResult"):
        plot_loading(release)


def test_import_dppca_does_not_load_matplotlib():
    code = "import sys, dppca; dppca.dp_loading; print('matplotlib' in sys.modules)"
    env = {**os.environ, "PYTHONPATH": str(Path(dppca.__file__).resolve().parents[1])}
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env
    )
    assert out.stdout.strip() == "False"


def test_uncertainty_follows_a_display_flip_of_the_private_vectors(small_frame):
    # With this seed both private vectors get flipped for display (checked below).
    res = dp_loading(
        small_frame,
        eps=0.5,
        delta=1e-5,
        random_state=125,
        compare=True,
        sign_reference="nonprivate",
    )
    sens = res.noise_sensitivity(20, random_state=0)
    fig = plot_loading(res, uncertainty=sens)
    main, _ = res.display_vectors()
    signs = np.sign(np.sum(main[:, :2] * res.directions.directions[:, :2], axis=0))
    assert np.all(signs == -1)
    centres = [p.center for p in fig.axes[0].patches if type(p) is Ellipse]
    expected = sens.coordinate_samples(1, 2).mean(axis=0) * signs
    np.testing.assert_allclose(centres, expected, atol=1e-12)


def test_every_loading_panel_states_eps_delta_n_or_nonprivate(result, compared, small_frame):
    from dppca import pc_dir
    from dppca.plotting import privacy_caption

    dp = "eps=0.5, delta=1e-05, n=200"
    for kind in ("vector", "point", "heatmap"):
        assert find_caption(plot_loading(result, kind=kind)).get_text() == dp
        fig = plot_loading(compared, kind=kind)
        panels = [ax for ax in fig.axes if find_caption(ax) is not None]
        texts = [find_caption(ax).get_text() for ax in panels]
        assert texts == [dp, "non-private, n=200"]
    # a result holding a comparison is, as a whole, not private
    assert privacy_caption(compared) == "non-private, n=200"
    plain = LoadingResult.from_directions(pc_dir(small_frame, 2))
    ax = plot_loading(plain, kind="point", title="mine")
    assert ax.get_title() == "mine"
    assert find_caption(ax).get_text() == "non-private, n=200"


def test_dp_panel_with_nonprivate_signs_is_titled_and_captioned_nonprivate(small_frame):
    res = dp_loading(
        small_frame,
        eps=0.5,
        delta=1e-5,
        random_state=125,
        compare=True,
        sign_reference="nonprivate",
    )
    for kind in ("vector", "heatmap"):
        fig = plot_loading(res, kind=kind)
        titles = [ax.get_title() for ax in fig.axes if ax.get_title()]
        assert titles[0] == "DP loadings with non-private signs (not DP)"
        assert "DP loadings" not in titles
        assert find_caption(fig.axes[0]).get_text().startswith("non-private")
