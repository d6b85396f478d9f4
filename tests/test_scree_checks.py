"""Scree values that are not estimates, and pooling across a misordering, say so."""

from __future__ import annotations

import numpy as np
import pytest

from dppca import dp_scree
from dppca.core.exceptions import AccuracyWarning, InaccurateReleaseError
from dppca.releases.scree.checks import MISORDER_Z, misorder_note, scree_problems


def _rotation() -> np.ndarray:
    q, _ = np.linalg.qr(np.random.default_rng(0).standard_normal((10, 10)))
    return q


def spiked() -> np.ndarray:
    """5000 x 10, eigenvalues 9, 4, 2 and seven 1s (total variance about 22)."""
    rng = np.random.default_rng(0)
    q, _ = np.linalg.qr(rng.standard_normal((10, 10)))
    return (rng.standard_normal((5000, 10)) * np.sqrt([9.0, 4.0, 2.0] + [1.0] * 7)) @ q.T


def outliers() -> tuple[np.ndarray, np.ndarray]:
    """The spiked table plus 5 % gross outliers along its smallest-variance axis."""
    q = _rotation()
    rng = np.random.default_rng(1)
    y = (rng.standard_normal((5000, 10)) * np.sqrt([9.0, 4.0, 2.0] + [1.0] * 7)) @ q.T
    out = rng.random(5000) < 0.05
    y[out] += 34.0 * q[:, 9] * rng.choice([-1.0, 1.0], out.sum())[:, None]
    return y, q


@pytest.mark.parametrize("eps", [0.5, 1.0, 2.0])
def test_clip_scan_off_its_ladder_is_not_drawn_as_an_estimate(eps):
    # Issue 25's first case: seed 19 sends the scan to the ladder's top rung
    # (2**70) at every eps, with a released total variance of 0. It was found
    # with random matchings, the default at n = 5000 then (all pairs now), so
    # the case is replayed with pairing="random".
    with pytest.warns(AccuracyWarning, match="not an estimate: the clip-level scan stopped"):
        res = dp_scree(spiked(), 3, eps=eps, delta=1e-6, random_state=19, pairing="random")
    assert res.clip_level == 2.0**70
    assert any("total variance is 0" in p for p in res.problems)
    ax = res.plot(kind="scree")
    assert not ax.lines and "not an estimate" in ax.get_title()
    assert any("Not an estimate" in t.get_text() for t in ax.texts)


def test_clip_scan_off_its_ladder_raises_after_the_spend_with_error():
    with pytest.raises(InaccurateReleaseError, match="cost recorded") as info:
        dp_scree(
            spiked(), 3, eps=1.0, delta=1e-6, random_state=19, pairing="random", accuracy="error"
        )
    assert info.value.result.problems


def test_a_good_scan_has_no_problems():
    res = dp_scree(spiked(), 3, eps=1.0, delta=1e-6, random_state=0)
    assert res.problems == () and res.order_note is None
    assert res.trace > 0


def test_pooling_across_a_misordering_warns_and_keeps_the_unpooled_values():
    # Issue 25's second case: the private PC3 is the outlier axis; the
    # monotone fit would show PC1-PC3 at one pooled value.
    y, _ = outliers()
    with pytest.warns(AccuracyWarning, match="variance order differs from the directions'"):
        res = dp_scree(y, 3, eps=1.0, delta=1e-6, random_state=0)
    assert np.ptp(res.scree) < 1e-9  # pooled into one value
    raw = res.unpooled_values[0]
    cov = np.cov(y, rowvar=False)
    v = res.directions
    truth = np.einsum("jl,jk,kl->l", v, cov, v)
    # the unpooled values estimate the variances along the released directions:
    # noise sd about 1.5 each, and the clip bias is small here; allow 6 sd
    assert np.all(np.abs(raw - truth) <= 6 * res.noise_sd[0] + 0.05 * truth)
    ax = res.plot(kind="scree")
    assert any(c.get_label() == "Unpooled" for c in ax.containers)


def test_scree_problems_rules():
    ladder = np.ldexp(1.0, np.arange(-30, 71))
    ok = scree_problems(np.array([9.0, 4.0, 2.0]), 22.0, 0.1, 64.0, ladder)
    assert ok == ()
    assert scree_problems(np.array([9.0, 4.0]), 22.0, 0.1, ladder[0], ladder)
    assert scree_problems(np.array([9.0, 4.0]), 0.0, 0.1, 64.0, None)
    assert scree_problems(np.array([9.0, 4.0]), 22.0, 0.1, 1e6, None)  # 22 < 1e6 / 1000
    assert scree_problems(np.array([90.0, 4.0]), 94.0, 0.1, 64.0, None)  # above the clip
    assert scree_problems(np.array([9.0, 4.0]), 22.0, 0.1, ladder[-1], None) != ()


def test_misorder_needs_a_difference_beyond_the_noise():
    sd = np.array([1.0, 1.0, 1.0])
    # a rise of MISORDER_Z sds of the difference (sqrt(2) sd) is the edge
    edge = MISORDER_Z * np.sqrt(2.0)
    assert misorder_note(np.array([5.0, 5.0 + 0.99 * edge, 1.0]), sd) is None
    note = misorder_note(np.array([5.0, 5.0 + 1.01 * edge, 1.0]), sd)
    assert note is not None and "PC2" in note and "PC1" in note
