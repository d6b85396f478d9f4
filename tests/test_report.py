"""Tests of ``dppca.report`` and ``dppca report``: one offline page from one budget."""

from __future__ import annotations

import base64
import html
import io
import math
from html.parser import HTMLParser

import numpy as np
import pandas as pd
import pytest

from dppca import AccuracyWarning, Budget, BudgetExceededError, dp_pc_dir, report
from dppca.cli import main
from dppca.datasets import load_gau, load_gau_g, load_wine
from dppca.privacy.totals import tight_total
from dppca.releases.report import plan_report

REFERENCES = (
    "Kim, M. and Jung, S. (2025)",
    "Balle, B. and Wang, Y.-X. (2018)",
    "Durfee, D. (2023)",
    "Dwork, C. and Roth, A. (2014)",
)


class Page(HTMLParser):
    """Images, tables (as lists of rows of cell text), links and text of a page."""

    def __init__(self, text: str) -> None:
        super().__init__()
        self.images: list[str] = []
        self.links: list[str] = []
        self.tables: dict[str, list[list[str]]] = {}
        self.text: list[str] = []
        self._table: list[list[str]] | None = None
        self._cell: list[str] | None = None
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        for key in ("src", "href"):
            if key in attrs:
                self.links.append(attrs[key])
        if tag == "img":
            self.images.append(attrs.get("src", ""))
        elif tag == "table":
            self._table = []
            name = (attrs.get("class") or "").replace("dataframe", "").strip()
            self.tables[name] = self._table
        elif tag == "tr" and self._table is not None:
            self._table.append([])
        elif tag in ("td", "th") and self._table is not None:
            self._cell = []

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self._cell is not None:
            self._table[-1].append("".join(self._cell).strip())
            self._cell = None
        elif tag == "table":
            self._table = None

    def handle_data(self, data):
        self.text.append(data)
        if self._cell is not None:
            self._cell.append(data)


def _check_page(text: str, eps: float, delta: float) -> Page:
    page = Page(text)
    assert len(page.images) == 4  # loading, scree, score, privacy trade-off curve
    assert all(src.startswith("data:image/png;base64,") for src in page.images)
    for src in page.images:  # not even an address hidden in the image metadata
        assert b"http" not in base64.b64decode(src.split(",", 1)[1])
    assert not [link for link in page.links if link.lower().startswith(("http", "//"))]
    assert "http://" not in text and "https://" not in text
    assert {"loading", "scree", "score", "ledger"} <= set(page.tables)
    ledger = page.tables["ledger"]
    header, rows = ledger[0], ledger[1:]
    eps_col, delta_col = header.index("eps"), header.index("delta")
    total = [r for r in rows if r[0] == "total"]
    parts = [r for r in rows if r[0] != "total"]
    assert len(total) == 1
    # each release composes its parts tightly, so their claims add up to more
    # than the total (never less)
    assert sum(float(r[eps_col]) for r in parts) >= float(total[0][eps_col]) * (1 - 1e-3)
    assert math.isclose(float(total[0][eps_col]), eps, rel_tol=1e-3)
    # a Laplace (pure) part, such as the scree's joint release, spends no delta
    assert float(total[0][delta_col]) <= delta * (1 + 1e-3)
    assert sum("Kendall" in r[1] for r in parts) == 1  # the directions are paid once
    body = " ".join(page.text)
    assert all(ref in body for ref in REFERENCES)
    assert "sha256" not in text and "seed" not in body.lower()
    assert "tradeoff" in text and "An attacker testing whether" in body
    return page


def test_report_spends_one_budget_and_pays_directions_once(tmp_path):
    out = tmp_path / "gau.html"
    rep = report(
        load_gau(),
        eps=1.0,
        delta=1e-5,
        out=out,
        random_state=0,
        calibration="analytic",
        ties="zero",
    )
    assert out.read_text() == rep.html
    _check_page(rep.html, 1.0, 1e-5)
    assert rep.cost.eps == pytest.approx(1.0) and rep.cost.delta <= 1e-5 * (1 + 1e-12)
    assert rep.scree.directions_release is rep.directions
    assert rep.score.directions_release is rep.directions
    costs = [rep.directions.cost, rep.scree.cost, rep.score.cost]
    assert rep.budget.ledger == tuple(costs)
    # composed tightly: the parts' own eps add up to more than the total they meet
    assert tight_total(costs, 1e-5)[0] == pytest.approx(1.0, rel=1e-6)
    assert tight_total(costs, 1e-5)[0] <= 1.0 * (1 + 1e-9)
    assert math.fsum(c.eps for c in costs) > 1.2


