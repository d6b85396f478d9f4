"""The dppca app: private PCA pictures in the browser (optional extra ``dppca[app]``).

Start it with ``dppca app [DATA.csv]`` or :func:`run`. It needs Shiny for
Python (``pip install "dppca[app]"``); importing :mod:`dppca` does not load it.
The app's logic (data checks, one budget per dataset, kept releases) lives in
:mod:`dppca.app.state`, which needs no Shiny.
"""

from __future__ import annotations

import os
import socket
import sys
import threading
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd

    from ..privacy.ledger import Ledger

__all__ = ["create_app", "run"]

_MISSING = (
    "the app needs Shiny for Python, which is not installed; "
    'install it with: python3 -m pip install "dppca[app]"'
)


def _require_shiny() -> None:
    try:
        import shiny  # noqa: F401
    except ImportError:
        raise ImportError(_MISSING) from None


def _read_data(data: Any) -> tuple[pd.DataFrame | None, str]:
    import pandas as pd

    from .data import read_csv_upload

    if data is None:
        return None, "data"
    if isinstance(data, pd.DataFrame):
        return data, "data"
    if isinstance(data, str | os.PathLike):
        path = os.fspath(data)
        if not os.path.isfile(path):
            raise FileNotFoundError(f"data file {path!r} does not exist or is not a file.")
        # A local file is not an upload: no size limit.
        return read_csv_upload(path, limit=os.path.getsize(path)), os.path.basename(path)
    raise TypeError(f"data must be None, a DataFrame or a CSV path; got {type(data).__name__}.")


def _open_ledger(ledger: Any) -> Ledger:
    from ..privacy.ledger import Ledger

    if isinstance(ledger, Ledger):
        return ledger
    if ledger is None or isinstance(ledger, str | os.PathLike):
        return Ledger(ledger)
    raise TypeError(f"ledger must be None, a path or a Ledger; got {type(ledger).__name__}.")


def create_app(
    data: Any = None,
    *,
    max_upload_mb: float = 20.0,
    ledger: Any = None,
    token: str | None = None,
    hosts: Sequence[str] = (),
) -> Any:
    """The app as a ``shiny.App`` (for ``shiny run`` or an ASGI server).

    Parameters
    ----------
    data : None, pandas.DataFrame or path of a CSV file
        A table loaded first and offered as the "Provided" source; None
        starts with the bundled ``gau_g`` dataset.
    max_upload_mb : float, default=20
        Largest CSV file accepted from the browser, in megabytes (> 0),
        counted on the bytes the server receives.
    ledger : None, path or dppca.privacy.ledger.Ledger
        The privacy ledger shared by every session: one budget per dataset,
        kept across restarts. None uses :func:`dppca.privacy.ledger.default_ledger_path`
        (the ledger of the command line too); ``":memory:"`` keeps it only
        while the app runs.
    token : str, optional
        The secret that every request must carry: open
        ``http://HOST:PORT/?token=TOKEN`` once, and a cookie keeps it for
        reloads, downloads and the websocket. Default: a fresh random token,
        read back as ``app.token``. Requests without it, with a ``Host``
        header other than the app's address, or from another origin (another
        site's page, a local file) are refused.
    hosts : sequence of str, default=()
        Host names (or the bind address) by which the page may be reached,
        besides ``127.0.0.1``, ``localhost`` and ``::1``.
    """
    _require_shiny()
    from .ui import create_app as _create

    if isinstance(max_upload_mb, bool) or not (
        isinstance(max_upload_mb, int | float) and 0 < max_upload_mb < float("inf")
    ):
        raise ValueError(f"max_upload_mb must be a number > 0; got {max_upload_mb!r}.")
    frame, name = _read_data(data)
    return _create(
        frame,
        data_name=name,
        max_upload=int(max_upload_mb * 1024 * 1024),
        ledger=_open_ledger(ledger),
        token=token,
        hosts=tuple(hosts),
    )


class PortInUseError(OSError):
    """The app's port cannot be bound (another program uses it)."""


def _check_port(host: str, port: int) -> None:
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except socket.gaierror as exc:
        raise PortInUseError(f"cannot serve on host {host!r}: {exc.strerror}.") from None
    family, _, _, _, address = infos[0]
    with socket.socket(family, socket.SOCK_STREAM) as sock:
        if os.name != "nt":
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as uvicorn does
        try:
            sock.bind(address)
        except OSError:
            raise PortInUseError(
                f"port {port} on {host} is already in use; stop the other program or "
                "choose another port with --port."
            ) from None


def _open_when_up(host: str, port: int, url: str) -> None:
    """Open ``url`` in the default browser once the app accepts connections."""
    import webbrowser

    connect_to = "127.0.0.1" if host in ("0.0.0.0", "") else "::1" if host == "::" else host
    for _ in range(100):
        try:
            with socket.create_connection((connect_to, port), timeout=0.5):
                break
        except OSError:
            time.sleep(0.1)
    webbrowser.open(url)


def run(
    data: Any = None,
    *,
    port: int = 8000,
    host: str = "127.0.0.1",
    launch_browser: bool = False,
    max_upload_mb: float = 20.0,
    ledger: Any = None,
    **kwargs: Any,
) -> None:
    """Serve the app until interrupted (Ctrl+C).

    Parameters
    ----------
    data : None, pandas.DataFrame or path of a CSV file
        See :func:`create_app`.
    port : int, default=8000
    host : str, default="127.0.0.1"
        The loopback address, so only this machine can reach the app. Serve
        on another address only behind access control: the app shows
        whatever it computes from the data to whoever connects.
    launch_browser : bool, default=False
        Open the page in the default browser.
    max_upload_mb : float, default=20
        Largest CSV file accepted from the browser, in megabytes.
    ledger : None, path or dppca.privacy.ledger.Ledger
        See :func:`create_app`.
    **kwargs
        Passed to ``shiny.run_app`` (for example ``log_level="warning"``).

    Notes
    -----
    The address printed carries the launch's secret token; only a browser
    that opened it (and its reloads) can use the app. Treat it like a
    password: whoever has it can spend the budget.

    Privacy: the page shows only private releases and what is drawn from
    them, each paid for in the dataset's budget; the data panel's messages
    (for example a column with missing values) are meant for the data holder
    who runs the app.
    """
    _require_shiny()
    import shiny

    run_app = shiny.run_app
    assert run_app is not None  # None only in Pyodide, where the app cannot serve

    app = create_app(data, max_upload_mb=max_upload_mb, ledger=ledger, hosts=(host,))
    _check_port(host, int(port))
    shown = f"[{host}]" if ":" in host else host
    url = f"http://{shown}:{int(port)}/?token={app.token}"
    print(f"dppca app: serving on {url} (press Ctrl+C to stop)", flush=True)
    if launch_browser:  # with the token, which shiny's own launcher would drop
        threading.Thread(target=_open_when_up, args=(host, int(port), url), daemon=True).start()
    try:
        run_app(app, host=host, port=int(port), launch_browser=False, **kwargs)
    except SystemExit as exc:  # uvicorn exits when it cannot bind (a race with _check_port)
        if exc.code not in (0, None):
            raise PortInUseError(
                f"the app could not start on {host}:{port}; see the message above."
            ) from None
    sys.stdout.flush()
