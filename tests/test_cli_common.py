"""Tests of the pieces the subcommands share, and of ``python -m dppca.cli``."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import dppca
from dppca.cli import build_parser, main
from dppca.datasets import load_wine
from dppca.releases import engine

PRIVACY = ["--eps", "0.5", "--delta", "1e-5", "--seed", "1"]


def test_python_m_dppca_cli_runs_the_command():
    src = str(Path(dppca.__file__).resolve().parents[1])
    env = {**os.environ, "PYTHONPATH": src}
    done = subprocess.run(
        [sys.executable, "-m", "dppca.cli", "scree", "--help"],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0
    assert "--ties" in done.stdout and "--out" in done.stdout


@pytest.mark.parametrize("command", ["scree", "score"])
def test_shared_options_read_the_same_in_every_subcommand(command):
    parser = build_parser()
    args = parser.parse_args([command, *PRIVACY, "--ties", "zero", "--out", "f.png"])
    assert (args.ties, args.out, args.eps, args.calibration) == ("zero", "f.png", 0.5, "analytic")
    assert parser.parse_args([command, *PRIVACY, "--out", "f.png"]).ties == "zero"  # the default
    with pytest.raises(SystemExit):
        parser.parse_args([command, *PRIVACY, "--ties", "drop", "--out", "f.png"])


def test_scree_passes_ties_to_the_directions(tmp_path, capsys, rng):
    data = rng.normal(size=(60, 3))
    data[1] = data[0]  # a duplicate row: "error" stops, "zero" lets it contribute nothing
    path = tmp_path / "dup.csv"
    pd.DataFrame(data, columns=["a", "b", "c"]).to_csv(path, index=False)
    assert main(["scree", str(path), *PRIVACY, "--ties", "error"]) == 2
    assert "ties" in capsys.readouterr().err
    assert main(["scree", str(path), *PRIVACY]) == 0  # ties="zero" is the default
    assert "privacy cost" in capsys.readouterr().err


def test_score_checks_the_figure_name_before_the_release(tmp_path, capsys, monkeypatch):
    def no_release(*args, **kwargs):
        raise AssertionError("the release ran although --out was unusable")

    monkeypatch.setattr(engine, "execute", no_release)  # the command imports it when run
    status = main(["score", *PRIVACY, "--out", str(tmp_path / "plot.jpg")])
    assert status == 2 and "--out must end in" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []


def test_written_files_get_the_usual_mode(tmp_path):
    import os

    from dppca.cli._output import write_atomically

    target = tmp_path / "out.txt"
    from pathlib import Path

    write_atomically(target, lambda tmp: Path(tmp).write_text("x"))
    umask = os.umask(0)
    os.umask(umask)
    assert (target.stat().st_mode & 0o777) == (0o666 & ~umask)


# --------------------------------------------------------------------------- bounds, forecast


@pytest.mark.parametrize("command", ["directions", "loading", "scree", "score"])
def test_dry_run_prints_cost_and_forecast_and_releases_nothing(tmp_path, capsys, command):
    out = tmp_path / "plot.png"
    args = [command, "--dataset", "wine", "--eps", "1", "--delta", "1e-6", "--dry-run"]
    if command in ("loading", "scree", "score"):
        args += ["--out", str(out)]
    assert main(args) == 0
    printed = capsys.readouterr().out
    assert "privacy cost (not spent)" in printed and "forecast for the" in printed
    assert not out.exists()


def test_loading_dry_run_prints_the_cost_of_the_release(capsys):
    args = ["--dataset", "wine", "--eps", "1", "--delta", "1e-6", "--design", "balanced"]
    assert main(["loading", *args, "--dry-run"]) == 0
    printed = capsys.readouterr().out
    planned = dppca.plan_loading(178, 13, eps=1.0, delta=1e-6, design="balanced").cost
    assert f"privacy cost (not spent): {planned}" in printed and "m=None" not in printed
    released = dppca.dp_loading(
        load_wine(), eps=1.0, delta=1e-6, design="balanced", random_state=1
    )
    assert released.cost == planned


def test_accuracy_error_refuses_in_the_shell(capsys):
    status = main(
        ["scree", "--dataset", "wine", "--eps", "1", "--delta", "1e-6", "--accuracy", "error"]
    )
    err = capsys.readouterr().err
    assert status == 2 and "forecast to be inaccurate" in err and "Nothing was spent" in err


def test_bounds_inline_and_from_a_file_give_the_same_release(tmp_path, capsys):
    frame = pd.DataFrame({"a": [1.0, 4.0, 2.0, 9.0] * 50, "b": [0.5, 3.0, 1.0, 7.0] * 50})
    frame["b"] += np.linspace(0, 1, 200)
    data = tmp_path / "data.csv"
    frame.to_csv(data, index=False)
    spec = tmp_path / "bounds.csv"
    pd.DataFrame({"variable": ["a", "b"], "lower": [0, 0], "upper": [5, 5]}).to_csv(
        spec, index=False
    )
    base = ["directions", str(data), *PRIVACY, "--seed", "3", "--no-ledger"]
    assert main([*base, "--bounds", str(spec)]) == 0
    from_file = capsys.readouterr().out
    assert main([*base, "--bounds", "a=0:5,b=0:5"]) == 0
    inline = capsys.readouterr().out
    assert main([*base, "--bounds", "0:5"]) == 0
    same = capsys.readouterr().out
    assert from_file == inline == same
    assert main([*base]) == 0
    assert capsys.readouterr().out != from_file  # the bounds clipped a and b at 5
    assert main([*base, "--bounds", "a=0:5"]) == 2  # b has no bounds
    assert "every analysed variable" in capsys.readouterr().err
    assert main([*base, "--bounds", "a=5:x,b=0:5"]) == 2
    assert "--bounds" in capsys.readouterr().err


def test_bounds_with_a_negative_lower_end_need_no_equals_sign(tmp_path, capsys):
    rng = np.random.default_rng(7)
    data = tmp_path / "data.csv"
    pd.DataFrame(rng.normal(size=(200, 3)), columns=["a", "b", "c"]).to_csv(data, index=False)
    base = ["directions", str(data), *PRIVACY, "--no-ledger"]
    assert main([*base, "--bounds=-20:20"]) == 0
    joined = capsys.readouterr().out
    assert main([*base, "--bounds", "-20:20"]) == 0  # argparse alone takes it for an option
    assert capsys.readouterr().out == joined
    assert main([*base, "--bounds", "a=-2:2,b=-.5:3,c=0:1"]) == 0
    capsys.readouterr()


def test_a_variable_named_twice_in_the_bounds_is_refused(tmp_path, capsys):
    data = tmp_path / "data.csv"
    pd.DataFrame({"a": np.arange(50.0), "b": np.arange(50.0) % 7}).to_csv(data, index=False)
    base = ["directions", str(data), *PRIVACY, "--no-ledger"]
    assert main([*base, "--bounds", "a=0:1,a=0:2,b=0:9"]) == 2
    assert "--bounds names 'a' twice; give each variable once." in capsys.readouterr().err
    spec = tmp_path / "bounds.csv"
    rows = {"variable": ["a", "b", "a"], "lower": [0, 0, 0], "upper": [1, 9, 2]}
    pd.DataFrame(rows).to_csv(spec, index=False)
    assert main([*base, "--bounds", str(spec)]) == 2
    assert "names 'a' more than once" in capsys.readouterr().err


def test_cli_messages_use_shell_spellings_not_python_ones(tmp_path, capsys):
    from dppca.cli import shell_syntax

    hint = "use a smaller delta or pass allow_large_delta=True."
    assert shell_syntax(hint, {"--allow-large-delta"}) == (
        "use a smaller delta or pass --allow-large-delta."
    )
    assert shell_syntax(hint, set()) == "use a smaller delta."
    data = tmp_path / "data.csv"
    pd.DataFrame({"a": np.arange(50.0), "b": np.arange(50.0) % 7}).to_csv(data, index=False)
    # delta = 0.1 >= 1/n = 0.02: the library's message names its keyword, the CLI's does not.
    args = ["directions", str(data), "--eps", "0.5", "--delta", "0.1", "--no-ledger"]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert "delta must be below 1/n" in err and "allow_large_delta" not in err
    assert err.rstrip().endswith("(for example 1e-06, the default min(1e-6, 1/(10 n^1.5))).")


@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_missing_values_in_a_chunked_file_name_their_column(tmp_path, capsys, suffix):
    if suffix == ".parquet":
        pytest.importorskip("pyarrow")
    frame = pd.DataFrame(np.random.default_rng(3).normal(size=(100, 3)), columns=["x", "y", "z"])
    frame.loc[17, "z"] = np.nan
    path = tmp_path / f"data{suffix}"
    frame.to_parquet(path) if suffix == ".parquet" else frame.to_csv(path, index=False)
    base = ["directions", str(path), *PRIVACY, "--design", "balanced", "--no-ledger"]
    for columns, named in ((None, "'z'"), ("y,z", "'z'")):
        extra = ["--columns", columns] if columns else []
        assert main([*base, *extra]) == 2
        err = capsys.readouterr().err
        assert f"cells that are not numbers) in column(s) {named}" in err
        assert "pass --missing zero" in err and "'V" not in err


def _with_stdout_closed(argv: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    """Run the command with a stdout whose reader has gone (as ``... | head`` ends)."""
    src = str(Path(dppca.__file__).resolve().parents[1])
    env = {**os.environ, "PYTHONPATH": src, "MPLBACKEND": "Agg"}
    read, write = os.pipe()
    os.close(read)  # every write to the pipe now fails with EPIPE
    try:
        return subprocess.run(
            [sys.executable, "-m", "dppca.cli", *argv],
            stdout=write,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
            cwd=cwd,
            timeout=120,
            check=False,
        )
    finally:
        os.close(write)


def test_a_closed_stdout_still_gets_the_picture_written(tmp_path):
    # 'dppca loading ... | head' used to end in "dppca: error: [Errno 32] Broken
    # pipe" (or Python's "Exception ignored" at exit) without the picture
    table = tmp_path / "t.csv"
    X = np.random.default_rng(5).normal(size=(80, 4))
    pd.DataFrame(X, columns=list("abcd")).to_csv(table, index=False)
    argv = ["loading", str(table), *PRIVACY, "--out", "pic.png", "--ledger", "l.sqlite"]
    done = _with_stdout_closed(argv, tmp_path)
    assert done.returncode == 0, done.stderr
    assert "Broken pipe" not in done.stderr and "Exception" not in done.stderr
    assert (tmp_path / "pic.png").stat().st_size > 0
    assert "wrote" in done.stderr  # the messages on stderr go on as usual


def test_a_closed_stdout_ends_a_printing_command_quietly(tmp_path):
    done = _with_stdout_closed(["directions", "--dataset", "gau", *PRIVACY, "--dry-run"], tmp_path)
    assert done.returncode == 141 and done.stderr == "", done.stderr  # 128 + SIGPIPE


@pytest.mark.parametrize("command", ["scree", "score", "directions", "loading"])
def test_the_balanced_design_reads_a_file_in_chunks_in_every_command(
    command, tmp_path, capsys, monkeypatch
):
    # scree and score used to read the whole table first, whatever the design
    from dppca.cli import _common

    path = tmp_path / "t.csv"
    X = np.random.default_rng(9).normal(size=(300, 3))
    pd.DataFrame(X, columns=list("abc")).to_csv(path, index=False)
    calls = []
    real = _common.read_chunked

    def spy(*args, **kwargs):
        calls.append(args[1])
        return real(*args, **kwargs)

    monkeypatch.setattr(_common, "read_chunked", spy)
    argv = [command, str(path), *PRIVACY, "--design", "balanced", "--m", "5", "--no-ledger"]
    assert main(argv) == 0, capsys.readouterr().err
    assert calls == [path]
    assert "a" in capsys.readouterr().out  # the file's labels survive the chunked reader
