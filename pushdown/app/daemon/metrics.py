"""The daemon's metrics (Prometheus) and its HTTP endpoints: /metrics, /livez, /readyz.

Each daemon has its own registry (two in one test process do not mix). The server
binds the configured address (127.0.0.1 by default) in a thread of its own.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from prometheus_client import (
    CONTENT_TYPE_LATEST,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    generate_latest,
)

log = logging.getLogger(__name__)

BUCKETS = (0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 300.0)


class Metrics:
    def __init__(self) -> None:
        self.registry = r = CollectorRegistry()
        self.reconciles = Counter(
            "pushdown_reconciles",
            "Reconciles by backend, kind (pending: the journal's scope; full) and result "
            "(ok, temporary, permanent, configuration, guarded, abandoned)",
            ["backend", "kind", "result"],
            registry=r,
        )
        self.duration = Histogram(
            "pushdown_reconcile_duration_seconds",
            "How long a reconcile took, by backend and kind",
            ["backend", "kind"],
            buckets=BUCKETS,
            registry=r,
        )
        self.lag_events = Gauge(
            "pushdown_journal_lag_events",
            "Journal events the backend has not converged on",
            ["backend"],
            registry=r,
        )
        self.lag_seconds = Gauge(
            "pushdown_journal_lag_seconds",
            "Age of the oldest journal event the backend has not converged on (0: none)",
            ["backend"],
            registry=r,
        )
        self.drift_found = Counter(
            "pushdown_drift_found",
            "Operations a full reconcile found needed (changes made on the server by other hands)",
            ["backend"],
            registry=r,
        )
        self.drift_corrected = Counter(
            "pushdown_drift_corrected",
            "Drift operations applied and read back clean",
            ["backend"],
            registry=r,
        )
        self.operations = Counter(
            "pushdown_operations_applied", "Operations applied and read back clean", ["backend"], registry=r
        )
        self.findings = Gauge(
            "pushdown_findings",
            "Access paths that bypass the model, which pushdown may not remove (at the last reconcile)",
            ["backend"],
            registry=r,
        )
        self.last_success = Gauge(
            "pushdown_last_success_timestamp_seconds",
            "When the backend last converged (Unix time)",
            ["backend"],
            registry=r,
        )
        self.polls = Counter(
            "pushdown_journal_polls",
            "Looks at the journal (one query on the store each; none on the server)",
            ["backend"],
            registry=r,
        )
        self.active = Gauge(
            "pushdown_daemon_active", "1 while this daemon holds the store's daemon lease", registry=r
        )
        self.frozen = Gauge(
            "pushdown_daemon_frozen_objects",
            "Objects the last full reconcile froze out of the cyclic collector's walks ([daemon] freeze)",
            registry=r,
        )

    def render(self) -> bytes:
        return generate_latest(self.registry)


class Endpoints:
    """/metrics, /livez (the process answers) and /readyz (``ready()`` says why not)."""

    def __init__(self, host: str, port: int, metrics: Metrics, ready: Callable[[], list[str]]) -> None:
        handler = _handler(metrics, ready)
        self.server = ThreadingHTTPServer((host, port), handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, name="pushdown-http", daemon=True)

    @property
    def address(self) -> tuple[str, int]:
        host, port = self.server.server_address[:2]
        return str(host), int(port)

    def start(self) -> None:
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def _handler(metrics: Metrics, ready: Callable[[], list[str]]) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            path = self.path.split("?", 1)[0]
            if path == "/metrics":
                self._send(200, metrics.render(), CONTENT_TYPE_LATEST)
            elif path == "/livez":
                self._send(200, b"ok\n")
            elif path == "/readyz":
                why = ready()
                body = ("ready\n" if not why else "not ready:\n" + "".join(f"  {w}\n" for w in why)).encode()
                self._send(503 if why else 200, body)
            else:
                self._send(404, b"not found: /metrics, /livez, /readyz\n")

        def _send(self, code: int, body: bytes, ctype: str = "text/plain; charset=utf-8") -> None:
            self.send_response(code)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: object) -> None:
            log.debug("http: " + format, *args)

    return Handler
