"""Tests for dppca.plotting.score: panels read results only, limits are the private frame."""

from __future__ import annotations

import subprocess
import sys

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest
from matplotlib.collections import PathCollection, PolyCollection
from matplotlib.colors import to_rgba

from dppca import dp_score, sample_points
from dppca.plotting import group_color_map, plot_score, plot_score_groups, plot_score_panels
from dppca.plotting._caption import find_caption
from dppca.plotting.score import COLORBAR_LABEL


@pytest.fixture
def result(small_data: np.ndarray):
    return dp_score(
        small_data,
        eps=0.8,
        delta=1e-5,
        bins=(5, 4),
        method=["add", "sparse"],
        directions=np.eye(5),
        frame=((-9.0, 9.0), (-6.0, 6.0)),
        compare=True,
        random_state=0,
    )


@pytest.fixture
def grouped_result(rng: np.random.Generator):
    X = np.vstack([rng.normal(size=(1000, 3)) + c for c in ([-8, 0, 0], [8, 0, 0], [0, 8, 0])])
    labels = np.repeat(["x", "y", "z"], 1000)
    return dp_score(X, eps=0.9, delta=1e-5, groups=labels, directions=np.eye(3), random_state=1)


def _polys(ax) -> list[PolyCollection]:
    return [c for c in ax.collections if isinstance(c, PolyCollection)]


def _panels(fig) -> list:
    """The figure's panels, without colour bar axes."""
    return [ax for ax in fig.axes if not hasattr(ax, "_colorbar")]


def _colorbars(fig) -> list:
    return [ax._colorbar for ax in fig.axes if hasattr(ax, "_colorbar")]


def test_histogram_panel_uses_private_frame_and_probabilities(result) -> None:
    _, ax = plt.subplots()
    out = plot_score(result, method="add", ax=ax)
    assert out is ax
    assert ax.get_xlim() == pytest.approx(result.xlim)
    assert ax.get_ylim() == pytest.approx(result.ylim)
    assert ax.get_aspect() == 1.0
    assert ax.get_xlabel() == "PC1" and ax.get_ylabel() == "PC2"
    (coll,) = _polys(ax)
    prob = result.probs["add"][0]
    assert len(coll.get_paths()) == int((prob > 0).sum())
    alphas = coll.get_facecolors()[:, 3]
    # opacity follows probability: the largest probability is fully opaque
    assert alphas.max() == pytest.approx(1.0)
    assert np.allclose(np.sort(alphas), np.sort(prob[prob > 0] / prob.max()))
    assert "DP" in ax.get_title()


def test_sample_panel_plots_given_points(result) -> None:
    pts = sample_points(result, size=50, random_state=3)
    ax = plot_score(result, kind="sample", sample=pts)
    (coll,) = [c for c in ax.collections if isinstance(c, PathCollection)]
    assert np.allclose(coll.get_offsets(), pts.to_numpy())
    assert ax.get_xlim() == pytest.approx(result.xlim)
    with pytest.raises(TypeError, match="sample"):
        plot_score(result, kind="sample")


def test_nonprivate_panels_are_labelled_and_need_compare(result, small_data) -> None:
    ax = plot_score(result, kind="scatter")
    assert "NON-PRIVATE" in ax.get_title()
    ax = plot_score(result, kind="nonprivate")
    assert "NON-PRIVATE" in ax.get_title()
    plain = dp_score(
        small_data,
        eps=0.8,
        delta=1e-5,
        directions=np.eye(5),
        frame=(result.xlim, result.ylim),
        random_state=0,
    )
    with pytest.raises(ValueError, match="compare=True"):
        plot_score(plain, kind="scatter")
    with pytest.raises(ValueError, match="kind"):
        plot_score(plain, kind="pie")


