"""Grant rows with no account behind them (written into the grant tables, then FLUSH
PRIVILEGES): MariaDB matches ``mysql.db`` and ``mysql.tables_priv`` rows by the login's
user name and the client's host, not by an account, so such a row reaches a managed login.
``REVOKE`` answers 1141 ("no such grant") for an account that does not exist, which must
not count as done."""

from __future__ import annotations

import re

import pytest

from pushdown.reconcile.scope import Scope
from pushdown.reconcile.sync import reconcile
from pushdown_mysql.backend import MySQLBackend

from .world import World, admin

pytestmark = pytest.mark.mariadb

ROWS = {
    "anonymous database row": (
        "INSERT INTO mysql.db (Host, Db, User, Select_priv) VALUES ('%', 'crm', '', 'Y')"
    ),
    "managed name at another host, database row": (
        "INSERT INTO mysql.db (Host, Db, User, Select_priv) VALUES ('127.0.0.1', 'crm', 'pd_ann', 'Y')"
    ),
    "managed name at another host, table row": (
        "INSERT INTO mysql.tables_priv (Host, Db, User, Table_name, Table_priv) "
        "VALUES ('127.0.0.1', 'crm', 'pd_ann', 'secret', 'Select')"
    ),
}


@pytest.mark.parametrize("row", sorted(ROWS))
def test_a_grant_row_without_an_account_is_revoked_or_reported(
    world: World, backend: MySQLBackend, row: str
) -> None:
    world.user("ann")  # the model gives ann nothing
    world.schema("crm")
    world.table("crm", "secret")
    try:
        with admin(world.server) as cur:
            cur.execute(ROWS[row])
            cur.execute("FLUSH PRIVILEGES")
        with world.server.connect("pd_ann", "user-secret") as conn, conn.cursor() as cur:
            cur.execute("SELECT * FROM `crm`.`secret`")  # the row reaches ann's login
        plan, _ = reconcile(backend, world.model, Scope.everything())
        reported = any("crm" in f for f in plan.findings)
        with world.server.connect("pd_ann", "user-secret") as conn, conn.cursor() as cur:
            try:
                cur.execute("SELECT * FROM `crm`.`secret`")
                refused = False
            except Exception as exc:  # any refusal will do
                refused = "1142" in str(exc) or "1044" in str(exc)
        assert refused or reported, plan
        # reported with the statements that remove it; no REVOKE tried (it answers 1141)
        (finding,) = [f for f in plan.findings if "does not exist" in f]
        assert not plan.ops, plan.ops
        again, _ = reconcile(backend, world.model, Scope.everything())  # the same, no error
        assert not again.ops and finding in again.findings
        fix = finding.rsplit("remove it by hand: ", 1)[1]
        with admin(world.server) as cur:  # the statements named do remove it
            for statement in re.split(r"; (?=DELETE FROM mysql\.|FLUSH PRIVILEGES$)", fix):
                cur.execute(statement)
        with world.server.connect("pd_ann", "user-secret") as conn, conn.cursor() as cur:
            with pytest.raises(Exception, match=r"1142|1044"):
                cur.execute("SELECT * FROM `crm`.`secret`")
        done, _ = reconcile(backend, world.model, Scope.everything())
        assert not any("does not exist" in f for f in done.findings), done.findings
    finally:
        with admin(world.server) as cur:
            cur.execute("DELETE FROM mysql.db WHERE Db = 'crm' AND User IN ('', 'pd_ann')")
            cur.execute("DELETE FROM mysql.tables_priv WHERE Db = 'crm' AND User IN ('', 'pd_ann')")
            cur.execute("FLUSH PRIVILEGES")
