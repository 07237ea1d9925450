"""A server that folds names (``lower_case_table_names = 1``): ``Secret`` in the model and
``secret`` on the server are one table there. Whatever the model says about a name with
capitals gets nothing on the server (narrower, with a note), like the Hive backend."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from pushdown_lab.mariadb import LocalMariaDB

from pushdown.model import changes as ch
from pushdown.model.privileges import Condition
from pushdown.model.securables import ObjectRef
from pushdown.reconcile import planner
from pushdown.reconcile.scope import Scope, scope_of
from pushdown.reconcile.sync import reconcile
from pushdown_mysql.backend import MySQLBackend

from .world import World, admin, backend_for, do, held

pytestmark = pytest.mark.mariadb


@pytest.fixture
def fworld(folding: LocalMariaDB) -> Iterator[World]:
    w = World(folding)
    yield w
    w.cleanup()


@pytest.fixture
def fbackend(folding: LocalMariaDB) -> Iterator[MySQLBackend]:
    b = backend_for(folding)
    yield b
    b.close()


def reader(world: World) -> None:
    world.user("ann")
    world.schema("crm")
    world.table("crm", "orders")
    world.role(
        "reader",
        [
            ("catalog c", "USE_CATALOG", "ALLOW"),
            ("catalog c", "USE_SCHEMA", "ALLOW"),
            ("schema c.crm", "SELECT_TABLE", "ALLOW"),
        ],
        to=["ann"],
    )


def test_m2_the_setting_is_read_every_sync(fworld: World, fbackend: MySQLBackend) -> None:
    reader(fworld)
    snapshot = fbackend.read(fworld.model, Scope.everything().resolve(fworld.model))
    assert snapshot.server.fold == 1  # type: ignore[attr-defined]


@pytest.mark.parametrize("registered", [True, False])
def test_m2_a_capitalised_deny_reaches_the_lower_case_table(
    fworld: World, fbackend: MySQLBackend, registered: bool
) -> None:
    """DENY on ``c.crm.Secret``; the server holds ``secret`` (it folded ``CREATE TABLE Secret``).
    The evaluator sees two tables; the server one: ann must not read it."""
    reader(fworld)
    with admin(fworld.server) as cur:
        cur.execute("CREATE TABLE `crm`.`Secret` (id INT)")  # stored as `secret`
    secret = ObjectRef.of("table", ("c", "crm", "Secret"))
    if registered:
        do(fworld.model, ch.create_object(fworld.model, secret))
    reconcile(fbackend, fworld.model, Scope.everything())
    events = ch.grant_privileges(fworld.model, "reader", secret, ["SELECT_TABLE"], Condition.DENY)
    do(fworld.model, events)
    plan, _ = reconcile(fbackend, fworld.model, Scope.union([scope_of(e) for e in events]))
    now = {str(f) for f in held(fbackend)}
    assert not any("`crm`.* TO" in f or "`secret`" in f for f in now), now
    assert "SELECT ON `crm`.`orders` TO 'pd_ann'@'%'" in now
    assert any("c.crm.Secret has capitals" in n and "narrower" in n for n in plan.notes), plan.notes
    assert planner.plan(fbackend, fworld.model, Scope.everything()).empty
    with fworld.server.connect("pd_ann", "user-secret") as conn, conn.cursor() as cur:
        with pytest.raises(Exception, match="1142"):
            cur.execute("SELECT * FROM `crm`.`Secret`")
        cur.execute("SELECT * FROM `crm`.`orders`")


def test_m2_a_capitalised_schema_blocks_its_database(fworld: World, fbackend: MySQLBackend) -> None:
    """A DENY on ``schema c.Crm`` (not registered): the server's ``crm`` is that schema too."""
    reader(fworld)
    reconcile(fbackend, fworld.model, Scope.everything())
    assert "SELECT ON `crm`.* TO 'pd_ann'@'%'" in {str(f) for f in held(fbackend)}
    fworld.grant("reader", "schema c.Crm", "SELECT_TABLE", "DENY")
    plan, _ = reconcile(fbackend, fworld.model, Scope.everything())
    assert not any("pd_ann" in str(f) for f in held(fbackend))
    assert any("schema c.Crm has capitals" in n for n in plan.notes), plan.notes
    assert planner.plan(fbackend, fworld.model, Scope.everything()).empty


