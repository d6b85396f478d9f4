"""Tests for the ``dppca score`` command."""

from __future__ import annotations

import io

import numpy as np
import pandas as pd
import pytest

from dppca.cli import main


@pytest.fixture
def csv_with_groups(tmp_path, rng: np.random.Generator):
    X = rng.normal(size=(3000, 3))
    frame = pd.DataFrame(X, columns=["a", "b", "c"])
    frame["team"] = np.repeat(["red", "blue", "green"], 1000)
    path = tmp_path / "data.csv"
    frame.to_csv(path, index=False)
    return path


def test_score_writes_figure_and_table(tmp_path, capsys, csv_with_groups) -> None:
    out, table = tmp_path / "plot.png", tmp_path / "bins.csv"
    status = main(
        [
            "score",
            str(csv_with_groups),
            "--eps",
            "0.8",
            "--delta",
            "1e-5",
            "--bins",
            "6,5",
            "--method",
            "add,sparse",
            "--groups",
            "team",
            "--sample",
            "uniform",
            "--seed",
            "1",
            "--out",
            str(out),
            "--table",
            str(table),
        ]
    )
    assert status == 0
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    bins = pd.read_csv(table)
    assert list(bins.columns) == ["method", "group", "xmin", "xmax", "ymin", "ymax", "prob"]
    assert len(bins) == 2 * 3 * 6 * 5
    sums = bins.groupby(["method", "group"])["prob"].sum()
    assert np.allclose(sums["add"], 1.0)
    # a sparse group sums to 1, or to 0 when no bin passed the threshold (documented)
    assert np.all(np.isclose(sums["sparse"], 1.0) | (sums["sparse"] == 0.0))
    captured = capsys.readouterr()
    pd.testing.assert_frame_equal(pd.read_csv(io.StringIO(captured.out)), bins)  # stdout = table
    text = captured.err
    assert "privacy cost: (eps=0.8, delta=1e-05)" in text
    assert "group sizes, private (Laplace)" in text
    assert "--seed" not in text and "seed" not in text


def test_score_on_bundled_dataset_is_reproducible(tmp_path, capsys) -> None:
    args = [
        "score",
        "--dataset",
        "gau",
        "--eps",
        "0.5",
        "--delta",
        "1e-5",
        "--seed",
        "4",
        "--components",
        "2,3",
        "--bins",
        "7",
    ]
    assert main([*args, "--out", str(tmp_path / "a.svg"), "--table", str(tmp_path / "a.csv")]) == 0
    assert main([*args, "--out", str(tmp_path / "b.svg"), "--table", str(tmp_path / "b.csv")]) == 0
    a, b = pd.read_csv(tmp_path / "a.csv"), pd.read_csv(tmp_path / "b.csv")
    pd.testing.assert_frame_equal(a, b)
    assert len(a) == 49
    assert "PC2 in [" in capsys.readouterr().err


def test_public_groups_flag(tmp_path, capsys, csv_with_groups) -> None:
    status = main(
        [
            "score",
            str(csv_with_groups),
            "--eps",
            "0.5",
            "--delta",
            "1e-5",
            "--groups",
            "team",
            "--groups-public",
            "--out",
            str(tmp_path / "p.pdf"),
        ]
    )
    assert status == 0
    assert "exact (declared public): blue=1000, green=1000, red=1000" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--method", "kde"], "method"),
        (["--bins", "1,2,3"], "--bins"),
        (["--components", "1"], "--components"),
        (["--groups", "nope"], "--groups"),
        (["--groups-public"], "--groups-public needs --groups"),
        (["--eps", "-1"], "eps"),
    ],
)
def test_score_errors_are_one_line(tmp_path, capsys, csv_with_groups, extra, message) -> None:
    out = tmp_path / "x.png"
    args = [
        "score",
        str(csv_with_groups),
        "--eps",
        "0.5",
        "--delta",
        "1e-5",
        "--columns",
        "a,b,c",
        "--out",
        str(out),
    ]
    status = main([*args, *extra])
    err = capsys.readouterr().err
    assert status == 2
    assert err.startswith("dppca: error:") and message in err
    assert len(err.strip().splitlines()) == 1
    assert not out.exists()


