"""The package metadata: extras and the tool pins CI relies on."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

tomllib = pytest.importorskip("tomllib")  # Python 3.11+

PYPROJECT = Path(__file__).resolve().parents[1] / "pyproject.toml"


def _extras() -> dict[str, list[str]]:
    with PYPROJECT.open("rb") as fh:
        return tomllib.load(fh)["project"]["optional-dependencies"]


def _name(requirement: str) -> str:
    return re.split(r"[\[<>=!~; ]", requirement, maxsplit=1)[0].lower()


def test_lint_and_type_tools_are_pinned_once_in_the_test_extra():
    # .ci/run lints and type-checks with the test extra; a second pin elsewhere
    # would let a contributor's tools differ from CI's.
    extras = _extras()
    for tool in ("ruff", "mypy"):
        pins = [(extra, r) for extra, reqs in extras.items() for r in reqs if _name(r) == tool]
        assert [extra for extra, _ in pins] == ["test"], pins
        assert "<" in pins[0][1], f"{tool} needs an upper bound: {pins[0][1]}"
    assert "dppca[test]" in extras["dev"]
