"""Figures a reader can trust: % of private variance on axes, labels as written."""

from __future__ import annotations

import numpy as np
import pandas as pd

from dppca import dp_score, dp_scree
from dppca.plotting.score import group_text, plot_score, plot_score_groups


def _released(rng):
    X = rng.standard_normal((1500, 4)) * np.array([3.0, 2.0, 1.0, 0.5])
    frame = pd.DataFrame(X, columns=list("abcd"))
    frame["g"] = np.where(X[:, 0] > 0, 1.0, 2.0)  # a numeric label column
    score = dp_score(frame, eps=2.0, delta=1e-6, groups="g", random_state=0, accuracy="ignore")
    scree = dp_scree(
        frame.drop(columns="g"),
        2,
        eps=1.0,
        delta=1e-6,
        directions=score.directions_release,
        random_state=1,
        accuracy="ignore",
    )
    return score, scree


def test_score_axes_show_the_private_share_of_total_variance(rng):
    score, scree = _released(rng)
    ax = plot_score(score, variances=scree)
    pve = scree.pve_total
    assert ax.get_xlabel() == f"PC1 ({100 * pve[0]:.0f}% of private total variance)"
    assert ax.get_ylabel() == f"PC2 ({100 * pve[1]:.0f}% of private total variance)"
    assert plot_score(score).get_xlabel() == "PC1"


def test_numeric_group_labels_show_as_written(rng):
    score, scree = _released(rng)
    assert group_text(1.0) == "1" and group_text(2.5) == "2.5" and group_text("a") == "a"
    ax = plot_score(score)
    texts = [t.get_text() for t in ax.get_legend().get_texts()]
    assert texts == ["1", "2"]
    fig = plot_score_groups(score, variances=scree)
    titles = [a.get_title() for a in fig.axes]
    assert "1" in titles and "2" in titles and "1.0" not in titles


def test_privacy_caption_is_readable_at_print_size(rng):
    from dppca.plotting._caption import find_caption

    score, _ = _released(rng)
    ax = plot_score(score)
    assert find_caption(ax).get_fontsize() >= 9
