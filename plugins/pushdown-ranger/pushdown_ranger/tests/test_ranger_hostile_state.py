"""Hand-made state, a changed service option, security zones, colliding names and errors
mid-apply: each a path where Ranger enforced more than the model (issue 16), against the
stand-in. After each, the stand-in's engine is never wider than the evaluator."""

from __future__ import annotations

from typing import Any

import pytest
from pushdown_lab.ranger_standin import Standin

from pushdown.errors import PermanentBackendError, TemporaryBackendError
from pushdown.model import changes as ch
from pushdown.model.principals import Principal, PrincipalKind
from pushdown.model.privileges import Condition
from pushdown.model.securables import ObjectRef
from pushdown.reconcile import planner
from pushdown.reconcile.plan import Op
from pushdown.reconcile.scope import Scope, scope_of
from pushdown.reconcile.sync import reconcile
from pushdown_ranger.writer import Writer
from tests.builders import Builder

from .probe import probe
from .world import backend_for, sales

pytestmark = pytest.mark.ranger
ALL = Scope.everything()
USERS = ("alice", "bob", "carol", "stranger")
ORDERS = {"database": {"values": ["crm"]}, "table": {"values": ["orders"]}, "column": {"values": ["*"]}}


def world() -> Builder:
    """bob and alice (group analysts) read every table of crm; reader's DENY on orders."""
    return (
        sales()
        .schema("sales.ops")
        .table("sales.ops.runs")
        .deny("reader", "table sales.crm.orders", "SELECT_TABLE")
    )


def wider(standin: Standin, b: Builder, **kw: Any) -> list[str]:
    return probe(standin, b.model, "sales", USERS, **kw).wider


def hand_policy(standin: Standin, resources: dict[str, Any], **extra: Any) -> dict[str, Any]:
    policy = {
        "service": "hive",
        "name": "hand " + ",".join(f"{k}={v['values'][0]}" for k, v in sorted(resources.items())),
        "resources": resources,
        "policyItems": [{"users": ["zed"], "accesses": [{"type": "select", "isAllowed": True}]}],
        **extra,
    }
    return standin.store.create_policy(policy)


def deny_option(standin: Standin, on: bool) -> None:
    sdef = standin.store.service_def("hive")
    sdef.setdefault("options", {})["enableDenyAndExceptionsInPolicies"] = "true" if on else "false"
    standin.store.update_service_def("hive", sdef)


def test_r4_the_deny_option_turned_off_while_running_is_read_by_the_next_scoped_sync(
    ranger_standin: Standin,
) -> None:
    b = world()
    backend = backend_for(ranger_standin)
    reconcile(backend, b.model, ALL)
    assert wider(ranger_standin, b) == []
    deny_option(ranger_standin, False)  # Ranger now ignores every deny item
    # a sync scoped to another database still removes what relied on deny items
    events = ch.grant_privileges(
        b.model, "reader", ObjectRef.parse("schema sales.ops"), ["MODIFY_TABLE"], Condition.ALLOW
    )
    for event in events:
        b.model.apply(event)
    plan, _ = reconcile(backend, b.model, Scope.union(scope_of(e) for e in events))
    assert wider(ranger_standin, b) == []
    assert any("enableDenyAndExceptionsInPolicies" in f for f in plan.findings)
    assert all(not p.get("denyPolicyItems") for p in ranger_standin.store.list_policies({}))
    deny_option(ranger_standin, True)  # and back: the wildcard returns, the DENY with it
    reconcile(backend, b.model, ALL)
    assert wider(ranger_standin, b) == [] and planner.plan(backend, b.model, ALL).empty


def test_r4_discover_sees_the_deny_option_change(ranger_standin: Standin) -> None:
    b = world()
    backend = backend_for(ranger_standin)
    reconcile(backend, b.model, ALL)
    _, seen = backend.discover(b.model, None)
    assert backend.discover(b.model, seen)[0] == Scope.nothing()
    deny_option(ranger_standin, False)
    assert backend.discover(b.model, seen)[0] == ALL


