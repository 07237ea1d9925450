"""Every route × every kind of caller: the HTTP answer equals the evaluator's decision.

One server for the module (in-process, over a store of its own). The estate: metalake
``test`` created by the service admin ``admin`` and handed to ``mowner``; a catalog,
schema, table, topic and fileset and a role, each owned by its own user; for every
operation a route checks, a role holding the privileges the requirement table names for
it (on the metalake), held directly by ``hold_<op>``, through a group by ``ghold_<op>``,
and together with a DENY of the same privileges by ``deny_<op>``; ``nobody`` (in the
metalake, nothing granted), ``outsider`` (not in the metalake) and anonymous (no header).

For each route (a row of :data:`ROWS`; a route without a row fails the first test) and
each caller, the decision of :class:`pushdown.decide.evaluator.Evaluator` on the server's
model before the request says what the answer must be: refused (403, code 1008,
ForbiddenException) or not, and for a listing, exactly the items
:func:`pushdown.decide.listing.visible` shows. A change that went through is undone
through the library (``load_model`` of the estate) before the next case.
"""

from __future__ import annotations

import base64
import copy
import logging
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from pushdown.app.rest.routes import ROUTES, Route
from pushdown.decide import listing
from pushdown.decide.evaluator import Evaluator, Target
from pushdown.decide.requirements import OPERATIONS, AllOf, AnyOf, Can, Has, Term
from pushdown.model.principals import Principal
from pushdown.model.privileges import Condition, Privilege
from pushdown.model.securables import METALAKE, ObjectRef
from pushdown.model.state import Model

from .inprocess import Site, site

M = "/api/metalakes/test"
CAT = ObjectRef.parse("catalog cat")
DB = ObjectRef.parse("schema cat.db")
TABLE = ObjectRef.parse("table cat.db.t")
TOPIC = ObjectRef.parse("topic cat.db.tp")
FILESET = ObjectRef.parse("fileset cat.db.fs")
ROLE = ObjectRef.parse("role r1")
OWNERS = {
    "own_catalog": CAT,
    "own_schema": DB,
    "own_table": TABLE,
    "own_topic": TOPIC,
    "own_fileset": FILESET,
    "own_role": ROLE,
}


@dataclass(frozen=True)
class Row:
    """One route's case: the request, and what the evaluator is asked about it.

    ``target``: the operation's target. ``lists``: (list operation, container) when the
    answer is a listing; ``items`` reads the shown names from the answer, ``expect``
    turns the visible targets into the same names. ``allowed_status``: the answer when
    the caller is allowed (a create of what exists is 409, not a refusal)."""

    method: str
    written: str  # the route's template, with the metalake written as ``test``
    path: str
    target: Target | None = None
    body: Any = None
    lists: tuple[str, Target] | None = None
    items: Callable[[dict[str, Any]], list[str]] | None = None
    expect: Callable[[Model, list[Target]], list[str]] | None = None
    allowed_status: int = 200
    #: a refused listing answers 200 with nothing in it instead of 403 (the metalakes)
    refused_is_empty: bool = False
    #: further (operation, target) checks the route makes first (the override's role check)
    also: tuple[tuple[str, Target], ...] = ()

    @property
    def template(self) -> str:
        return self.written.replace(M, "/api/metalakes/{metalake}", 1)


def _names(body: dict[str, Any]) -> list[str]:
    return list(body["names"])


def _idents(body: dict[str, Any]) -> list[str]:
    return [i["name"] for i in body["identifiers"]]


def _plain(model: Model, seen: list[Target]) -> list[str]:
    return sorted(t if isinstance(t, str) else t.names[-1] for t in seen)


def _bound_to(obj: ObjectRef) -> Callable[[Model, list[Target]], list[str]]:
    """The roles with a grant on ``obj`` among those the caller may see."""

    def expect(model: Model, seen: list[Target]) -> list[str]:
        bound = {role for role, grants in model.roles.items() if any(g.object == obj for g in grants)}
        return sorted(n for n in _plain(model, seen) if n in bound)

    return expect


