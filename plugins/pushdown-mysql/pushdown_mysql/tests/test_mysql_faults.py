"""Faults: the server dies in the middle of an apply; pushdown's account lacks a privilege."""

from __future__ import annotations

import pytest

from pushdown.errors import PermanentBackendError, TemporaryBackendError
from pushdown.reconcile.scope import Scope
from pushdown.reconcile.sync import reconcile
from pushdown_mysql.backend import MySQLBackend

from .world import World, admin

pytestmark = pytest.mark.mariadb


def many_grants(world: World) -> None:
    for user in ("k1", "k2", "k3"):
        world.user(user)
    world.schema("killed")
    for i in range(30):
        world.table("killed", f"t{i}")
    world.role(
        "all",
        [
            ("catalog c", "USE_CATALOG", "ALLOW"),
            ("catalog c", "USE_SCHEMA", "ALLOW"),
            ("catalog c", "MODIFY_TABLE", "ALLOW"),
        ],
        to=["k1", "k2", "k3"],
    )


def test_server_killed_mid_apply_gives_a_clear_error_and_the_next_sync_converges(
    world: World, backend: MySQLBackend
) -> None:
    many_grants(world)
    done: list[int] = []

    def kill_after_ten(n: int) -> None:
        done.append(n)
        if len(done) == 10:
            world.server.kill()

    with pytest.raises(TemporaryBackendError) as err:
        reconcile(backend, world.model, Scope.everything(), progress=kill_after_ten, retries=0)
    message = str(err.value)
    assert "lost the connection" in message and "the first 10 were run" in message
    world.server.start()
    with pytest.raises(TemporaryBackendError):  # still nothing to talk to while it is down
        world.server.kill()
        reconcile(backend, world.model, Scope.everything(), retries=0)
    world.server.start()
    plan, applied = reconcile(backend, world.model, Scope.everything())
    assert applied and plan.adds > 0
    assert backend.plan(world.model, Scope.everything()).empty
    assert world.probe().mismatches == []


def test_missing_read_privilege_is_named(world: World, backend: MySQLBackend) -> None:
    many_grants(world)
    with admin(world.server) as cur:
        cur.execute("REVOKE SELECT ON `mysql`.`tables_priv` FROM 'pushdown'@'%'")
    try:
        named = r"lacks the SELECT privilege on `mysql`.`tables_priv`"
        with pytest.raises(PermanentBackendError, match=named):
            backend.plan(world.model, Scope.everything())
    finally:
        with admin(world.server) as cur:
            cur.execute("GRANT SELECT ON `mysql`.`tables_priv` TO 'pushdown'@'%'")


def test_missing_grant_option_is_named(world: World, backend: MySQLBackend) -> None:
    many_grants(world)
    with admin(world.server) as cur:
        cur.execute("REVOKE GRANT OPTION ON `killed`.* FROM 'pushdown'@'%'")
    with pytest.raises(PermanentBackendError) as err:
        reconcile(backend, world.model, Scope.everything())
    assert "lacks GRANT OPTION on `killed`.`t" in str(err.value)
    assert "GRANT command denied" in str(err.value)  # the server's own words follow
