"""The connection layer under the ASGI app: what uvicorn's h11 protocol leaves open.

- **Headers in time.** uvicorn times out an idle kept-alive connection, but not one that
  sends half a request line or half its headers and then waits: such a connection would
  hold a descriptor forever. Here a connection whose request line and headers have not all
  arrived ``header_timeout`` seconds after it opened (or after its first byte following an
  answer) gets a JSON 408 and is closed.
- **A cap on connections.** A connection beyond ``max_connections`` is closed as it opens
  (h11 serves one request at a time per connection: this caps requests in flight too).
- **A JSON 400** for bytes that are not HTTP (uvicorn answers those in plain text).

The body's own timeout is the ASGI app's (``Dispatcher._body``): it answers 408 in JSON.
"""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

from pushdown.app.rest import problems

log = logging.getLogger("pushdown.serve")


class GuardedH11(H11Protocol):
    """uvicorn's h11 protocol with a header timeout, a connection cap and JSON 400s."""

    #: set by :func:`protocol` from the ``[serve]`` settings
    header_timeout: float = 10.0
    max_connections: int = 256

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._header_timer: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        if len(self.connections) > self.max_connections:
            log.warning("connection refused: %d connections open already", self.max_connections)
            transport.abort()
            return
        self._arm()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        if self.conn.their_state is h11.IDLE and not self.transport.is_closing():
            if self._header_timer is None:  # part of a request's head arrived: it has its time
                self._arm()
        else:
            self._disarm()

    def _arm(self) -> None:
        self._disarm()
        self._header_timer = self.loop.call_later(self.header_timeout, self._headers_late)

    def _disarm(self) -> None:
        if self._header_timer is not None:
            self._header_timer.cancel()
            self._header_timer = None

    def _headers_late(self) -> None:
        self._header_timer = None
        if self.conn.their_state is h11.IDLE and not self.transport.is_closing():
            log.info("connection closed: no complete request head within %g s", self.header_timeout)
            if self.conn.our_state is h11.IDLE:  # nothing of ours half-written: say why, then close
                self.transport.write(_late(self.header_timeout))
            self.transport.close()

    def send_400_response(self, msg: str) -> None:
        body = json.dumps(problems.body(problems.bad_request(f"not an HTTP request pushdown reads: {msg}")))
        headers = [(b"content-type", b"application/json"), (b"connection", b"close")]
        try:
            self.transport.write(
                self.conn.send(h11.Response(status_code=400, headers=headers, reason=b"Bad Request"))
            )
            self.transport.write(self.conn.send(h11.Data(data=body.encode("ascii"))))
            self.transport.write(self.conn.send(h11.EndOfMessage()))
        except h11.LocalProtocolError:  # too broken to answer at all
            pass
        self.transport.close()


def _late(seconds: float) -> bytes:
    """A 408 in Gravitino's error shape, written raw: h11 answers only a request it has read."""
    problem = problems.Problem(
        problems.ILLEGAL_ARGUMENTS,
        "IllegalArgumentException",
        f"the request line and headers did not arrive within {seconds:g} s",
        status=408,
    )
    body = json.dumps(problems.body(problem)).encode("ascii")
    head = (
        "HTTP/1.1 408 Request Timeout\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
    )
    return head.encode("ascii") + body


def protocol(header_timeout: float, max_connections: int) -> type[GuardedH11]:
    """The protocol class uvicorn builds for each connection, with these limits."""
    return type(
        "ServeH11",
        (GuardedH11,),
        {"header_timeout": header_timeout, "max_connections": max_connections},
    )
