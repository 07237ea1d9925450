"""A grant row with no account behind it, its host spelled in upper case: the server matches
it to logins case-insensitively (a login as ``pd_ann`` from localhost gets it), so it is
reported with the DELETE that removes it; that DELETE must name the host as the row holds it
(the grant tables compare ``Host`` as bytes), not as pushdown reads it back (lower case)."""

from __future__ import annotations

import pytest

from pushdown.reconcile.scope import Scope
from pushdown.reconcile.sync import reconcile
from pushdown_mysql.backend import MySQLBackend

from .world import World, admin

pytestmark = pytest.mark.mariadb


def test_an_orphan_row_at_an_upper_case_host_is_removed_by_the_statements_shown(
    world: World, backend: MySQLBackend
) -> None:
    world.user("ann")  # the model gives ann nothing
    world.schema("crm")
    world.table("crm", "secret")
    try:
        with admin(world.server) as cur:
            cur.execute(
                "INSERT INTO mysql.db (Host, Db, User, Select_priv) "
                "VALUES ('LOCALHOST', 'crm', 'pd_ann', 'Y')"
            )
            cur.execute("FLUSH PRIVILEGES")
        plan, _ = reconcile(backend, world.model, Scope.everything())
        (finding,) = [f for f in plan.findings if "does not exist" in f]
        by_hand = finding.rsplit("remove it by hand: ", 1)[1]
        with admin(world.server) as cur:
            for statement in by_hand.split("; "):
                cur.execute(statement)
            cur.execute("SELECT Host FROM mysql.db WHERE User = 'pd_ann' AND Db = 'crm'")
            assert cur.fetchall() == (), by_hand  # the statements shown remove the row
    finally:
        with admin(world.server) as cur:
            cur.execute("DELETE FROM mysql.db WHERE User = 'pd_ann' AND Host = 'LOCALHOST'")
            cur.execute("FLUSH PRIVILEGES")