def _object_rows(word: str, base: str, parent: ObjectRef, name: str, existing: ObjectRef) -> list[Row]:
    kind = existing.type
    t = f"{M}/catalogs/{{catalog}}"
    templates = {
        "catalogs": f"{M}/catalogs",
        "schemas": f"{t}/schemas",
        "tables": f"{t}/schemas/{{schema}}/tables",
        "topics": f"{t}/schemas/{{schema}}/topics",
        "filesets": f"{t}/schemas/{{schema}}/filesets",
    }
    tpl = templates[word]
    item = {"catalogs": "catalog", "schemas": "schema"}.get(word, "name")
    body: dict[str, Any] = {"name": name}
    if word == "catalogs":
        body.update(type="relational", provider="hive")
    new = ObjectRef(kind, (*parent.names, name))
    cascade = {"catalogs": "?force=true", "schemas": "?cascade=true"}.get(word, "")
    return [
        Row("GET", tpl, base, lists=(f"list_{word}", parent), items=_idents, expect=_plain),
        Row("POST", tpl, base, new, body),
        Row("GET", f"{tpl}/{{{item}}}", f"{base}/{existing.names[-1]}", existing),
        Row("DELETE", f"{tpl}/{{{item}}}", f"{base}/{existing.names[-1]}{cascade}", existing),
    ]


def _metalakes(body: dict[str, Any]) -> list[str]:
    return [m["name"] for m in body["metalakes"]]


