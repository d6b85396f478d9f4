"""Server-side limits of the app that do not trust the browser.

:class:`UploadLimitedApp` is a ``shiny.App`` that counts the bytes of every
file upload as they arrive. Shiny writes an upload's request body straight to
a temporary file; here at most ``limit + 1`` bytes of it reach Shiny (the rest
is read from the network and dropped), so a file larger than the limit is
stored truncated and then refused by its measured size, whatever size the
browser declared. A body announced larger than ``16 * limit`` is refused
outright with status 413.
"""

from __future__ import annotations

import re
from typing import Any

from shiny import App

__all__ = ["UploadLimitedApp"]

_UPLOAD_PATH = re.compile(r"/session/[^/]+/upload/")


class UploadLimitedApp(App):
    """A Shiny app whose file uploads are capped at ``max_upload`` bytes on the server."""

    def __init__(self, ui: Any, server: Any, *, max_upload: int) -> None:
        super().__init__(ui, server)
        self.max_upload = int(max_upload)

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if (
            scope.get("type") != "http"
            or scope.get("method") != "POST"
            or not _UPLOAD_PATH.search(scope.get("path", ""))
        ):
            await super().__call__(scope, receive, send)
            return
        limit = self.max_upload
        declared = _content_length(scope)
        if declared is not None and declared > 16 * limit:
            await _refuse(send)
            return
        seen = 0

        async def limited_receive() -> dict[str, Any]:
            nonlocal seen
            message = await receive()
            if message.get("type") != "http.request":
                return message
            body = message.get("body", b"")
            room = max(limit + 1 - seen, 0)
            seen += len(body)
            if len(body) > room:
                message = {**message, "body": body[:room]}
            return message

        await super().__call__(scope, limited_receive, send)


def _content_length(scope: Any) -> int | None:
    for key, value in scope.get("headers", ()):
        if key.lower() == b"content-length":
            try:
                return int(value)
            except ValueError:
                return None
    return None


async def _refuse(send: Any) -> None:
    body = b"upload too large"
    headers = [(b"content-type", b"text/plain"), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": 413, "headers": headers})
    await send({"type": "http.response.body", "body": body})
