"""Tests of the scree / PVE plot."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pytest

from dppca import dp_scree
from dppca.plotting import plot_scree


@pytest.fixture
def result(small_data):
    return dp_scree(small_data, 4, eps=0.5, delta=1e-5, method=["clipped", "pmwm"], random_state=0)


@pytest.fixture
def compared(small_data):
    return dp_scree(small_data, 3, eps=0.5, delta=1e-5, compare=True, random_state=0)


def test_pve_plot_draws_one_line_per_method_on_the_given_axes(result):
    _, ax = plt.subplots()
    out = plot_scree(result, ax=ax)
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
    ax = result.plot(kind="scree")
    assert ax.get_ylim() == pytest.approx((0.0, 1.05 * float(np.max(result.values))))


def test_no_nonprivate_curve_without_compare(compared):
    ax = plot_scree(compared)
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert "Non-private" not in labels and len(ax.get_lines()) == 1


def test_compare_adds_a_labelled_nonprivate_curve(compared):
    ax = plot_scree(compared, kind="scree", compare=True)
    lines = ax.get_lines()
    assert [ln.get_label() for ln in lines] == ["Clipped", "Non-private"]
    np.testing.assert_allclose(lines[1].get_ydata(), compared.nonprivate_values)
    top = 1.05 * max(float(np.max(compared.values)), float(np.max(compared.nonprivate_values)))
    assert ax.get_ylim() == pytest.approx((0.0, top))


def test_compare_needs_a_result_with_comparison(result):
    with pytest.raises(ValueError, match="compare=True"):
        plot_scree(result, compare=True)


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
