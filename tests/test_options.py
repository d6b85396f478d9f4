"""Option objects: checked once, at construction, from their constraints tables."""

from __future__ import annotations

import dataclasses

import pytest

from dppca.core import options as options_module
from dppca.core.options import (
    DesignOptions,
    DirectionsOptions,
    LoadingOptions,
    PrivacyOptions,
    evolve,
    invalid_examples,
    split_settings,
)
from dppca.releases.pca.options import PCAOptions
from dppca.releases.report import ReportOptions
from dppca.releases.score.options import ScoreOptions
from dppca.releases.scree.options import ScreeOptions

REQUIRED = {
    PrivacyOptions: {"eps": 1.0, "delta": 1e-6},
    DirectionsOptions: {},
    DesignOptions: {},
    LoadingOptions: {},
    ScreeOptions: {},
    ScoreOptions: {},
    ReportOptions: {},
    PCAOptions: {},
}
CASES = [(cls, name, value) for cls in REQUIRED for name, value in invalid_examples(cls)]


@pytest.mark.parametrize(
    "cls, name, value", CASES, ids=[f"{c.__name__}-{n}-{v!r}" for c, n, v in CASES]
)
def test_every_constraint_refuses_its_invalid_values_naming_the_option(cls, name, value):
    # generated from the table: one refusal per (option, bad value), message from the template
    with pytest.raises((TypeError, ValueError), match=rf"^{name} must be "):
        cls(**{**REQUIRED[cls], name: value})


@pytest.mark.parametrize("cls", list(REQUIRED))
def test_every_constraint_has_invalid_examples_and_names_a_field(cls):
    fields = {f.name for f in dataclasses.fields(cls)}
    for name, constraint in cls._parameter_constraints.items():
        assert name in fields
        assert constraint.invalid(), name


def test_defaults_are_valid_and_values_are_normalised():
    privacy = PrivacyOptions(eps=1, delta=1e-6)  # ints are welcome, stored as floats
    assert isinstance(privacy.eps, float) and privacy.calibration == "analytic"


def test_each_option_is_checked_once_and_evolve_checks_nothing(monkeypatch):
    seen: list[str] = []
    real = options_module.validate

    def counting(name, value, constraint):
        seen.append(name)
        return real(name, value, constraint)

    monkeypatch.setattr(options_module, "validate", counting)
    privacy = PrivacyOptions(eps=1.0, delta=1e-6)
    assert sorted(seen) == sorted(PrivacyOptions._parameter_constraints)
    seen.clear()
    smaller = evolve(privacy, eps=0.5)
    assert seen == [] and smaller.eps == 0.5 and smaller.delta == privacy.delta


def test_unknown_settings_are_refused_like_unknown_keywords():
    with pytest.raises(TypeError, match="unexpected keyword argument 'epsilon'"):
        split_settings("plan_pc_dir", {"eps": 1.0, "delta": 1e-6, "epsilon": 1}, DirectionsOptions)


def test_option_objects_are_frozen():
    with pytest.raises(dataclasses.FrozenInstanceError):
        PrivacyOptions(eps=1.0, delta=1e-6).eps = 2.0  # type: ignore[misc]


@pytest.mark.slow  # about 5 s: a whole report page
def test_a_report_checks_each_option_once(monkeypatch):
    # one report() prices three releases many times over (the stretch solver);
    # every option, the bounds included, is still checked exactly once
    import numpy as np

    import dppca

    counts: dict[str, int] = {}
    real_validate, real_bounds = options_module.validate, options_module.check_bounds

    def counting(name, value, constraint):
        counts[name] = counts.get(name, 0) + 1
        return real_validate(name, value, constraint)

    def counting_bounds(bounds, names):
        counts["bounds"] = counts.get("bounds", 0) + 1
        return real_bounds(bounds, names)

    monkeypatch.setattr(options_module, "validate", counting)
    monkeypatch.setattr(options_module, "check_bounds", counting_bounds)
    X = np.random.default_rng(3).uniform(-1.0, 1.0, size=(60, 3))
    dppca.report(X, eps=2.0, delta=1e-5, bounds=(-1.0, 1.0), accuracy="ignore", random_state=0)
    assert counts and set(counts.values()) == {1}, counts


@pytest.mark.parametrize("standardize", [True, False])
def test_a_pca_fit_checks_each_option_once(monkeypatch, standardize):
    # a fit prices its steps (directions, scree, score) at every stretch the
    # solver tries; the steps' options are derived from the fit's, never
    # checked again: each option once, the bounds as given once and the
    # bounds in the scaled units (a derived value) once
    import numpy as np

    import dppca
    import dppca.releases.pca.plan  # its default options are checked at import

    counts: dict[str, int] = {}
    real_validate, real_bounds = options_module.validate, options_module.check_bounds

    def counting(name, value, constraint):
        counts[name] = counts.get(name, 0) + 1
        return real_validate(name, value, constraint)

    def counting_bounds(bounds, names):
        key = "bounds" if bounds is given else "scaled bounds"
        counts[key] = counts.get(key, 0) + 1
        return real_bounds(bounds, names)

    monkeypatch.setattr(options_module, "validate", counting)
    monkeypatch.setattr(options_module, "check_bounds", counting_bounds)
    X = np.random.default_rng(3).uniform(-1.0, 1.0, size=(60, 3))
    given = (-1.0, 1.0)
    dppca.plan_pca(60, 3, eps=2.0, delta=1e-5, bounds=given, standardize=standardize)
    assert counts and set(counts.values()) == {1}, counts
    counts.clear()
    fit = dppca.dp_pca(
        X,
        eps=2.0,
        delta=1e-5,
        bounds=given,
        standardize=standardize,
        accuracy="ignore",
        random_state=0,
    )
    assert fit.cost.eps == pytest.approx(2.0)
    assert counts and set(counts.values()) == {1}, counts