def test_score_refuses_bad_output_suffix(tmp_path, capsys) -> None:
    status = main(["score", "--eps", "0.5", "--delta", "1e-5", "--out", str(tmp_path / "a.txt")])
    assert status == 2
    assert "--out must end in" in capsys.readouterr().err


def test_public_group_labels_fix_the_released_groups(tmp_path, capsys, csv_with_groups) -> None:
    table = tmp_path / "bins.csv"
    status = main(
        [
            "score",
            str(csv_with_groups),
            "--eps",
            "0.8",
            "--delta",
            "1e-5",
            "--bins",
            "4",
            "--groups",
            "team",
            "--group-labels",
            "red, blue, purple",
            "--seed",
            "2",
            "--out",
            str(tmp_path / "g.png"),
            "--table",
            str(table),
        ]
    )
    assert status == 0
    assert list(pd.read_csv(table)["group"].unique()) == ["red", "blue", "purple"]
    assert "purple=" in capsys.readouterr().err and "green" not in table.read_text()
    assert (
        main(
            [
                "score",
                "--eps",
                "0.5",
                "--delta",
                "1e-5",
                "--group-labels",
                "a",
                "--out",
                str(tmp_path / "x.png"),
            ]
        )
        == 2
    )
    assert "--group-labels needs --groups" in capsys.readouterr().err


def test_synthetic_points_use_their_own_stream(tmp_path, monkeypatch, csv_with_groups) -> None:
    # Published synthetic points must not continue the generator that drew the
    # release's noise: the CLI hands sample_points a separate, seed-derived stream.
    # The command imports the release functions when it runs: spy on them where they live.
    import dppca.releases.engine as engine
    import dppca.releases.score.result as score_release

    seen: dict[str, list] = {"release": [], "sample": []}
    real_score, real_sample = engine.execute, score_release.sample_points

    def spy_score(*args, **kwargs):
        seen["release"].append(kwargs["random_state"])
        return real_score(*args, **kwargs)

    def spy_sample(*args, **kwargs):
        seen["sample"].append(kwargs["random_state"])
        return real_sample(*args, **kwargs)

    monkeypatch.setattr(engine, "execute", spy_score)
    monkeypatch.setattr(score_release, "sample_points", spy_sample)
    args = [
        "score",
        str(csv_with_groups),
        "--eps",
        "0.8",
        "--delta",
        "1e-5",
        "--bins",
        "4,4",
        "--groups",
        "team",
        "--sample",
        "center",
        "--seed",
        "5",
        "--out",
        str(tmp_path / "p.svg"),
    ]
    assert main(args) == 0
    (noise_rng,), (post_rng,) = seen["release"], seen["sample"]
    assert post_rng is not noise_rng
    # The post-processing stream is the seed's spawned child, not default_rng(5).
    assert post_rng.bit_generator.seed_seq.spawn_key == (0,)
    assert noise_rng.bit_generator.seed_seq.spawn_key == ()


def test_dry_run_with_groups_prints_nothing_that_depends_on_the_labels(tmp_path, capsys):
    # issue 29.7: the dry-run printed how many distinct labels the column held
    rng = np.random.default_rng(0)
    outputs = []
    for k in (3, 5):
        path = tmp_path / f"g{k}.csv"
        frame = pd.DataFrame(rng.standard_normal((300, 3)), columns=list("abc"))
        frame["g"] = rng.choice([f"l{i}" for i in range(k)], 300)
        frame.to_csv(path, index=False)
        args = [str(path), "--eps", "1", "--delta", "1e-6", "--groups", "g", "--no-ledger"]
        assert main(["score", *args, "--dry-run"]) == 2
        assert "--group-labels" in capsys.readouterr().err
        labels = ",".join(f"l{i}" for i in range(3))
        assert main(["score", *args, "--dry-run", "--group-labels", labels]) == 0
        outputs.append(capsys.readouterr().out)
    assert outputs[0] == outputs[1]  # three labels or five: the same plan
