"""CREATE TABLE as the engines ask Ranger: ``create`` on the new table's resource.

Ranger's Hive plugin (``RangerHiveAuthorizer``: CREATETABLE, CREATETABLE_AS_SELECT and
CREATEVIEW on the output TABLE_OR_VIEW object) and Kyuubi's Spark AuthZ extension (the
CreateTable family of its command spec, ``AccessType`` CREATE, ``AccessResource`` of type
TABLE) both ask ``create`` on ``database=d, table=<new table>`` with no column, and ask the
database object nothing. Ranger 2.9's own engine decides here, after a sync, exactly as the
evaluator decides ``create_table`` (a replace on a registered table: ``create_table`` and
``drop_table``)."""

from __future__ import annotations

import pytest
from pushdown_lab.ranger_ground_truth import allows
from pushdown_lab.ranger_standin import Standin

from pushdown.decide.evaluator import Evaluator
from pushdown.model.securables import ObjectRef, SecurableType
from pushdown.reconcile.scope import Scope
from pushdown.reconcile.sync import reconcile
from tests.builders import Builder

from .probe import probe
from .world import backend_for, sales

pytestmark = pytest.mark.ranger
ALL = Scope.everything()
USERS = ("alice", "bob", "carol", "dave")
NEW = ("fresh", "orders_copy")


def world() -> Builder:
    return (
        sales()
        .users("dave")
        .schema("sales.ops")
        .table("sales.ops.jobs")
        .role("maker", users=["carol", "dave"])
        .allow("maker", "schema sales.crm", "USE_SCHEMA", "CREATE_TABLE")
        .allow("maker", "catalog sales", "USE_CATALOG")
        .role("stopped", users=["dave"])
        .deny("stopped", "catalog sales", "CREATE_TABLE")
        .owner("table sales.crm.leads", "carol")
    )


def asked_as_the_engines_ask(b: Builder, standin: Standin) -> tuple[list[bool], list[bool]]:
    """(Ranger's answers, the evaluator's) to ``create`` on a new table of every database."""
    model = b.model
    evaluator = Evaluator(model)
    asks, want = [], []
    for user in USERS:
        groups = sorted(model.user_groups.get(user, ()))
        for d in ("crm", "ops"):
            for name in NEW:
                table = ObjectRef(SecurableType.TABLE, ("sales", d, name))
                asks.append(("hive", {"database": d, "table": name}, "create", user, groups))
                want.append(evaluator.authorize(user, "create_table", table, explain=False).allowed)
    return allows(standin, asks), want


def test_create_on_a_new_table_is_allowed_exactly_when_the_evaluator_allows_create_table(
    ranger_standin: Standin,
) -> None:
    b = world()
    backend = backend_for(ranger_standin)
    reconcile(backend, b.model, ALL)
    got, want = asked_as_the_engines_ask(b, ranger_standin)
    assert got == want
    assert any(want) and not all(want)  # carol may create in crm; dave (denied) and ops nobody
    # the whole estate the engines ask on, existing tables (a replace) included
    found = probe(ranger_standin, b.model, "sales", USERS)
    assert found.mismatches == [], found.mismatches
    # the grant goes: the next sync takes the create away
    b.revoke("maker", "schema sales.crm", ["CREATE_TABLE"])
    reconcile(backend, b.model, ALL)
    got, want = asked_as_the_engines_ask(b, ranger_standin)
    assert got == want and not any(want)


def test_create_on_a_registered_table_goes_only_to_who_may_also_drop_it(ranger_standin: Standin) -> None:
    """``create`` on an existing table is Spark's REPLACE TABLE (and CREATE OR REPLACE VIEW):
    carol owns leads (may drop it), not orders."""
    b = world()
    reconcile(backend_for(ranger_standin), b.model, ALL)
    on = [("hive", {"database": "crm", "table": t}, "create", "carol", []) for t in ("leads", "orders")]
    assert allows(ranger_standin, on) == [True, False]
    # and nobody creates in crm by the database alone (no engine asks it; nothing is written there)
    assert allows(ranger_standin, [("hive", {"database": "crm"}, "create", "carol", [])]) == [False]
