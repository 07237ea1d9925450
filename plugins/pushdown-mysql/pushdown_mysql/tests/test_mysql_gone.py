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


@pytest.mark.parametrize(
    ("grant", "row"),
    [
        (
            "table c.crm.orders",
            "INSERT INTO mysql.tables_priv (Host, Db, User, Table_name, Grantor, Table_priv) "
            "VALUES ('%', 'crm', 'pd_ann', 'orders', 'root@localhost', 'Select')",
        ),
        (
            "schema c.crm",
            "INSERT INTO mysql.db (Host, Db, User, Select_priv) VALUES ('%', 'crm', 'pd_ann', 'Y')",
        ),
    ],
)
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
