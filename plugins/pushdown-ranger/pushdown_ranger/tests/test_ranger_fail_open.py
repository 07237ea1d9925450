"""Fail-open paths of the compile (issue 16: R1, R2, R3, R7, reserved and colliding names).

Each test plays its scenario against the stand-in, syncs scoped to the change and then
fully, and asks the stand-in's engine about every (user, access, resource) the model
names: never wider than the evaluator.
"""

from __future__ import annotations

from typing import Any

import pytest
from pushdown_lab.ranger_standin import Standin

from pushdown.model import changes as ch
from pushdown.model import events as ev
from pushdown.model.privileges import Condition
from pushdown.model.securables import ObjectRef
from pushdown.reconcile import planner
from pushdown.reconcile.scope import Scope, scope_of
from pushdown.reconcile.sync import reconcile
from pushdown_ranger.compile.desired import RangerNaming, compile_desired
from pushdown_ranger.facts import PolicyFact, RoleFact
from tests.builders import Builder

from .probe import Probe, probe
from .world import backend_for, sales

pytestmark = pytest.mark.ranger
ALL = Scope.everything()


def grant(b: Builder, role: str, obj: str, privilege: str, condition: Condition) -> list[Any]:
    return ch.grant_privileges(b.model, role, ObjectRef.parse(obj), [privilege], condition)


def scoped_then_full(standin: Standin, b: Builder, events: list[Any], **settings: Any) -> list[Probe]:
    """Sync ``b``'s model, then apply ``events`` and sync their scope, then everything:
    the probes after the scoped and after the full sync."""
    backend = backend_for(standin, **{k: v for k, v in settings.items() if k != "probe"})
    reconcile(backend, b.model, ALL)
    scope = Scope.nothing()
    for event in events:
        b.model.apply(event)
        scope = scope | scope_of(event)
    out = []
    for where in (scope, ALL):
        reconcile(backend, b.model, where)
        out.append(_probe(standin, b, **settings))
    assert planner.plan(backend, b.model, ALL).empty
    return out


def _probe(standin: Standin, b: Builder, **kw: Any) -> Probe:
    catalogs = sorted(o.names[0] for o in b.model.objects if o.type.value == "catalog")
    total = Probe()
    users = (*sorted(b.model.users), "stranger")
    for catalog in catalogs:
        got = probe(standin, b.model, catalog, users, **kw.get("probe", {}))
        total.checks += got.checks
        total.wider += got.wider
        total.narrower += got.narrower
    return total


def test_r1_a_deny_on_an_unregistered_table_is_a_deny_item(ranger_standin: Standin) -> None:
    b = sales()  # reader: SELECT on every table of catalog sales
    events = grant(b, "reader", "table sales.crm.secret", "SELECT_TABLE", Condition.DENY)
    for result in scoped_then_full(ranger_standin, b, events):
        assert result.checks and result.wider == [], result.wider[:3]
        assert result.narrower == []


def test_r1_an_owner_and_an_allow_on_unregistered_objects_are_pushed(ranger_standin: Standin) -> None:
    b = sales().role("writer", users=["carol"]).allow("writer", "catalog sales", "USE_CATALOG")
    # the changes refuse an owner on an unregistered object; a stored model may still hold one
    events: list[Any] = [ev.OwnerSet(ObjectRef.parse("table sales.crm.later"), "carol", None)]
    events += grant(b, "writer", "schema sales.fresh", "USE_SCHEMA", Condition.ALLOW)
    for result in scoped_then_full(ranger_standin, b, events):
        assert result.wider == [] and result.narrower == [], (result.wider + result.narrower)[:3]


def nested(deny_on: str = "fileset sales.crm.pii") -> Builder:
    return (
        sales()
        .create("fileset sales.crm.raw", properties={"location": "hdfs://nn:8020/lake/raw/"})
        .create("fileset sales.crm.pii", properties={"location": "/lake/raw/pii"})
        .allow("reader", "catalog sales", "READ_FILESET")
    )


def test_r2_a_deny_on_a_nested_fileset_beats_the_recursive_allow_of_its_parent(
    ranger_standin: Standin,
) -> None:
    b = nested()
    events = grant(b, "reader", "fileset sales.crm.pii", "READ_FILESET", Condition.DENY)
    for result in scoped_then_full(ranger_standin, b, events):
        assert result.checks and result.wider == [], result.wider[:3]
        assert result.narrower == []


def test_r2_without_deny_items_the_parent_location_takes_the_narrower_side() -> None:
    model = nested().deny("reader", "fileset sales.crm.pii", "READ_FILESET").model
    desired = compile_desired(model, ["sales"], RangerNaming(), {"hive": True, "hdfs": False})
    hdfs = {f.resources: f for f in desired.facts if isinstance(f, PolicyFact) and f.service == "hdfs"}
    assert not hdfs.get((("path", ("/lake/raw",), True),), PolicyFact("hdfs", ())).allow
    assert any("/lake/raw/pii" in n and "narrower" in n for n in desired.notes)


@pytest.mark.parametrize("other", ["events", "EVENTS"])
def test_r3_one_topic_in_two_catalogs_gets_what_both_allow(ranger_standin: Standin, other: str) -> None:
    b = (
        sales()
        .catalog("ops", backend="rg")
        .schema("ops.s")
        .create("topic sales.crm.events")
        .create(f"topic ops.s.{other}")
        .role("ops", users=["carol"])
        .allow("ops", "catalog ops", "USE_CATALOG", "USE_SCHEMA")
    )
    events = grant(b, "reader", "catalog sales", "CONSUME_TOPIC", Condition.ALLOW)
    events += grant(b, "ops", "catalog ops", "CONSUME_TOPIC", Condition.ALLOW)
    for result in scoped_then_full(ranger_standin, b, events):
        assert result.checks and result.wider == [], result.wider[:3]


