"""End-to-end tests of ``dppca loading``."""

from __future__ import annotations

import io

import numpy as np
import pandas as pd
import pytest

from dppca.cli import main

PRIV = ["--eps", "0.5", "--delta", "1e-5", "--seed", "1"]
MAGIC = {"png": b"\x89PNG", "svg": b"<?xml", "pdf": b"%PDF"}


@pytest.fixture
def csv(tmp_path, small_frame):
    path = tmp_path / "data.csv"
    small_frame.to_csv(path, index=False)
    return path


def test_default_dataset_writes_plot_table_and_cost(tmp_path, capsys):
    out = tmp_path / "loading.png"
    assert main(["loading", *PRIV, "--out", str(out)]) == 0
    captured = capsys.readouterr()
    assert out.read_bytes().startswith(MAGIC["png"])
    lines = captured.out.splitlines()
    assert lines[0] == "variable,PC1,PC2"
    assert sum(line.startswith("V") for line in lines) == 20  # one row per gau variable
    assert len(lines) == 21  # stdout holds the CSV table only
    text = captured.err
    assert "privacy cost: (eps=0.5, delta=1e-05)" in text and "sigma=" in text
    assert f"wrote {out}" in text
    assert "seed" not in (text + captured.out).lower()


@pytest.mark.parametrize("fmt", ["png", "svg", "pdf"])
@pytest.mark.parametrize("kind", ["vector", "point", "heatmap"])
def test_kinds_and_formats(csv, tmp_path, capsys, kind, fmt):
    out = tmp_path / f"plot.{fmt}"
    assert main(["loading", str(csv), *PRIV, "--kind", kind, "--out", str(out)]) == 0
    assert out.read_bytes()[:5].startswith(MAGIC[fmt])
    assert "privacy cost" in capsys.readouterr().err


def test_table_matches_the_library(csv, capsys):
    from dppca import dp_loading

    assert main(["loading", str(csv), *PRIV, "--components", "2,3"]) == 0
    table = pd.read_csv(io.StringIO(capsys.readouterr().out), index_col="variable")
    expected = dp_loading(
        pd.read_csv(csv), eps=0.5, delta=1e-5, components=(2, 3), random_state=1
    ).coordinates()
    pd.testing.assert_frame_equal(table, expected, check_names=False)


def test_compare_marks_the_nonprivate_part(csv, tmp_path, capsys):
    out = tmp_path / "cmp.svg"
    assert main(["loading", str(csv), *PRIV, "--compare", "--out", str(out)]) == 0
    captured = capsys.readouterr()
    assert "nonprivate_PC1" in captured.out.splitlines()[0]
    assert "NOT private" in captured.err
    assert "Non-private loadings" in out.read_text()


def test_heatmap_components_list(csv, capsys):
    assert main(["loading", str(csv), *PRIV, "--kind", "heatmap", "--components", "1,3,5"]) == 0
    assert capsys.readouterr().out.splitlines()[0] == "variable,PC1,PC3,PC5"


def test_uncertainty_and_top(csv, tmp_path, capsys):
    out = tmp_path / "u.png"
    args = ["loading", str(csv), *PRIV, "--uncertainty", "20", "--top", "3", "--out", str(out)]
    assert main(args) == 0
    text = capsys.readouterr().err
    assert "not sampling variability" in text and out.exists()


def test_public_scales(tmp_path, capsys, small_frame):
    path = tmp_path / "data.csv"
    small_frame.to_csv(path, index=False)
    assert main(["loading", str(path), *PRIV, "--scale", "1,1,1,1,1"]) == 0
    plain = capsys.readouterr().out
    assert main(["loading", str(path), *PRIV]) == 0
    assert capsys.readouterr().out == plain  # unit scales change nothing
    (small_frame * np.array([10.0, 1, 1, 1, 1])).to_csv(path, index=False)
    assert main(["loading", str(path), *PRIV, "--scale", "10,1,1,1,1"]) == 0
    rescaled = capsys.readouterr().out
    # Same data up to rounding after division: the same table up to rounding.
    read = [pd.read_csv(io.StringIO(t), index_col=0) for t in (plain, rescaled)]
    pd.testing.assert_frame_equal(read[0], read[1], atol=1e-8)


