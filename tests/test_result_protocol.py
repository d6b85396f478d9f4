"""Every result type through the same checks: one protocol for all results.

DirectionsResult, LoadingResult, ScreeResult and ScoreResult share names for
the same things (``cost``, ``eps``, ``delta``, ``n``, ``variables``, a
computed ``private``, ``has_comparison``, ``nonprivate_parts()``,
``to_frame()``) and one plotting convention: ``plot()`` returns the
matplotlib Axes it drew on. Each case below is a result and the value its
``private`` must have.
"""

from __future__ import annotations

import ast
import dataclasses
from collections.abc import Mapping
from pathlib import Path
from types import MappingProxyType

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest
from matplotlib.axes import Axes

import dppca
import dppca.plotting
from dppca import (
    DirectionsResult,
    LoadingResult,
    ScoreResult,
    ScreeResult,
    dp_loading,
    dp_pc_dir,
    dp_score,
    dp_scree,
    pc_dir,
)
from dppca.releases.engine import ReleasePlan
from dppca.releases.protocol import ReleaseResult

PRIV = {"eps": 0.8, "delta": 1e-5}
FRAME = ((-12.0, 12.0), (-12.0, 12.0))
LABELS = np.repeat(["u", "v"], 100)


def _directions(X):
    return dp_pc_dir(X, 3, random_state=1, **PRIV)


def _score(X, **kwargs):
    return dp_score(X, directions=np.eye(5), frame=FRAME, random_state=3, **PRIV, **kwargs)


# name -> (factory of small_frame, expected private, expected has_comparison)
CASES = {
    "directions": (_directions, True, False),
    "directions_pc_dir": (lambda X: pc_dir(X, 3), False, False),
    "loading": (lambda X: dp_loading(X, random_state=1, **PRIV), True, False),
    "loading_compare": (
        lambda X: dp_loading(X, compare=True, random_state=1, **PRIV),
        False,
        True,
    ),
    "loading_pc_dir": (lambda X: LoadingResult.from_directions(pc_dir(X, 3)), False, False),
    "scree": (lambda X: dp_scree(X, 3, random_state=2, **PRIV), True, False),
    "scree_compare": (lambda X: dp_scree(X, 3, compare=True, random_state=2, **PRIV), False, True),
    "scree_public_directions": (
        lambda X: dp_scree(X, 3, directions=np.eye(5), random_state=2, **PRIV),
        True,
        False,
    ),
    "score": (lambda X: _score(X), True, False),
    "score_compare": (lambda X: _score(X, compare=True), False, True),
    "score_labels_from_data": (lambda X: _score(X, groups=LABELS), False, False),
    "score_public_labels": (
        lambda X: _score(X, groups=LABELS, group_labels=["u", "v", "w"]),
        True,
        False,
    ),
    "score_labels_declared_public": (
        lambda X: _score(X, groups=LABELS, groups_public=True),
        True,
        False,
    ),
    "score_private_directions": (
        lambda X: dp_score(X, frame=FRAME, method=["add", "sparse"], random_state=4, **PRIV),
        True,
        False,
    ),
}

TYPES = (DirectionsResult, LoadingResult, ScreeResult, ScoreResult)


@pytest.fixture(params=sorted(CASES))
def case(request, small_frame):
    make, private, comparison = CASES[request.param]
    return make(small_frame), private, comparison


def _walk(value, path="result", seen=None):
    """Yield (path, value) for everything reachable from a result's fields."""
    seen = set() if seen is None else seen
    if id(value) in seen:
        return
    seen.add(id(value))
    yield path, value
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        for f in dataclasses.fields(value):
            yield from _walk(getattr(value, f.name), f"{path}.{f.name}", seen)
    elif isinstance(value, Mapping):
        for k, v in value.items():
            yield from _walk(v, f"{path}[{k!r}]", seen)
    elif isinstance(value, tuple | list):
        for i, v in enumerate(value):
            yield from _walk(v, f"{path}[{i}]", seen)


def test_the_cases_cover_every_result_type(small_frame):
    assert {type(make(small_frame)) for make, _, _ in CASES.values()} == set(TYPES)
    assert {t.__name__ for t in TYPES} <= set(dppca.__all__)


