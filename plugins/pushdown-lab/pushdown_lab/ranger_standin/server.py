"""The stand-in's HTTP server: stdlib ``ThreadingHTTPServer`` on 127.0.0.1, basic auth checked.

Every request is logged (method, path, status) so benchmarks can count REST calls; faults armed
on :class:`~pushdown_lab.ranger_standin.faults.Faults` are applied before a request is served.
"""

from __future__ import annotations

import base64
import binascii
import json
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

from pushdown_lab.ranger_standin.errors import RangerError
from pushdown_lab.ranger_standin.faults import Faults
from pushdown_lab.ranger_standin.routes import ROUTES, WRITE_METHODS
from pushdown_lab.ranger_standin.store import Store

__all__ = ["StandinHTTPServer"]


class StandinHTTPServer(ThreadingHTTPServer):
    """Ranger Admin's REST surface over a :class:`Store`."""

    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, port: int, store: Store, users: dict[str, str], faults: Faults) -> None:
        self.store = store
        self.users = users
        self.faults = faults
        self.log_lock = threading.Lock()
        self.request_log: list[tuple[str, str, int]] = []
        self.on_die: Any = None
        self.dead = False
        super().__init__(("127.0.0.1", port), _Handler)

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that gave up (a timeout) or a connection cut by a fault is no server error."""
        kind = sys.exc_info()[0]
        if kind is not None and issubclass(kind, (ConnectionError, TimeoutError)):
            return
        super().handle_error(request, client_address)

    def record(self, method: str, path: str, status: int) -> None:
        with self.log_lock:
            self.request_log.append((method, path, status))


class _Handler(BaseHTTPRequestHandler):
    server: StandinHTTPServer
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True

    def log_message(self, format: str, *args: Any) -> None:
        return

    def do_GET(self) -> None:
        self._serve("GET")

    def do_POST(self) -> None:
        self._serve("POST")

    def do_PUT(self) -> None:
        self._serve("PUT")

    def do_DELETE(self) -> None:
        self._serve("DELETE")

    def _user(self) -> str | None:
        header = self.headers.get("Authorization", "")
        if not header.startswith("Basic "):
            return None
        try:
            user, _, password = base64.b64decode(header[6:]).decode("utf-8").partition(":")
        except (binascii.Error, UnicodeDecodeError):
            return None
        return user if self.server.users.get(user) == password and password else None

    def _serve(self, method: str) -> None:
        parts = urlsplit(self.path)
        path = unquote(parts.path)
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        if self.server.dead:
            self.close_connection = True
            return
        verdict = self.server.faults.take(method in WRITE_METHODS)
        if verdict.status == -1:
            self.close_connection = True
            return
        if verdict.delay:
            time.sleep(verdict.delay)
        if verdict.status is not None:
            self._send(verdict.status, {"statusCode": 1, "msgDesc": "Service Unavailable"}, method, path)
            return
        status, payload = self._dispatch(method, path, parts.query, raw)
        if verdict.die_after:
            self.server.dead = True
            self.close_connection = True
        if verdict.reply:
            self._send(status, payload, method, path)
        if verdict.die_after and self.server.on_die is not None:
            self.server.on_die()

    def _dispatch(self, method: str, path: str, query: str, raw: bytes) -> tuple[int, Any]:
        user = self._user()
        if user is None:
            return 401, {"statusCode": 1, "msgDesc": "Authentication required"}
        params = {key: values[-1] for key, values in parse_qs(query, keep_blank_values=True).items()}
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            return 400, {"statusCode": 1, "msgDesc": "Invalid input data: the body is not JSON"}
        allowed = False
        for route_method, pattern, handler in ROUTES:
            match = pattern.match(path)
            if match is None:
                continue
            allowed = True
            if route_method != method:
                continue
            try:
                return handler(self.server.store, match.groupdict(), params, body, user)
            except RangerError as error:
                return error.status, error.body()
            except (KeyError, TypeError, ValueError, AttributeError) as error:
                # malformed input the checks above did not foresee: a refusal, not a dropped connection
                return 400, {
                    "statusCode": 1,
                    "msgDesc": f"Invalid input data: {type(error).__name__}: {error}",
                }
        return (
            (405, {"statusCode": 1, "msgDesc": "Method Not Allowed"})
            if allowed
            else (404, {"statusCode": 1, "msgDesc": f"Not found: {path}"})
        )

    def _send(self, status: int, payload: Any, method: str, path: str) -> None:
        self.server.record(method, path, status)
        data = b"" if payload is None or status in (204, 304) else json.dumps(payload).encode("utf-8")
        self.send_response(status)
        if data:
            self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        if data:
            self.wfile.write(data)
