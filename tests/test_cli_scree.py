"""Tests of ``dppca scree``."""

from __future__ import annotations

import io

import pandas as pd

from dppca.cli import main

BASE = ["scree", "--eps", "0.5", "--delta", "1e-5", "-k", "3", "--seed", "1"]


def test_scree_on_bundled_data_prints_table_and_cost(capsys):
    assert main(BASE) == 0
    captured = capsys.readouterr()
    out = captured.out
    assert out.splitlines()[0].startswith("component,scree_clipped") and "PC3" in out
    assert "privacy cost: (eps=0.5, delta=1e-05)" in captured.err
    assert "seed" not in out + captured.err


def test_scree_writes_plot_with_several_methods(tmp_path, capsys):
    target = tmp_path / "scree.png"
    argv = [*BASE, "--method", "clipped,pmwm,huber", "--kind", "scree", "--out", str(target)]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "scree_huber" in out and target.stat().st_size > 0


def test_scree_on_csv_with_clip(tmp_path, capsys, small_frame):
    path = tmp_path / "data.csv"
    small_frame.to_csv(path, index=False)
    argv = ["scree", str(path), "--eps", "0.5", "--delta", "1e-5", "--clip", "20", "--no-mono"]
    assert main(argv) == 0
    assert "PC5" in capsys.readouterr().out


def test_bad_method_gives_one_line_error(capsys):
    assert main([*BASE, "--method", "clipped,mean"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("dppca: error:") and "method" in err and "\n" not in err


def test_clip_without_clipped_method_is_refused(capsys):
    assert main([*BASE, "--method", "pmwm", "--clip", "3"]) == 2
    assert "--clip" in capsys.readouterr().err


def test_bad_output_extension_fails_before_writing(tmp_path, capsys):
    target = tmp_path / "scree.txt"
    assert main([*BASE, "--out", str(target)]) == 2
    captured = capsys.readouterr()
    assert ".png" in captured.err and "privacy cost" not in captured.out
    assert not target.exists()


def test_scree_table_states_ties_zeros_and_the_public_halfwidth(tmp_path, capsys, small_frame):
    # seed 4 on this table: the fit pools PC1 and PC2 and clips PC4 and PC5 to 0
    path = tmp_path / "data.csv"
    small_frame.to_csv(path, index=False)
    assert main(["scree", str(path), "--eps", "0.5", "--delta", "1e-5", "--seed", "4"]) == 0
    table = pd.read_csv(io.StringIO(capsys.readouterr().out), index_col="component")
    notes = table["fit_clipped"].fillna("").tolist()
    assert notes == ["tied PC1-PC2", "tied PC1-PC2", "", "below noise", "below noise"]
    assert table["scree_clipped"].iloc[3:].eq(0).all()  # the released values stay as they are
    halfwidth = table["halfwidth_clipped"]
    assert halfwidth.nunique() == 1 and halfwidth.iloc[0] > 0  # 2 sd of one joint release
