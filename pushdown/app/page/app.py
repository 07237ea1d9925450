"""The page: a Starlette app of server-rendered views (Jinja2 templates, one small script,
static files served here; nothing from elsewhere), mounted by ``pushdown serve`` under
``/ui/`` beside the REST API (docs/ui.md).

Who asks is decided exactly as the REST API decides it: the authenticate function the
REST app hands over (its configured authenticators) reads an ``Authorization`` header,
or the same header kept in a cookie by the sign-in form (a user name for ``simple``, a
token for ``oauth``). The page reads; it changes nothing. Every route authenticates
before it looks anything up, and an object or user the caller may not see is answered
like one that does not exist (404, the same page).

Longer than ~250 lines: every route of the page, with the sign-in, in one place.
"""

from __future__ import annotations

import base64
import logging
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, quote

from jinja2 import Environment, FileSystemLoader, select_autoescape
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from pushdown.app.page import views
from pushdown.app.service import AccessControl
from pushdown.decide.inventory import Inventory
from pushdown.decide.requirements import OPERATIONS
from pushdown.model.securables import SecurableType
from pushdown.model.state import Model

HERE = Path(__file__).parent
COOKIE = "pushdown_ui"
MAX_FORM = 8192
log = logging.getLogger("pushdown.serve")

#: the authenticate function: an Authorization header (or None) -> the user; raises when refused
Authenticate = Callable[[str | None], str]


class Page:
    def __init__(self, ac: AccessControl, authenticate: Authenticate, simple: bool) -> None:
        self.ac = ac
        self.authenticate = authenticate
        self.simple = simple
        self.lock = threading.Lock()
        self.env = Environment(
            loader=FileSystemLoader(HERE / "templates"),
            autoescape=select_autoescape(["html"]),
            trim_blocks=True,
        )
        self.env.filters["q"] = lambda v: quote(str(v), safe="")
        self._inventory: tuple[tuple[int, int], Inventory] | None = None

    def inventory(self, model: Model) -> Inventory:
        """The objects' inventory, made once per model version."""
        key = (id(model), model.version)
        if self._inventory is None or self._inventory[0] != key:
            self._inventory = (key, Inventory.of(model.objects))
        return self._inventory[1]

    # -- answers -----------------------------------------------------------------------

    def html(self, name: str, status: int = 200, **context: Any) -> HTMLResponse:
        body = self.env.get_template(name).render(**context)
        return HTMLResponse(body, status, headers=HEADERS)

    def who(self, request: Request) -> str | None:
        header = request.headers.get("authorization") or request.cookies.get(COOKIE)
        if header is None:  # no credentials: the sign-in form (not the anonymous user)
            return None
        try:
            return self.authenticate(header)
        except Exception:  # a refusal of the authenticator: sign in again
            return None

    def view(self, handler: Callable[[Request, views.Reader], Response]) -> Callable[[Request], Any]:
        async def endpoint(request: Request) -> Response:
            user = self.who(request)  # before anything is looked up
            if user is None:
                asked = request.url.path + (f"?{request.url.query}" if request.url.query else "")
                return RedirectResponse(f"{self.root(request)}login?next={quote(asked, safe='')}", 303)

            def run() -> Response:
                with self.lock:
                    reader = views.Reader(self.ac, user)
                    try:
                        return handler(request, reader)
                    except views.Hidden:
                        return self.html("missing.html", 404, me=user)

            try:
                return await run_in_threadpool(run)
            except Exception:
                log.exception("page %s failed", request.url.path)
                return self.html("missing.html", 500, me=user, failed=True)

        return endpoint

    @staticmethod
    def root(request: Request) -> str:
        """Where the page is mounted (``/ui/``), for redirects from any of its paths."""
        return str(request.scope.get("root_path", "")).rstrip("/") + "/"

    # -- routes --------------------------------------------------------------------------

    def index(self, request: Request, reader: views.Reader) -> Response:
        return self.html("index.html", me=reader.caller, admin=reader.admin, tab="home")

    def search(self, request: Request, reader: views.Reader) -> Response:
        q = request.query_params.get("q", "")[:200]
        kind = request.query_params.get("kind", "object")
        found = reader.search_users(q) if kind == "user" else reader.search(q)
        return JSONResponse({"results": found}, headers=HEADERS)

    def object(self, request: Request, reader: views.Reader) -> Response:
        name = request.query_params.get("name", "")
        if not name:
            return self.html("object.html", me=reader.caller, admin=reader.admin, tab="object", view=None)
        found = views.object_view(reader, name, _page(request))
        return self.html("object.html", me=reader.caller, admin=reader.admin, tab="object", view=found)

    def enforcement(self, request: Request, reader: views.Reader) -> Response:
        """The object view's read back, asked apart (the page fetches it once shown): each
        backend is read over the object's scope, which takes what the backend takes."""
        ref = reader.obj(request.query_params.get("name", ""))  # the same rule as the view
        rows = views.enforcement(self.ac, reader.model)(ref)
        if not reader.admin:  # a plan's words name accounts, neighbours, hand-made grants
            rows = [
                {**row, "detail": [], "findings": [], "withheld": bool(row["detail"] or row.get("findings"))}
                for row in rows
            ]
        return self.html("enforcement.html", rows=rows)

    def principal(self, request: Request, reader: views.Reader) -> Response:
        name = request.query_params.get("name", "") or reader.caller
        found = views.principal_view(reader, name, self.inventory(reader.model), _page(request))
        return self.html("principal.html", me=reader.caller, admin=reader.admin, tab="principal", view=found)

    def matrix(self, request: Request, reader: views.Reader) -> Response:
        p = request.query_params
        users, objects, ops = _list(p.get("users", "")), _list(p.get("objects", "")), _list(p.get("ops", ""))
        found = views.matrix(reader, users, objects, ops) if users and objects else None
        return self.html(
            "matrix.html",
            me=reader.caller,
            admin=reader.admin,
            tab="matrix",
            view=found,
            form={"users": p.get("users", ""), "objects": p.get("objects", ""), "ops": p.get("ops", "")},
        )

    def backends(self, request: Request, reader: views.Reader) -> Response:
        with_plan = request.query_params.get("plan") == "1"
        rows = views.backends_view(reader, with_plan)
        return self.html(
            "backends.html",
            me=reader.caller,
            admin=reader.admin,
            tab="backends",
            rows=rows,
            with_plan=with_plan,
        )

    def audit(self, request: Request, reader: views.Reader) -> Response:
        p = request.query_params
        principal, obj = p.get("principal", ""), p.get("object", "")
        page = _page(request)
        entries, more = views.audit(reader, principal, obj, page)
        return self.html(
            "audit.html",
            me=reader.caller,
            admin=reader.admin,
            tab="audit",
            entries=entries,
            more=more,
            page=page,
            principal=principal,
            obj=obj,
        )

    def explain(self, request: Request, reader: views.Reader) -> Response:
        p = request.query_params
        user, op, target = p.get("user", ""), p.get("op", ""), p.get("target", "")
        decision = nodes = None
        if user and op and target:
            decision, nodes = views.explain(reader, user, op, target)
        return self.html(
            "explain.html",
            me=reader.caller,
            admin=reader.admin,
            tab="explain",
            decision=decision,
            nodes=nodes,
            form={"user": user, "op": op, "target": target},
            operations=[
                o
                for o in OPERATIONS.values()
                if isinstance(o.target, SecurableType) or o.target in ("user", "group")
            ],
        )

    async def login(self, request: Request) -> Response:
        message = ""
        if request.method == "POST":
            raw = await request.body()
            if len(raw) > MAX_FORM:
                return Response("form too large", 413)
            form = {k: v[0] for k, v in parse_qs(raw.decode("utf-8", "replace")).items()}
            token, user = form.get("token", "").strip(), form.get("user", "").strip()
            header = f"Bearer {token}" if token else None
            if header is None and user:
                header = "Basic " + base64.b64encode(f"{user}:".encode()).decode("ascii")
            try:
                who = self.authenticate(header)
            except Exception:
                who = None
            if who is not None and header is not None:
                nxt = form.get("next", "")
                local = nxt.startswith("/") and not nxt.startswith("//") and "\\" not in nxt
                answer = RedirectResponse(nxt if local else "./", 303)  # back to this site only
                answer.set_cookie(
                    COOKIE,
                    header,
                    httponly=True,
                    samesite="strict",
                    path="/",
                    secure=request.url.scheme == "https",
                )
                return answer
            message = "not signed in: the name or the token was refused"
        nxt = request.query_params.get("next", "")
        return self.html("login.html", 401 if message else 200, message=message, nxt=nxt, simple=self.simple)

    async def logout(self, request: Request) -> Response:
        answer = RedirectResponse("./login", 303)
        answer.delete_cookie(COOKIE, path="/")
        return answer


