"""The REST application served by uvicorn on a thread of the test process (a free port on
loopback), over a store of the test's own: for the transport and authentication tests,
which look at the model right after each answer."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx
import uvicorn

from pushdown.app.rest.app import build_app
from pushdown.app.rest.server import listen
from pushdown.app.service import AccessControl
from pushdown.app.settings import AccessSettings
from pushdown.app.settings.serve import ServeSettings
from pushdown.journal.store import Store

from .conftest import wait_for


@dataclass
class Site:
    uri: str
    ac: AccessControl

    def http(self, user: str | None = "admin", **headers: str) -> httpx.Client:
        auth = httpx.BasicAuth(user, "anything") if user is not None else None
        return httpx.Client(base_url=self.uri, auth=auth, headers=headers, timeout=30)

    def seq(self) -> int:
        return self.ac.store.last_seq()


@contextmanager
def site(
    tmp: Path,
    settings: ServeSettings | None = None,
    *,
    busy_timeout: float = 10.0,
    metalake: str | None = "test",
    core: AccessControl | None = None,
) -> Iterator[Site]:
    """A server over a new store; ``metalake`` created by the service admin ``admin``
    (``core``: serve this one instead, with its backends and plugins; the caller closes it)."""
    settings = settings or ServeSettings()
    ac = core or AccessControl(
        Store(tmp / "pd.db", busy_timeout=busy_timeout), access=AccessSettings(("admin",))
    )
    sock = listen("127.0.0.1", 0)
    server = uvicorn.Server(uvicorn.Config(build_app(ac, settings), log_config=None, lifespan="off"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    try:
        wait_for(lambda: server.started, 30, "uvicorn starts")
        s = Site(f"http://127.0.0.1:{sock.getsockname()[1]}", ac)
        if metalake is not None:
            with s.http("admin") as h:
                assert h.post("/api/metalakes", json={"name": metalake}).status_code == 200
        yield s
    finally:
        server.should_exit = True
        thread.join(30)
        sock.close()
        if core is None:
            ac.close()
