"""Redraw the README's picture with the command the README shows beside it.

    python scripts/make_readme_figure.py          # rewrite docs/images/readme_loading.png
    python scripts/make_readme_figure.py --check  # exit 1 if the committed picture is stale

The command is read from README.md (the line of the form ``dppca loading ... --out
docs/images/readme_loading.png``), so the picture and the text cannot drift apart;
``tests/test_docs.py`` runs the same check. ``--no-ledger`` is added so that drawing
the picture records nothing in this machine's privacy ledger; it does not change the
figure. The command carries a fixed ``--seed`` to make the picture reproducible: a
release meant for publication runs without one.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import re
import shlex
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
FIGURE = Path("docs/images/readme_loading.png")
# Root-mean-square difference (0-255 scale) below which two renderings are the same
# picture. Another noise draw of the same release differs by about 16; font
# rendering differences between machines stay well under 1.
TOLERANCE = 2.0


def readme_command() -> list[str]:
    """The ``dppca ...`` command that README.md shows for its picture, as argv."""
    pattern = rf"`(dppca loading [^`]*--out {re.escape(str(FIGURE))})`"
    found = re.findall(pattern, README.read_text(encoding="utf-8"))
    if len(found) != 1:
        raise SystemExit(f"README.md must show exactly one command writing {FIGURE}")
    return shlex.split(found[0])[1:]


def draw(out: Path) -> None:
    """Run the README's command with its output redirected to ``out``."""
    from dppca.cli import main

    argv = readme_command()
    argv[argv.index("--out") + 1] = str(out)
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        status = main([*argv, "--no-ledger"])
    if status != 0:
        raise SystemExit(f"dppca {shlex.join(argv)} exited with status {status}")


def differs(a: Path, b: Path) -> str | None:
    """None when the two PNG files show the same picture, else a reason."""
    from matplotlib.testing.compare import compare_images

    return compare_images(str(a), str(b), tol=TOLERANCE, in_decorator=False)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare, do not rewrite")
    args = parser.parse_args()
    target = ROOT / FIGURE
    if not args.check:
        draw(target)
        print(f"wrote {FIGURE}")
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        fresh = Path(tmp) / FIGURE.name
        draw(fresh)
        reason = differs(target, fresh)
    if reason:
        print(f"{FIGURE} is stale; run python scripts/make_readme_figure.py\n{reason}")
        return 1
    print(f"{FIGURE} matches the README's command")
    return 0


if __name__ == "__main__":
    sys.exit(main())
