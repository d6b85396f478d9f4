"""Release files bound to the ledger that paid them by a keyed hash (HMAC-SHA256)."""

from __future__ import annotations

import json
import sqlite3

import pytest

from dppca import PrivacyWarning, dp_pc_dir, load_release, save_release
from dppca.privacy.ledger import Ledger, fingerprint
from dppca.privacy.mechanisms import kendall_sigma

EPS, DELTA = 0.5, 1e-6


def _paid_file(tmp_path, small_frame, ledger):
    fp = fingerprint(small_frame)
    ledger.set_total(fp, 2.0, 1e-5)
    budget = ledger.budget(fp, kind="directions")
    result = dp_pc_dir(small_frame, 2, eps=EPS, delta=DELTA, random_state=3, budget=budget)
    return fp, save_release(result, tmp_path / "d.json", data=small_frame, budget=budget)


def _replace(node, old, new):
    """``node`` (parsed JSON) with every number equal to ``old`` replaced by ``new``."""
    if isinstance(node, dict):
        return {k: _replace(v, old, new) for k, v in node.items()}
    if isinstance(node, list):
        return [_replace(v, old, new) for v in node]
    return new if isinstance(node, float) and node == old else node


def _forge_cheaper(path, n):
    """Claim eps = EPS / 10 with the sigma that eps would need: a consistent, false cost."""
    document = json.loads(path.read_text())
    old_sigma, new_sigma = kendall_sigma(n, EPS, DELTA), kendall_sigma(n, EPS / 10, DELTA)
    document = _replace(_replace(document, EPS, EPS / 10), old_sigma, new_sigma)
    path.write_text(json.dumps(document, indent=1))


def test_a_saved_file_carries_the_ledgers_tag_but_never_its_key(tmp_path, small_frame):
    ledger = Ledger(tmp_path / "l.sqlite")
    _, path = _paid_file(tmp_path, small_frame, ledger)
    tag = json.loads(path.read_text())["ledger_tag"]
    ledger_id, key = ledger._binding(create=False)
    assert tag["ledger"] == ledger_id and len(tag["hmac_sha256"]) == 64
    text = path.read_text()
    assert key.hex() not in text and key.hex().upper() not in text
    # the stored copy of the file (shown again by the app) holds the same text
    stored = Ledger(tmp_path / "l.sqlite").stored_releases(fingerprint(small_frame))
    assert [payload for _, _, payload in stored] == [text]


def test_the_paying_ledger_reuses_its_own_file_for_free(tmp_path, small_frame):
    ledger = Ledger(tmp_path / "l.sqlite")
    fp, path = _paid_file(tmp_path, small_frame, ledger)
    load_release(path, data=small_frame, budget=ledger.budget(fp, kind="reuse"))
    assert len(ledger.releases(fp)) == 1


def test_a_forged_cost_is_detected_not_believed(tmp_path, small_frame):
    ledger = Ledger(tmp_path / "l.sqlite")
    fp, path = _paid_file(tmp_path, small_frame, ledger)
    _forge_cheaper(path, len(small_frame))
    # Every fact agrees with the mechanism it claims, so the file alone cannot tell...
    assert load_release(path).cost.eps == pytest.approx(EPS / 10)
    # ...but the ledger named in it did not pay for it: refused, nothing charged.
    with pytest.raises(ValueError, match="not the release this ledger paid for"):
        load_release(path, data=small_frame, budget=ledger.budget(fp, kind="reuse"))
    assert len(ledger.releases(fp)) == 1


def test_a_file_without_a_tag_is_charged_at_its_word_with_a_warning(tmp_path, small_frame):
    ledger = Ledger(tmp_path / "l.sqlite")
    fp, path = _paid_file(tmp_path, small_frame, ledger)
    _forge_cheaper(path, len(small_frame))
    document = json.loads(path.read_text())
    del document["ledger_tag"]  # as a file saved without a ledger (or by dppca < 0.13)
    path.write_text(json.dumps(document))
    with pytest.warns(PrivacyWarning, match="no tag of this ledger"):
        load_release(path, data=small_frame, budget=ledger.budget(fp, kind="reuse"))
    assert ledger.releases(fp)["eps"].tolist() == pytest.approx([EPS, EPS / 10])


