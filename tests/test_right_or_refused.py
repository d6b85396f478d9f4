"""Right or refused, on the bundled real tables at the README's budget.

A private picture that is wrong must have warned (``AccuracyWarning`` from the
data-free forecast) before anything was spent. These tests count, over fixed
noise seeds, the releases that are wrong *and* quiet. The definitions are those
of ``benchmarks/bench_accuracy.py``: a scree is right when every PVE of the
total is within 0.10 of the truth along its released directions; a frame is
right when it holds at least 80 % of the rows.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from dppca import dp_score, dp_scree
from dppca.core.exceptions import AccuracyWarning
from dppca.datasets import load_breast_cancer, load_iris, load_wine

EPS, DELTA, SEEDS = 1.0, 1e-6, 20
TABLES = {"wine": load_wine, "iris": load_iris, "breast_cancer": load_breast_cancer}


def _warned(function, *args, **kwargs):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = function(*args, **kwargs)
    return result, any(issubclass(w.category, AccuracyWarning) for w in caught)


def _scree_outcomes(frame):
    x = frame.to_numpy(dtype=float)
    cov = np.cov(x, rowvar=False)
    k = min(3, x.shape[1])
    out = []
    for seed in range(SEEDS):
        res, warned = _warned(dp_scree, frame, k, eps=EPS, delta=DELTA, random_state=seed)
        v = np.asarray(res.directions)
        truth = np.einsum("jl,jk,kl->l", v, cov, v) / np.trace(cov)
        out.append((float(np.max(np.abs(np.asarray(res.pve_total) - truth))) <= 0.10, warned))
    return out


def _frame_outcomes(frame):
    out = []
    for seed in range(SEEDS):
        res, warned = _warned(
            dp_score, frame, eps=EPS, delta=DELTA, random_state=seed, compare=True
        )
        s = np.asarray(res.nonprivate.scores)
        inside = (
            (s[:, 0] >= res.xlim[0])
            & (s[:, 0] <= res.xlim[1])
            & (s[:, 1] >= res.ylim[0])
            & (s[:, 1] <= res.ylim[1])
        )
        out.append((float(inside.mean()) >= 0.80, warned))
    return out


@pytest.fixture(scope="module")
def outcomes():
    return {
        name: {"scree": _scree_outcomes(load()), "frame": _frame_outcomes(load())}
        for name, load in TABLES.items()
    }


@pytest.mark.parametrize("picture", ["scree", "frame"])
def test_wrong_releases_warned_before_spending(outcomes, picture):
    # The issue allows at most 5 % silently wrong releases; the benchmark measured
    # none in 60 (and 0-1 % over 120 with the synthetic tables). At a true rate of
    # 5 %, 3 or fewer of 60 happen with probability 0.65; a rate of 15 % passes
    # this check with probability 0.02.
    pooled = [o for table in outcomes.values() for o in table[picture]]
    silent = sum(1 for right, warned in pooled if not right and not warned)
    assert silent <= 3, f"{silent} of {len(pooled)} {picture} releases wrong without a warning"


def test_breast_cancer_scree_and_frame_are_usually_right(outcomes):
    # 569 rows at eps = 1: measured right in 0.90 (scree) and 1.0 (frame) of 20
    # seeds. At a true rate of 0.85, 14 or more of 20 happen with probability 0.93;
    # the pre-issue release (0 of 10) or any rate below 0.5 fails (P <= 0.06).
    table = outcomes["breast_cancer"]
    assert sum(right for right, _ in table["scree"]) >= 14
    assert sum(right for right, _ in table["frame"]) >= 14


def test_small_tables_say_so(outcomes):
    # Wine (178) and iris (150) are below the size where a scree at eps = 1 is
    # reliable; the forecast, which sees only n, p and the budget, warns on all.
    for name in ("wine", "iris"):
        assert all(warned for _, warned in outcomes[name]["scree"])
