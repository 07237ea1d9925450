"""User names with trailing spaces, as MariaDB holds them.

Measured against the server: the grant tables store ``User`` as ``CHAR`` (trailing spaces
cut when stored) and compare it with PAD SPACE (``User IN ('pd_bob ')`` finds the row
``pd_bob``), while the server's accounts in memory compare names exactly: an account
created as ``'pd_bob '`` logs in as ``'pd_bob '`` (not ``'pd_bob'``), and a GRANT or REVOKE
naming ``'pd_bob'`` answers 1133, until ``FLUSH PRIVILEGES`` or a restart reloads it from its
row as ``pd_bob``. pushdown never names an account with trailing spaces (a model user whose
name ends in one gets nothing); an account the server holds under such a name is reported,
never counted revoked."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from pushdown.errors import PermanentBackendError
from pushdown.model import changes as ch
from pushdown.model.principals import Principal
from pushdown.reconcile.backend import Failure
from pushdown.reconcile.plan import remove
from pushdown.reconcile.scope import Scope
from pushdown.reconcile.sync import reconcile
from pushdown_mysql.backend import MySQLBackend, Step
from pushdown_mysql.facts import Account, Grant
from pushdown_mysql.statements import statements

from .world import PASSWORD, World, admin, do, held

pytestmark = pytest.mark.mariadb

PADDED = "pd_bob "


@pytest.fixture
def padded(world: World) -> Iterator[None]:
    """The account 'pd_bob ' as the server holds it in memory (its rows say ``pd_bob``)."""
    with admin(world.server) as cur:
        cur.execute("DROP USER IF EXISTS 'pd_bob'@'%'")
        cur.execute("CREATE USER %s@'%%' IDENTIFIED BY %s", (PADDED, PASSWORD))
    yield
    with admin(world.server) as cur:
        cur.execute("DELETE FROM mysql.db WHERE User = 'pd_bob'")
        cur.execute("DELETE FROM mysql.tables_priv WHERE User = 'pd_bob'")
        cur.execute("DELETE FROM mysql.global_priv WHERE User = 'pd_bob'")
        cur.execute("FLUSH PRIVILEGES")


def _reader(world: World, users: list[str]) -> None:
    world.schema("crm")
    world.table("crm", "orders")
    world.role(
        "reader",
        [
            ("catalog c", "USE_CATALOG", "ALLOW"),
            ("catalog c", "USE_SCHEMA", "ALLOW"),
            ("table c.crm.orders", "SELECT_TABLE", "ALLOW"),
        ],
        to=users,
    )


def test_a_model_user_with_a_trailing_space_gets_nothing_and_a_scoped_sync_of_it_leaves_the_other_alone(
    world: World, backend: MySQLBackend
) -> None:
    """bob and 'bob ' are two model users; the grant tables would take 'pd_bob ' for pd_bob.
    'bob ' is given nothing (its name is refused); a sync scoped to it reads (PAD SPACE) and
    changes nothing of pd_bob's."""
    world.user("bob")
    world.user("bob ", account=False)
    _reader(world, ["bob", "bob "])
    plan, applied = reconcile(backend, world.model, Scope.everything())
    assert applied
    assert [str(op) for op in plan.ops] == ["+ SELECT ON `crm`.`orders` TO 'pd_bob'@'%'"]
    assert any(n.startswith("user bob : ") and "nothing is granted" in n for n in plan.notes), plan.notes
    scoped, applied = reconcile(backend, world.model, Scope.of(principals=[Principal.user("bob ")]))
    assert not scoped.ops, scoped.ops
    assert {str(f) for f in held(backend)} == {"SELECT ON `crm`.`orders` TO 'pd_bob'@'%'"}


def test_an_account_held_under_a_padded_name_is_reported_and_the_narrowing_beside_it_applied(
    world: World, backend: MySQLBackend, padded: None
) -> None:
    """The server's account is 'pd_bob ' (its rows read as pd_bob), holding SELECT on crm; the
    model gives bob nothing and takes ann's grant away. The REVOKE naming 'pd_bob' answers 1133:
    reported (with what to do), never counted done; ann's narrowing goes through. Once the
    server reloads its accounts, the next sync revokes it."""
    world.user("ann")
    world.user("bob", account=False)
    _reader(world, ["ann"])
    reconcile(backend, world.model, Scope.everything())
    with admin(world.server) as cur:
        cur.execute("GRANT SELECT ON `crm`.* TO %s@'%%'", (PADDED,))
    do(world.model, ch.delete_role(world.model, "reader"))
    with pytest.raises(PermanentBackendError) as refused:
        reconcile(backend, world.model, Scope.everything(), retries=0)
    message = str(refused.value)
    assert "(1133)" in message and "FLUSH PRIVILEGES" in message, message
    assert {str(f) for f in held(backend)} == {"SELECT ON `crm`.* TO 'pd_bob'@'%'"}  # ann's went
    with world.server.connect(PADDED, PASSWORD) as conn, conn.cursor() as cur:
        cur.execute("SELECT * FROM `crm`.`orders`")  # what was reported is what the login holds
    with admin(world.server) as cur:
        cur.execute("FLUSH PRIVILEGES")  # the account is pd_bob from now on
    _, applied = reconcile(backend, world.model, Scope.everything(), retries=0)
    assert applied and not held(backend)


def test_a_no_such_grant_answer_for_a_padded_name_counts_the_row_the_tables_give_it(
    world: World, backend: MySQLBackend, padded: None
) -> None:
    """A REVOKE naming 'pd_bob ' answers 1147 (the account in memory holds nothing on the table)
    while the grant tables hold SELECT on it for pd_bob (written by hand), the row the account
    takes on its next reload. The re-read finds it (PAD SPACE) and must count it as still held
    (a database-level REVOKE, by contrast, finds that row in the table and removes it)."""
    world.schema("crm")
    world.table("crm", "orders")
    with admin(world.server) as cur:
        cur.execute(
            "INSERT INTO mysql.tables_priv (Host, Db, User, Table_name, Grantor, Table_priv) "
            "VALUES ('%', 'crm', 'pd_bob', 'orders', 'root@localhost', 'Select')"
        )
    fact = Grant(Account(PADDED, "%"), "crm", "orders", "SELECT")
    (statement,) = statements([remove(fact)])
    snap = backend.read(world.model, Scope.everything().resolve(world.model))
    failures: list[Failure] = []
    done = backend._run(statement, Step(0, 1, snap.server), failures)
    assert done == 0, "counted done while the server's tables still hold it"
    assert len(failures) == 1 and "answered no such grant (1147) but the server still holds it" in str(
        failures[0]
    ), failures
    with admin(world.server) as cur:
        cur.execute("SELECT COUNT(*) FROM mysql.tables_priv WHERE User = 'pd_bob'")
        assert cur.fetchone()[0] == 1  # the row stays: reporting it was right