def test_panels_figure_layout(result) -> None:
    fig = plot_score_panels(result)
    titles = [ax.get_title() for ax in _panels(fig)]
    assert titles == ["Add DP histogram", "Sparse DP histogram"]
    assert not any("NON-PRIVATE" in t for t in titles)
    samples = {"add": sample_points(result, size=30, random_state=1)}
    first = result.plot("panels", samples=samples, compare=True)
    fig = first.figure
    assert first is fig.axes[0] and first.get_title() == "NON-PRIVATE scores"
    titles = [ax.get_title() for ax in _panels(fig) if ax.axison]
    assert sum("NON-PRIVATE" in t for t in titles) == 2
    assert "Sample from add DP histogram" in titles
    for ax in _panels(fig):
        if ax.axison:
            assert ax.get_xlim() == pytest.approx(result.xlim)
    # one colour bar per histogram panel: 2 DP and 1 non-private
    assert len(_colorbars(fig)) == 3


def test_grouped_histogram_colours_and_legend(grouped_result) -> None:
    colors = {"x": "red", "y": "green", "z": "blue"}
    ax = plot_score(grouped_result, group_colors=colors)
    legend = ax.get_legend()
    assert [t.get_text() for t in legend.get_texts()] == ["x", "y", "z"]
    (coll,) = _polys(ax)
    rgb = {tuple(np.round(c[:3], 6)) for c in coll.get_facecolors()}
    allowed = {tuple(np.round(to_rgba(c)[:3], 6)) for c in colors.values()}
    assert rgb <= allowed
    assert plot_score(grouped_result, legend=False).get_legend() is None


def test_grouped_sample_points_are_coloured_by_group(grouped_result) -> None:
    pts = sample_points(grouped_result, size=90, random_state=0)
    ax = plot_score(grouped_result, kind="sample", sample=pts, group_colors=["k", "r", "b"])
    (coll,) = [c for c in ax.collections if isinstance(c, PathCollection)]
    faces = coll.get_facecolors()[:, :3]
    expected = np.array([to_rgba({"x": "k", "y": "r", "z": "b"}[g])[:3] for g in pts["group"]])
    assert np.allclose(faces, expected)


def test_group_facets_one_panel_per_group(grouped_result) -> None:
    fig = plot_score_groups(grouped_result)
    visible = [ax for ax in _panels(fig) if ax.axison]
    assert [ax.get_title() for ax in visible][1:] == ["x", "y", "z"]
    for ax in visible:
        assert ax.get_xlim() == pytest.approx(grouped_result.xlim)
    fig = grouped_result.plot("groups", overlay=False, ncols=2).figure
    assert sum(ax.axison for ax in _panels(fig)) == 3


def test_group_color_map_options() -> None:
    assert group_color_map(["a", "b", "c"], ["r", "g"]) == {"a": "r", "b": "g", "c": "r"}
    cmap = group_color_map(["a", "b"], {"b": "k"})
    assert cmap["b"] == "k" and cmap["a"] != "k"
    assert len(set(group_color_map(list("abcde")).values())) == 5
    with pytest.raises(ValueError, match="empty"):
        group_color_map(["a"], [])


def test_plots_leave_results_and_samples_untouched(grouped_result) -> None:
    pts = sample_points(grouped_result, size=40, random_state=0)
    before = pts.copy()
    plot_score(grouped_result, kind="sample", sample=pts)
    pd.testing.assert_frame_equal(pts, before)


def test_import_dppca_does_not_load_matplotlib() -> None:
    code = "import sys, dppca; dppca.dp_score; print('matplotlib' in sys.modules)"
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        env={"PYTHONPATH": "src", "PATH": ""},
    )
    assert out.stdout.strip() == "False"


# --------------------------------------------------------------------------
# Colour bars, captions and the privacy note
# --------------------------------------------------------------------------


def test_histogram_colour_bar_spans_the_released_probabilities(result) -> None:
    _, ax = plt.subplots()
    plot_score(result, method="add", ax=ax, alpha_range=(0.2, 0.9))
    (bar,) = _colorbars(ax.figure)
    top = float(np.max(result.probs["add"]))
    assert top > 0
    assert bar.norm.vmin == 0.0 and bar.norm.vmax == pytest.approx(top)
    assert bar.ax.get_ylabel() == COLORBAR_LABEL
    # the bar's ends are the bins' own colours: the fill colour at the opacity range's ends
    assert np.allclose(bar.cmap(0.0), to_rgba("#6A5ACD", 0.2))
    assert np.allclose(bar.cmap(1.0), to_rgba("#6A5ACD", 0.9))
    assert not _colorbars(plot_score(result, colorbar=False).figure)