GRANT_ROLE = {"roleNames": ["r1"]}
REVOKE_ROLE = {"roleNames": ["r2"]}
PRIVS = {"privileges": [{"name": "select_table", "condition": "allow"}]}
HELD = {"privileges": [{"name": "modify_table", "condition": "allow"}]}
ROWS: list[Row] = [
    Row("GET", "/api/version", "/api/version"),
    Row("CLOSE", "/", "/"),
    Row(
        "GET",
        "/api/metalakes",
        "/api/metalakes",
        lists=("load_metalake", METALAKE),
        items=_metalakes,
        expect=lambda model, seen: ["test"],
        refused_is_empty=True,
    ),
    Row("POST", "/api/metalakes", "/api/metalakes", METALAKE, {"name": "test"}, allowed_status=409),
    Row("GET", "/api/metalakes/{metalake}", M, METALAKE),
    Row(
        "PUT",
        "/api/metalakes/{metalake}",
        M,
        METALAKE,
        {"updates": [{"@type": "setProperty", "property": "k", "value": "v"}]},
    ),
    Row("DELETE", "/api/metalakes/{metalake}", M, METALAKE, allowed_status=409),  # in use, no force
    Row("POST", f"{M}/users", f"{M}/users", "newuser", {"name": "newuser"}),
    Row("GET", f"{M}/users", f"{M}/users", lists=("list_users", METALAKE), items=_names, expect=_plain),
    Row("GET", f"{M}/users/{{user}}", f"{M}/users/u1", "u1"),
    Row("DELETE", f"{M}/users/{{user}}", f"{M}/users/u1", "u1"),
    Row("POST", f"{M}/groups", f"{M}/groups", "newgroup", {"name": "newgroup"}),
    Row("GET", f"{M}/groups", f"{M}/groups", lists=("list_groups", METALAKE), items=_names, expect=_plain),
    Row("GET", f"{M}/groups/{{group}}", f"{M}/groups/g1", "g1"),
    Row(
        "DELETE",
        f"{M}/groups/{{group}}",
        f"{M}/groups/g1",
        "g1",
        # g1 holds r2 (no DENY): a caller who may not revoke roles removes it only when he may
        # read each of its roles (who may revoke roles may read every role)
        also=(("get_role", "r2"),),
    ),
    Row("POST", f"{M}/roles", f"{M}/roles", ObjectRef.parse("role newrole"), {"name": "newrole"}),
    Row("GET", f"{M}/roles", f"{M}/roles", lists=("list_roles", METALAKE), items=_names, expect=_plain),
    Row("GET", f"{M}/roles/{{role}}", f"{M}/roles/r1", ROLE),
    Row("DELETE", f"{M}/roles/{{role}}", f"{M}/roles/r1", ROLE),
    Row("PUT", f"{M}/permissions/users/{{user}}/grant", f"{M}/permissions/users/u1/grant", ROLE, GRANT_ROLE),
    Row(
        "PUT",
        f"{M}/permissions/users/{{user}}/revoke",
        f"{M}/permissions/users/u1/revoke",
        ObjectRef.parse("role r2"),
        REVOKE_ROLE,
    ),
    Row(
        "PUT", f"{M}/permissions/groups/{{group}}/grant", f"{M}/permissions/groups/g1/grant", ROLE, GRANT_ROLE
    ),
    Row(
        "PUT",
        f"{M}/permissions/groups/{{group}}/revoke",
        f"{M}/permissions/groups/g1/revoke",
        ObjectRef.parse("role r2"),
        REVOKE_ROLE,
    ),
    Row(
        "PUT",
        f"{M}/permissions/roles/{{role}}/{{type}}/{{fullName}}/grant",
        f"{M}/permissions/roles/r1/table/cat.db.t/grant",
        TABLE,
        PRIVS,
        also=(("get_role", "r1"),),  # the role is acted on: seen before it is looked up
    ),
    Row(
        "PUT",
        f"{M}/permissions/roles/{{role}}/{{type}}/{{fullName}}/revoke",
        f"{M}/permissions/roles/r1/table/cat.db.t/revoke",
        TABLE,
        HELD,
        also=(("get_role", "r1"),),  # the role is acted on: seen before it is looked up
    ),
    Row(  # the web UI's override: r1 keeps modify_table on the table and gains select_table
        "PUT",
        f"{M}/permissions/roles/{{role}}",
        f"{M}/permissions/roles/r1",
        TABLE,
        {
            "overrides": [
                {
                    "fullName": "cat.db.t",
                    "type": "table",
                    "privileges": [*HELD["privileges"], *PRIVS["privileges"]],
                }
            ]
        },
        also=(("get_role", "r1"),),
    ),
    Row("GET", f"{M}/owners/{{type}}/{{fullName}}", f"{M}/owners/table/cat.db.t", TABLE),
    Row(
        "PUT",
        f"{M}/owners/{{type}}/{{fullName}}",
        f"{M}/owners/role/r1",
        ROLE,
        {"name": "u1", "type": "USER"},
        # a role, not the table: the deny_* roles' DENYs on the metalake (SELECT_TABLE,
        # MANAGE_GRANTS...) reach the table, and its new owner would pass them, so only who
        # may revoke them (or roles) hands the table over: here nobody who owns it
        # (tests/rest/test_owner_denies.py)
    ),
    Row(
        "GET",
        f"{M}/objects/{{type}}/{{fullName}}/roles",
        f"{M}/objects/table/cat.db.t/roles",
        TABLE,
        lists=("list_roles", METALAKE),
        items=_names,
        expect=_bound_to(TABLE),
    ),
    *_object_rows("catalogs", f"{M}/catalogs", METALAKE, "newcat", CAT),
    *_object_rows("schemas", f"{M}/catalogs/cat/schemas", CAT, "newdb", DB),
    *_object_rows("tables", f"{M}/catalogs/cat/schemas/db/tables", DB, "newt", TABLE),
    *_object_rows("topics", f"{M}/catalogs/cat/schemas/db/topics", DB, "newtp", TOPIC),
    *_object_rows("filesets", f"{M}/catalogs/cat/schemas/db/filesets", DB, "newfs", FILESET),
]
BY_ROUTE = {(r.method, r.template): r for r in ROWS}


def route_of(row: Row) -> Route:
    return next(r for r in ROUTES if (r.method, r.template) == (row.method, row.template))


def operation_of(row: Row) -> str | None:
    """The route's operation, for the path's parameters (the ``{type}`` segment's load)."""
    route = route_of(row)
    segments = tuple(row.path.split("?")[0].strip("/").split("/")) if row.path != "/" else ()
    params = route.match(segments) or {}
    return route.operation_for(params)


def needed(term: Term) -> set[Privilege]:
    """Every privilege a requirement names, through its gates (``Can``)."""
    if isinstance(term, Has):
        return set(term.privileges)
    if isinstance(term, (AllOf, AnyOf)):
        return set().union(*(needed(t) for t in term.terms))
    if isinstance(term, Can):
        return needed(OPERATIONS[term.operation].requires)
    return set()