def test_r7_a_deny_through_a_group_holds_whatever_groups_the_host_resolves(ranger_standin: Standin) -> None:
    b = Builder().users("alice", "bob").group("analysts", "alice").catalog("sales", backend="rg")
    b.schema("sales.crm").table("sales.crm.orders").table("sales.crm.leads")
    b.role("direct", users=["alice", "bob"])  # the ALLOW reaches alice directly
    b.allow("direct", "catalog sales", "USE_CATALOG", "USE_SCHEMA", "SELECT_TABLE")
    b.role("blocker", groups=["analysts"])  # the DENY through a group (alice, in the model)
    events = grant(b, "blocker", "table sales.crm.orders", "SELECT_TABLE", Condition.DENY)
    host = {"probe": {"groups_of": lambda user: []}}  # the host knows no groups at all
    for result in scoped_then_full(ranger_standin, b, events, **host):
        assert result.checks and result.wider == [], result.wider[:3]


def test_r7_an_allow_through_a_group_reaches_only_the_models_members(ranger_standin: Standin) -> None:
    b = sales()  # reader is held by group analysts (alice) and by bob
    events = ch.add_user(b.model, "dave")
    host = {"probe": {"groups_of": lambda user: ["analysts"]}}  # the host puts everybody in analysts
    for result in scoped_then_full(ranger_standin, b, events, **host):
        assert result.checks and result.wider == [], result.wider[:3]


def test_users_one_ranger_name_but_for_case_are_refused(ranger_standin: Standin) -> None:
    b = sales().users("Bob").role("blocker", users=["Bob"])
    events = grant(b, "blocker", "catalog sales", "USE_CATALOG", Condition.DENY)
    lower = {"map_principal": lambda p: p.name.lower(), "probe": {"mapped": str.lower}}
    for result in scoped_then_full(ranger_standin, b, events, **lower):
        assert result.checks and result.wider == [], result.wider[:3]


def test_a_table_named_with_rangers_user_token_is_not_a_resource(ranger_standin: Standin) -> None:
    b = sales().table("sales.crm.carol").table("sales.crm.{USER}").role("own", users=["carol"])
    b.allow("own", "catalog sales", "USE_CATALOG", "USE_SCHEMA")
    events = grant(b, "own", "table sales.crm.{USER}", "SELECT_TABLE", Condition.ALLOW)
    for result in scoped_then_full(ranger_standin, b, events):
        assert result.checks and result.wider == [], result.wider[:3]


def test_reserved_and_colliding_principal_names_are_refused_with_a_note() -> None:
    model = (
        sales()
        .users("{OWNER}")
        .role("Admin", users=["{OWNER}"])
        .role("admin", users=["carol"])
        .allow("Admin", "catalog sales", "USE_CATALOG")
        .allow("admin", "catalog sales", "USE_CATALOG")
        .group("public", "carol")
        .grant_role("reader", groups=["public"])
        .model
    )
    desired = compile_desired(model, ["sales"], RangerNaming(), {"hive": True})
    roles = {f.name: f for f in desired.facts if isinstance(f, RoleFact)}
    named = {m for f in desired.facts if isinstance(f, RoleFact) for m in f.users | f.groups}
    assert "pd_Admin" not in roles and "pd_admin" not in roles and "{OWNER}" not in named
    assert roles["pd_reader"] == RoleFact("pd_reader", frozenset({"alice", "bob", "carol"}))
    assert any("{OWNER}" in n for n in desired.notes) and any("Admin, admin" in n for n in desired.notes)


def test_a_deny_on_a_case_twin_schema_reaches_its_twin_in_the_scoped_sync(ranger_standin: Standin) -> None:
    b = sales()  # database crm: every table readable by reader
    events = grant(b, "reader", "schema sales.CRM", "SELECT_TABLE", Condition.DENY)  # unregistered twin
    for result in scoped_then_full(ranger_standin, b, events):
        assert result.checks and result.wider == [], result.wider[:3]


def test_a_fileset_on_another_file_system_is_no_hdfs_path() -> None:
    model = (
        sales()
        .create("fileset sales.crm.cloud", properties={"location": "s3a://bucket/lake"})
        .allow("reader", "catalog sales", "READ_FILESET")
        .model
    )
    desired = compile_desired(model, ["sales"], RangerNaming(), {"hive": True, "hdfs": True})
    assert not [f for f in desired.facts if isinstance(f, PolicyFact) and f.service == "hdfs"]
    assert any("cloud" in n and "location" in n for n in desired.notes)


def test_a_case_twin_of_a_principal_two_users_share_is_refused(ranger_standin: Standin) -> None:
    # alice and bob map to Ranger user "x", carol to "X": one user to Ranger's user store
    names = {"alice": "x", "bob": "x", "carol": "X"}
    b = sales().role("all", users=["alice", "bob", "carol"]).allow("all", "catalog sales", "USE_CATALOG")
    backend = backend_for(ranger_standin, map_principal=lambda p: names.get(p.name, p.name))
    plan, _ = reconcile(backend, b.model, ALL)
    members = {m["name"] for r in ranger_standin.store.list_roles({}) for m in r["users"]}
    assert not members & {"x", "X"}
    assert any("alice" in n and "carol" in n for n in plan.notes)