def test_result_follows_the_protocol(case):
    res, _, _ = case
    assert isinstance(res, TYPES) and isinstance(res, ReleaseResult)
    assert isinstance(res.n, int) and res.n == 200
    assert isinstance(res.variables, tuple) and res.variables == ("a", "b", "c", "d", "e")
    if res.cost is None:
        assert res.eps is None and res.delta is None
    else:
        assert (res.eps, res.delta) == (res.cost.eps, res.cost.delta)


def test_private_is_computed_from_what_the_result_holds(case):
    res, private, comparison = case
    assert res.private is private
    assert res.has_comparison is comparison
    assert bool(res.nonprivate_parts()) is not private
    assert ("nonprivate" in "".join(res.nonprivate_parts())) is comparison


def test_result_is_frozen(case):
    res, _, _ = case
    for f in dataclasses.fields(res):
        with pytest.raises(dataclasses.FrozenInstanceError):
            setattr(res, f.name, getattr(res, f.name))
    with pytest.raises(AttributeError):
        res.private = True  # computed, not stored


def test_every_array_and_mapping_in_a_result_is_read_only(case):
    res, _, _ = case
    for path, value in _walk(res):
        if isinstance(value, np.ndarray):
            assert not value.flags.writeable, path
            with pytest.raises(ValueError, match="read-only"):
                value.flat[0] = 0.0
        elif isinstance(value, Mapping):
            assert isinstance(value, MappingProxyType), path
        assert not isinstance(value, list | dict | set), path
        if dataclasses.is_dataclass(value) and not isinstance(value, type):
            assert type(value).__dataclass_params__.frozen, path


def test_no_seed_or_generator_is_stored(case):
    res, _, _ = case
    banned = (
        np.random.Generator,
        np.random.BitGenerator,
        np.random.SeedSequence,
        np.random.RandomState,
    )
    for path, value in _walk(res):
        assert not isinstance(value, banned), path
        last = path.rsplit(".", 1)[-1].lower()
        assert "seed" not in last and "random_state" not in last and "rng" not in last, path


def test_repr_is_one_line_naming_the_type(case):
    res, _, _ = case
    text = repr(res)
    assert text.startswith(type(res).__name__ + "(") and "\n" not in text
    assert ("non-private" in text) if res.cost is None else (f"eps={res.eps:g}" in text)


def test_to_frame_is_a_dataframe(case):
    res, _, _ = case
    frame = res.to_frame()
    assert isinstance(frame, pd.DataFrame) and len(frame) > 0


def test_plot_returns_the_axes_it_drew_on(case):
    res, _, comparison = case
    ax = res.plot()
    assert isinstance(ax, Axes) and ax.has_data()
    plt.close("all")
    if isinstance(res, LoadingResult) and comparison:
        _, given = plt.subplots(1, 2)
        assert res.plot(ax=given) is given[0]
        assert res.plot(compare=False, ax=given[1]) is given[1]
    else:
        _, given = plt.subplots()
        assert res.plot(ax=given) is given


@pytest.mark.parametrize(("kind", "panels"), [("panels", 1), ("groups", 3)])
def test_multi_panel_score_plots_return_their_first_axes(small_frame, kind, panels):
    res = _score(small_frame, groups=LABELS, group_labels=["u", "v"])
    ax = res.plot(kind)
    assert isinstance(ax, Axes) and ax is ax.figure.axes[0] and ax.has_data()
    fig, given = plt.subplots(1, panels, squeeze=False)
    assert res.plot(kind, ax=given) is given[0, 0]
    assert all(a.has_data() for a in given.ravel())
    assert getattr(dppca.plotting, f"plot_score_{kind}")(res, ax=list(given.ravel())) is fig
    with pytest.raises(ValueError, match="ax must be"):
        res.plot(kind, ax=given[0, :1] if panels > 1 else [given[0, 0], given[0, 0]])


def test_old_names_are_gone(small_frame):
    dirs = _directions(small_frame)
    score = dp_score(small_frame, directions=dirs, frame=FRAME, random_state=3, **PRIV)
    assert not hasattr(score, "directions_result")
    loading = dp_loading(small_frame, directions=dirs, compare=True)
    assert loading.has_comparison and not hasattr(loading, "compare")
    scree = dp_scree(small_frame, 3, directions=dirs, random_state=2, **PRIV)
    assert scree.directions_source == "private release" == score.directions_source
    assert type(scree.directions_source) is str
    with pytest.raises(ValueError, match="directions_source"):
        dataclasses.replace(scree, directions_source="private (earlier release)")