def test_report_with_groups_and_own_shares():
    rep = report(
        load_gau_g(),
        eps=2.0,
        delta=1e-5,
        groups="group",
        groups_public=True,
        shares={"directions": 1, "scree": 1, "score": 2},
        random_state=1,
        calibration="analytic",
        ties="zero",
    )
    _check_page(rep.html, 2.0, 1e-5)
    assert rep.score.groups == tuple(f"group{i}" for i in range(1, 6))
    assert rep.score.cost.eps == pytest.approx(2 * rep.scree.cost.eps)
    with pytest.raises(ValueError, match="shares"):
        report(load_gau(), eps=1.0, delta=1e-5, shares={"directions": 1})


def test_report_lists_accuracy_warnings_on_the_page():
    with pytest.warns(AccuracyWarning, match="frame"):
        rep = report(
            load_wine(), eps=1.0, delta=1e-5, random_state=2, calibration="analytic", ties="zero"
        )
    assert rep.notes and any("frame" in note for note in rep.notes)
    _check_page(rep.html, 1.0, 1e-5)


def test_report_checks_and_charges_one_budget_once_with_its_plan_cost():
    budget = Budget(1.1, 2e-5)
    rep = report(load_gau(), eps=1.0, delta=1e-5, random_state=0, budget=budget)
    plan = plan_report(5000, 20, eps=1.0, delta=1e-5)
    assert budget.ledger == (rep.cost,) and rep.cost == plan.cost
    with pytest.raises(BudgetExceededError):
        report(load_gau(), eps=1.0, delta=1e-5, random_state=0, budget=budget)
    assert budget.ledger == (rep.cost,)


def test_report_is_tighter_than_plain_addition():
    plan = plan_report(5000, 20, eps=1.0, delta=1e-5)
    assert [name for name, _ in plan.plans] == ["directions", "scree", "score"]
    assert plan.factor > 1.2  # every share gets more than the basic split gives it
    assert plan.scree.directions is None and plan.score.directions is None  # reused
    assert tuple(part.cost for part in plan.parts) == plan.cost.leaves()


def test_report_reuses_given_directions_at_no_direction_cost():
    data = load_gau()
    directions = dp_pc_dir(data, eps=0.5, delta=1e-6, random_state=1)
    rep = report(data, eps=1.0, delta=1e-5, random_state=0, directions=directions)
    assert rep.directions is directions
    assert rep.scree.directions_release is directions
    assert len(rep.budget.ledger) == 2
    assert "noisy spherical Kendall matrix" not in str(rep.cost.leaves())


@pytest.mark.parametrize("dataset", ["wine", "gau"])
def test_cli_report_on_bundled_data(dataset, tmp_path, capsys):
    out = tmp_path / f"{dataset}.html"
    argv = [
        "report",
        "--dataset",
        dataset,
        "--eps",
        "1",
        "--delta",
        "1e-5",
        "--seed",
        "5",
        "--out",
        str(out),
        "--table",
        str(tmp_path / "ledger.csv"),
    ]
    assert main(argv) == 0
    captured = capsys.readouterr()
    _check_page(out.read_text(), 1.0, 1e-5)
    ledger = pd.read_csv(io.StringIO(captured.out))
    pd.testing.assert_frame_equal(ledger, pd.read_csv(tmp_path / "ledger.csv"))
    # one row per part: tightly composed parts claim more than their release's total
    assert ledger["eps"].sum() >= 1.0 * (1 - 1e-9)
    # the scree's joint release may be pure (Laplace): delta spent is at most 1e-5
    cost_line = next(ln for ln in captured.err.splitlines() if ln.startswith("privacy cost:"))
    assert cost_line.startswith("privacy cost: (eps=1, delta=")
    assert float(cost_line.split("delta=")[1].split(")")[0]) <= 1e-5
    assert "what this means: An attacker testing" in captured.err
    # the Methods quote the command, without its seed and with the file's base name only
    methods = out.read_text().split("<h2>Methods</h2>", 1)[1]
    assert f"dppca report --dataset {dataset} --eps 1" in methods
    assert "--seed" not in methods and str(tmp_path) not in methods


