"""The ASGI application: raw-path segments, authentication, the body, one route, one
JSON answer (Gravitino's error shape for every failure, never a traceback).

Requests are served one at a time against the model (a lock around the handler): the
model in memory is one object, and a change is a few milliseconds; other processes
writing the same store are serialised by the store itself.

Longer than ~250 lines: the request's one path (raw path, authentication, body, route,
answer, error translation) read top to bottom in one place.
"""

from __future__ import annotations

import asyncio
import json
import logging
import threading
import time
import uuid
from collections.abc import Callable
from typing import Any
from urllib.parse import unquote

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from pushdown.app.page.app import build_page
from pushdown.app.rest import problems
from pushdown.app.rest.auth import Authenticator
from pushdown.app.rest.call import Call
from pushdown.app.rest.routes import CLOSE, Route, find
from pushdown.app.service import AccessControl
from pushdown.app.settings.serve import ServeSettings
from pushdown.errors import (
    AlreadyExists,
    Busy,
    Followed,
    Forbidden,
    ModelError,
    NotEmpty,
    PushdownError,
    UnknownObject,
    UnknownPrincipal,
)
from pushdown.model.text import MAX_NAME, has_control

#: Methods whose body is read: it must be declared ``application/json`` (a cross-site form
#: or ``text/plain`` POST, which a browser sends without asking, is refused unread).
BODY_METHODS = frozenset({"POST", "PUT", "PATCH"})
#: The longest path segment: a dotted full name of four parts at Gravitino's name limit.
MAX_SEGMENT = 4 * MAX_NAME + 3

log = logging.getLogger("pushdown.serve")
SEGMENTS = "pushdown.segments"


def split_raw_path(raw: bytes) -> tuple[str, ...]:
    """The path's segments, each percent-decoded on its own (``%2F`` stays in its segment).

    One trailing slash is ignored (``/users/`` is ``/users``). Raises a 400 Problem when a
    segment is not UTF-8 once decoded."""
    path = raw.split(b"?", 1)[0].decode("latin-1")
    parts = path.split("/")[1:]
    if parts and parts[-1] == "":
        parts.pop()
    try:
        return tuple(unquote(p, encoding="utf-8", errors="strict") for p in parts)
    except UnicodeDecodeError:
        raise problems.bad_request("the request path is not UTF-8 once percent-decoded") from None


