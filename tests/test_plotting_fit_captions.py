"""Every picture of one fit states the fit's total (eps, delta) first."""

from __future__ import annotations

import matplotlib.pyplot as plt
import pytest

from dppca import dp_pca
from dppca.datasets import load_iris
from dppca.plotting import privacy_caption
from dppca.plotting._caption import find_caption
from dppca.plotting._fit import fit_part_line

KINDS = ("scree", "score", "loading", "variable", "biplot")
# the part each picture is drawn from (None: drawn from the whole fit)
PART = {"scree": "scree", "score": "score", "loading": "directions"}


@pytest.fixture(scope="module", params=["standardized", "units"])
def fit(request):
    # bounds give the standardised fit a score plot, so its directions are a
    # strict part of the total; the units fit splits over three parts
    kw = {"bounds": (0.0, 10.0)} if request.param == "standardized" else {"standardize": False}
    return dp_pca(load_iris(), eps=1.0, delta=1e-6, random_state=0, **kw)


def _part(fit, kind):
    return {"scree": fit.scree, "score": fit.score, "loading": fit.loading}[kind]


@pytest.mark.parametrize("kind", KINDS)
def test_every_picture_of_a_fit_states_the_fit_total_first(fit, kind):
    _, ax = plt.subplots()
    assert fit.plot(kind, ax=ax) is ax
    lines = find_caption(ax).get_text().split("\n")
    assert lines[0] == privacy_caption(fit, private=True) == "eps=1, delta=1e-06, n=150"
    if kind in PART:
        part = _part(fit, kind)
        assert part.eps < fit.eps  # the fixture's fits split their total
        expected = f"{PART[kind]}: eps={part.eps:.3g}, delta={part.delta:.2g}, "
        assert lines[1] == expected + "part of a fit of eps=1"
    else:
        assert not any("part of a fit" in line for line in lines)


def test_a_part_that_costs_the_whole_total_adds_no_line():
    fit = dp_pca(load_iris(), eps=1.0, delta=1e-6, random_state=0)  # no score: all to directions
    assert fit_part_line(fit, "directions", fit.loading) is None
    ax = fit.plot("loading")
    assert find_caption(ax).get_text() == "eps=1, delta=1e-06, n=150"


def test_the_part_results_keep_their_own_caption(fit):
    # drawn on their own (not through the fit), parts still state their own cost
    ax = fit.loading.plot()
    assert find_caption(ax).get_text().split("\n")[0] == privacy_caption(fit.loading)