def test_cli_report_checks_its_output_first(tmp_path, capsys):
    assert main(["report", "--eps", "1", "--delta", "1e-5", "--out", str(tmp_path / "r.png")]) == 2
    assert "--out must end in .html" in capsys.readouterr().err
    assert (
        main(
            [
                "report",
                "--eps",
                "1",
                "--delta",
                "1e-5",
                "--shares",
                "1,2",
                "--out",
                str(tmp_path / "r.html"),
            ]
        )
        == 2
    )
    assert "--shares" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []


def test_report_charges_the_sqlite_ledger_once(tmp_path):
    ledger_module = pytest.importorskip("dppca.privacy.ledger")
    data = load_gau()
    ledger = ledger_module.Ledger(tmp_path / "ledger.sqlite")
    from dppca.privacy.fingerprint import fingerprint

    fp = fingerprint(data)
    ledger.set_total(fp, 3.0, 1e-4)
    report(
        data,
        eps=1.0,
        delta=1e-5,
        random_state=0,
        budget=ledger.budget(fp, kind="report", name="gau"),
    )
    assert len(ledger.releases(fp)) == 1  # one release: the report's plan cost


def test_cli_report_is_refused_by_a_spent_ledger_and_writes_nothing(tmp_path, capsys):
    data = tmp_path / "t.csv"
    rng = np.random.default_rng(5)
    pd.DataFrame(rng.normal(size=(600, 4)), columns=list("abcd")).to_csv(data, index=False)
    common = [str(data), "--ledger", str(tmp_path / "l.sqlite")]
    first = [
        "directions",
        *common,
        "--eps",
        "1",
        "--delta",
        "1e-6",
        "--budget-eps",
        "1",
        "--budget-delta",
        "1e-5",
        "--accuracy",
        "ignore",
    ]
    assert main(first) == 0
    out = tmp_path / "r.html"
    argv = ["report", *common, "--eps", "0.5", "--delta", "1e-6", "--out", str(out)]
    assert main(argv) == 2
    assert "budget" in capsys.readouterr().err
    assert not out.exists()


def test_cli_report_dry_run_prints_the_plan_and_spends_nothing(tmp_path, capsys):
    out = tmp_path / "r.html"
    argv = [
        "report",
        "--dataset",
        "gau",
        "--eps",
        "1",
        "--delta",
        "1e-5",
        "--dry-run",
        "--out",
        str(out),
        "--ledger",
        str(tmp_path / "l.sqlite"),
    ]
    assert main(argv) == 0
    text = capsys.readouterr().out
    assert "privacy cost (not spent): (eps=1, delta=1e-05)" in text
    assert "what it would mean: An attacker testing whether" in text
    assert not out.exists()


def test_forecasts_are_shown_when_results_carry_them():
    from dppca.report_page import _forecast_html

    class Forecast:
        def to_frame(self):
            return pd.DataFrame({"expected error": [0.1]})

    class WithTable:
        forecast = Forecast()

    class WithText:
        def forecast(self):
            return "PC1 angle error about 3 degrees"

    text = _forecast_html({"directions": WithTable(), "scree": WithText(), "score": object()})
    assert "Forecast accuracy" in text and "expected error" in text and "3 degrees" in text
    assert _forecast_html({"score": object()}) == ""


# ----------------------------------------------------------------- private scales


