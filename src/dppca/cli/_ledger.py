"""The privacy ledger on the command line: ``--ledger``, ``--no-ledger``, ``--budget-*``.

Every private command charges its release to the dataset's budget in the
ledger (:mod:`dppca.privacy.ledger`), the same SQLite file the app uses, so what all
commands and app sessions spend on one dataset adds up against one total.

The total of a dataset is set once:

- explicitly, with ``--budget-eps`` and ``--budget-delta`` (accepted again
  later only with the same values, or while nothing has been spent);
- otherwise, by the first command on the data, to the app's default for a
  new dataset, ``eps = 1`` and ``delta = default_delta(n)``
  (``min(1e-6, 1/(10 n^1.5))`` rounded down), or the command's own delta
  where that is larger (a release's delta is checked below ``1/n``). A note
  on stderr says so. A first release this default cannot pay (eps above 1)
  is refused with the one line that declares a total: a release's own eps
  never becomes the total unasked.

A total is written with the first charge, in its transaction: of concurrent
first commands declaring different totals, the first charged wins and the
others are refused with the recorded total named. ``--budget-delta`` must be
below ``1/n``.

A dataset is identified by the fingerprint of the rows over all numeric
columns of the table (:func:`dppca.privacy.ledger.fingerprint`), whatever is
analysed and for every design: a ``--design balanced --columns a,b`` run
spends from the same budget as one on the whole table, and so does the same
table with its rows in another order.

The bundled datasets are public: their releases are recorded as practice and
never refused. Every refusal says how to go on.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ._safety import CLIError

if TYPE_CHECKING:
    from ..privacy.ledger import Ledger

__all__ = [
    "add_budget_arguments",
    "add_ledger_arguments",
    "ledger_location",
    "read_table",
    "register",
]


def add_ledger_arguments(parser: argparse.ArgumentParser) -> None:
    """``--ledger PATH`` and ``--no-ledger``."""
    group = parser.add_mutually_exclusive_group()
    group.add_argument(
        "--ledger",
        default=None,
        metavar="PATH",
        help="privacy ledger (SQLite file) that keeps one budget per dataset across "
        "commands and the app; default $DPPCA_LEDGER or ~/.local/state/dppca/ledger.sqlite",
    )
    group.add_argument(
        "--no-ledger",
        action="store_true",
        help="do not check or record this release in any ledger",
    )


def add_budget_arguments(parser: argparse.ArgumentParser) -> None:
    """``--ledger``, ``--no-ledger``, ``--budget-eps`` and ``--budget-delta``."""
    add_ledger_arguments(parser)
    parser.add_argument(
        "--budget-eps",
        type=float,
        default=None,
        metavar="E",
        help="total eps of these data in the ledger (set once; default on first use: 1)",
    )
    parser.add_argument(
        "--budget-delta",
        type=float,
        default=None,
        metavar="D",
        help="total delta of these data in the ledger, below 1/n (set once; default on "
        "first use: min(1e-6, 1/(10 n^1.5)) rounded down)",
    )


def ledger_location(args: argparse.Namespace) -> str | Path:
    """The ledger file of the command line (``":memory:"`` with ``--no-ledger``)."""
    if getattr(args, "no_ledger", False):
        return ":memory:"
    if getattr(args, "ledger", None):
        return Path(args.ledger).expanduser()
    from ..privacy.ledger import default_ledger_path

    return default_ledger_path()


#: How to go on after a refusal on the command line.
ADVICE = (
    "To go on: reuse a saved release (--save-release, then --directions FILE, free), lower "
    "--eps/--delta, try it unrecorded with --no-ledger, or keep another budget in another "
    "ledger file with --ledger PATH (--budget-eps/--budget-delta set a total before the "
    "first release of the data)."
)


def _source_key(args: argparse.Namespace, ledger: Ledger) -> tuple[str, str, int]:
    """(fingerprint, name, n) of the table the command reads: all its numeric columns.

    The key is :meth:`Ledger.key`'s: what an earlier dppca recorded under
    the table's old key is moved onto it first.
    """
    from ..datasets import load_dataset
    from ..privacy.ledger import LedgerError

    try:
        if args.data is None:
            name = args.dataset or args.default_dataset
            frame = load_dataset(name)
            return ledger.key(frame, name), name, int(frame.shape[0])
        path = Path(args.data)
        # A file keyed before, unchanged, is keyed from the ledger without pandas.
        fp, n = ledger.file_key(
            path, lambda: read_table(path, args), name=path.name, options=_read_options(path, args)
        )
    except LedgerError as exc:
        raise CLIError(str(exc)) from None
    return fp, path.name, n


def _read_options(path: Path, args: argparse.Namespace) -> dict[str, str]:
    """How :func:`read_table` parses ``path``: the format and, for a CSV file, its options."""
    if path.suffix.lower() in {".parquet", ".pq"}:
        return {"format": "parquet"}
    from ..core.reading import csv_options

    options = csv_options(args)
    return {"format": "csv", "sep": options["sep"], "decimal": options["decimal"]}


def read_table(path: Path, args: argparse.Namespace) -> Any:
    """The whole table in ``path``: a Parquet file (``.parquet``/``.pq``) or a CSV file
    read with the command's ``--sep``/``--decimal``."""
    if path.suffix.lower() in {".parquet", ".pq"}:
        from ..core.lazy import pandas as pd

        try:
            return pd.read_parquet(path)
        except ImportError:
            raise CLIError(
                f"reading the Parquet file {str(path)!r} needs pyarrow; install it with "
                "pip install 'dppca[parquet]' or convert the file to CSV."
            ) from None
    from ..core.reading import csv_options, read_csv_checked

    return read_csv_checked(path, **csv_options(args))