def test_another_ledgers_file_is_charged_with_a_warning(tmp_path, small_frame):
    fp, path = _paid_file(tmp_path, small_frame, Ledger(tmp_path / "first.sqlite"))
    other = Ledger(tmp_path / "other.sqlite")
    other.set_total(fp, 2.0, 1e-5)
    with pytest.warns(PrivacyWarning, match="no tag of this ledger"):
        load_release(path, data=small_frame, budget=other.budget(fp, kind="reuse"))
    assert other.releases(fp)["eps"].tolist() == pytest.approx([EPS])


def test_a_damaged_tag_is_refused(tmp_path, small_frame):
    ledger = Ledger(tmp_path / "l.sqlite")
    fp, path = _paid_file(tmp_path, small_frame, ledger)
    document = json.loads(path.read_text())
    document["ledger_tag"] = {"ledger": 1}
    path.write_text(json.dumps(document))
    with pytest.raises(ValueError, match="ledger_tag"):
        load_release(path, data=small_frame, budget=ledger.budget(fp, kind="reuse"))


def test_a_schema_3_ledger_is_upgraded_and_keeps_its_spending(tmp_path, small_frame):
    path = tmp_path / "l.sqlite"
    fp, _ = _paid_file(tmp_path, small_frame, Ledger(path))
    with sqlite3.connect(path) as con:  # as dppca 0.12 left it: no binding table
        con.execute("DROP TABLE binding")
        con.execute("PRAGMA user_version = 3")
    con.close()
    again = Ledger(path)
    assert again.releases(fp)["eps"].tolist() == pytest.approx([EPS])
    assert again._binding(create=False) is None  # made at the first tagged file
    with sqlite3.connect(path) as con:
        assert con.execute("PRAGMA user_version").fetchone()[0] == 5
    con.close()


def test_the_command_line_refuses_a_forged_file_of_its_ledger(tmp_path, small_frame, capsys):
    from dppca.cli import main

    csv = tmp_path / "d.csv"
    small_frame.to_csv(csv, index=False)
    ledger = ["--ledger", str(tmp_path / "l.sqlite")]
    common = ["--delta", str(DELTA), "--accuracy", "ignore", *ledger]
    total = ["--budget-eps", "2", "--budget-delta", "1e-5"]
    saved = str(tmp_path / "d.json")
    argv = ["directions", str(csv), "--eps", str(EPS), *common, *total, "-k", "2"]
    assert main([*argv, "--save-release", saved]) == 0
    _forge_cheaper(tmp_path / "d.json", len(small_frame))
    capsys.readouterr()
    scree = ["scree", str(csv), "--eps", "0.3", *common, "-k", "2", "--directions", saved]
    assert main(scree) == 2
    err = capsys.readouterr().err
    assert "not the release this ledger paid for" in err and err.count("\n") == 1
    assert len(Ledger(tmp_path / "l.sqlite").releases(fingerprint(small_frame))) == 1


def test_an_upgraded_ledger_tags_its_next_file(tmp_path, small_frame):
    import shutil
    from pathlib import Path

    path = tmp_path / "l.sqlite"
    shutil.copy(Path(__file__).parent / "data" / "ledger_schema3.sqlite", path)
    ledger = Ledger(path)
    assert ledger._binding(create=False) is None
    _, saved = _paid_file(tmp_path, small_frame, ledger)
    binding = ledger._binding(create=False)
    assert binding is not None
    assert json.loads(saved.read_text())["ledger_tag"]["ledger"] == binding[0]
    assert len(ledger.datasets()) == 2  # the fixture's table and this one