def test_report_with_private_scales_spends_eps_once_and_shows_the_scales(monkeypatch):
    # Wine in its own units (SDs from 0.12 to 315): the report releases one
    # scale per column and makes all three releases on the scaled table.
    import dppca.releases.scaled as scaled

    drawn = []
    real = scaled.draw_private_scales

    def recording(values, *, eps_each, units, rng):
        drawn.append(eps_each)
        return real(values, eps_each=eps_each, units=units, rng=rng)

    monkeypatch.setattr(scaled, "draw_private_scales", recording)
    X = load_wine()
    with pytest.warns(AccuracyWarning):
        rep = report(X, eps=2.0, delta=1e-5, scale="private", random_state=3)
    plan = plan_report(*X.shape, eps=2.0, delta=1e-5, scale="private", variables=tuple(X))
    assert plan.scale_eps > 0
    assert rep.cost.eps == pytest.approx(2.0) == plan.cost.eps
    assert [c.eps for c in rep.cost.leaves()] == [c.eps for c in plan.cost.leaves()]
    # the p pure scale parts come first, then the three releases' parts
    assert [c.kind for c in rep.cost.leaves()[: X.shape[1]]] == ["pure"] * X.shape[1]
    scales = rep.directions.scales
    assert scales is not None and scales.shape == (X.shape[1],)
    np.testing.assert_array_equal(rep.scree.scales, scales)
    np.testing.assert_array_equal(rep.score.scales, scales)
    page = Page(rep.html)
    assert "scales" in page.tables and len(page.tables["scales"]) == X.shape[1] + 1
    # the page's ledger lists the scales as a release of their own, within the total
    assert page.tables["ledger"][1][0] == "private scales"
    assert rep.budget.spent_tight[0] <= 2.0 + 1e-9
    # the scales drawn are the ones priced, and the pure parts carry no delta
    assert drawn == [plan.scales[0].eps]
    assert rep.budget.spent[1] <= 1e-5 * (1 + 1e-9)


def test_report_scales_need_their_own_directions_and_no_bounds():
    X = load_wine()
    with pytest.raises(ValueError, match="bounds"):
        report(X, eps=1.0, delta=1e-5, scale="private", bounds=(-1e4, 1e4))
    earlier = dp_pc_dir(X, eps=1.0, delta=1e-5, random_state=0, accuracy="ignore")
    with pytest.raises(ValueError, match="directions"):
        report(X, eps=1.0, delta=1e-5, scale="private", directions=earlier)


def test_report_methods_say_what_the_run_did(small_frame):
    # bounds set the frame and clip the data; nothing is said about quantiles
    # of the scores or private scales, and the attacker sentence is that of
    # the page's own ledger
    bounds = (-20.0, 20.0)
    rep = report(small_frame, eps=2.0, delta=1e-5, bounds=bounds, random_state=1)
    assert rep.score.frame_source == "bounds"
    methods = rep.html.split("<h2>Methods</h2>", 1)[1].split("<h2>", 1)[0]
    assert "clipped to public bounds" in methods
    assert "range the scores can take over the public bounds" in methods
    assert "pure-DP quantiles of the scores" not in methods
    assert "divided by a privately released robust scale" not in methods
    assert "no missing values" in methods
    assert "dppca.report(X, eps=2.0, delta=1e-05, bounds=...)" in methods
    from dppca import __version__, attacker_sentence

    assert f"dppca {__version__}" in methods
    assert html.escape(attacker_sentence(list(rep.budget.ledger))) in rep.html


def test_report_methods_name_the_missing_rule_and_own_units(small_frame):
    frame = small_frame.copy()
    frame.iloc[3, 1] = np.nan
    rep = report(frame, eps=2.0, delta=1e-5, missing="zero", random_state=1)
    methods = rep.html.split("<h2>Methods</h2>", 1)[1]
    assert "no row was dropped, and n is the table's row count" in methods
    assert html.escape("missing='zero'") in methods
    assert "in their own units, with no clipping bounds" in methods
    assert "frame was set by pure-DP quantiles of the scores" in methods


def test_a_report_takes_a_large_delta_only_when_allowed():
    # the shared option reaches report() through PrivacyOptions and its one check
    X = np.random.default_rng(5).normal(size=(60, 3))
    with pytest.raises(ValueError, match="allow_large_delta=True"):
        report(X, eps=2.0, delta=0.05, accuracy="ignore", random_state=0)
    page = report(
        X, eps=2.0, delta=0.05, accuracy="ignore", random_state=0, allow_large_delta=True
    )
    assert page.cost.delta == pytest.approx(0.05)


def test_the_reports_score_frame_is_checked_after_the_release():
    # 240 rows at eps 1: the frame's share is small and its centre lands far out on the
    # public ladder (width about 1e-5 around 18382 with this seed). The report runs its
    # parts quietly, so before this check nothing after the release said so.
    X = load_gau().iloc[:240, :4]
    with pytest.warns(AccuracyWarning, match="score frame of PC1 and PC2 is centred far"):
        rep = report(X, eps=1.0, delta=1e-5, random_state=0)
    assert any("centred far from zero" in note for note in rep.score.notes)
    assert "centred far from zero" in rep.html