@pytest.mark.parametrize(
    "extra",
    [
        {"denyExceptions": [{"users": ["bob"], "accesses": [{"type": "select", "isAllowed": True}]}]},
        {"denyExceptions": [{"groups": ["analysts"], "accesses": [{"type": "select", "isAllowed": True}]}]},
        {"policyPriority": 1, "policyItems": [{"users": ["zed"], "accesses": [{"type": "select"}]}]},
    ],
    ids=["user", "group", "override"],
)
def test_r5_a_hand_made_policy_that_voids_deny_items_is_never_relied_on(
    ranger_standin: Standin, extra: dict[str, Any]
) -> None:
    b = world()
    backend = backend_for(ranger_standin)
    if extra.get("policyPriority"):  # an override allow on the every-table resource set
        every = {**ORDERS, "table": {"values": ["?*"]}}
        hand_policy(ranger_standin, every, **extra)
    else:
        hand_policy(ranger_standin, ORDERS, **extra)  # pushdown's DENY would be merged here
    plan, _ = reconcile(backend, b.model, ALL)
    assert wider(ranger_standin, b) == []
    assert any("database crm" in f and "no deny items" in f for f in plan.findings)
    assert planner.plan(backend, b.model, ALL).empty


def test_r5_deny_exceptions_added_after_the_merge_are_read_by_a_scoped_sync(ranger_standin: Standin) -> None:
    b = world()
    backend = backend_for(ranger_standin)
    hand = hand_policy(ranger_standin, ORDERS)
    reconcile(backend, b.model, ALL)
    held = ranger_standin.store.policy(hand["id"])
    assert held["denyPolicyItems"]  # pushdown's DENY, merged into the hand-made policy
    exempt = {"groups": ["analysts"], "accesses": [{"type": "select", "isAllowed": True}]}
    ranger_standin.store.update_policy(hand["id"], {**held, "denyExceptions": [exempt]})
    events = ch.grant_privileges(
        b.model, "reader", ObjectRef.parse("schema sales.ops"), ["MODIFY_TABLE"], Condition.ALLOW
    )
    for event in events:
        b.model.apply(event)
    reconcile(backend, b.model, Scope.union(scope_of(e) for e in events))
    assert wider(ranger_standin, b) == []


def test_c1_allow_exceptions_cutting_pushdowns_allows_are_a_finding(ranger_standin: Standin) -> None:
    b = world()
    backend = backend_for(ranger_standin)
    every = {**ORDERS, "table": {"values": ["?*"]}}
    exempt = {"users": ["bob"], "accesses": [{"type": "select", "isAllowed": True}]}
    hand_policy(ranger_standin, every, allowExceptions=[exempt])
    reconcile(backend, b.model, ALL)
    assert wider(ranger_standin, b) == []
    findings = planner.plan(backend, b.model, ALL).findings
    assert any("allow exceptions" in f and "narrower" in f for f in findings)


def test_r6_a_role_nested_by_hand_in_a_managed_role_is_removed_and_reported(ranger_standin: Standin) -> None:
    b = world()
    backend = backend_for(ranger_standin)
    reconcile(backend, b.model, ALL)
    ranger_standin.store.create_role({"name": "hand", "users": [{"name": "stranger"}]}, create_missing=True)
    rid = ranger_standin.store.role_id("pd_reader")
    role = ranger_standin.store.role(rid)
    ranger_standin.store.update_role(rid, {**role, "roles": [{"name": "hand", "isAdmin": False}]})
    assert ranger_standin.is_access_allowed(
        "hive", {"database": "crm", "table": "leads"}, "select", "stranger"
    )
    plan, _ = reconcile(backend, b.model, ALL)
    assert any("'pd_reader' has member role(s) hand" in f for f in plan.findings)
    assert ranger_standin.store.role(rid)["roles"] == []
    assert wider(ranger_standin, b) == []
    assert planner.plan(backend, b.model, ALL).empty


def test_r6_a_managed_role_nested_in_a_hand_made_role_is_reported(ranger_standin: Standin) -> None:
    b = world()
    backend = backend_for(ranger_standin)
    reconcile(backend, b.model, ALL)
    ranger_standin.store.create_role({"name": "hand", "roles": [{"name": "pd_reader"}]})
    findings = planner.plan(backend, b.model, ALL).findings
    assert any("'hand' (not pushdown's) has pushdown's role(s) pd_reader" in f for f in findings)


