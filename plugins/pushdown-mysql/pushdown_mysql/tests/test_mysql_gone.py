"""A ``REVOKE`` answered "no such grant" (1141) counts as done only when the server shows
nothing left of it. The account may have been dropped between the read and the apply (its
grants went with it: done), but the answer also comes when the grant is held in a row the
``REVOKE`` does not reach: the account dropped and its row left behind or written by hand.
That row still reaches a login of the same user name, so the sync reports it."""

from __future__ import annotations

import pytest

from pushdown.errors import PermanentBackendError
from pushdown.model import changes as ch
from pushdown.reconcile.plan import Plan
from pushdown.reconcile.scope import Scope
from pushdown.reconcile.sync import reconcile
from pushdown_mysql.backend import MySQLBackend

from .world import World, admin, do, held

pytestmark = pytest.mark.mariadb


def _readers(world: World, backend: MySQLBackend, grant: str, users: tuple[str, ...]) -> None:
    for user in users:
        world.user(user)
    world.schema("crm")
    world.table("crm", "orders")
    world.role(
        "reader",
        [
            ("catalog c", "USE_CATALOG", "ALLOW"),
            ("catalog c", "USE_SCHEMA", "ALLOW"),
            (grant, "SELECT_TABLE", "ALLOW"),
        ],
        to=list(users),
    )
    reconcile(backend, world.model, Scope.everything())
    do(world.model, ch.delete_role(world.model, "reader"))


@pytest.mark.parametrize("grant", ["table c.crm.orders", "schema c.crm"])
def test_an_account_dropped_between_the_read_and_the_apply_counts_as_done(
    world: World, backend: MySQLBackend, grant: str
) -> None:
    _readers(world, backend, grant, ("ann", "bob"))

    def ann_dropped_meanwhile(plan: Plan) -> None:
        assert {a.user for op in plan.ops for a in [op.fact.account]} == {"pd_ann", "pd_bob"}  # type: ignore[union-attr]
        with admin(world.server) as cur:
            cur.execute("DROP USER 'pd_ann'@'%'")

    try:
        _, applied = reconcile(
            backend, world.model, Scope.everything(), retries=0, expect=ann_dropped_meanwhile
        )
        assert applied  # the REVOKE naming ann answered 1141; read again, nothing of it is left
        assert not any("pd_" in str(f) for f in held(backend))
    finally:
        with admin(world.server) as cur:  # the account back, for the world's cleanup
            cur.execute("CREATE USER IF NOT EXISTS 'pd_ann'@'%'")


TABLE_ROW = (
    "INSERT INTO mysql.tables_priv (Host, Db, User, Table_name, Grantor, Table_priv) "
    "VALUES ('%', 'crm', 'pd_ann', 'orders', 'root@localhost', 'Select')"
)
DB_ROW = "INSERT INTO mysql.db (Host, Db, User, Select_priv) VALUES ('%', 'crm', 'pd_ann', 'Y')"


@pytest.mark.parametrize(("grant", "row"), [("table c.crm.orders", TABLE_ROW), ("schema c.crm", DB_ROW)])
def test_a_no_such_grant_answer_while_the_row_stays_is_reported(
    world: World, backend: MySQLBackend, grant: str, row: str
) -> None:
    """ann is dropped and her row written back by hand between the read and the apply: the
    ``REVOKE`` answers 1141 (no such account) while the row stays and reaches any login named
    pd_ann. The sync reports it as refused (not done), and bob is revoked all the same."""
    _readers(world, backend, grant, ("ann", "bob"))

    def ann_dropped_but_her_row_stays(plan: Plan) -> None:
        with admin(world.server) as cur:
            cur.execute("DROP USER 'pd_ann'@'%'")
            cur.execute(row)
            cur.execute("FLUSH PRIVILEGES")

    try:
        with pytest.raises(PermanentBackendError) as refused:
            reconcile(
                backend, world.model, Scope.everything(), retries=0, expect=ann_dropped_but_her_row_stays
            )
        message = str(refused.value)
        assert "answered no such grant (1141) but the server still holds it" in message, message
        assert "'pd_ann'@'%'" in message
        assert not any("pd_bob" in str(f) for f in held(backend))  # bob's narrowing went through
    finally:
        with admin(world.server) as cur:
            cur.execute("DELETE FROM mysql.tables_priv WHERE User = 'pd_ann'")
            cur.execute("DELETE FROM mysql.db WHERE User = 'pd_ann'")
            cur.execute("FLUSH PRIVILEGES")
            cur.execute("CREATE USER IF NOT EXISTS 'pd_ann'@'%'")