def report_spending(budget: Any) -> None:
    """One stderr line: what the dataset has spent and what remains."""
    if budget is None:
        return
    new_total = getattr(budget, "new_total", None)
    if new_total is not None:
        print(
            f"dppca: ledger: first release from {budget.name}; its total budget is now "
            f"(eps={new_total[0]:g}, delta={new_total[1]:g}) in {budget.store.ledger.path} (give "
            "--budget-eps/--budget-delta with the first release to choose another).",
            file=sys.stderr,
        )
    print(f"dppca: ledger: {budget_text(budget)}", file=sys.stderr)
    if budget.public:
        print(
            f"dppca: ledger: {budget.name} is a bundled, public dataset: its releases are "
            "recorded as practice and never refused.",
            file=sys.stderr,
        )


def budget_text(budget: Any) -> str:
    """What the dataset spent and what still fits: the accountant's one text
    (:meth:`dppca.privacy.headroom.Headroom.describe`), the same in the app."""
    return str(budget.describe())


# ------------------------------------------------------------------- dppca ledger


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "ledger",
        help="show the privacy ledger: budgets and releases per dataset",
        description="Show the privacy ledger. Without data: one line per dataset (total, "
        "spent, releases). With DATA.csv or --dataset: that dataset's releases.",
    )
    parser.add_argument("data", nargs="?", metavar="DATA.csv", help="a CSV file")
    from ..datasets import DATASETS

    parser.add_argument("--dataset", choices=sorted(DATASETS), default=None)
    parser.add_argument(
        "--ledger",
        default=None,
        metavar="PATH",
        help="the ledger file (default $DPPCA_LEDGER or ~/.local/state/dppca/ledger.sqlite)",
    )
    parser.add_argument(
        "--verify",
        action="store_true",
        help="the full audit: check the whole ledger file (integrity, every charge's "
        "digest, every summary), in time linear in its size (about 0.2 CPU-s per 10,000 "
        "charges); every other command checks a large ledger in constant time only",
    )
    parser.add_argument(
        "--adopt",
        default=None,
        metavar="PREFIX",
        help="move the record kept under this fingerprint prefix (one 'dppca ledger' "
        "lists) onto DATA.csv: for a table an earlier dppca recorded under another key",
    )
    from ..core.reading import add_csv_arguments

    add_csv_arguments(parser)
    parser.set_defaults(func=run, default_dataset=None, design="exact")