def test_r8_a_zone_over_a_managed_table_and_allows_inside_it_are_reported(ranger_standin: Standin) -> None:
    b = world()
    backend = backend_for(ranger_standin)
    reconcile(backend, b.model, ALL)
    zone = {"name": "z", "services": {"hive": {"resources": [{"database": ["crm"], "table": ["orders"]}]}}}
    ranger_standin.store.create_zone(zone)
    # pushdown's unzoned DENY no longer applies to orders; neither does its allow
    plan, _ = reconcile(backend, b.model, ALL)
    assert wider(ranger_standin, b) == []
    assert any("security zone 'z' holds hive:database=crm,table=orders" in f for f in plan.findings)
    zoned = {**ORDERS, "column": {"values": ["*"]}}
    ranger_standin.store.create_policy(
        {
            "service": "hive",
            "name": "in the zone",
            "zoneName": "z",
            "resources": zoned,
            "policyItems": [{"users": ["bob"], "roles": ["pd_reader"], "accesses": [{"type": "select"}]}],
        }
    )
    findings = planner.plan(backend, b.model, ALL).findings
    assert any("in security zone 'z'" in f and "user bob" in f for f in findings)
    assert any("in security zone 'z'" in f and "pd_reader" in f for f in findings)


def _collide(p: Principal) -> str:
    return "u1" if p.kind is PrincipalKind.USER and p.name in ("u1", "u3") else p.name


def test_x1_two_users_mapping_to_one_principal_get_only_what_both_may(ranger_standin: Standin) -> None:
    b = (
        Builder()
        .users("u1", "u2", "u3")
        .catalog("sales", backend="rg")
        .schema("sales.crm")
        .table("sales.crm.orders")
        .table("sales.crm.leads")
        .role("reader", users=["u1", "u2"])
        .allow("reader", "catalog sales", "USE_CATALOG", "USE_SCHEMA", "SELECT_TABLE")
        .role("both", users=["u1", "u3"])
        .allow("both", "catalog sales", "USE_CATALOG", "USE_SCHEMA", "MODIFY_TABLE")
        .deny("both", "table sales.crm.leads", "MODIFY_TABLE")
    )
    backend = backend_for(ranger_standin, map_principal=_collide)
    # scoped to u2 only: the collision is found over the whole model all the same
    reconcile(backend, b.model, Scope.of(principals=[Principal.user("u2")]))
    found = probe(
        ranger_standin, b.model, "sales", ("u1", "u2", "u3"), mapped=lambda u: _collide(Principal.user(u))
    )
    assert found.wider == []
    reconcile(backend, b.model, ALL)
    users = ("u1", "u2", "u3")
    found = probe(ranger_standin, b.model, "sales", users, mapped=lambda u: _collide(Principal.user(u)))
    assert found.wider == []
    assert any("map to one Ranger user 'u1'" in n for n in planner.plan(backend, b.model, ALL).notes)
    # what both may: modify (and so read) orders; not leads (u3's DENY), though u1 may read it
    for access in ("select", "alter"):
        assert ranger_standin.is_access_allowed("hive", {"database": "crm", "table": "orders"}, access, "u1")
        assert not ranger_standin.is_access_allowed(
            "hive", {"database": "crm", "table": "leads"}, access, "u1"
        )


def test_an_unanswered_write_never_holds_back_a_later_narrowing(
    ranger_standin: Standin, monkeypatch: pytest.MonkeyPatch
) -> None:
    b = world()
    backend = backend_for(ranger_standin, retries=0)
    reconcile(backend, b.model, ALL)
    for table in ("sales.crm.leads", "sales.ops.runs"):
        for event in ch.grant_privileges(
            b.model, "reader", ObjectRef.parse(f"table {table}"), ["SELECT_TABLE"], Condition.DENY
        ):
            b.model.apply(event)
    real = Writer.write
    calls: list[object] = []

    def first_unanswered(self: Writer, op: Op) -> None:
        calls.append(op)
        if len(calls) == 1:  # the first write of the two DENYs: no answer
            raise TemporaryBackendError("rg", "create policy: no answer (ReadTimeout) after 1 attempt(s)")
        real(self, op)

    monkeypatch.setattr(Writer, "write", first_unanswered)
    with pytest.raises(TemporaryBackendError, match="every narrowing tried"):
        reconcile(backend, b.model, ALL, retries=0)
    denied = [p for p in ranger_standin.store.list_policies({}) if p.get("denyPolicyItems")]
    assert len(denied) == 2  # orders' of before, and the DENY written after the unanswered one
    monkeypatch.setattr(Writer, "write", real)
    reconcile(backend, b.model, ALL)
    assert wider(ranger_standin, b) == []


