"""The app answers only its own page: the Host/Origin check and the launch token.

The app runs in this process (uvicorn in a thread) on a free loopback port;
plain HTTP requests and a websocket client stand in for foreign pages.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator

import pytest

pytest.importorskip("shiny")
uvicorn = pytest.importorskip("uvicorn")
websockets = pytest.importorskip("websockets")

TOKEN = "a-test-token-not-secret"


@contextlib.contextmanager
def _serving(app) -> Iterator[int]:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = int(sock.getsockname()[1])
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="error"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        assert thread.is_alive() and time.monotonic() < deadline, "the app did not start"
        time.sleep(0.02)
    try:
        yield port
    finally:
        server.should_exit = True
        thread.join(timeout=10)


@pytest.fixture(scope="module")
def port() -> Iterator[int]:
    from dppca.app import create_app

    with _serving(create_app(ledger=":memory:", token=TOKEN)) as p:
        yield p


def _get(url: str, **headers: str) -> tuple[int, list[str]]:
    request = urllib.request.Request(url, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, response.headers.get_all("set-cookie") or []
    except urllib.error.HTTPError as exc:
        return exc.code, []


def _cookie(port: int) -> str:
    status, cookies = _get(f"http://127.0.0.1:{port}/?token={TOKEN}")
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


def test_a_request_without_the_token_is_refused(port) -> None:
    base = f"http://127.0.0.1:{port}/"
    assert _get(base)[0] == 403
    assert _get(base + "?token=wrong")[0] == 403
    assert _get(base, Cookie="dppca-token-000000000000=" + TOKEN)[0] == 403  # another app's


def test_the_printed_address_sets_a_cookie_that_keeps_working(port) -> None:
    cookie = _cookie(port)
    assert _get(f"http://127.0.0.1:{port}/", Cookie=cookie)[0] == 200  # a reload
    assert _get(f"http://localhost:{port}/?token={TOKEN}")[0] == 200


def test_a_foreign_host_header_is_refused_even_with_the_token(port) -> None:
    # A DNS-rebinding page reaches 127.0.0.1 under its own name.
    url = f"http://127.0.0.1:{port}/?token={TOKEN}"
    assert _get(url, Host=f"evil.example:{port}")[0] == 403


def test_a_foreign_origin_websocket_is_refused(port) -> None:
    cookie = _cookie(port)
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
