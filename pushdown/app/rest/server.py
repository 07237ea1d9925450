"""Run the server: check what it needs (the listening socket, the TLS files, the token
key) before anything starts, so each problem is one line naming it; then serve with
uvicorn while the daemon's workers, in a child process started and stopped with the
server (:mod:`pushdown.app.daemon.serving`, through the launchers), push every change to
the backends: an answer never waits on a backend, and a sync never holds this process's
interpreter or event loop.
"""

from __future__ import annotations

import errno
import logging
import signal
import socket
import ssl
import threading
from types import FrameType

import uvicorn

from pushdown.app.rest.app import build_app
from pushdown.app.rest.auth import Authenticator
from pushdown.app.rest.connections import protocol
from pushdown.app.service import AccessControl, frontends
from pushdown.app.settings import Config
from pushdown.app.settings.serve import ServeSettings
from pushdown.errors import ConfigError

log = logging.getLogger("pushdown.serve")
#: The most bytes a request line and its headers may take (h11's default, said here).
MAX_HEAD = 16 * 1024


def listen(host: str, port: int) -> socket.socket:
    """A bound, listening socket; ConfigError (port in use, no such address) otherwise."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except socket.gaierror as exc:
        raise ConfigError(f"serve: cannot listen on {host}:{port}: {exc.strerror}") from None
    family, kind, proto, _, address = infos[0]
    sock = socket.socket(family, kind, proto)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
        sock.listen(128)
    except OSError as exc:
        sock.close()
        hint = (
            "; another process listens there (choose another port)" if exc.errno == errno.EADDRINUSE else ""
        )
        raise ConfigError(f"serve: cannot listen on {host}:{port}: {exc.strerror}{hint}") from None
    return sock


def check_tls(settings: ServeSettings) -> None:
    """Load the certificate and key once, to refuse bad files with a clear message."""
    if settings.tls_cert is None or settings.tls_key is None:
        return
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    try:
        context.load_cert_chain(settings.tls_cert, settings.tls_key)
    except FileNotFoundError as exc:
        raise ConfigError(f"serve: TLS file {exc.filename or settings.tls_cert} does not exist") from None
    except (ssl.SSLError, OSError) as exc:
        raise ConfigError(
            f"serve: cannot use tls_cert {settings.tls_cert} with tls_key {settings.tls_key}: "
            f"{getattr(exc, 'reason', None) or exc.strerror or 'not a certificate and matching key'}"
        ) from None


class _Plain(logging.Filter):
    """uvicorn adds a copy of some messages with terminal colour codes: keep the plain one."""

    def filter(self, record: logging.LogRecord) -> bool:
        record.__dict__.pop("color_message", None)
        return True


def serve(config: Config, settings: ServeSettings) -> int:
    """Serve until SIGTERM or SIGINT; 0 when stopped."""
    logging.getLogger("uvicorn.error").addFilter(_Plain())
    authenticator = Authenticator.from_settings(settings)
    check_tls(settings)
    sock = listen(settings.host, settings.port)
    ac: AccessControl | None = None
    daemon: frontends.Workers | None = None
    thread: threading.Thread | None = None
    try:
        ac = AccessControl.open(config, push=False, create_store=None)
        if config.daemon.freeze:  # the model this process serves from leaves the collector's walks
            ac.settle_models()
        if config.backends:
            daemon = frontends.workers(config)  # the daemon's, through the launchers
            thread = threading.Thread(target=daemon.run, name="pushdown-workers", daemon=True)
            thread.start()
        else:
            log.warning("no backends configured: changes are recorded, and pushed nowhere")
        app = build_app(ac, settings, authenticator, wake=daemon.wake if daemon is not None else _nothing)
        server = uvicorn.Server(
            uvicorn.Config(
                app,
                log_config=None,
                access_log=False,
                lifespan="off",
                server_header=False,
                ssl_certfile=settings.tls_cert,
                ssl_keyfile=settings.tls_key,
                timeout_graceful_shutdown=10,
                http=protocol(settings.header_timeout, settings.max_connections),
                timeout_keep_alive=settings.keep_alive_timeout,  # type: ignore[arg-type]
                h11_max_incomplete_event_size=MAX_HEAD,
            )
        )
        host, port = sock.getsockname()[:2]
        scheme = "https" if settings.tls else "http"
        log.info(
            "listening on %s://%s:%d (authenticators: %s)",
            scheme,
            host,
            port,
            ", ".join(settings.authenticators),
            extra={"port": port, "scheme": scheme},
        )
        _keep_signals_for_cleanup()
        server.run(sockets=[sock])
    finally:
        if daemon is not None:
            daemon.close()  # stops the workers and waits for them
        if thread is not None:
            thread.join(timeout=10)
        if ac is not None:
            ac.close()
        sock.close()
    log.info("stopped")
    return 0


def _nothing() -> None:
    return None


def _keep_signals_for_cleanup() -> None:
    """uvicorn stops on SIGTERM/SIGINT, then raises the signal again to the handler that was
    installed before it: make that one log instead of killing the process, so the workers
    are stopped and reaped and the store closed before the process exits."""

    def stopped(signum: int, frame: FrameType | None) -> None:
        log.info("%s: stopping", signal.Signals(signum).name)

    signal.signal(signal.SIGTERM, stopped)
    signal.signal(signal.SIGINT, stopped)
