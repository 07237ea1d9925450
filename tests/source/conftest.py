"""The model-source tests: pushdown serve plays the Gravitino server (the only server that
speaks Gravitino's REST API here), driven through the official client; a small proxy in
front of it injects faults (an error answer, a dropped connection, a hook that runs
before a chosen request is passed on)."""

from __future__ import annotations

import http.client
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest
from gravitino import Catalog
from gravitino.api.authorization.privileges import (
    CreateTable,
    ModifyTable,
    SelectTable,
    UseCatalog,
    UseSchema,
)
from gravitino.api.authorization.securable_objects import SecurableObjects

from pushdown.app.service import AccessControl
from pushdown.app.settings import Config, from_mapping

from ..rest.conftest import client
from ..rest.inprocess import Site, site

#: a fault: (status, JSON body) answered instead of passing the request on
Answer = tuple[int, str]


@dataclass
class Proxy:
    """Passes requests to ``upstream``; ``rule(n, method, path)`` may answer instead (an
    Answer), drop the connection ("drop"), or let it pass (None); ``before(n, path)`` runs
    before request ``n`` is passed on. ``n`` counts from 1."""

    upstream: str
    rule: Callable[[int, str, str], Answer | str | None] = lambda n, m, p: None
    before: Callable[[int, str], None] = lambda n, p: None
    count: int = 0
    paths: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    server: ThreadingHTTPServer = field(init=False)

    def __post_init__(self) -> None:
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                return None

            def _any(self) -> None:
                with proxy.lock:
                    proxy.count += 1
                    n = proxy.count
                    proxy.paths.append(self.path)
                size = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(size) if size else None
                what = proxy.rule(n, self.command, self.path)
                if what == "drop":
                    self.close_connection = True
                    self.connection.close()
                    return
                if isinstance(what, tuple):
                    self._send(what[0], what[1].encode(), "application/json")
                    return
                proxy.before(n, self.path)
                up = urlsplit(proxy.upstream)  # read per request: a restarted server moves
                try:
                    conn = http.client.HTTPConnection(up.hostname, up.port, timeout=30)
                    headers = {k: v for k, v in self.headers.items() if k.lower() != "host"}
                    conn.request(self.command, self.path, body=body, headers=headers)
                    resp = conn.getresponse()
                    data = resp.read()
                    conn.close()
                except OSError:  # the upstream is gone: so is this connection
                    self.close_connection = True
                    self.connection.close()
                    return
                self._send(resp.status, data, resp.getheader("Content-Type") or "application/json")

            def _send(self, status: int, data: bytes, ctype: str) -> None:
                self.send_response(status)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_POST = do_PUT = do_DELETE = do_CLOSE = _any

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    @property
    def uri(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def reset(self) -> None:
        self.rule = lambda n, m, p: None
        self.before = lambda n, p: None
        with self.lock:
            self.count = 0
            self.paths.clear()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@contextmanager
def proxy(upstream: str) -> Iterator[Proxy]:
    p = Proxy(upstream)
    try:
        yield p
    finally:
        p.close()


def error_body(code: int, type_: str, message: str) -> str:
    import json

    return json.dumps({"code": code, "type": type_, "message": message})


def populate(uri: str, metalake: str = "test") -> Any:
    """A small metalake through the official client: catalog ``c`` (backend ``demo`` by its
    property) with schema ``db`` and tables t0..t3, catalog ``other`` that names no backend;
    roles reader (USE + SELECT on db, DENY SELECT on t3) and writer; ann and bob."""
    c = client(uri, "admin", metalake)
    for u in ("ann", "bob"):
        c.add_user(u)
    c.add_group("eng")
    c.create_catalog("c", Catalog.Type.RELATIONAL, "jdbc-mysql", "", {"pushdown.backend": "demo"})
    c.create_catalog("other", Catalog.Type.RELATIONAL, "hive", "", {})
    with httpx.Client(
        base_url=f"{uri}/api/metalakes/{metalake}/catalogs", auth=httpx.BasicAuth("admin", "x")
    ) as h:
        for cat in ("c", "other"):
            assert h.post(f"/{cat}/schemas", json={"name": "db"}).status_code == 200
        for t in ("t0", "t1", "t2", "t3"):
            made = h.post("/c/schemas/db/tables", json={"name": t, "columns": [{"name": "id"}]})
            assert made.status_code == 200
    cat = SecurableObjects.of_catalog("c", [UseCatalog.allow(), UseSchema.allow()])
    schema = SecurableObjects.of_schema(cat, "db", [SelectTable.allow()])
    t3 = SecurableObjects.of_table(SecurableObjects.of_schema(cat, "db", []), "t3", [SelectTable.deny()])
    c.create_role("reader", {}, [cat, schema, t3])
    c.create_role(
        "writer", {}, [cat, SecurableObjects.of_schema(cat, "db", [ModifyTable.allow(), CreateTable.allow()])]
    )
    c.grant_roles_to_user(["reader"], "ann")
    c.grant_roles_to_group(["writer"], "eng")
    return c


def follow_config(tmp: Path, address: str, **source: Any) -> Config:
    raw = {
        "store": str(tmp / "follow.db"),
        "backends": {"demo": {"kind": "recording", "state": "demo.json"}},
        "source": {
            k: v
            for k, v in {
                "kind": "gravitino",
                "uri": address,
                "metalake": "test",
                "user": "admin",
                "catalog_property": "pushdown.backend",
                **source,
            }.items()
            if v is not None
        },
    }
    return from_mapping(raw, tmp, "pushdown.toml", explicit_store=False)


@dataclass
class Rig:
    gravitino: Site
    proxy: Proxy
    config: Config
    ac: AccessControl
    client: Any


@pytest.fixture
def rig(tmp_path: Path) -> Iterator[Rig]:
    """pushdown serve (in this process) as the Gravitino, a proxy in front, a following store."""
    (tmp_path / "g").mkdir()
    with site(tmp_path / "g") as g, proxy(g.uri) as p:
        c = populate(g.uri)
        config = follow_config(tmp_path, p.uri)
        ac = AccessControl.open(config, push=False, create_store=True)
        try:
            yield Rig(g, p, config, ac, c)
        finally:
            ac.close()
