"""Two catalogs on one Ranger backend share one Hive service (one metastore): a request on a
Hive database may come through either catalog, the one registering the database or the
other, where the database is a schema nobody registered. A catalog-wide DENY of either
catalog bars the user there, so it must reach every database of the service (issue 23, N8),
not only those its own catalog registers. Ranger 2.9's own engine decides."""

from __future__ import annotations

import pytest
from pushdown_lab.ranger_ground_truth import allows
from pushdown_lab.ranger_standin import Standin

from pushdown.decide.evaluator import Evaluator
from pushdown.model import changes as ch
from pushdown.model.securables import ObjectRef
from pushdown.reconcile import planner
from pushdown.reconcile.scope import Scope, scope_of
from pushdown.reconcile.sync import reconcile
from tests.builders import Builder

from .probe import probe
from .world import backend_for, sales

pytestmark = pytest.mark.ranger
ALL = Scope.everything()
USERS = ("alice", "bob", "carol")


def world() -> Builder:
    """sales registers crm (orders, leads), aaa registers other (t); reader (bob, alice) reads
    both catalogs; bob alone is DENIED every table of catalog aaa."""
    b = sales().catalog("aaa", backend="rg").schema("aaa.other").table("aaa.other.t")
    b.allow("reader", "catalog aaa", "USE_CATALOG", "USE_SCHEMA", "SELECT_TABLE")
    return b.role("blocked", users=["bob"]).deny("blocked", "catalog aaa", "SELECT_TABLE")


def select(standin: Standin, database: str, table: str, user: str, groups: list[str]) -> bool:
    return allows(standin, [("hive", {"database": database, "table": table}, "select", user, groups)])[0]


def test_a_catalog_wide_deny_reaches_a_database_only_the_other_catalog_registers(
    ranger_standin: Standin,
) -> None:
    b = world()
    backend = backend_for(ranger_standin)
    reconcile(backend, b.model, ALL)
    evaluator = Evaluator(b.model)
    # through aaa, crm is a schema nobody registered: aaa's DENY bars bob there
    route = ObjectRef.parse("table aaa.crm.orders")
    assert not evaluator.authorize("bob", "load_table", route, explain=False).allowed
    assert evaluator.authorize("alice", "load_table", route, explain=False).allowed
    assert not select(ranger_standin, "crm", "orders", "bob", [])
    assert not select(ranger_standin, "crm", "later", "bob", [])  # a table nobody created yet
    assert select(ranger_standin, "crm", "orders", "alice", ["analysts"])  # nothing denies her
    assert not select(ranger_standin, "other", "t", "bob", [])
    for catalog in ("sales", "aaa"):
        assert probe(ranger_standin, b.model, catalog, USERS).wider == []
    assert planner.plan(backend, b.model, ALL).empty
    # a scoped sync of the database only sales registers keeps aaa's deny items there
    events = ch.create_object(b.model, ObjectRef.parse("table sales.crm.more"))
    for event in events:
        b.model.apply(event)
    reconcile(backend, b.model, Scope.union(scope_of(e) for e in events))
    assert not select(ranger_standin, "crm", "more", "bob", [])
    assert not select(ranger_standin, "crm", "orders", "bob", [])
    assert planner.plan(backend, b.model, ALL).empty


def test_the_deny_of_the_catalog_holding_the_service_reaches_the_other_catalogs_database(
    ranger_standin: Standin,
) -> None:
    """The same the other way round: aaa (first by name) is the catalog Hive's policies are
    compiled for; sales' catalog-wide DENY reaches other, which only aaa registers."""
    b = sales().catalog("aaa", backend="rg").schema("aaa.other").table("aaa.other.t")
    b.allow("reader", "catalog aaa", "USE_CATALOG", "USE_SCHEMA", "SELECT_TABLE")
    b.role("blocked", users=["bob"]).deny("blocked", "catalog sales", "SELECT_TABLE")
    reconcile(backend_for(ranger_standin), b.model, ALL)
    assert not select(ranger_standin, "other", "t", "bob", [])
    assert not select(ranger_standin, "crm", "orders", "bob", [])
    assert select(ranger_standin, "other", "t", "alice", ["analysts"])