def run(args: argparse.Namespace) -> int:
    path = ledger_location(args)
    if not os.path.exists(path):
        print(f"dppca: ledger {path} does not exist yet (nothing was released).", file=sys.stderr)
        return 0
    from ..privacy.ledger import Ledger

    ledger = Ledger(path)
    if getattr(args, "verify", False):
        from ..privacy.ledger import LedgerError

        try:
            ledger.verify()
        except LedgerError as exc:
            raise CLIError(str(exc)) from None
        print(f"dppca: ledger {path}: every record checked, intact.", file=sys.stderr)
    if args.data is not None and args.dataset is not None:
        raise CLIError("give either DATA.csv or --dataset, not both.")
    if args.data is None and args.dataset is None:
        records = ledger.dataset_records()
        if not records:
            print("the ledger holds no dataset yet.")
            return 0
        # a fingerprint prefix would let a holder of a candidate table confirm it
        columns = [c for c in records[0] if c != "fingerprint"]
        rows = [[r[c] for c in columns] for r in records]
        labels = [f"#{i + 1}" for i in range(len(rows))]
        print(text_table(columns, rows, index=labels))
        return 0
    if args.data is not None and not Path(args.data).is_file():
        raise CLIError(f"data file {args.data!r} does not exist or is not a file.")
    if getattr(args, "adopt", None):
        _adopt(args, ledger)
    fp, name, _ = _source_key(args, ledger)
    total = ledger.total(fp)
    if total is None:
        print(f"{name}: no budget in the ledger yet (nothing was released from these data).")
        return 0
    entries = ledger.entry_rows(fp, last=_SHOWN)
    if entries:
        first = int(entries[0][0])
        if first > 1:
            print(f"({first - 1:,} earlier release(s) not shown)")
        print(text_table(_ENTRY_COLUMNS, entries))
    print(f"{name}: {ledger.headroom(fp).describe()}")
    if ledger.is_public(fp):
        print(f"{name} is a bundled, public dataset: its releases are practice, never refused.")
    return 0


def _adopt(args: argparse.Namespace, ledger: Ledger) -> None:
    """``--adopt PREFIX``: the record under PREFIX is this table's; move it onto its key."""
    from ..datasets import load_dataset
    from ..privacy.ledger import LedgerError, fingerprint

    if args.data is None and args.dataset is None:
        raise CLIError("--adopt needs the table: give DATA.csv (or --dataset).")
    if args.data is None:
        name, frame = args.dataset, load_dataset(args.dataset)
    else:
        name, frame = Path(args.data).name, read_table(Path(args.data), args)
    try:
        ledger.adopt(fingerprint(frame), args.adopt)
    except LedgerError as exc:
        raise CLIError(str(exc)) from None
    print(f"dppca: ledger: the record {args.adopt} now counts against {name}.", file=sys.stderr)


#: How many of a dataset's latest releases ``dppca ledger DATA`` lists.
_SHOWN = 50


_ENTRY_COLUMNS = ["release", "time", "dataset", "kind", "released", "mechanism", "eps", "delta"]


def text_table(columns: list[str], rows: list[Any], *, index: list[str] | None = None) -> str:
    """Rows as an aligned text table, without pandas: values right-aligned, the
    row labels (``index``) left-aligned, eps and delta columns to 6 significant digits."""

    def shown(column: str, value: Any) -> str:
        if isinstance(value, float) and (column.endswith("eps") or column.endswith("delta")):
            return f"{value:.6g}"
        return str(value)

    cells = [list(columns)] + [
        [shown(c, v) for c, v in zip(columns, row, strict=True)] for row in rows
    ]
    widths = [max(len(line[j]) for line in cells) for j in range(len(columns))]
    lines = [" ".join(v.rjust(w) for v, w in zip(line, widths, strict=True)) for line in cells]
    if index is not None:
        width = max(map(len, index))
        lines = [" " * width + "  " + lines[0]] + [
            label.ljust(width) + "  " + line for label, line in zip(index, lines[1:], strict=True)
        ]
    return "\n".join(lines)
