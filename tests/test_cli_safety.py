"""Nothing lost on the command line: outputs checked first, clean stops, clear errors."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from dppca.cli import main

SRC = Path(__file__).resolve().parents[1] / "src"
PRIV = ["--eps", "0.5", "--delta", "1e-5", "--seed", "1"]


@pytest.fixture
def csv(tmp_path, small_frame):
    path = tmp_path / "data.csv"
    small_frame.to_csv(path, index=False)
    return path


def _one_error_line(capsys, *words: str) -> str:
    err = capsys.readouterr().err.strip()
    assert err.startswith("dppca: error:") and "\n" not in err, err
    for word in words:
        assert word in err, err
    return err


@pytest.mark.parametrize(
    "outputs",
    [
        lambda d, c: ["--out", str(d / "f.png"), "--table", str(c)],
        lambda d, c: ["--out", str(c), "--table", str(d / "t.csv")],
        lambda d, c: ["--out", str(d / "same.png"), "--table", str(d / "same.png")],
        lambda d, c: ["--out", str(d / "f.png"), "--table", str(d / "nodir" / "t.csv")],
        lambda d, c: ["--out", str(d / "f.png"), "--table", str(d)],
    ],
    ids=["table-is-input", "out-is-input", "out-is-table", "missing-dir", "a-directory"],
)
def test_bad_output_paths_are_refused_before_any_work(csv, tmp_path, capsys, outputs) -> None:
    before = csv.read_bytes()
    files = sorted(tmp_path.iterdir())
    assert main(["score", str(csv), *PRIV, *outputs(tmp_path, csv)]) == 2
    _one_error_line(capsys)
    assert csv.read_bytes() == before
    assert sorted(tmp_path.iterdir()) == files  # no figure, no table, no temp file
    assert not Path(os.environ["DPPCA_LEDGER"]).exists()  # nothing was spent


def test_an_output_may_not_overwrite_the_ledger(csv, tmp_path, capsys) -> None:
    ledger = tmp_path / "ledger.sqlite"
    argv = ["scree", str(csv), *PRIV, "--ledger", str(ledger), "--out", str(ledger)]
    assert main(argv) == 2
    _one_error_line(capsys, "--ledger")


_SLOW_WRITE = textwrap.dedent(
    """
    import sys, time
    from matplotlib.figure import Figure

    def slow(self, fname, **kwargs):
        with open(fname, "wb") as fh:
            fh.write(b"half a figure")
        print("WRITING", flush=True)
        time.sleep(60)

    Figure.savefig = slow
    from dppca.cli import main
    sys.exit(main(sys.argv[1:]))
    """
)


@pytest.mark.parametrize(("signum", "status"), [(signal.SIGTERM, 143), (signal.SIGINT, 130)])
def test_a_stop_during_a_write_leaves_no_temporary_file(csv, tmp_path, signum, status) -> None:
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(SRC), os.environ.get("PYTHONPATH", "")]),
    }
    argv = [
        "loading",
        str(csv),
        *PRIV,
        "--no-ledger",
        "--accuracy",
        "ignore",
        "--out",
        str(out_dir / "f.png"),
    ]
    proc = subprocess.Popen(
        [sys.executable, "-c", _SLOW_WRITE, *argv],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    for line in proc.stdout:
        if line.strip() == "WRITING":
            break
    proc.send_signal(signum)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == status
    # the release's cost lines may come first (messages go to stderr); then one line
    cost_lines = ("privacy cost", "what this means")
    lines = [ln for ln in err.strip().splitlines() if not ln.startswith(cost_lines)]
    assert len(lines) == 1 and "no partial output" in lines[0], err
    assert list(out_dir.iterdir()) == []


def test_a_european_csv_is_refused_with_the_options_that_read_it(tmp_path, capsys) -> None:
    path = tmp_path / "eu.csv"
    rows = "".join(f"{i},5;{i % 7},25;{(i * 3) % 11},0\n" for i in range(40))
    path.write_text("a;b;c\n" + rows)
    assert main(["directions", str(path), *PRIV]) == 2
    _one_error_line(capsys, "--sep ';' --decimal ','")
    assert main(["directions", str(path), *PRIV, "--sep", ";"]) == 2
    _one_error_line(capsys, "--decimal ','")
    assert main(["directions", str(path), *PRIV, "--sep", ";", "--decimal", ","]) == 0
    assert "PC1" in capsys.readouterr().out


def test_repeated_column_names_are_refused(tmp_path, capsys) -> None:
    path = tmp_path / "dup.csv"
    path.write_text("a,b,a\n" + "".join(f"{i},{i % 3},{i % 5}\n" for i in range(30)))
    assert main(["directions", str(path), *PRIV]) == 2
    _one_error_line(capsys, "repeated column names", "'a'")


@pytest.mark.parametrize(
    ("argv", "words"),
    [
        (["score", "--bins", "1000000"], ("--bins", "at most 1000")),
        (["directions", "--calibration", "analytic", "--eps", "1e10"], ("eps must be in",)),
        (["directions", "--eps", "1e-310"], ("eps must be in",)),
        (["directions", "--delta", "1e-320"], ("delta must be at least",)),
    ],
    ids=["bins", "huge-eps", "tiny-eps", "tiny-delta"],
)
def test_unworkable_settings_get_one_clear_line(tmp_path, capsys, argv, words) -> None:
    base = {"--eps": "0.5", "--delta": "1e-5"}
    for flag in base:
        if flag not in argv:
            argv = [*argv, flag, base[flag]]
    if argv[0] == "score":
        argv = [*argv, "--out", str(tmp_path / "s.png")]
    assert main(argv) == 2
    _one_error_line(capsys, *words)
    assert list(tmp_path.iterdir()) == []