def test_m2_a_scoped_sync_of_a_capitalised_schema_reads_the_lower_case_database(
    fworld: World, fbackend: MySQLBackend
) -> None:
    """A grant on ``schema c.Crm`` (found by the adversary): its scoped sync read the database
    ``Crm``, which this server does not hold, so ann kept ``SELECT ON crm.*`` although the
    plan said nothing is granted there."""
    reader(fworld)
    reconcile(fbackend, fworld.model, Scope.everything())
    crm = ObjectRef.of("schema", ("c", "Crm"))
    events = ch.grant_privileges(fworld.model, "reader", crm, ["USE_SCHEMA"], Condition.ALLOW)
    do(fworld.model, events)
    plan, _ = reconcile(fbackend, fworld.model, Scope.union([scope_of(e) for e in events]))
    assert not any("pd_ann" in str(f) for f in held(fbackend)), plan.render()
    assert planner.plan(fbackend, fworld.model, Scope.everything()).empty


def test_m2_a_capitalised_name_in_another_users_grant_blocks_everyone_at_once(
    fworld: World, fbackend: MySQLBackend
) -> None:
    """bob's role names ``schema c.Crm`` (found by the adversary): on this server nobody may
    be granted anything on ``crm`` from then on, yet the scoped sync looked at bob only and
    ann kept ``SELECT ON crm.*`` until the next full sync."""
    reader(fworld)
    fworld.user("bob")
    fworld.role("other", to=["bob"])
    reconcile(fbackend, fworld.model, Scope.everything())
    crm = ObjectRef.of("schema", ("c", "Crm"))
    events = ch.grant_privileges(fworld.model, "other", crm, ["USE_SCHEMA"], Condition.ALLOW)
    do(fworld.model, events)
    plan, _ = reconcile(fbackend, fworld.model, Scope.union([scope_of(e) for e in events]))
    assert not any("pd_ann" in str(f) for f in held(fbackend)), plan.render()
    assert planner.plan(fbackend, fworld.model, Scope.everything()).empty


def test_m2_a_sync_reaching_a_folded_database_through_a_lower_case_table_keeps_it_blocked(
    fworld: World, fbackend: MySQLBackend
) -> None:
    """(Found by the adversary's slow run.) The model names ``schema c.Crm``, which blocks the
    database ``crm`` on this server for everyone. A hand-made grant on ``crm.orders`` is then
    synced over that table's scope (as discovery would): the sync reached ``crm`` through
    ``c.crm.orders``, did not see ``c.Crm`` and granted ``SELECT ON crm.*`` to ann."""
    reader(fworld)
    fworld.user("bob")
    fworld.role("other", to=["bob"])
    crm = ObjectRef.of("schema", ("c", "Crm"))
    do(fworld.model, ch.grant_privileges(fworld.model, "other", crm, ["USE_SCHEMA"], Condition.ALLOW))
    reconcile(fbackend, fworld.model, Scope.everything())
    assert not any("pd_ann" in str(f) for f in held(fbackend))
    with admin(fworld.server) as cur:
        cur.execute("GRANT SELECT ON `crm`.`orders` TO 'pd_ann'@'%'")
    orders = ObjectRef.of("table", ("c", "crm", "orders"))
    plan, _ = reconcile(fbackend, fworld.model, Scope.of([orders]))
    assert not any("pd_ann" in str(f) for f in held(fbackend)), plan.render()
    assert planner.plan(fbackend, fworld.model, Scope.everything()).empty