OPS = sorted({op for row in ROWS if (op := operation_of(row)) is not None})
#: service admin, metalake owner, object owners, nobody, not in the metalake, anonymous (no header)
EVERY_ROW: list[str | None] = ["admin", "mowner", *OWNERS, "nobody", "outsider", None]
CALLERS: list[str | None] = [*EVERY_ROW, *(f"{k}_{op}" for op in OPS for k in ("hold", "ghold", "deny"))]


def callers(row: Row) -> list[str | None]:
    """Who calls a row: everyone of :data:`EVERY_ROW`, and the holders (directly, through a
    group, with a DENY) of what the row's own operation needs."""
    op = operation_of(row)
    return [*EVERY_ROW, *([] if op is None else [f"{k}_{op}" for k in ("hold", "ghold", "deny")])]


def _estate(s: Site) -> None:
    ac = s.ac  # the plain library: the test's own setup, not a request
    for user in ("mowner", *OWNERS, "u1", "nobody"):
        ac.add_user(user)
    ac.set_owner(METALAKE, "mowner")
    ac.set_service_admins(["admin"])  # the model says what [access] service_admins says
    ac.create_object(CAT, creator="own_catalog", properties={"pushdown.rest.type": "relational"})
    for owner, ref in OWNERS.items():
        if ref not in (CAT, ROLE):
            ac.create_object(ref, creator=owner)
    ac.add_group("g1")
    ac.create_role("r1", owner="own_role")
    ac.create_role("r2")
    ac.grant_privileges("r1", TABLE, [Privilege.MODIFY_TABLE])
    ac.grant_privileges("r2", DB, [Privilege.USE_SCHEMA])
    ac.grant_role("r2", Principal.user("u1"))
    ac.grant_role("r2", Principal.group("g1"))
    for op in OPS:
        privileges = sorted(needed(OPERATIONS[op].requires), key=lambda p: p.value)
        ac.create_role(f"need_{op}")
        ac.create_role(f"deny_{op}")
        if privileges:
            ac.grant_privileges(f"need_{op}", METALAKE, privileges)
            ac.grant_privileges(f"deny_{op}", METALAKE, privileges, Condition.DENY)
        for kind in ("hold", "ghold", "deny"):
            ac.add_user(f"{kind}_{op}")
        ac.grant_role(f"need_{op}", Principal.user(f"hold_{op}"))
        ac.add_group(f"grp_{op}", [f"ghold_{op}"])
        ac.grant_role(f"need_{op}", Principal.group(f"grp_{op}"))
        ac.grant_role(f"need_{op}", Principal.user(f"deny_{op}"))
        ac.grant_role(f"deny_{op}", Principal.user(f"deny_{op}"))


