"""Results in notebooks: short reprs, an HTML view (picture, cost, meaning), bad keywords."""

from __future__ import annotations

import re

import pytest

from dppca import (
    LoadingResult,
    PrivacyCost,
    attacker_sentence,
    dp_loading,
    dp_pc_dir,
    dp_score,
    dp_scree,
    pc_dir,
)


@pytest.fixture
def directions(small_data):
    return dp_pc_dir(small_data, eps=1.0, delta=1e-5, random_state=0)


def _results(small_data, directions):
    scree = dp_scree(small_data, eps=1.0, delta=1e-5, directions=directions, random_state=1)
    score = dp_score(small_data, eps=1.0, delta=1e-5, directions=directions, random_state=2)
    return {
        "directions": directions,
        "loading": LoadingResult.from_directions(directions),
        "scree": scree,
        "score": score,
    }


def test_every_result_shows_picture_cost_and_meaning_in_a_notebook(small_data, directions):
    for name, res in _results(small_data, directions).items():
        page = res._repr_html_()
        images = re.findall(r"src='data:image/png;base64,([A-Za-z0-9+/=]+)'", page)
        assert len(images) == 1 and len(images[0]) > 1000, name
        assert f"eps = {res.cost.eps:.3g}" in page, name
        assert attacker_sentence(res.cost) in page, name
        assert res.privacy_sentence() == attacker_sentence(res.cost)
        assert "No picture" not in page, name


def test_the_view_lists_what_qualifies_a_result(small_data):
    page = pc_dir(small_data, 2)._repr_html_()
    assert "not private" in page.lower() and "Warnings" in page
    # an inaccurate release carries its forecast's problem into the view
    import warnings

    from dppca import AccuracyWarning

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", AccuracyWarning)
        weak = dp_pc_dir(small_data, eps=0.05, delta=1e-5, random_state=0)
    assert weak.forecast is not None and not weak.forecast.ok
    assert "Forecast:" in weak._repr_html_()


def test_reprs_are_one_short_line(small_data, directions):
    for res in _results(small_data, directions).values():
        text = repr(res)
        assert "\n" not in text and len(text) < 160
    cost = directions.cost
    assert repr(cost) == f"PrivacyCost(eps=1, delta=1e-05, mechanism={cost.mechanism!r})"
    assert str(cost) == "(eps=1, delta=1e-05)"
    composed = _results(small_data, directions)["scree"].cost
    assert re.fullmatch(
        r"PrivacyCost\(eps=[^,]+, delta=[^,]+, mechanism='.*', parts=\d+\)", repr(composed)
    )


def test_docs_show_what_res_cost_prints():
    from pathlib import Path

    index = (Path(__file__).resolve().parents[1] / "docs" / "index.rst").read_text()
    shown = re.search(r"res\.cost\s+# (.*)", index).group(1)
    from dppca.datasets import load_gau

    res = dp_loading(load_gau()[:400], eps=0.5, delta=1e-5, random_state=0)
    assert repr(res.cost) == shown


@pytest.mark.parametrize(
    ("kind", "call"),
    [("vector", "arrow"), ("point", "scatter"), ("heatmap", "imshow")],
)
def test_unknown_plot_keywords_are_refused_with_the_valid_ones(directions, kind, call):
    with pytest.raises(TypeError, match=rf"'xlim'.*Axes\.{call}: .*\balpha\b") as info:
        directions.plot(kind, xlim=(0, 1))
    assert "ax.set_xlim" in str(info.value)
    directions.plot(kind, alpha=0.5)  # a valid keyword still reaches the artist


def test_misspelt_keywords_get_a_suggestion(small_data, directions):
    results = _results(small_data, directions)
    with pytest.raises(TypeError, match="did you mean 'linewidth'"):
        results["scree"].plot(linewidht=2)
    with pytest.raises(TypeError, match="plot_score got an unexpected keyword argument 'colour'"):
        results["score"].plot(colour="red")


def test_a_cost_without_noise_fields_still_has_a_sentence():
    cost = PrivacyCost(1.0, 1e-6, "generic", "x")
    assert "at most" in attacker_sentence(cost)


def test_a_fit_shows_its_picture_cost_meaning_and_notes():
    import warnings

    from dppca import AccuracyWarning, dp_pca
    from dppca.datasets import load_wine

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", AccuracyWarning)
        fit = dp_pca(load_wine(), eps=2.0, delta=1e-6, random_state=0)
    page = fit._repr_html_()
    assert "data:image/png;base64," in page
    assert attacker_sentence(fit.cost) in page
    assert fit.notes and all(n.replace("'", "&#x27;") in page for n in fit.notes)


def test_a_fit_summary_states_the_attacker_sentence():
    import warnings

    from dppca import AccuracyWarning, dp_pca
    from dppca.datasets import load_wine

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", AccuracyWarning)
        fit = dp_pca(load_wine(), eps=2.0, delta=1e-6, score=False, random_state=0)
    assert attacker_sentence(fit.cost) in str(fit.summary())


def test_reprs_round_a_stretched_share(small_data, directions):
    # a tight stretch leaves shares such as 0.28991673; reprs show 4 and 3 digits
    from dataclasses import replace

    cost = PrivacyCost(0.28991673, 2.3076923e-7, "gaussian", "x")
    for res in _results(small_data, directions).values():
        field = "directions" if isinstance(res, LoadingResult) else None
        shown = (
            replace(res, directions=replace(res.directions, cost=cost))
            if field
            else (replace(res, cost=cost))
        )
        assert "eps=0.2899, delta=2.31e-07" in repr(shown), type(res).__name__
