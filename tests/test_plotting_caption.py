"""Tests of the privacy caption shared by every figure."""

from __future__ import annotations

from types import SimpleNamespace

import matplotlib.pyplot as plt
import pytest

from dppca import dp_pc_dir, pc_dir
from dppca.plotting import add_privacy_caption, privacy_caption
from dppca.plotting._caption import CAPTION_GID, find_caption


def test_caption_of_private_and_nonprivate_directions(small_data):
    dp = dp_pc_dir(small_data, 2, eps=0.5, delta=1e-5, random_state=0)
    assert privacy_caption(dp) == "eps=0.5, delta=1e-05, n=200"
    assert privacy_caption(pc_dir(small_data, 2)) == "non-private, n=200"
    # a panel showing only a comparison says so, whatever the result
    assert privacy_caption(dp, private=False) == "non-private, n=200"


def test_caption_formats_at_readable_precision_and_skips_missing_attributes():
    res = SimpleNamespace(eps=0.123456789, delta=2.5e-7, n=1234)
    assert privacy_caption(res) == "eps=0.123, delta=2.5e-07, n=1234"
    # a tight total a hair under its target reads as the target
    tight = SimpleNamespace(eps=0.9999999997, delta=1.0000000001e-5)
    assert privacy_caption(tight) == "eps=1, delta=1e-05"
    assert privacy_caption(SimpleNamespace(eps=1.0, delta=1e-6)) == "eps=1, delta=1e-06"
    # claiming privacy without (eps, delta) is impossible
    assert privacy_caption(SimpleNamespace(n=10), private=True) == "non-private, n=10"


def test_caption_sits_between_title_and_axes_and_is_replaced_not_stacked():
    _, ax = plt.subplots()
    ax.set_title("A title")
    res = SimpleNamespace(eps=1.0, delta=1e-6, n=50, private=True)
    first = add_privacy_caption(ax, res)
    assert first.get_gid() == CAPTION_GID and find_caption(ax) is first
    second = add_privacy_caption(ax, res, note="a note")
    assert [t.get_gid() for t in ax.texts] == [CAPTION_GID]
    assert second.get_text() == "eps=1, delta=1e-06, n=50\na note"
    assert ax.get_title() == "A title"
    ax.figure.canvas.draw()
    renderer = ax.figure.canvas.get_renderer()
    box = second.get_window_extent(renderer)
    assert box.y0 >= ax.get_window_extent(renderer).y1
    assert ax.title.get_window_extent(renderer).y0 >= box.y1 - 0.5
    assert second.get_fontsize() < ax.title.get_fontsize()


def test_caption_without_a_title_leaves_the_title_empty():
    _, ax = plt.subplots()
    add_privacy_caption(ax, SimpleNamespace(eps=1.0, delta=1e-6, n=5))
    assert ax.get_title() == ""
    assert find_caption(ax).get_text().startswith("eps=1")


@pytest.mark.parametrize("private", [True, False])
def test_caption_reads_only_public_attributes(private):
    class Strict:
        eps, delta, n = 0.3, 1e-5, 99

        def __getattr__(self, name):  # anything else (data, seeds) is off limits
            raise AssertionError(f"caption read {name!r}")

    Strict.private = private
    text = privacy_caption(Strict())
    assert text.endswith("n=99") and ("eps=0.3" in text) is private
