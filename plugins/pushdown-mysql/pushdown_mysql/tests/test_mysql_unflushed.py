"""The grant tables and what the server enforces can differ: a row deleted from a grant
table without FLUSH PRIVILEGES stays in force (the server enforces its in-memory copy)
until the next FLUSH or restart. pushdown reads the tables; the server's memory can be
read only with ``SHOW GRANTS FOR`` another account, which MariaDB 10.11 allows only with
``SELECT`` on the whole ``mysql`` database. pushdown's least-privileged account holds
``SELECT`` on the grant tables alone, so this is a documented limit (docs/mysql.md,
"Limits"; surface entry ``server.memory``): the test pins each part of it, so that a change
that makes it visible (or the privilege that would) has to update the docs."""

from __future__ import annotations

import pytest

from pushdown.reconcile.scope import Scope
from pushdown.reconcile.sync import reconcile
from pushdown_mysql.backend import MySQLBackend

from .world import World, admin


@pytest.mark.mariadb
def test_a_grant_row_deleted_without_flush_is_a_documented_limit(world: World, backend: MySQLBackend) -> None:
    world.user("ann")
    world.schema("crm")
    world.table("crm", "secret")
    with admin(world.server) as cur:  # by hand, then the row alone removed (no FLUSH)
        cur.execute("GRANT SELECT ON `crm`.`secret` TO 'pd_ann'@'%'")
        cur.execute("DELETE FROM mysql.tables_priv WHERE User = 'pd_ann' AND Db = 'crm'")
    try:
        plan, _ = reconcile(backend, world.model, Scope.everything())  # the model gives ann nothing
        # the limit: the read sees no row, so nothing is revoked and no finding names it ...
        assert not plan.ops and not any("pd_ann" in f for f in plan.findings), plan
        with world.server.connect("pd_ann", "user-secret") as conn, conn.cursor() as cur:
            cur.execute("SELECT * FROM `crm`.`secret`")  # ... while the server still enforces it
        # why: the server's memory is readable only with SELECT on the whole mysql database
        with pytest.raises(Exception, match="1044"):
            backend.connection.query("SHOW GRANTS FOR 'pd_ann'@'%'", why="reading another account's grants")
    finally:
        with admin(world.server) as cur:
            cur.execute("FLUSH PRIVILEGES")
    # the remedy the docs give: FLUSH PRIVILEGES makes the tables what is enforced
    with world.server.connect("pd_ann", "user-secret") as conn, conn.cursor() as cur:
        with pytest.raises(Exception, match="1142"):
            cur.execute("SELECT * FROM `crm`.`secret`")