def test_external_groups_never_decide_a_grant_or_a_deny(ranger_standin: Standin) -> None:
    """The enforcing host places carol in analysts (the model does not) and leaves alice out
    (the model does not): neither gains anything."""
    b = world().role("denied", groups=["analysts"]).deny("denied", "table sales.crm.leads", "SELECT_TABLE")
    b.grant_role("reader", users=["alice"])  # alice reads leads through reader, analysts' DENY aside
    backend = backend_for(ranger_standin)
    reconcile(backend, b.model, ALL)
    host = {"alice": [], "carol": ["analysts"]}
    found = probe(ranger_standin, b.model, "sales", USERS, groups_of=lambda u: host.get(u, []))
    assert found.wider == []


def test_a_second_policy_on_pushdowns_resources_is_never_taken_for_pushdowns(ranger_standin: Standin) -> None:
    """Ranger's resource signature tells priorities (and disabled policies) apart: a hand-made
    override policy on the every-table resources sits beside pushdown's, which stays read."""
    b = world()
    backend = backend_for(ranger_standin)
    reconcile(backend, b.model, ALL)
    every = {**ORDERS, "table": {"values": ["?*"]}}
    hand_policy(ranger_standin, every, policyPriority=1)
    for event in ch.revoke_privileges(
        b.model, "reader", ObjectRef.parse("catalog sales"), ["SELECT_TABLE"], Condition.ALLOW
    ):
        b.model.apply(event)
    reconcile(backend, b.model, ALL)
    assert wider(ranger_standin, b) == []
    assert planner.plan(backend, b.model, ALL).empty


def test_a_hand_made_allow_to_every_user_is_a_finding(ranger_standin: Standin) -> None:
    b = world()
    backend = backend_for(ranger_standin)
    items = [{"users": ["{USER}"], "accesses": [{"type": "select"}]}]
    hand_policy(
        ranger_standin,
        {"database": {"values": ["ops"]}, "table": {"values": ["r*"]}, "column": {"values": ["*"]}},
        policyItems=items,
    )
    plan, _ = reconcile(backend, b.model, ALL)
    assert any("user {USER}" in f and "outside pushdown" in f for f in plan.findings)


def test_implied_grants_changed_underneath_never_widen(ranger_standin: Standin) -> None:
    """The service definition is edited while the daemon runs: select now implies update."""
    b = world()
    backend = backend_for(ranger_standin)
    reconcile(backend, b.model, ALL)
    sdef = ranger_standin.store.service_def("hive")
    for access in sdef["accessTypes"]:
        if access["name"] == "select":
            access["impliedGrants"] = ["update"]
    ranger_standin.store.update_service_def("hive", sdef)
    # a sync scoped to another database all the same
    events = ch.grant_privileges(
        b.model, "reader", ObjectRef.parse("schema sales.ops"), ["CREATE_TABLE"], Condition.ALLOW
    )
    for event in events:
        b.model.apply(event)
    plan, _ = reconcile(backend, b.model, Scope.union(scope_of(e) for e in events))
    assert wider(ranger_standin, b) == []
    assert any("impliedGrants" in n for n in plan.notes)


def test_pushdowns_items_never_go_into_a_policy_with_additional_resources(ranger_standin: Standin) -> None:
    """A hand-made policy on orders that also names leads (``additionalResources``): an item
    merged there would reach leads too."""
    b = world().users("dan").role("one", users=["dan"])
    b.allow("one", "catalog sales", "USE_CATALOG").allow("one", "schema sales.crm", "USE_SCHEMA")
    b.allow("one", "table sales.crm.orders", "SELECT_TABLE")
    leads = {"database": {"values": ["crm"]}, "table": {"values": ["leads"]}, "column": {"values": ["*"]}}
    backend = backend_for(ranger_standin)
    hand_policy(ranger_standin, ORDERS, additionalResources=[leads])
    reconcile(backend, b.model, ALL)
    assert probe(ranger_standin, b.model, "sales", (*USERS, "dan")).wider == []
    assert planner.plan(backend, b.model, ALL).empty


def test_a_hand_made_allow_to_owners_is_a_finding(ranger_standin: Standin) -> None:
    b = world()
    backend = backend_for(ranger_standin)
    items = [{"users": ["{OWNER}"], "accesses": [{"type": "drop"}]}]
    resources = {"database": {"values": ["ops"]}, "table": {"values": ["*"]}, "column": {"values": ["*"]}}
    hand_policy(ranger_standin, resources, policyItems=items)
    plan, _ = reconcile(backend, b.model, ALL)
    assert any("user {OWNER}" in f and "outside pushdown" in f for f in plan.findings)