#: no framing, no sniffing, scripts and styles only from here
HEADERS = {
    "Content-Security-Policy": (
        "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
        "frame-ancestors 'none'"
    ),
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "same-origin",
}


def _page(request: Request) -> int:
    text = request.query_params.get("page", "1")
    return int(text) if text.isdigit() and 0 < len(text) < 7 else 1


def _list(text: str) -> list[str]:
    return [t.strip() for t in text.replace("\n", ",").split(",") if t.strip()][:100]


def build_page(ac: AccessControl, authenticate: Authenticate, simple: bool = True) -> Starlette:
    """The page's app; ``authenticate`` is the REST API's (its configured authenticators)."""
    page = Page(ac, authenticate, simple)
    routes = [
        Route("/", page.view(page.index)),
        Route("/search", page.view(page.search)),
        Route("/object", page.view(page.object)),
        Route("/enforcement", page.view(page.enforcement)),
        Route("/principal", page.view(page.principal)),
        Route("/matrix", page.view(page.matrix)),
        Route("/backends", page.view(page.backends)),
        Route("/audit", page.view(page.audit)),
        Route("/explain", page.view(page.explain)),
        Route("/login", page.login, methods=["GET", "POST"]),
        Route("/logout", page.logout, methods=["POST", "GET"]),
        Mount("/static", StaticFiles(directory=HERE / "static"), name="static"),
    ]
    return Starlette(routes=routes)
