"""The contributing guide names files that exist; the root holds no stray data."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_every_test_file_the_guide_names_exists() -> None:
    text = (ROOT / "CONTRIBUTING.md").read_text(encoding="utf-8")
    named = set(re.findall(r"tests/[\w/]+\.py", text))
    assert named, "the guide names no test file: the pattern is wrong"
    missing = sorted(name for name in named if not (ROOT / name).is_file())
    assert missing == []


def test_no_data_files_are_committed_at_the_root() -> None:
    import shutil
    import subprocess

    import pytest

    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    listed = subprocess.run(
        ["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.split()
    data = {".csv", ".parquet", ".pq", ".json"}
    stray = [name for name in listed if "/" not in name and Path(name).suffix.lower() in data]
    assert stray == []
