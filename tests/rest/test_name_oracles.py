"""No route tells a caller whether a name he may not see exists. For every route that takes
a role, user, group or object name (in the path or the body), a caller who may not see
the named thing gets the same answer for an existing one and a missing one: status, code,
type and message, the name itself aside. The caller (mallory) owns a table and holds a
role of her own, so she is allowed to act on some things: a grant on her own table to a
role she may not see is refused like a grant to a role that does not exist."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from pushdown.app.rest.routes import ROUTES, Route
from pushdown.model.principals import Principal
from pushdown.model.privileges import Privilege
from pushdown.model.securables import ObjectRef
from pushdown.model.securables import SecurableType as T

from .asgi import Door, segment

CALLER = "mallory"
#: per kind of name: one that exists and the caller may not see, one that does not exist
VICTIMS = {"role": ("secret", "nosuch"), "user": ("bob", "nobody"), "group": ("staff", "nogroup")}
VICTIMS["object"] = ("hcat", "nocat")  # a catalog (with hcat.s.x below it) and a missing one
#: the path's other names: the caller's own role, herself, her table
DEFAULTS = {
    "metalake": "test",
    "role": "mine",
    "user": CALLER,
    "group": "staff",
    "catalog": "c",
    "schema": "s",
    "name": "t",
    "type": "table",
    "fullName": "c.s.t",
}
PRIVILEGES = {"privileges": [{"name": "SELECT_TABLE", "condition": "ALLOW"}]}
#: (route, kind of name) pairs whose answer may tell existence, and why it is allowed
ACCEPTED = {
    # the new owner is named by one whose right (owning the object) holds for any user:
    # like Gravitino, a transfer to a user who does not exist is a 404 to that owner
    ("PUT /api/metalakes/{metalake}/owners/{type}/{fullName}", "user"),
}


def _estate(door: Door) -> None:
    assert door.request("POST", "/api/metalakes", "admin", {"name": "test"}).status == 200
    ac = door.ac.acting("admin")
    for user in (CALLER, "bob"):
        ac.add_user(user)
    ac.add_group("staff", ["bob"])
    for ref in ("catalog c", "schema c.s", "table c.s.t", "catalog hcat", "schema hcat.s", "table hcat.s.x"):
        ac.create_object(ObjectRef.parse(ref))
    ac.set_owner(ObjectRef.parse("table c.s.t"), CALLER)
    ac.create_role("mine")
    ac.grant_privileges("mine", ObjectRef(T.CATALOG, ("c",)), [Privilege.USE_CATALOG, Privilege.USE_SCHEMA])
    ac.grant_role("mine", Principal.user(CALLER))
    ac.create_role("secret")
    ac.grant_privileges("secret", ObjectRef.parse("table hcat.s.x"), [Privilege.SELECT_TABLE])
    ac.grant_role("secret", Principal.group("staff"))


@pytest.fixture
def new_door(tmp_path: Path) -> Iterator[Any]:
    doors: list[Door] = []

    def make() -> Door:
        door = Door.open(tmp_path / f"pd{len(doors)}.db")
        doors.append(door)
        _estate(door)
        return door

    yield make
    for door in doors:
        door.close()


def _uses(route: Route, kind: str) -> bool:
    template = route.template
    if kind == "object":
        return "{catalog}" in template or "{fullName}" in template
    if f"{{{kind}}}" in template:
        return True
    if kind == "role":  # roleNames in the body, or a role as the object of an owner route
        principal = "/permissions/users/" in template or "/permissions/groups/" in template
        return principal or "{fullName}" in template
    return kind == "user" and "/owners/" in template and route.method == "PUT"


def _request(route: Route, kind: str, name: str) -> tuple[str, str, Any]:
    params = dict(DEFAULTS)
    if kind == "object":
        params.update(catalog=name, type="catalog", fullName=name)
    elif kind == "role" and "{fullName}" in route.template and "/permissions/roles/" not in route.template:
        params.update(type="role", fullName=name)
    else:
        params[kind] = name
    path = route.template
    for key, value in params.items():
        path = path.replace(f"{{{key}}}", segment(value))
    body: Any = None
    if route.template.endswith(("/grant", "/revoke")):
        if "/permissions/roles/" in route.template:
            body = PRIVILEGES
        else:
            body = {"roleNames": [name if kind == "role" else "mine"]}
    elif route.template.endswith("/permissions/roles/{role}"):
        body = {"overrides": []}
    elif "/owners/" in route.template and route.method == "PUT":
        body = {"name": name if kind == "user" else CALLER, "type": "USER"}
    elif route.method == "POST":
        body = {"name": "n", "columns": []}
    return route.method, path, body


CASES = [
    pytest.param(route, kind, id=f"{route.method} {route.template} [{kind}]")
    for route in ROUTES
    for kind in VICTIMS
    if route.template.startswith("/api/metalakes/{metalake}/") and _uses(route, kind)
]


def test_every_route_taking_a_name_is_drawn() -> None:
    named = {
        (r.method, r.template)
        for r in ROUTES
        if any(f"{{{p}}}" in r.template for p in ("role", "user", "group", "catalog", "fullName"))
    }
    assert named <= {(c.values[0].method, c.values[0].template) for c in CASES}


@pytest.mark.parametrize(("route", "kind"), CASES)
def test_a_name_the_caller_may_not_see_reads_as_a_missing_one(new_door: Any, route: Route, kind: str) -> None:
    existing, missing = VICTIMS[kind]
    answers = []
    for name in (existing, missing):
        method, path, body = _request(route, kind, name)
        answer = new_door().request(method, path, CALLER, body)
        answers.append((answer.status, answer.body.replace(name.encode(), b"NAME")))
    if (f"{route.method} {route.template}", kind) in ACCEPTED:
        return
    assert answers[0] == answers[1], answers


def test_a_grant_on_her_own_table_reaches_only_roles_she_may_see(new_door: Any) -> None:
    door = new_door()
    base = "/api/metalakes/test/permissions/roles/{}/table/c.s.t/grant"
    assert door.request("PUT", base.format("mine"), CALLER, PRIVILEGES).status == 200
    hidden = door.request("PUT", base.format("secret"), CALLER, PRIVILEGES)
    missing = door.request("PUT", base.format("nosuch"), CALLER, PRIVILEGES)
    assert hidden.status == missing.status == 403
    assert hidden.json()["message"].replace("secret", "X") == missing.json()["message"].replace("nosuch", "X")
    # one who may see every role (the metalake's owner, on a table he owns) learns that
    # it does not exist
    his = "/api/metalakes/test/permissions/roles/{}/table/hcat.s.x/grant"
    assert door.request("PUT", his.format("nosuch"), "admin", PRIVILEGES).status == 404
    assert door.request("PUT", his.format("secret"), "admin", PRIVILEGES).status == 200
