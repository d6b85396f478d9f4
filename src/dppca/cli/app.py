"""``dppca app``: serve the interactive app on this machine."""

from __future__ import annotations

import argparse
import sys

from ._ledger import add_ledger_arguments, ledger_location
from ._safety import CLIError


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "app",
        help="interactive app in the browser (needs dppca[app])",
        description="Serve the dppca app (Shiny for Python) on 127.0.0.1; open the printed "
        "address in a browser. It carries a secret token, new at each launch: only a "
        "browser that opened it can use the app (other pages and local files are refused), "
        "so keep it to yourself. Each dataset has one privacy budget, kept in the ledger "
        "(shared by every browser session, by restarts and by the other commands).",
    )
    parser.add_argument(
        "data",
        nargs="?",
        metavar="DATA.csv",
        help="a CSV file with a header row to load first (default: bundled gau_g)",
    )
    parser.add_argument("--port", type=int, default=8000, help="port to listen on (default 8000)")
    parser.add_argument(
        "--host",
        default="127.0.0.1",
        help="address to bind (default 127.0.0.1, this machine only)",
    )
    parser.add_argument(
        "--max-upload-mb",
        type=float,
        default=20.0,
        metavar="MB",
        help="largest CSV file accepted from the browser (default 20)",
    )
    parser.add_argument("--open", action="store_true", help="open the page in a web browser")
    add_ledger_arguments(parser)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    try:
        import shiny  # noqa: F401
    except ImportError:
        raise CLIError(
            'the app needs Shiny for Python; install it with: python3 -m pip install "dppca[app]"'
        ) from None
    if not 0 < args.port < 65536:
        raise CLIError(f"--port must be in 1..65535; got {args.port}.")
    from ..app import run as run_app
    from ..app.data import DataError

    try:
        run_app(
            args.data,
            max_upload_mb=args.max_upload_mb,
            port=args.port,
            host=args.host,
            launch_browser=args.open,
            log_level="warning",
            ledger=ledger_location(args),
        )
    except DataError as exc:
        raise CLIError(str(exc)) from None
    except KeyboardInterrupt:  # Ctrl+C: the server has shut down cleanly
        print("dppca app: stopped.", file=sys.stderr)
    return 0