OTHER_HOST = "10.0.0.2"


@pytest.mark.parametrize("grant", ["table c.crm.orders", "schema c.crm"])
def test_a_no_such_grant_answer_judges_only_the_account_asked_about(
    world: World, backend: MySQLBackend, grant: str
) -> None:
    """ann's grant is revoked by hand between the read and the apply, so the ``REVOKE`` naming
    'pd_ann'@'%' answers 1141/1147; the same user at another host still holds the privilege. That
    is another account (a login from there is it): the re-read judges 'pd_ann'@'%' alone, and
    counts it done."""
    _readers(world, backend, grant, ("ann", "bob"))
    on = "`crm`.`orders`" if grant.startswith("table") else "`crm`.*"

    def ann_revoked_meanwhile_but_held_at_another_host(plan: Plan) -> None:
        with admin(world.server) as cur:
            cur.execute("CREATE USER %s@%s", ("pd_ann", OTHER_HOST))
            cur.execute(f"GRANT SELECT ON {on} TO %s@%s", ("pd_ann", OTHER_HOST))
            cur.execute(f"REVOKE ALL PRIVILEGES ON {on} FROM 'pd_ann'@'%'")

    try:
        _, applied = reconcile(
            backend,
            world.model,
            Scope.everything(),
            retries=0,
            expect=ann_revoked_meanwhile_but_held_at_another_host,
        )
        assert applied  # 'pd_ann'@'%' holds none of it: done
        with admin(world.server) as cur:  # the other account's row was left alone by the re-read
            cur.execute("SHOW GRANTS FOR %s@%s", ("pd_ann", OTHER_HOST))
            assert any("SELECT" in str(r[0]) for r in cur.fetchall())
    finally:
        with admin(world.server) as cur:
            cur.execute("DROP USER IF EXISTS %s@%s", ("pd_ann", OTHER_HOST))


@pytest.mark.parametrize(("grant", "row"), [("table c.crm.orders", TABLE_ROW), ("schema c.crm", DB_ROW)])
def test_a_no_such_grant_answer_is_reported_when_the_account_asked_about_still_holds_it(
    world: World, backend: MySQLBackend, grant: str, row: str
) -> None:
    """Both ann's: 'pd_ann'@'%' dropped and its row written back by hand (the ``REVOKE`` answers
    1141 while the row stays), and 'pd_ann' at another host holding the same. The row at '%' is
    reported, never counted done; the other host's is not the one named."""
    _readers(world, backend, grant, ("ann", "bob"))
    on = "`crm`.`orders`" if grant.startswith("table") else "`crm`.*"

    def both(plan: Plan) -> None:
        with admin(world.server) as cur:
            cur.execute("CREATE USER %s@%s", ("pd_ann", OTHER_HOST))
            cur.execute(f"GRANT SELECT ON {on} TO %s@%s", ("pd_ann", OTHER_HOST))
            cur.execute("DROP USER 'pd_ann'@'%'")
            cur.execute(row)
            cur.execute("FLUSH PRIVILEGES")

    try:
        with pytest.raises(PermanentBackendError) as refused:
            reconcile(backend, world.model, Scope.everything(), retries=0, expect=both)
        message = str(refused.value)
        assert "answered no such grant (1141) but the server still holds it" in message, message
        assert "(host as read: '%')" in message, message
        assert OTHER_HOST not in message, message
        assert not any("pd_bob" in str(f) for f in held(backend))
    finally:
        with admin(world.server) as cur:
            cur.execute("DROP USER IF EXISTS %s@%s", ("pd_ann", OTHER_HOST))
            cur.execute("DELETE FROM mysql.tables_priv WHERE User = 'pd_ann'")
            cur.execute("DELETE FROM mysql.db WHERE User = 'pd_ann'")
            cur.execute("FLUSH PRIVILEGES")
            cur.execute("CREATE USER IF NOT EXISTS 'pd_ann'@'%'")
