"""Two writers at once on one store and one server: one writer per backend at a time."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from pushdown_lab.mariadb import LocalMariaDB

from pushdown.app.service import AccessControl
from pushdown.journal.store import Store
from pushdown.reconcile import planner
from pushdown.reconcile.scope import Scope

from .world import World, backend_for

pytestmark = pytest.mark.mariadb


def writer(server: LocalMariaDB, path: Path) -> AccessControl:
    return AccessControl(Store(path), {"mysql1": backend_for(server)})


def test_concurrent_library_writers_never_leave_the_server_behind(world: World, tmp_path: Path) -> None:
    users = [f"w{i}" for i in range(6)]
    for user in users:
        world.user(user)
    world.schema("crm")
    for t in range(4):
        world.table("crm", f"t{t}")
    store = tmp_path / "pushdown.db"
    first = writer(world.server, store)
    first.load_model(world.model)
    first.create_role("reader")
    first.grant_privileges("reader", "catalog c", ["USE_CATALOG", "USE_SCHEMA"])
    second = writer(world.server, store)
    lagging: list[dict[str, str]] = []
    errors: list[BaseException] = []

    def work(ac: AccessControl, mine: list[str], table: str) -> None:
        try:
            for user in mine:
                lagging.append(ac.grant_role("reader", f"user {user}").lagging)
                granted = ac.grant_privileges("reader", f"table c.crm.{table}", ["SELECT_TABLE"])
                lagging.append(granted.lagging)
                lagging.append(ac.revoke_role("reader", f"user {user}").lagging)
                lagging.append(ac.grant_role("reader", f"user {user}").lagging)
        except BaseException as exc:
            errors.append(exc)

    threads = [
        threading.Thread(target=work, args=(first, users[:3], "t0")),
        threading.Thread(target=work, args=(second, users[3:], "t1")),
    ]
    for th in threads:
        th.start()
    for th in threads:
        th.join(timeout=300)
    assert errors == []
    assert [lag for lag in lagging if lag] == []  # no writer fell behind, none failed
    final = writer(world.server, store)
    backend = final.backends["mysql1"]
    assert planner.plan(backend, final.model, Scope.everything()).empty  # the server equals the model
    world.model = final.model
    assert world.probe().mismatches == []
    for ac in (first, second, final):
        ac.close()
