"""Server-side limits of the app that do not trust the browser.

:class:`LocalApp` is a ``shiny.App`` that checks every request before Shiny
sees it:

- **Origin and token.** The app spends a privacy budget on behalf of whoever
  talks to it, so it answers only its own page. Each launch has a secret
  token, part of the address the command prints
  (``http://127.0.0.1:8000/?token=...``, the pattern Jupyter uses). A
  request carrying the token in its query gets it back as a cookie
  (``HttpOnly``, ``SameSite=Strict``), so reloads, downloads and the
  websocket keep working; any other HTTP request or websocket without the
  token is refused (status 403), and so is one whose ``Host`` header is not
  the app's address (a DNS-rebinding page) or whose ``Origin`` header names
  another origin (a foreign page or a local file, whose origin is ``null``).
- **Uploads.** The bytes of every file upload are counted as they arrive.
  Shiny writes an upload's request body straight to a temporary file; here
  at most ``limit + 1`` bytes of it reach Shiny (the rest is read from the
  network and dropped), so a file larger than the limit is stored truncated
  and then refused by its measured size, whatever size the browser
  declared. A body announced larger than ``16 * limit`` is refused outright
  with status 413. The cap holds per upload operation (one operation may
  declare many files, each sent in a request of its own: together they
  store at most ``limit + 1`` bytes) and per session (Shiny keeps a
  session's uploads until it ends: at most :data:`SESSION_UPLOADS` times
  the limit, after which an upload is refused with status 413 and a reload
  starts a new session).
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
from collections.abc import Iterable
from http.cookies import CookieError, SimpleCookie
from typing import Any
from urllib.parse import parse_qs, urlsplit

from shiny import App

__all__ = ["LOOPBACK_HOSTS", "SESSION_UPLOADS", "LocalApp", "new_token"]

_UPLOAD_PATH = re.compile(r"/session/([^/]+)/upload/([^/?]+)")
#: How many uploads of the largest size one session may store in all.
SESSION_UPLOADS = 4
#: Host names that reach this machine only; always accepted in the Host header.
LOOPBACK_HOSTS = frozenset({"127.0.0.1", "localhost", "::1"})
#: Bind addresses that listen on every interface: any Host name is then accepted
#: (the token and the Origin check still apply).
_ANY_HOST = frozenset({"0.0.0.0", "::", ""})
_REFUSED = (
    b"dppca app: refused. Open the address that `dppca app` printed, with its token "
    b"(http://HOST:PORT/?token=...), in a browser on this machine.\n"
)


def new_token() -> str:
    """A fresh secret token for one launch of the app (256 random bits)."""
    return secrets.token_urlsafe(32)


class LocalApp(App):
    """A Shiny app that answers only its own page, with uploads capped on the server.

    Parameters
    ----------
    ui, server
        As for ``shiny.App``.
    max_upload : int
        Largest upload accepted, in bytes, counted on the bytes received.
    token : str
        The launch's secret; a request needs it (query ``token=`` or the
        cookie set from it).
    hosts : iterable of str, default=()
        Host names accepted in the ``Host`` header besides the loopback
        names; an address such as ``0.0.0.0`` accepts every name.
    """

    def __init__(
        self, ui: Any, server: Any, *, max_upload: int, token: str, hosts: Iterable[str] = ()
    ) -> None:
        super().__init__(ui, server)
        self.max_upload = int(max_upload)
        self.token = str(token)
        self.hosts = frozenset(LOOPBACK_HOSTS | {_bare_host(h) for h in hosts})

    @property
    def cookie_name(self) -> str:
        """The token cookie's name: one per launch, so apps on one machine do not clash."""
        return "dppca-token-" + hashlib.sha256(self.token.encode()).hexdigest()[:12]

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        kind = scope.get("type")
        if kind not in ("http", "websocket"):  # lifespan
            await self._limited(scope, receive, send)
            return
        headers = _headers(scope)
        from_query = self._query_token(scope) is not None
        if not self._origin_ok(headers) or not (from_query or self._cookie_ok(headers)):
            await _refuse_request(kind, send)
            return
        if kind == "http" and from_query:
            send = self._setting_cookie(send)
        await self._limited(scope, receive, send)

    # -- checks ------------------------------------------------------------------------
    def _origin_ok(self, headers: dict[bytes, bytes]) -> bool:
        host = headers.get(b"host", b"").decode("latin-1").strip()
        if not host:
            return False
        if not (self.hosts & _ANY_HOST) and _bare_host(host) not in self.hosts:
            return False
        origin = headers.get(b"origin")
        if origin is None:  # not a browser, or a same-origin GET: the token decides
            return True
        parts = urlsplit(origin.decode("latin-1").strip())
        return parts.scheme in ("http", "https") and parts.netloc.lower() == host.lower()

    def _query_token(self, scope: Any) -> str | None:
        query = parse_qs(scope.get("query_string", b"").decode("latin-1"))
        for value in query.get("token", []):
            if hmac.compare_digest(value.encode(), self.token.encode()):
                return value
        return None

    def _cookie_ok(self, headers: dict[bytes, bytes]) -> bool:
        raw = headers.get(b"cookie")
        if raw is None:
            return False
        jar: SimpleCookie = SimpleCookie()
        try:
            jar.load(raw.decode("latin-1"))
        except CookieError:
            return False
        morsel = jar.get(self.cookie_name)
        return morsel is not None and hmac.compare_digest(
            morsel.value.encode(), self.token.encode()
        )

    def _setting_cookie(self, send: Any) -> Any:
        cookie = f"{self.cookie_name}={self.token}; Path=/; HttpOnly; SameSite=Strict"

        async def send_with_cookie(message: dict[str, Any]) -> None:
            if message.get("type") == "http.response.start":
                headers = [*message.get("headers", []), (b"set-cookie", cookie.encode())]
                message = {**message, "headers": headers}
            await send(message)

        return send_with_cookie

    # -- uploads -----------------------------------------------------------------------
    def _stored(self) -> dict[str, int]:
        """Bytes passed to Shiny so far, per upload operation and per session."""
        stored: dict[str, int] | None = getattr(self, "_stored_bytes", None)
        if stored is None:
            stored = {}
            self._stored_bytes: dict[str, int] = stored
        return stored

    async def _limited(self, scope: Any, receive: Any, send: Any) -> None:
        match = _UPLOAD_PATH.search(scope.get("path", ""))
        if scope.get("type") != "http" or scope.get("method") != "POST" or match is None:
            await super().__call__(scope, receive, send)
            return
        limit = self.max_upload
        declared = _content_length(scope)
        if declared is not None and declared > 16 * limit:
            await _refuse(send, 413, b"upload too large")
            return
        stored = self._stored()
        session, job = "session:" + match.group(1), "job:" + match.group(1) + "/" + match.group(2)
        if stored.get(session, 0) >= SESSION_UPLOADS * (limit + 1):
            await _refuse(send, 413, b"this session's uploads are full: reload the page")
            return

        async def limited_receive() -> dict[str, Any]:
            message = await receive()
            if message.get("type") != "http.request":
                return message
            body = message.get("body", b"")
            room = max(
                min(
                    limit + 1 - stored.get(job, 0),
                    SESSION_UPLOADS * (limit + 1) - stored.get(session, 0),
                ),
                0,
            )
            if len(body) > room:
                message = {**message, "body": body[:room]}
            kept = min(len(body), room)
            stored[job] = stored.get(job, 0) + kept
            stored[session] = stored.get(session, 0) + kept
            return message

        await super().__call__(scope, limited_receive, send)


def _bare_host(host: str) -> str:
    """``host`` without its port and brackets, lower case: ``[::1]:8000`` -> ``::1``."""
    host = host.strip().lower()
    if host.startswith("["):
        return host[1:].split("]", 1)[0]
    if host.count(":") == 1:
        return host.split(":", 1)[0]
    return host


def _headers(scope: Any) -> dict[bytes, bytes]:
    return {key.lower(): value for key, value in scope.get("headers", ())}


def _content_length(scope: Any) -> int | None:
    value = _headers(scope).get(b"content-length")
    if value is None:
        return None
    try:
        return int(value)
    except ValueError:
        return None


async def _refuse_request(kind: str, send: Any) -> None:
    if kind == "websocket":  # closing before accepting: the handshake gets status 403
        await send({"type": "websocket.close", "code": 1008})
    else:
        await _refuse(send, 403, _REFUSED)


async def _refuse(send: Any, status: int, body: bytes) -> None:
    headers = [(b"content-type", b"text/plain"), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
