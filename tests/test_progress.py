"""Tests of progress reporting: callbacks, the text bar, and the CLI's bar on stderr."""

from __future__ import annotations

import argparse
import io
import itertools

import numpy as np
import pytest

from dppca import dp_pc_dir, spherical_kendall
from dppca.cli import main
from dppca.cli._common import progress_for
from dppca.core.progress import TextBar, resolve_progress
from dppca.privacy.mechanisms import random_pairing


def _recorder():
    calls: list[tuple[int, int]] = []
    return calls, lambda done, total: calls.append((done, total))


def test_exact_kernel_reports_every_tile(small_data):
    calls, cb = _recorder()
    spherical_kendall(small_data, block_size=64, progress=cb)
    n = small_data.shape[0]
    # 200 rows in blocks of 64 -> 4 blocks -> 10 tiles I <= J
    assert len(calls) == 10
    assert calls[-1] == (n * (n - 1) // 2, n * (n - 1) // 2)
    assert all(a[0] < b[0] for a, b in itertools.pairwise(calls))


def test_balanced_kernel_reports_every_chunk(small_data):
    calls, cb = _recorder()
    spherical_kendall(
        small_data,
        design="balanced",
        order=random_pairing(len(small_data), 0),
        m=3,
        block_size=50,
        progress=cb,
    )
    assert calls == [(150, 600), (300, 600), (450, 600), (600, 600)]


def test_dp_pc_dir_passes_progress_on(small_data):
    calls, cb = _recorder()
    dp_pc_dir(small_data, eps=0.5, delta=1e-5, random_state=0, progress=cb)
    assert calls and calls[-1][0] == calls[-1][1] == 200 * 199 // 2


def test_progress_off_by_default_prints_nothing(small_data, capsys):
    spherical_kendall(small_data)
    dp_pc_dir(small_data, eps=0.5, delta=1e-5, random_state=0, design="balanced")
    assert capsys.readouterr() == ("", "")


def test_progress_true_draws_a_bar_on_stderr(small_data, capsys):
    spherical_kendall(small_data, block_size=32, progress=True)
    captured = capsys.readouterr()
    assert captured.out == ""
    assert "100%" in captured.err and captured.err.endswith("\n") and "pairs" in captured.err


def test_text_bar_redraws_only_when_the_percentage_changes():
    stream = io.StringIO()
    bar = TextBar(stream, width=10)
    for done in range(0, 1001):
        bar(done, 1000)
    text = stream.getvalue()
    assert text.count("\r") == 101  # 0%, 1%, ..., 100%
    assert text.endswith("\n") and "[##########] 100%" in text


@pytest.mark.parametrize("bad", [1, "yes", 2.5])
def test_bad_progress_raises(bad):
    with pytest.raises(TypeError, match="progress must be"):
        resolve_progress(bad)


@pytest.mark.parametrize("value", [None, False])
def test_progress_none_and_false_mean_off(value):
    assert resolve_progress(value) is None


def _directions(tmp_path, small_frame, *extra):
    path = tmp_path / "d.csv"
    small_frame.to_csv(path, index=False)
    return ["directions", str(path), "--eps", "0.5", "--delta", "1e-5", "--seed", "1", *extra]


@pytest.mark.parametrize("design", ["exact", "balanced"])
def test_cli_bar_goes_to_stderr_only(tmp_path, capsys, small_frame, design):
    assert (
        main(_directions(tmp_path, small_frame, "--design", design, "--progress", "always")) == 0
    )
    captured = capsys.readouterr()
    assert "100%" in captured.err and "#" in captured.err
    assert "%" not in captured.out and "#" not in captured.out and "PC1" in captured.out


def test_cli_draws_no_bar_for_short_jobs(tmp_path, capsys, small_frame):
    # no ledger notes, and no forecast warning (200 rows at eps 0.5 are forecast noisy)
    assert main(_directions(tmp_path, small_frame, "--no-ledger", "--accuracy", "ignore")) == 0
    err = capsys.readouterr().err
    assert "pairs" not in err and err.startswith("privacy cost")  # the cost line only


@pytest.mark.parametrize(
    "design, m, n, mode, expected",
    [
        ("exact", None, 5_000, "auto", None),  # 1.2e7 pairs: a fraction of a second
        ("exact", None, 50_000, "auto", True),  # 1.2e9 pairs: many seconds
        ("balanced", None, 100_000, "auto", None),  # 2e6 pairs
        ("balanced", 20, 10**7, "auto", True),  # 2e8 pairs
        ("balanced", 20, 10**7, "never", None),
        ("exact", None, 10, "always", True),
        (None, None, 5_000, "auto", None),  # the rule's design (exact at 5,000 x 20)
        (None, None, 50_000, "auto", True),  # the rule keeps exact: 1.2e9 pairs
    ],
)
def test_cli_bar_only_for_long_jobs(design, m, n, mode, expected):
    args = argparse.Namespace(design=design, m=m, progress=mode)
    assert progress_for(args, n, 20) is expected


def test_bar_counts_are_public(small_data):
    # the callback sees pair counts only, which depend on n and m, never on the values
    a_calls, a = _recorder()
    b_calls, b = _recorder()
    spherical_kendall(
        small_data, design="balanced", m=5, progress=a, order=random_pairing(len(small_data), 0)
    )
    spherical_kendall(
        np.exp(small_data),
        design="balanced",
        m=5,
        progress=b,
        order=random_pairing(len(small_data), 9),
    )
    assert a_calls == b_calls
