"""The app answers only its own page: the Host/Origin check and the launch token.

The app runs as ``dppca app`` on a free loopback port, with a known token;
plain HTTP requests and a websocket client stand in for foreign pages.
"""

from __future__ import annotations

import asyncio
import os
import re
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("shiny")
websockets = pytest.importorskip("websockets")


@pytest.fixture(scope="module")
def served(tmp_path_factory) -> Iterator[tuple[int, str]]:
    """``dppca app`` in a subprocess: its port and the token of the address it printed.

    (Shiny's reactive lock belongs to one event loop per process, so the app
    is not served from the test process.)
    """
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        free = int(sock.getsockname()[1])
    src = str(Path(__file__).resolve().parents[1] / "src")
    code = "import sys; from dppca.cli import main; sys.exit(main(sys.argv[1:]))"
    tmp = tmp_path_factory.mktemp("origin")
    with open(tmp / "app.log", "wb") as log:
        proc = subprocess.Popen(
            [sys.executable, "-c", code, "app", "--port", str(free), "--ledger", str(tmp / "l")],
            env={
                **os.environ,
                "PYTHONPATH": os.pathsep.join([src, os.environ.get("PYTHONPATH", "")]),
            },
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    try:
        deadline, token = time.monotonic() + 60, None
        while True:
            found = re.search(
                r"serving on http://127\.0\.0\.1:\d+/\?token=(\S+)", (tmp / "app.log").read_text()
            )
            token = found.group(1) if found else None
            try:  # the address is printed before the server listens
                if token is not None and _get(f"http://127.0.0.1:{free}/?token={token}")[0] == 200:
                    break
            except OSError:
                pass
            assert proc.poll() is None and time.monotonic() < deadline, "the app did not start"
            time.sleep(0.2)
        yield free, token
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def _get(url: str, **headers: str) -> tuple[int, list[str]]:
    request = urllib.request.Request(url, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, response.headers.get_all("set-cookie") or []
    except urllib.error.HTTPError as exc:
        return exc.code, []


def _cookie(port: int, token: str) -> str:
    status, cookies = _get(f"http://127.0.0.1:{port}/?token={token}")
    assert status == 200 and len(cookies) == 1
    assert "HttpOnly" in cookies[0] and "SameSite=Strict" in cookies[0]
    return cookies[0].split(";")[0]


async def _open_websocket(port: int, origin: str | None, cookie: str | None) -> str:
    headers = {"Cookie": cookie} if cookie else {}
    url = f"ws://127.0.0.1:{port}/websocket/"
    try:
        async with websockets.connect(url, origin=origin, additional_headers=headers) as ws:
            await ws.send('{"method": "init", "data": {}}')
            reply = await asyncio.wait_for(ws.recv(), 10)
    except websockets.InvalidStatus as exc:
        return f"refused {exc.response.status_code}"
    return "open" if "sessionId" in str(reply) else f"unexpected {reply!r}"


def test_a_request_without_the_token_is_refused(served) -> None:
    port, token = served
    base = f"http://127.0.0.1:{port}/"
    assert _get(base)[0] == 403
    assert _get(base + "?token=wrong")[0] == 403
    assert _get(base, Cookie="dppca-token-000000000000=" + token)[0] == 403  # another app's


def test_the_printed_address_sets_a_cookie_that_keeps_working(served) -> None:
    port, token = served
    cookie = _cookie(port, token)
    assert _get(f"http://127.0.0.1:{port}/", Cookie=cookie)[0] == 200  # a reload
    assert _get(f"http://localhost:{port}/?token={token}")[0] == 200


def test_a_foreign_host_header_is_refused_even_with_the_token(served) -> None:
    port, token = served
    # A DNS-rebinding page reaches 127.0.0.1 under its own name.
    url = f"http://127.0.0.1:{port}/?token={token}"
    assert _get(url, Host=f"evil.example:{port}")[0] == 403


def test_a_foreign_origin_websocket_is_refused(served) -> None:
    port, token = served
    cookie = _cookie(port, token)
    own = f"http://127.0.0.1:{port}"
    assert asyncio.run(_open_websocket(port, own, cookie)) == "open"  # the app's own page
    assert asyncio.run(_open_websocket(port, "http://evil.example", cookie)) == "refused 403"
    assert asyncio.run(_open_websocket(port, "null", cookie)) == "refused 403"  # a local file
    assert asyncio.run(_open_websocket(port, own, None)) == "refused 403"  # no token


def test_the_app_has_a_fresh_token_per_launch() -> None:
    from dppca.app import create_app

    first, second = create_app(ledger=":memory:"), create_app(ledger=":memory:")
    assert len(first.token) >= 40 and first.token != second.token
    assert first.cookie_name != second.cookie_name
