"""A scoped sync passes over every compiled fact for voided databases and voiding or
overriding policies only when a hand-made policy voids or overrides: one that appears
between syncs (after a sync that skipped the passes) is read by the next scoped sync, in
the Hive service and in the topic service alike. After each, the stand-in's engine is
never wider than the evaluator."""

from __future__ import annotations

import random
from typing import Any

import pytest
from pushdown_lab.ranger_standin import Standin

from pushdown.model import changes as ch
from pushdown.model import events as ev
from pushdown.model.principals import Principal
from pushdown.model.privileges import Condition, Privilege
from pushdown.model.securables import METALAKE, ObjectRef, SecurableType
from pushdown.model.state import Model
from pushdown.reconcile.scope import Scope, scope_of
from pushdown.reconcile.sync import reconcile
from pushdown_ranger.compile.classes import Signature, Signer
from pushdown_ranger.compile.objects import leaf_schemas
from tests.builders import Builder

from .probe import probe
from .world import backend_for, sales

pytestmark = pytest.mark.ranger
ALL = Scope.everything()
USERS = ("alice", "bob", "carol", "stranger")
TOPIC = "topic sales.crm.events"
FILESET = "fileset sales.crm.raw"


def world() -> Builder:
    """bob and alice (group analysts) read every table of crm; everybody reads every topic
    and fileset (role wide); reader is DENIED orders, the topic events and the fileset raw."""
    return (
        sales()
        .schema("sales.ops")
        .table("sales.ops.runs")
        .create(TOPIC)
        .create(FILESET, properties={"location": "/lake/raw"})
        .role("wide", users=["alice", "bob", "carol"])
        .allow("wide", "catalog sales", "USE_CATALOG", "USE_SCHEMA", "CONSUME_TOPIC", "READ_FILESET")
        .deny("reader", "table sales.crm.orders", "SELECT_TABLE")
        .deny("reader", TOPIC, "CONSUME_TOPIC")
        .deny("reader", FILESET, "READ_FILESET")
    )


def unrelated_scoped_sync(standin: Standin, b: Builder, backend: Any) -> Any:
    """A grant in another database, synced with its scope only."""
    events = ch.grant_privileges(
        b.model, "reader", ObjectRef.parse("schema sales.ops"), ["MODIFY_TABLE"], Condition.ALLOW
    )
    for event in events:
        b.model.apply(event)
    plan, _ = reconcile(backend, b.model, Scope.union(scope_of(e) for e in events))
    return plan


def held_policy(standin: Standin, service: str, resource: str, value: str) -> dict[str, Any]:
    found = [
        p
        for p in standin.store.list_policies({})
        if p.get("service") == service
        and ((p.get("resources") or {}).get(resource) or {}).get("values") == [value]
        and len(p.get("resources") or {}) == (3 if service == "hive" else 1)
    ]
    assert len(found) == 1, found
    return found[0]


LEAF = [("kafka", "topic", "events", "consume"), ("hdfs", "path", "/lake/raw", "read")]


@pytest.mark.parametrize(("service", "resource", "value", "access"), LEAF, ids=["topic", "fileset"])
@pytest.mark.parametrize("edit", ["deny-exception", "disabled"])
def test_a_topic_or_fileset_policy_voided_by_hand_after_a_sync_without_any_is_read_by_a_scoped_sync(
    ranger_standin: Standin, service: str, resource: str, value: str, access: str, edit: str
) -> None:
    b = world()
    backend = backend_for(ranger_standin)
    reconcile(backend, b.model, ALL)  # nothing hand-made: the passes are skipped
    assert probe(ranger_standin, b.model, "sales", USERS).wider == []
    held = held_policy(ranger_standin, service, resource, value)
    assert held["denyPolicyItems"] and held["policyItems"]  # reader's DENY, carol's allow
    exempt = {"groups": ["analysts"], "accesses": [{"type": access, "isAllowed": True}]}
    change = {"denyExceptions": [exempt]} if edit == "deny-exception" else {"isEnabled": False}
    ranger_standin.store.update_policy(held["id"], {**held, **change})
    unrelated_scoped_sync(ranger_standin, b, backend)
    assert probe(ranger_standin, b.model, "sales", USERS).wider == []
    # the service compiled without deny items: none relied on where they may not hold
    assert not held_policy(ranger_standin, service, resource, value)["denyPolicyItems"]


def test_a_hive_policy_voided_by_hand_after_a_sync_without_any_is_read_by_a_scoped_sync(
    ranger_standin: Standin,
) -> None:
    b = world()
    backend = backend_for(ranger_standin)
    reconcile(backend, b.model, ALL)
    held = held_policy(ranger_standin, "hive", "table", "orders")
    assert held["denyPolicyItems"]
    exempt = {"groups": ["analysts"], "accesses": [{"type": "select", "isAllowed": True}]}
    ranger_standin.store.update_policy(held["id"], {**held, "denyExceptions": [exempt]})
    plan = unrelated_scoped_sync(ranger_standin, b, backend)
    assert probe(ranger_standin, b.model, "sales", USERS).wider == []
    assert any("database crm" in f and "no deny items" in f for f in plan.findings)