class RawPath:
    """ASGI middleware: put the raw path's decoded segments in the scope (routing uses them,
    never the framework's decoded ``path``, in which ``%2F`` became a separator)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            raw = scope.get("raw_path") or scope["path"].encode("utf-8")
            try:
                segments: tuple[str, ...] | problems.Problem = split_raw_path(raw)
            except problems.Problem as exc:
                segments = exc
            scope = {**scope, SEGMENTS: segments}
        await self.app(scope, receive, send)


class Dispatcher:
    """Authenticate, read the body, find the route, run its handler, answer."""

    def __init__(
        self,
        ac: AccessControl,
        settings: ServeSettings,
        authenticator: Authenticator,
        wake: Callable[[], None] = lambda: None,
    ) -> None:
        self.ac = ac
        self.settings = settings
        self.auth = authenticator
        self.wake = wake
        self.lock = threading.Lock()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        request = Request(scope, receive)
        rid = uuid.uuid4().hex[:16]
        started = time.monotonic()
        user, route = "-", None
        try:
            segments = scope.get(SEGMENTS, ())
            if isinstance(segments, problems.Problem):
                raise segments
            route, params = self._route(request.method, segments)
            if route is not CLOSE:  # the client's close() carries no identity
                user = self.auth.user(request.headers.get("authorization"))
            raw = await self._body(request)
            call = Call(self.ac, user, rid, params, dict(request.query_params), raw)
            status, body, headers = 200, await run_in_threadpool(self._run, route, call), {}
            if route.writes and call.changed:
                self.wake()
        except problems.Problem as exc:
            status, body, headers = exc.status, problems.body(exc), dict(exc.headers or {})
        except Exception as exc:  # never a framework's bare 500, never a traceback to the caller
            problem = translate(exc, rid)
            status, body, headers = problem.status, problems.body(problem), dict(problem.headers or {})
        headers["X-Request-Id"] = rid
        log.info(
            "%s %s -> %d (%s, %.1f ms, request %s)",
            request.method,
            route.template if route is not None else "(no route)",
            status,
            user,
            (time.monotonic() - started) * 1000,
            rid,
            extra={"request": rid, "user": user, "status": status},
        )
        await Answer(body, status, headers)(scope, receive, send)

    def _route(self, method: str, segments: tuple[str, ...]) -> tuple[Route, dict[str, str]]:
        route, params, path_known = find(method.upper(), segments)
        if route is not None:
            for key, value in params.items():  # every name in the path, before anything is decided
                if len(value) > MAX_SEGMENT:
                    raise problems.bad_request(
                        f"path segment {{{key}}} is longer than {MAX_SEGMENT} characters "
                        f"(a name holds at most {MAX_NAME})"
                    )
                if has_control(value):
                    raise problems.bad_request(
                        f"path segment {{{key}}} {value!r} contains a control character; names may not"
                    )
            return route, params
        shown = "/" + "/".join(segments)
        if path_known or segments[:1] == ("api",):
            raise problems.unsupported(
                f"{method} {shown} is not supported by pushdown serve (docs/rest.md lists what is)"
            )
        raise problems.not_found("NotFoundException", f"no such resource: {shown}")

    async def _body(self, request: Request) -> bytes:
        """The body, read within ``body_timeout`` seconds; only ``application/json``."""
        declared_type = request.headers.get("content-type")
        if request.method.upper() in BODY_METHODS or request.headers.get("content-length", "0") != "0":
            media = (declared_type or "").split(";", 1)[0].strip().lower()
            if media != "application/json":
                raise problems.Problem(
                    problems.ILLEGAL_ARGUMENTS,
                    "IllegalArgumentException",
                    f"a request body must be sent as Content-Type: application/json, not "
                    f"{(declared_type or 'none')[:60]!r}",
                    status=415,
                )
        limit = self.settings.max_body
        declared = request.headers.get("content-length")
        if declared is not None and declared.isdigit() and int(declared) > limit:
            raise problems.bad_request(f"the request body is larger than {limit} bytes")
        try:
            async with asyncio.timeout(self.settings.body_timeout):
                return await self._read(request, limit)
        except TimeoutError:
            raise problems.Problem(
                problems.ILLEGAL_ARGUMENTS,
                "IllegalArgumentException",
                f"the request body did not arrive within {self.settings.body_timeout:g} s",
                status=408,
            ) from None

    @staticmethod
    async def _read(request: Request, limit: int) -> bytes:
        chunks, size = [], 0
        async for chunk in request.stream():
            size += len(chunk)
            if size > limit:
                raise problems.bad_request(f"the request body is larger than {limit} bytes")
            chunks.append(chunk)
        return b"".join(chunks)

    def _run(self, route: Route, call: Call) -> dict[str, Any]:
        with self.lock:
            try:
                return route.handler(call)
            except problems.Problem:
                raise
            except Exception as exc:
                raise translate(exc, call.request_id) from None


class Answer(JSONResponse):
    """A JSON answer that always encodes: a text that is not valid UTF-8 (a lone surrogate
    echoed from a request) is written as JSON escapes instead of failing the response."""

    def render(self, content: Any) -> bytes:
        try:
            return super().render(content)
        except UnicodeEncodeError:
            return json.dumps(content, ensure_ascii=True, separators=(",", ":")).encode("ascii")


def translate(exc: Exception, request_id: str) -> problems.Problem:
    """A core error as Gravitino's error; anything unexpected is logged, answered as 500."""
    if isinstance(exc, Forbidden):  # the reasons to the log only: the caller learns no holder
        log.info("request %s refused: %s", request_id, exc, extra={"request": request_id})
        return problems.refused(exc.user, exc.operation, exc.target, exc.rule)
    if isinstance(exc, Followed):
        return problems.unsupported(str(exc))
    if isinstance(exc, Busy):
        return problems.busy(str(exc), exc.delay or 1.0)
    if isinstance(exc, UnknownPrincipal):
        return problems.not_found("NotFoundException", str(exc))
    if isinstance(exc, UnknownObject):
        return problems.not_found("NoSuchMetadataObjectException", str(exc))
    if isinstance(exc, AlreadyExists):
        return problems.already_exists("AlreadyExistsException", str(exc))
    if isinstance(exc, NotEmpty):
        return problems.not_empty("NotEmptyException", str(exc))
    if isinstance(exc, ModelError):
        return problems.bad_request(str(exc))
    if isinstance(exc, PushdownError):
        return problems.Problem(problems.INTERNAL_ERROR, "RuntimeException", str(exc))
    log.exception("request %s failed", request_id, extra={"request": request_id})
    return problems.internal(request_id)


def build_app(
    ac: AccessControl,
    settings: ServeSettings,
    authenticator: Authenticator | None = None,
    wake: Callable[[], None] = lambda: None,
) -> Starlette:
    auth = authenticator or Authenticator.from_settings(settings)
    app = Starlette()
    # No framework routes: every request goes to the dispatcher, which routes on the raw
    # path's segments (the framework's patterns match the decoded path, where %2F and %0A
    # would already be a separator and a line break).
    app.router.default = Dispatcher(ac, settings, auth, wake)
    # The page (pushdown.app.page, docs/ui.md): read-only views under /ui/, authenticated
    # by this API's authenticators.
    app.mount("/ui", build_page(ac, auth.user, "simple" in settings.authenticators))
    app.add_middleware(RawPath)
    return app
