"""Hostile callers against a real backend: after each request the MariaDB grant tables are
read back. A request the requirement table did not allow leaves them as they were; one it
allowed leaves them equal to what the evaluator decides. Registrations that name the
backend or a location, grants to oneself, owners taken: none reaches MariaDB without the
right (the backend enforces the catalog its configuration names)."""

from __future__ import annotations

import os
import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from pushdown.app.rest.routes import ROUTES
from pushdown.app.service import AccessControl
from pushdown.model.principals import Principal
from pushdown.model.privileges import Privilege
from pushdown.model.securables import METALAKE, ObjectRef
from pushdown.model.securables import SecurableType as T

from .asgi import Door
from .test_client_mariadb import (
    DB,
    TABLES,
    USERS,
    model_selects,
    mysql_config,
    prepare_server,
    server,  # noqa: F401 - the module's throwaway MariaDB
    server_selects,
)
from .test_hostile_callers import Estate, Tally, allowed, draw_request

pytestmark = pytest.mark.mariadb
ROUNDS = int(os.environ.get("PUSHDOWN_HOSTILE_MARIADB_ROUNDS", "2"))
CATALOG = ObjectRef(T.CATALOG, ("c",))
SCHEMA = ObjectRef(T.SCHEMA, ("c", DB))


@pytest.fixture
def door(server: Any, tmp_path: Path) -> Iterator[Door]:  # noqa: F811
    prepare_server(server)
    config = mysql_config(tmp_path, server)
    ac = AccessControl.open(str(config), create_store=True, push=True)
    d = Door(ac)
    try:
        yield d
    finally:
        d.loop.close()
        ac.close()


def _estate() -> Estate:
    """ann holds reader (SELECT on t0); bob may create roles and catalogs; eve has nothing."""
    e = Estate(0)
    for user in (*USERS, "eve"):
        e.add(lambda ac, u=user: ac.add_user(u))
    e.objects = [CATALOG, SCHEMA, *(ObjectRef(T.TABLE, ("c", DB, t)) for t in TABLES)]
    for ref in e.objects:
        e.add(lambda ac, r=ref: ac.create_object(r), ref)
    e.add(lambda ac: ac.create_role("reader"))
    e.add(lambda ac: ac.grant_privileges("reader", CATALOG, [Privilege.USE_CATALOG, Privilege.USE_SCHEMA]))
    e.add(lambda ac: ac.grant_privileges("reader", e.objects[2], [Privilege.SELECT_TABLE]))
    e.add(lambda ac: ac.grant_role("reader", Principal.user("ann")))
    e.add(lambda ac: ac.create_role("creator"))
    for p in (Privilege.CREATE_ROLE, Privilege.CREATE_CATALOG):
        e.add(lambda ac, p=p: ac.grant_privileges("creator", METALAKE, [p]))
    e.add(lambda ac: ac.grant_role("creator", Principal.user("bob")))
    e.roles = ["reader", "creator"]
    return e


def test_hostile_callers_move_no_mariadb_grant_without_the_right(server: Any, door: Door) -> None:  # noqa: F811
    e = _estate()
    e.build(door)
    assert server_selects(server) == model_selects(door.ac.model) == {("pd_ann", "t0")}
    # the read-back sees an allowed change: the owner grants reader to bob, then revokes it
    grant = {"roleNames": ["reader"]}
    for verb, want in (("grant", {("pd_ann", "t0"), ("pd_bob", "t0")}), ("revoke", {("pd_ann", "t0")})):
        answer = door.request("PUT", f"/api/metalakes/test/permissions/users/bob/{verb}", "admin", grant)
        assert answer.status == 200 and server_selects(server) == want
    rng, tally = random.Random(24), Tally()
    writes = ("POST", "PUT", "DELETE")
    routes = [r for r in ROUTES if r.method in writes and "metalakes/{metalake}" in r.template]
    moves = 0
    for _ in range(ROUNDS):
        for route in routes:
            caller = rng.choice([None, "mallory", "eve", "ann", "bob", "admin"])  # admin: allowed moves
            model = door.ac.model
            req = draw_request(rng, e, model, route, caller)
            ok, seq = allowed(model, caller, req.checks), door.ac.store.last_seq()
            before = server_selects(server)
            answer = door.request(req.method, req.path, caller, req.body)
            tally.requests += 1
            assert answer.status < 500, (req, answer)
            moved = door.ac.store.last_seq() != seq
            now = server_selects(server)
            moves += now != before
            where = f"{caller} {req.method} {req.path} {req.body} -> {answer.status}"
            if (not moved or not ok) and now != before:
                tally.escalations.append(f"MariaDB moved without the right: {where}: {before} -> {now}")
            elif now != model_selects(door.ac.model):
                tally.escalations.append(f"MariaDB differs from the evaluator after {where}")
    print(f"\nhostile callers, MariaDB read back: {tally.line()}; the grants moved {moves} times")
    assert not tally.escalations, "\n".join(tally.escalations[:10])