def test_colour_bar_of_an_empty_release_runs_over_zero_to_one(result) -> None:
    empty = {m: np.zeros_like(p) for m, p in result.probs.items()}
    blank = type(result)(**{**result.__dict__, "probs": empty})
    (bar,) = _colorbars(plot_score(blank).figure)
    assert (bar.norm.vmin, bar.norm.vmax) == (0.0, 1.0)


def test_grouped_colour_bar_is_grey_and_below_the_legend_side(grouped_result) -> None:
    ax = plot_score(grouped_result)
    (bar,) = _colorbars(ax.figure)
    assert bar.orientation == "horizontal"
    assert np.allclose(bar.cmap(1.0)[:3], to_rgba("0.15")[:3])
    (bar,) = _colorbars(plot_score(grouped_result, legend=False).figure)
    assert bar.orientation == "vertical"


def test_private_panels_state_eps_delta_n_and_that_points_are_hidden(result) -> None:
    ax = plot_score(result)
    first, note = find_caption(ax).get_text().splitlines()
    assert first == "eps=0.8, delta=1e-05, n=200"
    assert "no data points" in note and "privacy" in note
    pts = sample_points(result, size=20, random_state=0)
    text = find_caption(plot_score(result, kind="sample", sample=pts)).get_text()
    assert text.startswith("eps=0.8") and "synthetic" in text


def test_grouped_panels_state_eps_delta_n_and_that_the_labels_are_not_private(
    grouped_result,
) -> None:
    figures = (plot_score_panels(grouped_result), plot_score_groups(grouped_result))
    for ax in [plot_score(grouped_result)] + [a for f in figures for a in _panels(f)]:
        if not ax.axison or find_caption(ax) is None:
            continue
        first, second, *_ = find_caption(ax).get_text().splitlines()
        assert first == "eps=0.9, delta=1e-05, n=3000"
        assert second == "group labels read from the data, not private"


def test_cli_grouped_score_figure_is_captioned_with_eps_delta_and_n(tmp_path) -> None:
    from dppca.cli import main

    out = tmp_path / "score.png"
    argv = [
        "score",
        "--dataset",
        "gau_g",
        "--groups",
        "group",
        "--eps",
        "1",
        "--delta",
        "1e-5",
        "--method",
        "add,sparse",
        "--out",
        str(out),
        "--no-ledger",
    ]
    captured = []
    original = plt.Figure.savefig

    def keep(fig, *args, **kwargs):
        captured.extend(find_caption(ax) for ax in fig.axes if find_caption(ax) is not None)
        return original(fig, *args, **kwargs)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(plt.Figure, "savefig", keep)
        assert main(argv) == 0
    texts = [c.get_text() for c in captured]
    assert texts and all(t.startswith("eps=1, delta=1e-05, n=5000") for t in texts)
    assert all("group labels read from the data, not private" in t for t in texts)


def test_nonprivate_panels_say_so_in_the_caption(result) -> None:
    for kind in ("scatter", "nonprivate"):
        ax = plot_score(result, kind=kind)
        assert find_caption(ax).get_text() == "non-private, n=200"
    bars = _colorbars(plot_score(result, kind="nonprivate").figure)
    assert "non-private" in bars[0].ax.get_ylabel()


def test_every_panel_of_the_figures_has_a_caption(result, grouped_result) -> None:
    for fig in (plot_score_panels(result, compare=True), plot_score_groups(grouped_result)):
        for ax in _panels(fig):
            if ax.axison:
                assert find_caption(ax) is not None
    fig = plot_score_groups(grouped_result)
    assert len(_colorbars(fig)) == 4  # the overlay and one per group