def test_an_override_policy_on_every_topic_made_after_a_sync_without_any_is_read_by_a_scoped_sync(
    ranger_standin: Standin,
) -> None:
    b = world()
    backend = backend_for(ranger_standin)
    reconcile(backend, b.model, ALL)
    ranger_standin.store.create_policy(
        {
            "service": "kafka",
            "name": "hand every topic",
            "resources": {"topic": {"values": ["*"]}},
            "policyPriority": 1,
            "policyItems": [{"users": ["zed"], "accesses": [{"type": "consume", "isAllowed": True}]}],
        }
    )
    unrelated_scoped_sync(ranger_standin, b, backend)
    assert probe(ranger_standin, b.model, "sales", USERS).wider == []
    assert not held_policy(ranger_standin, "kafka", "topic", "events")["denyPolicyItems"]


# -- the grant index by object and the index of topics and filesets, against a look at all --------

_OBJECTS = [
    ObjectRef.parse(text)
    for text in (
        "catalog c",
        "catalog d",
        "schema c.s",
        "schema c.S",
        "schema c.t",
        "schema d.s",
        "table c.s.a",
        "topic c.s.b",
        "fileset c.s.f",
        "table c.S.a",
        "fileset c.t.a",
        "table c.t.b",
        "topic d.s.x",
    )
]
_SCHEMAS = [o for o in _OBJECTS if o.type is SecurableType.SCHEMA]


def _looked_grants(model: Model, schema: ObjectRef, user: str) -> Signature:
    """A user's signature in ``schema`` by a pass over each of its roles' every grant."""
    grants = frozenset(
        (g.object, g.privilege, g.condition)
        for role in model.roles_of(user)
        for g in model.roles.get(role, ())
        if g.object in schema.path or schema in g.object.path
    )
    return (user in model.service_admins, grants)


def _looked_leaf_schemas(model: Model, roots: list[ObjectRef]) -> frozenset[ObjectRef]:
    return frozenset(
        s
        for root in roots
        for s in model.children(root)
        if any(k.type in (SecurableType.TOPIC, SecurableType.FILESET) for k in model.children(s))
    )


def test_signatures_and_leaf_schemas_equal_a_look_at_every_grant_and_object() -> None:
    """Grants on the metalake, a catalog, a schema, a table, a topic (ALLOW and DENY),
    revoked, a role deleted, objects created, dropped and renamed, owners set: each user's
    signature through the grant index equals a pass over its roles' grants, and the schemas
    holding topics or filesets those of a look at every schema's children."""
    rng = random.Random(31)
    model = Model()
    for event in (
        ev.UserAdded("ann"),
        ev.UserAdded("bob"),
        ev.GroupAdded("g"),
        ev.GroupMemberAdded("g", "bob"),
    ):
        model.apply(event)
    privileges = [
        Privilege.SELECT_TABLE,
        Privilege.USE_SCHEMA,
        Privilege.CONSUME_TOPIC,
        Privilege.USE_CATALOG,
    ]
    signed = 0
    for _ in range(600):
        roll = rng.random()
        roles = sorted(model.roles)
        event: ev.Event
        if roll < 0.3:
            obj = rng.choice(_OBJECTS)
            event = ev.ObjectCreated(obj) if obj not in model.objects else ev.ObjectDropped(obj)
        elif roll < 0.55 and roles:
            target = rng.choice([*_OBJECTS, METALAKE])
            event = ev.PrivilegesGranted(
                rng.choice(roles), target, frozenset({rng.choice(privileges)}), rng.choice(list(Condition))
            )
        elif roll < 0.65 and roles and model.roles[role := rng.choice(roles)]:
            grant = rng.choice(sorted(model.roles[role]))
            event = ev.PrivilegesRevoked(role, grant.object, frozenset({grant.privilege}), grant.condition)
        elif roll < 0.75:
            role = rng.choice(("r1", "r2", "r3"))
            event = ev.RoleDeleted(role) if role in model.roles else ev.RoleCreated(role)
        elif roll < 0.85 and roles:
            holder = rng.choice([Principal.user("ann"), Principal.user("bob"), Principal.group("g")])
            event = ev.RoleGranted(rng.choice(roles), holder)
        elif roll < 0.95:
            obj = rng.choice([o for o in _OBJECTS if o.type is not SecurableType.TOPIC])
            free = [
                n
                for n in _OBJECTS
                if n.type is obj.type and n.parent == obj.parent and n not in model.objects
            ]
            if obj not in model.objects or not free:
                continue
            event = ev.ObjectRenamed(obj, rng.choice(free))
        else:
            event = ev.OwnerSet(rng.choice(_OBJECTS), rng.choice(["ann", None]))
        model.apply(event)
        roots = [o for o in model.objects if o.type is SecurableType.CATALOG]
        assert leaf_schemas(model, roots) == _looked_leaf_schemas(model, roots), event
        for schema in _SCHEMAS:
            signer = Signer(model, schema)
            for user in ("ann", "bob"):
                assert signer.of(user) == _looked_grants(model, schema, user), (event, schema, user)
                signed += bool(signer.of(user)[1])
    assert signed > 1000  # most signatures held grants