def test_private_is_computed_not_passed(small_frame):
    dirs = _directions(small_frame)
    with pytest.raises(TypeError, match="private"):
        dataclasses.replace(dirs, private=False)
    assert dataclasses.replace(dirs, sigma=dirs.sigma).private
    scree = dp_scree(small_frame, 3, compare=True, random_state=2, **PRIV)
    stripped = dataclasses.replace(scree, nonprivate_values=None, nonprivate_trace=None)
    assert not scree.private and stripped.private


def test_unknown_directions_source_is_refused(small_frame):
    scree = dp_scree(small_frame, 3, directions=np.eye(5), random_state=2, **PRIV)
    with pytest.raises(ValueError, match="directions_source"):
        dataclasses.replace(scree, directions_source="somewhere")


def _private_reads(source: str) -> list[str]:
    """Underscore names a module imports from another dppca module, or reads off an object.

    Relative imports count (``from .state import _helper`` reaches into a
    sibling); attributes of ``self`` and ``cls`` are the module's own.
    """
    allowed = {"_get_renderer"}  # matplotlib's, on non-Agg canvases only
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and (
            node.level >= 1 or (node.module or "").startswith("dppca")
        ):
            found += [f"{a.name} from {node.module}" for a in node.names if a.name[0] == "_"]
        if isinstance(node, ast.Attribute) and node.attr.startswith("_"):
            own = isinstance(node.value, ast.Name) and node.value.id in {"self", "cls"}
            if not (own or node.attr.startswith("__") or node.attr in allowed):
                found.append(f"line {node.lineno} reads {node.attr}")
    return found


def test_the_private_name_check_sees_imports_and_reads():
    assert _private_reads("from .state import Release, _directions_of") == [
        "_directions_of from state"
    ]
    assert _private_reads("from ..score import _check_group_count") != []
    assert _private_reads("import dppca.releases.scree as s\ns._pve(1)") == ["line 2 reads _pve"]
    assert _private_reads("from ._caption import add_privacy_caption\nself._x") == []


@pytest.mark.parametrize("package", ["plotting", "app"])
def test_presentation_reads_no_private_names_of_other_modules(package):
    root = Path(dppca.__file__).resolve().parent / package
    for path in sorted(root.glob("*.py")):
        found = _private_reads(path.read_text(encoding="utf-8"))
        assert not found, f"{package}/{path.name}: {found}"


# Each plan and the releases its parts name, in the order the release draws them.
PLANS = {
    "directions": (
        lambda: dppca.plan_pc_dir(600, 6, eps=0.9, delta=1e-6),
        ["noisy spherical Kendall matrix"],
    ),
    "loading": (
        lambda: dppca.plan_loading(600, 6, eps=0.9, delta=1e-6, design="balanced"),
        ["noisy spherical Kendall matrix"],
    ),
    "scree": (
        lambda: dppca.plan_scree(600, 6, 3, eps=0.9, delta=1e-6, method=("clipped", "huber")),
        [
            "noisy spherical Kendall matrix",
            "clip level",
            "clipped moments",
            "Huber scale",
            "Huber scree",
        ],
    ),
    "scree, given directions": (
        lambda: dppca.plan_scree(600, 6, 3, eps=0.9, delta=1e-6, directions_given=True),
        ["clip level", "clipped moments"],
    ),
    "score": (
        lambda: dppca.plan_score(600, 6, eps=0.9, delta=1e-6, groups=3, method=("sparse", "add")),
        [
            "noisy spherical Kendall matrix",
            "group sizes",
            "frame centre PC1",
            "frame half width PC1",
            "frame centre PC2",
            "frame half width PC2",
            "sparse histogram",
            "add histogram",
        ],
    ),
}


@pytest.mark.parametrize("name", sorted(PLANS))
def test_every_plan_lists_its_leaf_parts_in_draw_order(name):
    make, expected = PLANS[name]
    plan = make()
    assert isinstance(plan, ReleasePlan)
    assert isinstance(plan.parts, tuple)
    assert tuple(part.cost for part in plan.parts) == plan.cost.leaves()
    assert all(not part.cost.parts for part in plan.parts)  # leaves, not composed costs
    assert len(plan.parts) == len(expected)
    for part, start in zip(plan.parts, expected, strict=True):
        assert part.name.startswith(start), (part.name, start)