class Sent(logging.Handler):
    """Every log record the server writes, formatted, to look for credentials in."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(self.format(record) + " " + repr(record.__dict__))


@dataclass
class Matrix:
    site: Site
    estate: Model
    seq: int
    log: Sent
    clients: dict[str | None, httpx.Client]

    def reset(self) -> None:
        """Undo what a case changed: the estate again, through the library."""
        if self.site.seq() != self.seq:
            self.site.ac.load_model(self.estate)
            self.seq = self.site.seq()


@pytest.fixture(scope="module")
def matrix(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Matrix]:
    tmp: Path = tmp_path_factory.mktemp("matrix")
    sent = Sent()
    logger = logging.getLogger("pushdown")
    before = logger.level
    logger.addHandler(sent)
    logger.setLevel(logging.DEBUG)
    try:
        with site(tmp) as s:
            _estate(s)
            clients = {user: s.http(user) for user in CALLERS}
            try:
                yield Matrix(s, copy.deepcopy(s.ac.model), s.seq(), sent, clients)
            finally:
                for c in clients.values():
                    c.close()
    finally:
        logger.removeHandler(sent)
        logger.setLevel(before)


def test_every_route_has_a_row_in_the_matrix() -> None:
    routes = {(r.method, r.template) for r in ROUTES}
    assert sorted(routes - set(BY_ROUTE)) == []
    assert sorted(set(BY_ROUTE) - routes) == []  # and no row names a route that is gone
    assert len(BY_ROUTE) == len(ROWS)


def test_every_kind_of_caller_is_in_the_estate(matrix: Matrix) -> None:
    model = matrix.site.ac.model
    assert "admin" in model.service_admins and model.owners[METALAKE] == "mowner"
    for user, ref in OWNERS.items():
        assert model.owners[ref] == user
    op = "create_catalog"
    assert model.roles_of(f"hold_{op}") == {f"need_{op}": "directly"}
    assert model.roles_of(f"ghold_{op}") == {f"need_{op}": f"through group grp_{op}"}
    assert set(model.roles_of(f"deny_{op}")) == {f"need_{op}", f"deny_{op}"}
    assert "outsider" not in model.users and "anonymous" not in model.users


def _case_id(row: Row) -> str:
    return f"{row.method} {row.path}"


def _expected(row: Row, ev: Evaluator, user: str) -> tuple[bool, list[str] | None]:
    """(allowed, the items a listing shows) as the evaluator decides them."""
    if row.lists is not None:
        list_op, container = row.lists
        if list_op == "load_metalake":  # GET /api/metalakes: the metalake when it may be loaded
            ok = bool(ev.authorize(user, "load_metalake", METALAKE, explain=False))
            return ok, ["test"] if ok else []
        seen = listing.visible(ev, user, list_op, container)
        ok = bool(ev.authorize(user, list_op, container, explain=False))
        if row.template.endswith("/roles") and "objects" in row.template:
            ok = bool(ev.authorize(user, operation_of(row) or "", row.target or METALAKE, explain=False))
        assert row.expect is not None
        return ok, row.expect(ev.model, seen)
    op = operation_of(row)
    if op is None:
        return True, None
    assert row.target is not None
    ok = all(ev.authorize(user, o, t, explain=False) for o, t in ((op, row.target), *row.also))
    return ok, None


@pytest.mark.parametrize("row", ROWS, ids=_case_id)
def test_the_answer_equals_the_evaluator(matrix: Matrix, row: Row) -> None:
    wrong: list[str] = []
    allowed_some = refused_some = False
    for user in callers(row):
        matrix.reset()
        ev = Evaluator(matrix.site.ac.model)
        who = user if user is not None else "anonymous"
        ok, items = _expected(row, ev, who)
        r = matrix.clients[user].request(row.method, row.path, json=row.body)
        if not ok and row.refused_is_empty:
            got_ok = r.status_code == 200 and row.items is not None and row.items(r.json()) == []
            if not got_ok:
                wrong.append(f"{who}: refused by the evaluator, answered {r.status_code} {r.text[:200]}")
            refused_some = True
            continue
        if ok:
            allowed_some = True
            if r.status_code != row.allowed_status:
                wrong.append(f"{who}: allowed by the evaluator, answered {r.status_code} {r.text[:200]}")
            elif items is not None and row.items is not None and row.items(r.json()) != items:
                wrong.append(f"{who}: shown {row.items(r.json())}, the evaluator shows {items}")
        else:
            refused_some = True
            body = r.json() if r.headers.get("content-type", "").startswith("application/json") else {}
            if (r.status_code, body.get("code"), body.get("type")) != (403, 1008, "ForbiddenException"):
                wrong.append(f"{who}: refused by the evaluator, answered {r.status_code} {r.text[:200]}")
            elif not body.get("message", "").startswith(f"{who} may not"):
                wrong.append(f"{who}: the refusal does not name the caller: {body.get('message')!r}")
    matrix.reset()
    assert wrong == []
    # the row tells something: someone is let through (a route nobody may call proves little)
    assert allowed_some
    if operation_of(row) is not None and row.template != "/api/metalakes":
        assert refused_some


def test_no_credential_in_the_server_log(matrix: Matrix) -> None:
    assert matrix.log.lines, "the server logged nothing: the check below would prove nothing"
    text = "\n".join(matrix.log.lines)
    for user in CALLERS:
        if user is None:
            continue
        basic = base64.b64encode(f"{user}:anything".encode()).decode()
        assert basic not in text and f"{user}:anything" not in text
    assert "anything" not in text
