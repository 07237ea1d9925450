"""A managed account's hand-made row mixing privileges pushdown may revoke with one it may
not (it holds only :data:`~pushdown_mysql.mapping.GRANTABLE` WITH GRANT OPTION): the
revocable ones must still go."""

from __future__ import annotations

import pytest

from pushdown.reconcile.scope import Scope
from pushdown.reconcile.sync import reconcile
from pushdown_mysql.backend import MySQLBackend

from .world import World, admin

pytestmark = pytest.mark.mariadb


@pytest.mark.parametrize("on", ["`crm`.`secret`", "`crm`.*"])
def test_a_revocable_privilege_beside_one_pushdown_may_not_revoke_is_revoked(
    world: World, backend: MySQLBackend, on: str
) -> None:
    world.user("ann")  # the model gives ann nothing
    world.schema("crm")
    world.table("crm", "secret")
    with admin(world.server) as cur:
        cur.execute(f"GRANT SELECT, TRIGGER ON {on} TO 'pd_ann'@'%'")
    plan, _ = reconcile(backend, world.model, Scope.everything())  # no error: TRIGGER is reported
    assert any(f"REVOKE TRIGGER ON {on} FROM 'pd_ann'@'%'" in f for f in plan.findings), plan.findings
    with world.server.connect("pd_ann", "user-secret") as conn, conn.cursor() as cur:
        with pytest.raises(Exception, match="1142"):
            cur.execute("SELECT * FROM `crm`.`secret`")
    again, _ = reconcile(backend, world.model, Scope.everything())  # converged: nothing left to run
    assert not again.ops and again.findings == plan.findings


def test_a_deny_revokes_the_granted_privilege_beside_a_hand_made_one_pushdown_may_not_revoke(
    world: World, backend: MySQLBackend
) -> None:
    world.user("ann")
    world.schema("crm")
    world.table("crm", "secret")
    world.role(
        "reader",
        [
            ("catalog c", "USE_CATALOG", "ALLOW"),
            ("catalog c", "USE_SCHEMA", "ALLOW"),
            ("table c.crm.secret", "SELECT_TABLE", "ALLOW"),
        ],
        to=["ann"],
    )
    reconcile(backend, world.model, Scope.everything())
    with admin(world.server) as cur:
        cur.execute("GRANT TRIGGER ON `crm`.`secret` TO 'pd_ann'@'%'")
    world.role("deny", [("table c.crm.secret", "SELECT_TABLE", "DENY")], to=["ann"])
    plan, _ = reconcile(backend, world.model, Scope.everything())
    assert any("REVOKE TRIGGER ON `crm`.`secret`" in f for f in plan.findings), plan.findings
    with world.server.connect("pd_ann", "user-secret") as conn, conn.cursor() as cur:
        with pytest.raises(Exception, match="1142"):
            cur.execute("SELECT * FROM `crm`.`secret`")
