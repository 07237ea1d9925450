"""The Hive backend against the real metastore: apply, read back with
``get_privilege_set``, compare with the evaluator; an empty plan after apply; owner
grants by other hands tolerated; a one-table change reads one table; a metastore
killed in the middle of an apply."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from pushdown.errors import TemporaryBackendError
from pushdown.model import changes as ch
from pushdown.model.principals import Principal
from pushdown.model.securables import ObjectRef
from pushdown.reconcile import planner
from pushdown.reconcile.scope import Scope
from pushdown.reconcile.sync import reconcile
from pushdown_hive.backend import HiveBackend
from pushdown_hive.client import USER, Grant, HiveObject

from .world import World, do

pytestmark = pytest.mark.hive


@pytest.fixture
def world(hive_metastore: Any) -> Iterator[World]:
    w = World(hive_metastore)
    yield w
    w.cleanup()


@pytest.fixture
def hive(world: World) -> Iterator[HiveBackend]:
    b = world.backend()
    yield b
    b.close()


def company(w: World) -> tuple[str, str]:
    """Readers see schema sales except its secret table; dave writes orders; carol owns hr."""
    for user in ("alice", "bob", "carol", "dave"):
        w.user(user)
    do(w.model, ch.add_group(w.model, "analysts", ["alice", "bob"]))
    sales, hr = w.schema("sales"), w.schema("hr")
    for table in ("orders", "customers", "secret"):
        w.table("sales", table)
    w.table("hr", "pay")
    w.role(
        "reader",
        [
            ("catalog c", "USE_CATALOG", "ALLOW"),
            (f"schema c.{sales}", "USE_SCHEMA", "ALLOW"),
            (f"schema c.{sales}", "SELECT_TABLE", "ALLOW"),
            (f"table c.{sales}.secret", "SELECT_TABLE", "DENY"),
        ],
    )
    do(w.model, ch.grant_role(w.model, "reader", Principal.group("analysts")))
    w.role(
        "writer",
        [
            ("catalog c", "USE_CATALOG", "ALLOW"),
            (f"schema c.{sales}", "USE_SCHEMA", "ALLOW"),
            (f"table c.{sales}.orders", "MODIFY_TABLE", "ALLOW"),
            (f"schema c.{sales}", "CREATE_TABLE", "ALLOW"),
        ],
        to=["dave"],
    )
    w.role("gate", [("catalog c", "USE_CATALOG", "ALLOW")], to=["carol"])
    do(w.model, ch.set_owner(w.model, ObjectRef.parse(f"schema c.{hr}"), "carol"))
    return sales, hr


def test_apply_matches_the_evaluator_and_a_second_plan_is_empty(world: World, hive: HiveBackend) -> None:
    company(world)
    plan, applied = reconcile(hive, world.model, Scope.everything())
    assert applied and plan.adds > 0 and plan.removes == 0, [
        str(op) for op in plan.ops if op.action == "remove"
    ]
    probe = world.probe()
    assert probe.mismatches == [] and probe.checks >= 4 * 6
    assert planner.plan(hive, world.model, Scope.everything()).empty
    # a model change narrows: bob leaves the analysts, and loses what they gave him
    do(world.model, ch.remove_member(world.model, "analysts", "bob"))
    plan, _ = reconcile(hive, world.model, Scope.of(principals=[Principal.user("bob")]))
    reader = world.role_name("reader")
    assert [str(op) for op in plan.ops] == [f"- ROLE `{reader}` TO USER `bob`"]  # the analysts' role
    assert world.probe().mismatches == []


def test_owner_grants_by_other_hands_are_findings_and_stay(world: World, hive: HiveBackend) -> None:
    sales, _ = company(world)
    secret = HiveObject.of_table(sales, "secret")
    # what the metastore adds for the owner of a table Spark creates: all four, with grant option
    owner = [Grant(secret, "bob", USER, p, grantor="bob", grant_option=True) for p in ("SELECT", "INSERT")]
    world.client.grant_privileges(owner)
    plan, _ = reconcile(hive, world.model, Scope.everything())
    assert any("SELECT ON TABLE" in f and "secret" in f and "'bob'" in f for f in plan.findings)
    assert set(owner) <= set(world.client.list_privileges(secret))
    again = planner.plan(hive, world.model, Scope.everything())
    assert again.empty and again.findings  # nothing to do, but the access path is reported


def test_a_new_table_under_a_schema_allow_gets_it_from_a_one_table_sync(
    world: World, hive: HiveBackend
) -> None:
    sales, _ = company(world)
    reconcile(hive, world.model, Scope.everything())
    world.table("sales", "fresh")
    calls = hive.calls
    plan, _ = reconcile(hive, world.model, Scope.of([ObjectRef.parse(f"table c.{sales}.fresh")]))
    # the analysts' role carries it (both holders agree there), so one grant to the role
    reader = world.role_name("reader")
    assert [str(op.fact) for op in plan.ops] == [f"SELECT ON TABLE `{sales}.fresh` TO ROLE `{reader}`"]
    # databases, tables, two listings, the roles (names, members of each and the roles each
    # holds), the grant, the read-back; then the hand-made state: the admin role's holders,
    # the server's grants, the database's owner, the table's owner and columns, and its one
    # column's grants
    assert hive.calls - calls <= 6 + 1 + 3 + 3 + 5
    assert world.probe().mismatches == []


def test_metastore_killed_mid_apply(hive_metastore: Any, world: World) -> None:
    company(world)
    hive = world.backend(batch_size=2)
    real_grant = hive.metastore.grant
    sent: list[int] = []

    def grant_then_die(grants: Any, grantor: str) -> None:
        real_grant(grants, grantor)
        sent.append(len(grants))
        if len(sent) == 2:
            hive_metastore.kill()

    hive.metastore.grant = grant_then_die  # type: ignore[method-assign]
    try:
        with pytest.raises(TemporaryBackendError, match=r"did not answer while granting.*nothing is lost"):
            reconcile(hive, world.model, Scope.everything(), retries=0)
    finally:
        hive_metastore.restart()
        world.client.close()  # its connection died with the server: the next call connects again
    assert sent == [2, 2]
    hive.metastore.grant = real_grant  # type: ignore[method-assign]
    plan, applied = reconcile(hive, world.model, Scope.everything())
    assert applied and plan.removes == 0  # what went through before the crash is kept
    assert world.probe().mismatches == []
    assert planner.plan(hive, world.model, Scope.everything()).empty
    hive.close()
