"""The stand-in's HTTP server: the REST paths of the open Unity Catalog server that
pushdown and its proofs call, each decided by :class:`~pushdown_lab.uc_standin.store.Store`."""

from __future__ import annotations

import json
import secrets
import threading
import urllib.parse
from collections.abc import Callable, Iterable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from pushdown_lab.uc_standin.store import (
    ADMIN,
    KINDS,
    LEAVES,
    METASTORE_ID,
    PRIVILEGES,
    STORAGE,
    STORAGES,
    Key,
    Problem,
    Store,
    check_name,
)

API = "/api/2.1/unity-catalog"
SCIM = "/api/1.0/unity-control/scim2/Users"


class Standin:
    """A stand-in server on 127.0.0.1 and a free port; ``admin_token`` is the metastore admin's."""

    def __init__(self) -> None:
        self.store = Store()
        self.tokens: dict[str, str] = {}
        self.admin_token = self._token(ADMIN)
        self.requests: list[tuple[str, str, str]] = []  # (method, path, principal)
        #: (method, path, query string) of every call
        self.queries: list[tuple[str, str, str]] = []
        #: the page length of every list call (the open server's ``PagedListingHelper``
        #: default, 100; ``max_results`` may only lower it)
        self.page_size = 100
        #: a hostile server: asked for a page after ``page_token``, answer nothing and the same
        #: token again (a listing that never ends)
        self.stuck_pages = False
        self._http = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self._thread = threading.Thread(target=self._http.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        host, port = self._http.server_address[:2]
        return f"http://{host!s}:{port}"

    def __enter__(self) -> Standin:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._http.shutdown()
        self._http.server_close()

    def _token(self, who: str) -> str:
        token = secrets.token_hex(16)
        self.tokens[token] = who
        return token

    def add_user(self, email: str) -> str:
        """What SCIM user creation and a token signed by the server's key give a test."""
        with self.store.lock:
            self.store.users.add(email)
        return self._token(email)

    def add_leaf(self, kind: str, full: str, owner: str = ADMIN) -> None:
        """A function, volume or registered model ``catalog.schema.name`` (as its creator made it)."""
        with self.store.lock:
            self.store.create((*full.lower().split("."), kind), owner)

    def add_storage(self, kind: str, name: str, owner: str = ADMIN) -> None:
        """An external location or a credential named ``name``."""
        with self.store.lock:
            self.store.objects[(STORAGE + kind, name)] = owner

    def token_of(self, email: str) -> str:
        for token, who in self.tokens.items():
            if who == email:
                return token
        return self.add_user(email)


def _handler(standin: Standin) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            return None

        def _go(self, method: str) -> None:
            parsed = urllib.parse.urlsplit(self.path)
            query = {k: v[0] for k, v in urllib.parse.parse_qs(parsed.query).items()}
            auth = self.headers.get("Authorization", "")
            who = standin.tokens.get(auth.removeprefix("Bearer ").strip())
            length = int(self.headers.get("Content-Length") or 0)
            try:
                body = json.loads(self.rfile.read(length)) if length else {}
                if who is None:
                    raise Problem(401, "UNAUTHENTICATED", "no valid token")
                standin.requests.append((method, parsed.path, who))
                standin.queries.append((method, parsed.path, parsed.query))
                with standin.store.lock:
                    status, reply = route(
                        standin, who, method, urllib.parse.unquote(parsed.path), query, body
                    )
            except Problem as p:
                status, reply = p.status, {"error_code": p.code, "message": p.message}
            except ValueError as exc:
                status, reply = 400, {"error_code": "INVALID_ARGUMENT", "message": str(exc)}
            data = json.dumps(reply).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:
            self._go("GET")

        def do_POST(self) -> None:
            self._go("POST")

        def do_PATCH(self) -> None:
            self._go("PATCH")

        def do_DELETE(self) -> None:
            self._go("DELETE")

    return Handler


#: list paths of the other leaves: (their securable type, the reply's key)
LISTS = {
    "functions": ("function", "functions"),
    "volumes": ("volume", "volumes"),
    "models": ("registered_model", "registered_models"),
}


#: list paths of the metastore's storage securables: (securable type, the reply's key)
TOP = {
    "external-locations": ("external_location", "external_locations"),
    "credentials": ("credential", "credentials"),
}


def _denied(what: str) -> Problem:
    return Problem(403, "PERMISSION_DENIED", f"access denied: {what}")


def route(s: Standin, who: str, method: str, path: str, q: dict[str, str], body: Any) -> tuple[int, Any]:
    st = s.store
    if path == SCIM and method == "POST":
        if not st.owner(who, ()):
            raise _denied("only the metastore admin creates users")
        email = body["emails"][0]["value"]
        st.users.add(email)
        return 201, {"id": email, "emails": [{"value": email}], "displayName": body.get("displayName")}
    if not path.startswith(API):
        raise Problem(404, "NOT_FOUND", path)
    parts = path[len(API) :].strip("/").split("/")
    head, rest = parts[0], parts[1:]
    if head == "metastore_summary" and method == "GET":
        return 200, {"metastore_id": METASTORE_ID}
    if head == "permissions" and len(rest) == 2:
        return _permissions(st, who, method, rest[0], rest[1], body)
    if head == "catalogs":
        return _catalogs(s, who, method, rest, q, body)
    if head == "schemas":
        return _schemas(s, who, method, rest, q, body)
    if head == "tables":
        return _tables(s, who, method, rest, q, body)
    if head in TOP and method == "GET" and not rest:
        kind, key = TOP[head]
        keys = [k for k in st.objects if len(k) == 2 and k[0] == STORAGE + kind]
        page, token = _page(s, q, keys, lambda k: k[1])
        return 200, {key: [{"name": k[1], "owner": st.objects[k]} for k in page], **token}
    if head in LISTS and method == "GET" and not rest:
        kind, key = LISTS[head]
        s_ = (q.get("catalog_name", "").lower(), q.get("schema_name", "").lower())
        leaves = [k for k in st.objects if len(k) == 4 and k[:2] == s_ and k[3] == kind]
        page, token = _page(s, q, leaves, lambda k: k[2])
        listed = [
            {"name": k[2], "catalog_name": s_[0], "schema_name": s_[1], "owner": st.objects[k]} for k in page
        ]
        return 200, {key: listed, **token}
    raise Problem(404, "NOT_FOUND", path)


def _page(
    s: Standin, q: dict[str, str], keys: Iterable[Key], name: Callable[[Key], str]
) -> tuple[list[Key], dict[str, str]]:
    """One page of ``keys`` in the order of their names, as the open server's
    ``PagedListingHelper`` cuts it: the names after ``page_token``, at most the page length
    (``max_results`` may lower it; a negative one is refused), and the last name as the
    next token when the page is full. The caller filters the page by what its caller may
    see afterwards (``applyResponseFilter``), so a page may come back short, even empty,
    with more pages to come."""
    if s.stuck_pages and q.get("page_token"):
        return [], {"next_page_token": q["page_token"]}
    size = s.page_size
    if "max_results" in q:
        wanted = int(q["max_results"])
        if wanted < 0:
            raise Problem(400, "INVALID_ARGUMENT", "maxResults must be greater than or equal to 0")
        size = min(wanted, size) if wanted > 0 else size
    after = q.get("page_token")
    ordered = sorted((k for k in keys if after is None or name(k) > after), key=name)[:size]
    token = {"next_page_token": name(ordered[-1])} if len(ordered) == size else {}
    return ordered, token


def _catalogs(
    s: Standin, who: str, method: str, rest: list[str], q: dict[str, str], body: Any
) -> tuple[int, Any]:
    st = s.store
    if method == "POST":
        if not (st.owner(who, ()) or st.has(who, (), "CREATE CATALOG")):
            raise _denied("create catalog")
        made: Key = (check_name(body.get("name")),)
        st.create(made, who)
        return 200, {"name": made[0], "owner": who}
    if method == "GET" and not rest:
        page, token = _page(s, q, [k for k in st.objects if len(k) == 1], lambda k: k[0])
        seen = [k for k in page if st.can_see_catalog(who, k)]
        return 200, {"catalogs": [{"name": k[0], "owner": st.objects[k]} for k in seen], **token}
    if method == "GET" and len(rest) == 1:
        key = st.find("catalog", rest[0])
        if not st.can_see_catalog(who, key):
            raise _denied(f"catalog {rest[0]}")
        return 200, {"name": key[0], "owner": st.objects[key]}
    raise Problem(404, "NOT_FOUND", "/".join(rest))


def _schemas(
    s: Standin, who: str, method: str, rest: list[str], q: dict[str, str], body: Any
) -> tuple[int, Any]:
    st = s.store
    if method == "POST":
        c = (check_name(body.get("catalog_name")),)
        if c not in st.objects:
            raise Problem(404, "NOT_FOUND", f"catalog {c[0]} not found")
        if not st.can_create_schema(who, c):
            raise _denied("create schema")
        key: Key = (*c, check_name(body.get("name")))
        st.create(key, who)
        return 200, {"name": key[1], "catalog_name": c[0], "full_name": ".".join(key), "owner": who}
    if method == "GET" and not rest:
        c = (q.get("catalog_name", "").lower(),)
        if c not in st.objects:
            raise Problem(404, "NOT_FOUND", f"catalog {c[0]} not found")
        page, token = _page(s, q, [k for k in st.objects if len(k) == 2 and k[0] == c[0]], lambda k: k[1])
        seen = [k for k in page if st.can_see_schema(who, k)]
        listed = [{"name": k[1], "catalog_name": c[0], "owner": st.objects[k]} for k in seen]
        return 200, {"schemas": listed, **token}
    if method == "GET" and len(rest) == 1:
        key = st.find("schema", rest[0])
        if not st.can_see_schema(who, key):
            raise _denied(f"schema {rest[0]}")
        return 200, {
            "name": key[1],
            "catalog_name": key[0],
            "full_name": ".".join(key),
            "owner": st.objects[key],
        }
    if method == "DELETE" and len(rest) == 1:
        key = st.find("schema", rest[0])
        if not (st.owner(who, ()) or st.owner(who, key[:1]) or st.owner(who, key)):
            raise _denied(f"delete schema {rest[0]}")
        st.drop(key)
        return 200, {}
    raise Problem(404, "NOT_FOUND", "/".join(rest))


def _tables(
    standin: Standin, who: str, method: str, rest: list[str], q: dict[str, str], body: Any
) -> tuple[int, Any]:
    st = standin.store
    if method == "POST":
        s = (check_name(body.get("catalog_name")), check_name(body.get("schema_name")))
        if s not in st.objects:
            raise Problem(404, "NOT_FOUND", f"schema {'.'.join(s)} not found")
        if not st.can_create_table(who, s):
            raise _denied("create table")
        key: Key = (*s, check_name(body.get("name")))
        st.create(key, who)
        return 200, _table(st, key)
    if method == "GET" and not rest:
        s = (q.get("catalog_name", "").lower(), q.get("schema_name", "").lower())
        if s not in st.objects:
            raise Problem(404, "NOT_FOUND", f"schema {'.'.join(s)} not found")
        page, token = _page(standin, q, [k for k in st.objects if len(k) == 3 and k[:2] == s], lambda k: k[2])
        return 200, {"tables": [_table(st, k) for k in page if st.can_see_table(who, k)], **token}
    if len(rest) == 1:
        key = st.find("table", rest[0])
        if method == "GET":
            if not st.can_see_table(who, key):
                raise _denied(f"table {rest[0]}")
            return 200, _table(st, key)
        if method == "DELETE":
            if not st.can_drop_table(who, key):
                raise _denied(f"delete table {rest[0]}")
            st.drop(key)
            return 200, {}
    raise Problem(404, "NOT_FOUND", "/".join(rest))


def _table(st: Store, key: Key) -> dict[str, Any]:
    return {
        "name": key[2],
        "catalog_name": key[0],
        "schema_name": key[1],
        "full_name": ".".join(key),
        "owner": st.objects[key],
    }


def _permissions(st: Store, who: str, method: str, kind: str, full: str, body: Any) -> tuple[int, Any]:
    if kind not in KINDS and kind not in LEAVES and kind not in STORAGES:
        raise Problem(400, "INVALID_ARGUMENT", f"securable type {kind} is not served by the stand-in")
    key = st.find(kind, full)
    if method == "PATCH":
        if not st.can_update(who, kind, key):
            raise _denied(f"update permissions on {kind} {full}")
        for change in body.get("changes") or []:
            principal = change.get("principal")
            if principal not in st.users:
                raise Problem(404, "NOT_FOUND", f"user {principal} not found")
            bad = [p for p in (change.get("add") or []) + (change.get("remove") or []) if p not in PRIVILEGES]
            if bad:
                raise Problem(400, "INVALID_ARGUMENT", f"unknown privilege {bad[0]}")
        for change in body.get("changes") or []:
            held = st.grants.setdefault(key, {}).setdefault(change["principal"], set())
            held |= set(change.get("add") or [])
            held -= set(change.get("remove") or [])
    elif method != "GET":
        raise Problem(404, "NOT_FOUND", full)
    on = st.grants.get(key, {})
    shown = on if st.owns_above(who, key) else {who: on.get(who, set())}
    assignments = [{"principal": p, "privileges": sorted(v)} for p, v in sorted(shown.items()) if v]
    return 200, {"privilege_assignments": assignments}
