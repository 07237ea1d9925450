"""The REST application called in the test's own thread, without a socket: one request, its
status and the exact bytes of its body (the hostile-caller suite makes thousands)."""

from __future__ import annotations

import asyncio
import base64
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote

from starlette.types import Message

from pushdown.app.rest.app import build_app
from pushdown.app.service import AccessControl
from pushdown.app.settings import AccessSettings
from pushdown.app.settings.serve import ServeSettings
from pushdown.journal.store import Store


@dataclass(frozen=True)
class Answer:
    status: int
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


def segment(name: str) -> str:
    """One path segment for ``name``: every reserved byte percent-encoded (``/`` too)."""
    return quote(name, safe="")


@dataclass
class Door:
    """``pushdown serve``'s application over a store of its own, called in-process."""

    ac: AccessControl
    loop: asyncio.AbstractEventLoop = field(default_factory=asyncio.new_event_loop)

    def __post_init__(self) -> None:
        self.app = build_app(self.ac, ServeSettings())

    @classmethod
    def open(cls, path: Path, admins: tuple[str, ...] = ("admin",)) -> Door:
        return cls(AccessControl(Store(path), access=AccessSettings(admins)))

    def close(self) -> None:
        self.loop.close()
        self.ac.store.close()

    def request(self, method: str, path: str, user: str | None, body: Any = None) -> Answer:
        raw = b"" if body is None else json.dumps(body).encode()
        headers = [(b"host", b"test"), (b"content-length", str(len(raw)).encode())]
        if raw:
            headers.append((b"content-type", b"application/json"))
        if user is not None:
            token = base64.b64encode(f"{user}:x".encode()).decode()
            headers.append((b"authorization", f"Basic {token}".encode()))
        target, _, query = path.partition("?")
        scope = {
            "type": "http",
            "asgi": {"version": "3.0"},
            "http_version": "1.1",
            "method": method,
            "scheme": "http",
            "path": target,
            "raw_path": target.encode("ascii"),
            "query_string": query.encode("ascii"),
            "root_path": "",
            "headers": headers,
            "client": ("127.0.0.1", 1),
            "server": ("test", 80),
        }
        sent: list[Message] = []
        pending = [{"type": "http.request", "body": raw, "more_body": False}]

        async def receive() -> Message:
            return pending.pop() if pending else {"type": "http.disconnect"}

        async def send(message: Message) -> None:
            sent.append(message)

        self.loop.run_until_complete(self.app(scope, receive, send))
        status = next(m["status"] for m in sent if m["type"] == "http.response.start")
        body_bytes = b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")
        return Answer(status, body_bytes)
