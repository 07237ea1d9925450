"""Faults: the server dies in the middle of an apply; pushdown's account lacks a privilege."""

from __future__ import annotations

import socket

import pytest

from pushdown.errors import PermanentBackendError, TemporaryBackendError
from pushdown.reconcile import planner
from pushdown.reconcile.plan import Plan
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
    assert planner.plan(backend, world.model, Scope.everything()).empty
    assert world.probe().mismatches == []


def test_missing_read_privilege_is_named(world: World, backend: MySQLBackend) -> None:
    many_grants(world)
    with admin(world.server) as cur:
        cur.execute("REVOKE SELECT ON `mysql`.`tables_priv` FROM 'pushdown'@'%'")
    try:
        named = r"lacks the SELECT privilege on `mysql`.`tables_priv`"
        with pytest.raises(PermanentBackendError, match=named):
            planner.plan(backend, world.model, Scope.everything())
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


def test_a_role_pushdown_loses_the_right_to_revoke_is_a_plain_refusal_and_the_rest_goes_on(
    world: World, backend: MySQLBackend
) -> None:
    many_grants(world)
    reconcile(backend, world.model, Scope.everything())
    with admin(world.server) as cur:
        cur.execute("CREATE ROLE `r2`")
        cur.execute("GRANT `r2` TO 'pd_k1'@'%'")
        cur.execute("GRANT `r2` TO 'pushdown'@'%' WITH ADMIN OPTION")  # so the plan revokes it
        cur.execute("GRANT DROP ON `killed`.`t0` TO 'pd_k2'@'%'")  # hand-made, revocable

    def lose_admin_option(plan: Plan) -> None:  # between plan and apply, somebody takes it away
        assert "- ROLE `r2` TO 'pd_k1'@'%'" in [str(op) for op in plan.ops]
        with admin(world.server) as cur:
            cur.execute("REVOKE `r2` FROM 'pushdown'@'%'")

    try:
        with pytest.raises(PermanentBackendError) as err:
            reconcile(backend, world.model, Scope.everything(), expect=lose_admin_option)
        message = str(err.value)
        assert (
            "pushdown's account 'pushdown'@'%' may not change role `r2` (it would need the role WITH ADMIN "
            "OPTION); do it by hand: REVOKE `r2` FROM 'pd_k1'@'%'"
        ) in message
        assert "words this like a failed login" in message and "(1698)" in message
        assert "the other 1 of 2 operation(s) were applied" in message  # the DROP went all the same
        plan = planner.plan(backend, world.model, Scope.everything())
        assert plan.ops == () and any("REVOKE `r2` FROM 'pd_k1'@'%'" in f for f in plan.findings)
    finally:
        with admin(world.server) as cur:
            cur.execute("DROP ROLE IF EXISTS `r2`")
    assert world.probe().mismatches == []


def test_a_port_taken_before_the_server_binds_it_is_exchanged_for_another(
    mariadb: object, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The throwaway server's port is picked just before it binds; if another process took
    it all the same, the server starts on another one (a fixed port would fail the run)."""
    from pushdown_lab import mariadb as srv

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = int(taken.getsockname()[1])
        picks: list[int] = []
        real = srv.free_port

        def first_the_taken_one() -> int:
            picks.append(port if not picks else real())
            return picks[-1]

        monkeypatch.setattr(srv, "free_port", first_the_taken_one)
        with srv.throwaway_mariadb() as server:
            assert picks[0] == port and server.port == picks[-1] != port
            assert "Address already in use" in server.log.read_text()  # it met the taken port first
            server.connect(connect_timeout=5).close()