def test_wine_dataset(capsys):
    scales = "10,1,1,10,100,1,1,0.1,1,1,1,1,1000"
    args = [
        "loading",
        "--dataset",
        "wine",
        "--eps",
        "4",
        "--delta",
        "1e-5",
        "--calibration",
        "analytic",
        "--scale",
        scales,
        "--seed",
        "0",
    ]
    assert main(args) == 0
    assert "proline" in capsys.readouterr().out


@pytest.mark.parametrize(
    "content, word",
    [
        (None, "does not exist"),
        ("", "empty"),
        ("a,b\n", "no rows"),
        ("a,b\n1,x\n2,y\n", "non-numeric"),
        ("a,b\n1,\n2,3\n3,4\n", "NaN"),
        ("a,b\n1,2\n1,2\n3,5\n", "ties"),  # with --ties error (the default is zero)
    ],
)
def test_bad_files_give_one_line_error_and_no_output(tmp_path, capsys, content, word):
    path = tmp_path / "data.csv"
    if content is not None:
        path.write_text(content)
    out = tmp_path / "plot.png"
    assert main(["loading", str(path), *PRIV, "--ties", "error", "--out", str(out)]) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    # a tiny table may also get the data-free forecast's warning, printed first
    errors = [ln for ln in lines if not ln.startswith("dppca: accuracy warning")]
    assert len(errors) == 1 and errors[0].startswith("dppca: error:") and word in errors[0]
    assert not out.exists()


@pytest.mark.parametrize(
    "extra, word",
    [
        (["--components", "1,1"], "different"),
        (["--components", "1,9"], "[1, 5]"),
        (["--components", "1,x"], "--components"),
        (["--components", "1,2,3"], "2 integers"),
        (["--out", "plot.jpg"], ".png, .svg or .pdf"),
        (["--out", "missing-dir/plot.png"], "does not exist"),
        (["--kind", "heatmap", "--uncertainty", "5"], "heatmaps"),
        (["--uncertainty", "0"], "positive"),
        (["--top", "0"], "positive"),
        (["--scale", "1,2"], "one value per"),
        (["--scale", "1,1,1,1,-1"], "> 0"),
        (["--scale", "a,b,c,d,e"], "comma-separated"),
    ],
)
def test_bad_options(csv, capsys, extra, word):
    assert main(["loading", str(csv), *PRIV, *extra]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("dppca: error:") and word in err and len(err.splitlines()) == 1


def test_existing_output_is_replaced_only_when_complete(csv, tmp_path, monkeypatch, capsys):
    out = tmp_path / "plot.png"
    out.write_bytes(b"old figure")
    from matplotlib.figure import Figure

    def broken_savefig(self, fname, **kwargs):
        with open(fname, "wb") as fh:
            fh.write(b"half")
        raise OSError("disk full")

    monkeypatch.setattr(Figure, "savefig", broken_savefig)
    assert main(["loading", str(csv), *PRIV, "--out", str(out)]) == 2
    assert "disk full" in capsys.readouterr().err
    assert out.read_bytes() == b"old figure"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["data.csv", "plot.png"]
    monkeypatch.undo()
    assert main(["loading", str(csv), *PRIV, "--out", str(out)]) == 0
    assert out.read_bytes().startswith(MAGIC["png"])


def test_privacy_warning_for_large_eps(csv, capsys):
    args = ["loading", str(csv), "--eps", "2", "--delta", "1e-5", "--no-ledger"]
    assert main([*args, "--calibration", "classic"]) == 0
    assert "privacy warning" in capsys.readouterr().err
    assert main(args) == 0  # the analytic default is exact for every eps
    assert "privacy warning" not in capsys.readouterr().err


def test_balanced_design_reads_the_file_in_chunks(tmp_path, capsys):
    rng = np.random.default_rng(8)
    path = tmp_path / "big.csv"
    pd.DataFrame(rng.normal(size=(400, 4)), columns=list("wxyz")).to_csv(path, index=False)
    args = [
        "loading",
        str(path),
        "--design",
        "balanced",
        "--m",
        "5",
        "--eps",
        "0.5",
        "--delta",
        "1e-5",
        "--seed",
        "2",
        "--progress",
        "always",
    ]
    assert main(args) == 0
    captured = capsys.readouterr()
    rows = [line.split(",")[0] for line in captured.out.splitlines()[1:5]]
    assert rows == ["w", "x", "y", "z"]  # the file's labels survive the chunked reader
    assert "pairs" in captured.err and "pairs" not in captured.out  # the bar is stderr only