@pytest.mark.parametrize("call", ["zones", "service_defs"])
def test_what_cannot_be_read_never_holds_back_a_narrowing(
    ranger_standin: Standin, monkeypatch: pytest.MonkeyPatch, call: str
) -> None:
    """Security zones or service definitions refused to pushdown's Ranger user (a 403): the
    sync still narrows, on the narrower side, and says what it could not read."""
    b = world()
    backend = backend_for(ranger_standin)
    reconcile(backend, b.model, ALL)

    def refused() -> None:
        raise PermanentBackendError("rg", f"Ranger refused list {call} (HTTP 403): forbidden")

    monkeypatch.setattr(backend.api, call, refused)
    for event in ch.revoke_privileges(
        b.model, "reader", ObjectRef.parse("catalog sales"), ["SELECT_TABLE"], Condition.ALLOW
    ):
        b.model.apply(event)
    for event in ch.add_user(b.model, "dan"):
        b.model.apply(event)
    # writes elsewhere: the next read reads everything (a role, and a policy saved again as it
    # is: its service's policy version moves, so the service definitions are asked again)
    ranger_standin.store.create_role({"name": "other"})
    policy = ranger_standin.store.list_policies({})[0]
    ranger_standin.store.update_policy(policy["id"], policy)
    plan, _ = reconcile(backend, b.model, ALL)
    assert wider(ranger_standin, b) == []
    assert any("could not be read" in f for f in plan.findings)
    # a refused read is not kept as an answer: the next sync asks again, and says so again
    assert any("could not be read" in f for f in planner.plan(backend, b.model, ALL).findings)


def test_pushdowns_policy_widened_by_hand_is_put_right_by_a_scoped_sync(ranger_standin: Standin) -> None:
    """Somebody edits pushdown's every-table policy of crm to reach every database: the next
    sync, scoped to another database, takes pushdown's items out of it all the same."""
    b = (
        Builder()
        .users("alice", "bob", "carol")
        .catalog("sales", backend="rg")
        .schema("sales.crm")
        .table("sales.crm.orders")
        .schema("sales.ops")
        .table("sales.ops.runs")
        .role("reader", users=["bob"])
        .allow("reader", "catalog sales", "USE_CATALOG", "USE_SCHEMA")
        .allow("reader", "schema sales.crm", "SELECT_TABLE")
    )
    backend = backend_for(ranger_standin)
    reconcile(backend, b.model, ALL)
    every = next(
        p
        for p in ranger_standin.store.list_policies({})
        if p["resources"].get("table", {}).get("values") == ["?*"]
    )
    resources = {**every["resources"], "database": {"values": ["*"]}}
    ranger_standin.store.update_policy(every["id"], {**every, "resources": resources})
    events = ch.grant_privileges(
        b.model, "reader", ObjectRef.parse("schema sales.ops"), ["CREATE_TABLE"], Condition.ALLOW
    )
    for event in events:
        b.model.apply(event)
    reconcile(backend, b.model, Scope.union(scope_of(e) for e in events))
    assert wider(ranger_standin, b) == []


def test_a_hand_made_item_naming_a_managed_role_is_taken_out_by_a_scoped_sync(
    ranger_standin: Standin,
) -> None:
    """A hand-made policy on ``crm.o*`` allows pushdown's reader role to drop: pushdown's
    roles are pushdown's, so the next sync, scoped elsewhere, takes the item out."""
    b = world()
    backend = backend_for(ranger_standin)
    reconcile(backend, b.model, ALL)
    resources = {"database": {"values": ["crm"]}, "table": {"values": ["o*"]}, "column": {"values": ["*"]}}
    items = [{"roles": ["pd_reader"], "accesses": [{"type": "drop"}]}]
    hand_policy(ranger_standin, resources, policyItems=items)
    events = ch.grant_privileges(
        b.model, "reader", ObjectRef.parse("schema sales.ops"), ["CREATE_TABLE"], Condition.ALLOW
    )
    for event in events:
        b.model.apply(event)
    reconcile(backend, b.model, Scope.union(scope_of(e) for e in events))
    assert wider(ranger_standin, b) == []
