"""Tests of release files: save, load, refuse what is not released."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from dppca import (
    DirectionsResult,
    PrivacyWarning,
    ScoreResult,
    ScreeResult,
    dp_loading,
    dp_pc_dir,
    dp_score,
    dp_scree,
    load_release,
    pc_dir,
    save_release,
)
from dppca.datasets import load_gau_g
from dppca.privacy.fingerprint import fingerprint
from dppca.release_io import SCHEMA_VERSION, release_info

PRIV = {"eps": 0.8, "delta": 1e-5, "calibration": "analytic", "ties": "zero"}


@pytest.fixture
def directions(small_frame):
    return dp_pc_dir(small_frame, 3, random_state=1, **PRIV)


def _same(a, b):
    assert type(a) is type(b) and repr(a) == repr(b)
    pd.testing.assert_frame_equal(a.to_frame(), b.to_frame())


def test_every_result_round_trips_exactly(tmp_path, small_frame, directions):
    results = [
        directions,
        dp_loading(small_frame, directions=directions),
        dp_scree(small_frame, 3, directions=directions, random_state=2, **PRIV),
        dp_score(
            small_frame, directions=directions, random_state=3, frame=((-9, 9), (-9, 9)), **PRIV
        ),
    ]
    for res in results:
        path = save_release(res, tmp_path / "r.json", data=small_frame)
        _same(load_release(path), res)
    again = load_release(save_release(directions, tmp_path / "d"))
    np.testing.assert_array_equal(again.noisy_matrix, directions.noisy_matrix)
    assert again.cost == directions.cost


def test_files_name_the_public_module_of_each_type(tmp_path, small_frame, directions):
    # The estimate modules are packages now; a file must still name the public
    # path (dppca.releases.score:ScoreResult), so that the layout inside a package can
    # change without changing the file format.
    loading = dp_loading(small_frame, directions=directions)
    score = dp_score(small_frame, directions=directions, random_state=3, **PRIV)
    for res, name in [
        (directions, "dppca.releases.directions:DirectionsResult"),
        (loading, "dppca.releases.loading:LoadingResult"),
        (score, "dppca.releases.score:ScoreResult"),
    ]:
        doc = json.loads(save_release(res, tmp_path / "r.json").read_text())
        assert doc["result"]["$dataclass"] == name


def test_grouped_score_round_trips(tmp_path):
    res = dp_score(load_gau_g(), groups="group", method=["add", "sparse"], random_state=0, **PRIV)
    loaded = load_release(save_release(res, tmp_path / "s.json"))
    _same(loaded, res)
    assert loaded.groups == res.groups and loaded.noise["sparse"] == res.noise["sparse"]


def test_file_is_versioned_json_with_costs_and_no_seed(tmp_path, small_frame, directions):
    path = save_release(directions, tmp_path / "d.json", data=small_frame)
    doc = json.loads(path.read_text())
    assert doc["format"] == "dppca-release" and doc["schema_version"] == SCHEMA_VERSION
    assert doc["n"] == 200 and doc["variables"] == list(small_frame.columns)
    assert doc["data_fingerprint"] == "sha256:" + fingerprint(small_frame)
    assert "seed" not in path.read_text() and "random_state" not in path.read_text()
    info = release_info(path)
    assert info["new_cost"] == directions.cost and info["reuses"] == []


def test_reused_directions_are_not_counted_as_new(tmp_path, small_frame, directions):
    scree = dp_scree(small_frame, 3, directions=directions, random_state=2, **PRIV)
    info = release_info(save_release(scree, tmp_path / "s.json"))
    assert not any("Kendall" in c.released for c in info["new_cost"].leaves())
    assert info["reuses"] == [directions.cost]
    loading = dp_loading(None, directions=directions)
    info = release_info(save_release(loading, tmp_path / "l.json", reused_directions=True))
    assert info["new_cost"] is None and info["reuses"] == [directions.cost]


def test_nonprivate_parts_are_refused_or_dropped(tmp_path, small_frame, directions):
    with pytest.raises(ValueError, match="not private"):
        save_release(pc_dir(small_frame), tmp_path / "x.json")
    scree = dp_scree(small_frame, 3, directions=directions, compare=True, random_state=2, **PRIV)
    with pytest.raises(ValueError, match="drop_nonprivate"):
        save_release(scree, tmp_path / "x.json")
    assert not (tmp_path / "x.json").exists()
    loaded = load_release(save_release(scree, tmp_path / "x.json", drop_nonprivate=True))
    assert isinstance(loaded, ScreeResult) and loaded.nonprivate_values is None
    assert "nonprivate" not in (tmp_path / "x.json").read_text().replace("nonprivate_", "")
    loading = dp_loading(small_frame, directions=directions, compare=True)
    with pytest.raises(ValueError, match="non-private parts"):
        save_release(loading, tmp_path / "y.json")


def test_load_checks_kind_data_and_schema(tmp_path, small_frame, directions):
    path = save_release(directions, tmp_path / "d.json", data=small_frame)
    assert isinstance(
        load_release(path, kind=DirectionsResult, data=small_frame), DirectionsResult
    )
    with pytest.raises(ValueError, match="not a ScreeResult"):
        load_release(path, kind=ScreeResult)
    other = small_frame.copy()
    other.iloc[0, 0] += 1.0
    with pytest.raises(ValueError, match="other data"):
        load_release(path, data=other)
    doc = json.loads(path.read_text())
    doc["schema_version"] = SCHEMA_VERSION + 1
    path.write_text(json.dumps(doc))
    with pytest.raises(ValueError, match="schema"):
        load_release(path)
    (tmp_path / "bad.json").write_text("{not json")
    with pytest.raises(ValueError, match="not a dppca release"):
        load_release(tmp_path / "bad.json")
    doc = json.loads(save_release(directions, tmp_path / "e.json").read_text())
    doc["result"]["$dataclass"] = "os:system"
    (tmp_path / "evil.json").write_text(json.dumps(doc))
    with pytest.raises(ValueError, match="outside the release types"):
        load_release(tmp_path / "evil.json")


def test_files_from_before_the_result_protocol_still_load(tmp_path, small_frame, directions):
    # Older files stored ScoreResult.directions_result and no ScoreResult.variables
    # or groups_source.
    scree = dp_scree(small_frame, 3, directions=directions, random_state=2, **PRIV)
    score = dp_score(
        small_frame, directions=directions, random_state=3, frame=((-9, 9), (-9, 9)), **PRIV
    )
    for res in (directions, scree, score):
        path = save_release(res, tmp_path / "r.json")
        doc = json.loads(path.read_text())
        fields = doc["result"]["fields"]
        assert "private" not in fields  # computed now, so not written
        if isinstance(res, ScoreResult):
            fields["directions_result"] = fields.pop("directions_release")
            del fields["variables"], fields["groups_source"]
        path.write_text(json.dumps(doc))
        loaded = load_release(path)
        _same(loaded, res)
        assert loaded.private and loaded.variables == tuple(small_frame.columns)
        if not isinstance(res, DirectionsResult):
            assert loaded.directions_source == "private release"
            assert loaded.directions_release.cost == directions.cost


def test_grouped_score_from_an_older_file_is_not_taken_to_be_private(tmp_path):
    res = dp_score(
        load_gau_g(),
        groups="group",
        group_labels=[f"group{i}" for i in range(1, 6)],
        random_state=0,
        **PRIV,
    )
    assert res.private and res.groups_source == "public"
    path = save_release(res, tmp_path / "s.json")
    assert load_release(path).private
    doc = json.loads(path.read_text())
    del doc["result"]["fields"]["groups_source"]  # not recorded before
    path.write_text(json.dumps(doc))
    loaded = load_release(path)
    assert not loaded.private and loaded.nonprivate_parts() == ("groups",)


# ------------------------------------------------------------- files are data, not code


def _tampered(tmp_path, directions, change) -> Path:
    doc = json.loads(save_release(directions, tmp_path / "d.json").read_text())
    change(doc["result"]["fields"])
    path = tmp_path / "tampered.json"
    path.write_text(json.dumps(doc))
    return path


def _set_entry(fields, name, index, value):
    fields[name]["$array"][index] = value


@pytest.mark.parametrize(
    ("change", "match"),
    [
        (lambda f: _set_entry(f, "directions", 0, {"$float": "nan"}), "NaN or infinite"),
        (lambda f: _set_entry(f, "directions", 0, 0.9), "not orthonormal"),
        (lambda f: f["directions"].update(dtype="c16"), "only real numbers"),
        (lambda f: f["directions"].update(shape=[4, 3]), "do not fill its shape"),
        (lambda f: _set_entry(f, "noisy_matrix", 1, 5.0), "not a symmetric"),
        (lambda f: _set_entry(f, "directions", 1, "1e3"), "not real numbers"),
        (lambda f: f["cost"]["fields"].update(eps=-1.0), "cannot be built"),
        (
            lambda f: f.update(cost={"$dataclass": "dppca.__main__:main", "fields": {}}),
            "outside the release types",
        ),
        (lambda f: f.update(cost=None), "without its cost"),
    ],
)
def test_a_tampered_release_file_is_refused(tmp_path, directions, change, match):
    path = _tampered(tmp_path, directions, change)
    with pytest.raises(ValueError, match=match):
        load_release(path)


def test_naming_a_module_in_a_file_runs_nothing(tmp_path, directions, monkeypatch):
    import sys

    for name in ("dppca.__main__:main", "dppca.cli:main", "dppca.cli.__main__:x"):
        sys.modules.pop("dppca.__main__", None)
        path = _tampered(tmp_path, directions, lambda f, n=name: f.update(n={"$dataclass": n}))
        doc = json.loads(path.read_text())
        doc["result"]["$dataclass"] = name
        path.write_text(json.dumps(doc))
        with pytest.raises(ValueError, match="outside the release types"):
            load_release(path)
        assert "dppca.__main__" not in sys.modules


def test_a_release_is_reused_free_only_if_its_budget_holds_it(tmp_path, small_frame):
    from dppca import Budget, BudgetExceededError
    from dppca.release_io import release_hash

    budget = Budget(1.0, 1e-5)
    mine = dp_pc_dir(small_frame, 3, budget=budget, random_state=1, **PRIV)
    path = save_release(mine, tmp_path / "mine.json", budget=budget)
    assert budget.holds(release_hash(mine))
    load_release(path, budget=budget)
    assert len(budget.ledger) == 1  # free: the budget paid for it
    # Made without a budget (or forged with a made-up cost): charged at its cost.
    unrecorded = dp_pc_dir(small_frame, 3, random_state=2, eps=0.3, delta=1e-6)
    other = save_release(unrecorded, tmp_path / "other.json")
    load_release(other, budget=budget)
    assert len(budget.ledger) == 2 and budget.ledger[-1] == unrecorded.cost
    load_release(other, budget=budget)  # now it is held
    assert len(budget.ledger) == 2
    big = save_release(dp_pc_dir(small_frame, 3, random_state=3, **PRIV), tmp_path / "big.json")
    with pytest.raises(BudgetExceededError, match="not in this budget's records"):
        load_release(big, budget=budget)
    assert len(budget.ledger) == 2


def test_the_ledger_stores_paid_releases_for_a_reload(tmp_path, small_frame):
    from dppca.privacy.ledger import Ledger
    from dppca.release_io import release_hash, release_text

    led = Ledger(tmp_path / "l.sqlite")
    fp = fingerprint(small_frame)
    led.set_total(fp, 1.0, 1e-5)
    res = dp_pc_dir(small_frame, 3, random_state=1, eps=0.4, delta=1e-6)
    assert led.charge(fp, res.cost, kind="directions", payload=release_text(res)) == 1
    budget = led.budget(fp, kind="directions")
    second = dp_pc_dir(small_frame, 2, random_state=2, eps=0.3, delta=1e-6, budget=budget)
    save_release(second, tmp_path / "s.json", budget=budget)
    again = Ledger(tmp_path / "l.sqlite")
    stored = again.stored_releases(fp)
    assert [(number, kind) for number, kind, _ in stored] == [(1, "directions"), (2, "directions")]
    (tmp_path / "back.json").write_text(stored[0][2])
    _same(load_release(tmp_path / "back.json"), res)
    assert again.holds(fp, release_hash(res)) and again.holds(fp, release_hash(second))
    assert not again.holds("another", release_hash(res))
    with pytest.raises(ValueError, match="payload must be"):
        led.charge(fp, res.cost, kind="directions", payload="{}")


def test_the_command_line_charges_a_file_its_ledger_does_not_hold(tmp_path, small_frame, capsys):
    from dppca.cli import main
    from dppca.privacy.ledger import Ledger

    csv = tmp_path / "d.csv"
    small_frame.to_csv(csv, index=False)
    ledger = ["--ledger", str(tmp_path / "l.sqlite")]
    common = ["--delta", "1e-6", "--accuracy", "ignore"]
    argv = ["directions", str(csv), "--eps", "0.5", *common, "-k", "3"]
    unrecorded = [*argv[:2], "--eps", "0.9", *argv[4:], "--no-ledger"]
    assert main([*unrecorded, "--save-release", str(tmp_path / "free.json")]) == 0
    total = ["--budget-eps", "1", "--budget-delta", "1e-5"]
    assert main([*argv, *ledger, *total, "--save-release", str(tmp_path / "paid.json")]) == 0
    scree = ["scree", str(csv), "--eps", "0.3", *common, *ledger, "-k", "3"]
    assert main([*scree, "--directions", str(tmp_path / "paid.json")]) == 0
    fp = fingerprint(pd.read_csv(csv))
    assert Ledger(tmp_path / "l.sqlite").releases(fp)["kind"].tolist() == ["directions", "scree"]
    capsys.readouterr()
    assert main([*scree, "--directions", str(tmp_path / "free.json")]) == 2
    assert "not in this budget's records" in capsys.readouterr().err
    assert len(Ledger(tmp_path / "l.sqlite").releases(fp)) == 2


# ------------------------------------------------ what a file holds is charged (29.5)


def test_a_scree_file_holding_unpaid_directions_is_charged_for_both(tmp_path, small_frame):
    from dppca import Budget
    from dppca.privacy.cost import basic_total

    directions = dp_pc_dir(small_frame, 3, random_state=1, eps=0.5, delta=1e-6)
    scree = dp_scree(small_frame, 3, directions=directions, random_state=2, eps=0.2, delta=1e-6)
    path = save_release(scree, tmp_path / "s.json")  # paid by no budget
    budget = Budget(2.0, 1e-5)
    load_release(path, budget=budget)
    assert basic_total(budget.ledger)[0] >= 0.5 + 0.2 - 1e-9
    assert [c.eps for c in budget.ledger] == [0.5, scree.cost.eps]
    load_release(path, budget=budget)  # now held, with the directions inside it
    assert len(budget.ledger) == 2


def test_embedded_directions_the_budget_paid_are_not_charged_again(tmp_path, small_frame):
    from dppca import Budget, BudgetExceededError

    budget = Budget(1.0, 1e-5)
    directions = dp_pc_dir(small_frame, 3, budget=budget, random_state=1, eps=0.5, delta=1e-6)
    save_release(directions, tmp_path / "d.json", budget=budget)
    scree = dp_scree(small_frame, 3, directions=directions, random_state=2, eps=0.2, delta=1e-6)
    load_release(save_release(scree, tmp_path / "s.json"), budget=budget)
    assert [c.eps for c in budget.ledger] == [0.5, scree.cost.eps]
    loading = dp_loading(None, directions=directions)
    path = save_release(loading, tmp_path / "l.json", reused_directions=True)
    load_release(path, budget=budget)
    assert len(budget.ledger) == 2
    # A file whose parts do not all fit spends nothing.
    small = Budget(0.3, 1e-5)  # the scree alone (0.2) fits, with its directions not
    with pytest.raises(BudgetExceededError, match="not in this budget's records"):
        load_release(tmp_path / "s.json", budget=small)
    assert small.ledger == ()


# ------------------------------------- every fact checked against its mechanism (33.8)


def _every_cost(doc, **changes):
    for cost in (doc["cost"], doc["new_cost"], doc["result"]["fields"]["cost"]):
        cost["fields"].update(**changes)


def _rename(doc):
    names = [f"x{j}" for j in range(len(doc["variables"]))]
    doc["variables"] = names
    doc["result"]["fields"]["variables"]["$tuple"] = names


def _set_n(doc, n):
    doc["n"] = n
    doc["result"]["fields"]["n"] = n
    doc["result"]["fields"]["forecast"]["fields"]["n"] = n


@pytest.mark.parametrize(
    ("change", "field"),
    [
        (lambda d: _every_cost(d, eps=1e-12), "sigma"),
        (lambda d: _every_cost(d, sigma=d["cost"]["fields"]["sigma"] / 10), "sigma"),
        (lambda d: d["result"]["fields"].update(sigma=d["cost"]["fields"]["sigma"] * 10), "sigma"),
        (lambda d: _set_n(d, 5000), "sensitivity"),
        (lambda d: d.update(schema_version=0), "schema_version"),
        (lambda d: d.update(schema_version=-1), "schema_version"),
        (lambda d: d.update(schema_version=True), "schema_version"),
        (lambda d: d.update(comment="hi"), "comment"),
        (lambda d: d["result"]["fields"].update(note=1), "note"),
        (lambda d: d["result"]["fields"]["cost"].update(extra=1), "extra"),
        (lambda d: d.update(data_fingerprint="sha256:xyz"), "data_fingerprint"),
        (lambda d: d.update(n=True), "'n'"),
        (lambda d: d["result"]["fields"].update(estimator="bogus"), "estimator"),
        (lambda d: _every_cost(d, released="noisy Kendall's tau matrix / p (4 x 4)"), "estimator"),
        (lambda d: d["new_cost"]["fields"].update(eps=0.01), "new_cost"),
    ],
)
def test_a_file_whose_facts_disagree_with_its_mechanism_is_refused(
    tmp_path, small_frame, directions, change, field
):
    doc = json.loads(save_release(directions, tmp_path / "d.json", data=small_frame).read_text())
    change(doc)
    path = tmp_path / "x.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(ValueError, match=field):
        load_release(path, data=small_frame)


def test_a_tau_release_relabelled_as_kendall_is_refused(tmp_path, small_frame):
    tau = dp_pc_dir(small_frame, 2, random_state=1, estimator="tau", **PRIV)
    doc = json.loads(save_release(tau, tmp_path / "t.json").read_text())
    doc["result"]["fields"]["estimator"] = "kendall"
    _every_cost(doc, released="noisy spherical Kendall matrix (4 x 4)")
    (tmp_path / "x.json").write_text(json.dumps(doc))
    # p = 5: the tau bound is below the Kendall one, which is refused first
    with pytest.raises(ValueError, match=r"diagonal|sensitivity"):
        load_release(tmp_path / "x.json")


def test_a_file_with_renamed_variables_is_refused_on_its_data(tmp_path, small_frame, directions):
    doc = json.loads(save_release(directions, tmp_path / "d.json", data=small_frame).read_text())
    _rename(doc)
    (tmp_path / "x.json").write_text(json.dumps(doc))
    load_release(tmp_path / "x.json")  # without data there is nothing to compare with
    with pytest.raises(ValueError, match="variables"):
        load_release(tmp_path / "x.json", data=small_frame)


def test_a_file_without_a_fingerprint_is_not_reused_on_data(tmp_path, small_frame, directions):
    path = save_release(directions, tmp_path / "d.json")
    load_release(path)
    other = small_frame * 2.0  # same n and names, other data
    with pytest.raises(ValueError, match="data_fingerprint"):
        load_release(path, data=other)
    with pytest.raises(ValueError, match="data_fingerprint"):
        load_release(path, data=small_frame)


def test_a_deeply_nested_or_huge_file_is_refused_before_parsing(tmp_path, monkeypatch):
    from dppca import release_io

    deep = tmp_path / "deep.json"
    deep.write_text("[" * 200_000 + "]" * 200_000)
    with pytest.raises(ValueError, match="MAX_NESTING"):
        load_release(deep)
    # Brackets inside strings do not count.
    from dppca._release_document import nesting

    assert nesting(b'{"a": "[[[[[[", "b": [1, {"c": "]]"}]}', 64) == 3
    monkeypatch.setattr(release_io, "MAX_FILE_BYTES", 10)
    (tmp_path / "big.json").write_text('{"format": "dppca-release"}')
    with pytest.raises(ValueError, match="MAX_FILE_BYTES"):
        load_release(tmp_path / "big.json")


def test_the_command_line_refuses_a_forged_cost_with_one_line(tmp_path, small_frame, capsys):
    from dppca.cli import main

    csv = tmp_path / "d.csv"
    small_frame.to_csv(csv, index=False)
    common = ["--delta", "1e-6", "--accuracy", "ignore", "-k", "3"]
    ledger = ["--ledger", str(tmp_path / "l.sqlite"), "--budget-eps", "1"]
    ledger += ["--budget-delta", "1e-5"]
    argv = ["directions", str(csv), "--eps", "0.5", *common, "--no-ledger"]
    assert main([*argv, "--save-release", str(tmp_path / "d.json")]) == 0
    doc = json.loads((tmp_path / "d.json").read_text())
    _every_cost(doc, eps=1e-12)
    (tmp_path / "forged.json").write_text(json.dumps(doc))
    capsys.readouterr()
    scree = ["scree", str(csv), "--eps", "0.3", *common, *ledger]
    assert main([*scree, "--directions", str(tmp_path / "forged.json")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("dppca: error:") and "sigma" in err[0]
    if (tmp_path / "l.sqlite").exists():  # nothing spent
        from dppca.privacy.ledger import Ledger

        assert len(Ledger(tmp_path / "l.sqlite").releases(fingerprint(small_frame))) == 0


def test_a_ledger_charges_a_scree_file_and_its_directions_each_once(tmp_path, small_frame):
    from dppca.privacy.ledger import Ledger

    led = Ledger(tmp_path / "l.sqlite")
    fp = fingerprint(small_frame)
    led.set_total(fp, 2.0, 1e-5)
    directions = dp_pc_dir(small_frame, 3, random_state=1, eps=0.5, delta=1e-6)
    scree = dp_scree(small_frame, 3, directions=directions, random_state=2, eps=0.2, delta=1e-6)
    path = save_release(scree, tmp_path / "s.json", data=small_frame)
    with pytest.warns(PrivacyWarning, match="no tag of this ledger"):  # saved without one
        load_release(path, data=small_frame, budget=led.budget(fp, kind="reused release"))
    assert led.releases(fp)["eps"].tolist() == pytest.approx([0.5, scree.cost.eps])
    again = Ledger(tmp_path / "l.sqlite")
    load_release(path, data=small_frame, budget=again.budget(fp, kind="reused release"))
    d_path = save_release(directions, tmp_path / "d.json", data=small_frame)
    load_release(d_path, data=small_frame, budget=again.budget(fp, kind="reused release"))
    assert len(again.releases(fp)) == 2  # both are held now
