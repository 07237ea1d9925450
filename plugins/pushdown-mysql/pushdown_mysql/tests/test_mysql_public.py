"""Grants TO PUBLIC (MariaDB >= 10.11) reach every account, the managed ones included."""

from __future__ import annotations

import pytest

from pushdown.reconcile.scope import Scope
from pushdown.reconcile.sync import reconcile
from pushdown_mysql.backend import MySQLBackend

from .world import World, admin

pytestmark = pytest.mark.mariadb


def test_a_public_grant_on_a_governed_table_is_revoked(world: World, backend: MySQLBackend) -> None:
    """ann may read nothing; a grant TO PUBLIC by hand made every account read `crm`.`secret`.
    It used to be reported only, so ann stayed wider than the model."""
    world.user("ann")
    world.schema("crm")
    world.table("crm", "secret")
    reconcile(backend, world.model, Scope.everything())
    try:
        with admin(world.server) as cur:
            cur.execute("GRANT SELECT ON `crm`.`secret` TO PUBLIC")
            cur.execute("GRANT INSERT ON `crm`.* TO PUBLIC")
            cur.execute("GRANT UPDATE (`id`) ON `crm`.`secret` TO PUBLIC")
            cur.execute("GRANT TRIGGER ON `crm`.`secret` TO PUBLIC")  # pushdown may not revoke this one
        plan, _ = reconcile(backend, world.model, Scope.everything())
        assert {str(op) for op in plan.ops} == {
            "- SELECT ON `crm`.`secret` TO PUBLIC",
            "- INSERT ON `crm`.* TO PUBLIC",
            "- UPDATE (`id`) ON `crm`.`secret` TO PUBLIC",
        }
        assert any("TRIGGER on `crm`.`secret` is granted TO PUBLIC" in f for f in plan.findings)
        with admin(world.server) as cur:
            cur.execute("SELECT Table_priv FROM mysql.tables_priv WHERE User = 'PUBLIC' AND Db = 'crm'")
            assert [r[0] for r in cur.fetchall()] == ["Trigger"]
        assert world.probe().mismatches == []
    finally:
        with admin(world.server) as cur:
            for table in ("db", "tables_priv", "columns_priv"):
                cur.execute(f"DELETE FROM mysql.{table} WHERE User = 'PUBLIC'")
            cur.execute("FLUSH PRIVILEGES")


def test_a_shadowing_account_loses_its_grants_on_governed_databases(
    world: World, backend: MySQLBackend
) -> None:
    """``pd_ann@127.0.0.1`` made by hand, with SELECT on crm.*: a login as pd_ann from there
    is that account. It used to be reported only; its grants on crm are now revoked."""
    world.user("ann")
    world.schema("crm")
    world.table("crm", "secret")
    try:
        with admin(world.server) as cur:
            cur.execute("CREATE USER 'pd_ann'@'127.0.0.1' IDENTIFIED BY 'user-secret'")
            cur.execute("GRANT SELECT ON `crm`.* TO 'pd_ann'@'127.0.0.1'")
            cur.execute("GRANT UPDATE ON `crm`.`secret` TO 'pd_ann'@'127.0.0.1'")
        plan, _ = reconcile(backend, world.model, Scope.everything())
        assert {str(op) for op in plan.ops} == {
            "- SELECT ON `crm`.* TO 'pd_ann'@'127.0.0.1'",
            "- UPDATE ON `crm`.`secret` TO 'pd_ann'@'127.0.0.1'",
        }
        assert any("'pd_ann'@'127.0.0.1' shadows the managed account" in f for f in plan.findings)
        with world.server.connect("pd_ann", "user-secret") as conn, conn.cursor() as cur:
            with pytest.raises(Exception, match="1142"):
                cur.execute("SELECT * FROM `crm`.`secret`")
    finally:
        with admin(world.server) as cur:
            cur.execute("DROP USER IF EXISTS 'pd_ann'@'127.0.0.1'")
