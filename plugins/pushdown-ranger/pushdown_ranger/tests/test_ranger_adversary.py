"""The Ranger backend in the hostile environment (:mod:`tests.adversary`), on the stand-in.

Each history draws a name mapping, grants, DENYs and owners on registered and unregistered
objects (capitalised names, case twins), removals and returns of users, groups and roles,
tables created outside the model, the enforcing host resolving a user into group ``g`` (or
out of it) unlike the model, and the Ranger hand-made state of :data:`HAND` between syncs.
After every scoped sync and after the full sync that follows, the stand-in's engine is asked,
for every user of the pool (removed ones included) through the name the user maps to and with
the groups the enforcing host believes, about every access the backend maps on every object
(and a table nobody created yet); :func:`tests.adversary.compare` holds the answers against
the evaluator. A removed user whose Ranger name another user of the model still maps to is
held to what that user may do (Ranger cannot tell them apart).

A hand-made allow for a managed user is wider by construction and pushdown leaves it alone
(the fence): the check is that the sync reports it; the admin then withdraws it, before the
engine is asked.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pushdown_lab.ranger_ground_truth import Ask, allows
from pushdown_lab.ranger_standin import Standin

from pushdown.decide.evaluator import Evaluator
from pushdown.errors import ModelError
from pushdown.model import changes as ch
from pushdown.model.principals import Principal
from pushdown.model.securables import ObjectRef, SecurableType
from pushdown.model.state import Model
from pushdown.reconcile import planner
from pushdown.reconcile.scope import Scope, scope_of
from pushdown.reconcile.sync import reconcile
from pushdown_ranger.backend import RangerBackend
from pushdown_ranger.mapping import DATABASE_ACCESS, HDFS_ACCESS, KAFKA_ACCESS, TABLE_ACCESS
from tests.adversary import MAPPINGS, Tally, compare, histories, hostile_steps, mapping_names, model_changes
from tests.builders import Builder

from .world import backend_for

pytestmark = pytest.mark.ranger
T = SecurableType
USERS = ("u1", "u2", "U3")
ROLES = ("r1", "r2")
SCHEMAS = ("s1", "s2")
TABLES = ("a", "b", "Secret")
OBJECTS = (
    "catalog c",
    *(f"schema c.{s}" for s in SCHEMAS),
    "table c.s1.a",
    "table c.s2.b",
    "topic c.s1.events",
    "fileset c.s2.files",
)
UNREGISTERED = ("table c.s1.Secret", "table c.s1.A", "table c.s2.zz", "schema c.S1", "table c.s3.x")
PRIVILEGES = (
    "USE_CATALOG",
    "USE_SCHEMA",
    "SELECT_TABLE",
    "MODIFY_TABLE",
    "CREATE_TABLE",
    "CONSUME_TOPIC",
    "PRODUCE_TOPIC",
    "READ_FILESET",
    "WRITE_FILESET",
)
UNSEEN = "unseen"
Json = dict[str, Any]


def _resources(database: str, table: str | None = None) -> Json:
    out: Json = {"database": {"values": [database]}}
    if table is not None:
        out |= {"table": {"values": [table]}, "column": {"values": ["*"]}}
    return out


def _edit_or_create(standin: Standin, resources: Json, name: str, **extra: Any) -> None:
    """A hand edit of the policy on ``resources`` (whoever made it), or a new hand-made one."""
    key = {k: v["values"] for k, v in resources.items()}
    for policy in standin.store.list_policies({"serviceName": "hive"}):
        if not policy.get("zoneName") and {k: v["values"] for k, v in policy["resources"].items()} == key:
            standin.store.update_policy(policy["id"], {**policy, **extra})
            return
    items = [{"users": ["zed"], "accesses": [{"type": "select", "isAllowed": True}]}]
    body = {"service": "hive", "name": name, "resources": resources, "policyItems": items, **extra}
    standin.store.create_policy(body, create_missing=True)


def _deny_exceptions(standin: Standin, mapped: Callable[[str], str]) -> None:
    exempt = {"groups": ["g"], "users": [mapped("u2")], "accesses": [{"type": "select"}, {"type": "update"}]}
    _edit_or_create(standin, _resources("s1", "a"), "hand s1.a", denyExceptions=[exempt])


def _allow_exceptions(standin: Standin, mapped: Callable[[str], str]) -> None:
    exempt = {"users": [mapped("u2")], "groups": ["g"], "accesses": [{"type": "select"}]}
    _edit_or_create(standin, _resources("s1", "?*"), "hand s1.*", allowExceptions=[exempt])


def _override(standin: Standin, mapped: Callable[[str], str]) -> None:
    """A hand-made override-priority policy on the every-table resources of s2 (a second
    policy there: Ranger's resource signature tells priorities apart)."""
    body = {
        "service": "hive",
        "name": "hand override s2",
        "policyPriority": 1,
        "resources": _resources("s2", "?*"),
        "policyItems": [{"users": ["zed"], "accesses": [{"type": "select"}]}],
    }
    if not standin.store.list_policies({"policyName": "hand override s2"}):
        standin.store.create_policy(body, create_missing=True)


def _nested(standin: Standin, mapped: Callable[[str], str]) -> None:
    store = standin.store
    if not store.list_roles({"roleName": "hand"}):
        store.create_role({"name": "hand", "users": [{"name": mapped("U3")}]}, create_missing=True)
    for role in store.list_roles({}):
        if role["name"].startswith("pd_"):
            store.update_role(role["id"], {**role, "roles": [{"name": "hand"}]})
            return


def _zone(standin: Standin, mapped: Callable[[str], str]) -> None:
    if not standin.store.zones:
        spec = {"hive": {"resources": [{"database": ["s2"], "table": ["b"]}]}}
        standin.store.create_zone({"name": "hz", "services": spec})


def _flip(standin: Standin, mapped: Callable[[str], str]) -> None:
    sdef = standin.store.service_def("hive")
    options = sdef.setdefault("options", {})
    on = str(options.get("enableDenyAndExceptionsInPolicies", "true")).lower() != "false"
    options["enableDenyAndExceptionsInPolicies"] = "false" if on else "true"
    standin.store.update_service_def("hive", sdef)


def _disable(standin: Standin, mapped: Callable[[str], str]) -> None:
    """A hand edit: the policy holding pushdown's deny items turned off."""
    for policy in standin.store.list_policies({"serviceName": "hive"}):
        if policy.get("denyPolicyItems") and policy.get("isEnabled", True):
            standin.store.update_policy(policy["id"], {**policy, "isEnabled": False})
            return


def _bypass(standin: Standin, mapped: Callable[[str], str]) -> None:
    """A hand-made allow for a managed user (withdrawn once the sync has reported it)."""
    body = {
        "service": "hive",
        "name": "hand bypass",
        "resources": _resources("s2", "b*"),
        "policyItems": [{"users": [mapped("u2")], "accesses": [{"type": "select"}]}],
    }
    if not standin.store.list_policies({"policyName": "hand bypass"}):
        standin.store.create_policy(body, create_missing=True)


def _implies(standin: Standin, mapped: Callable[[str], str]) -> None:
    """The service definition edited underneath: select implies update and drop (or no more)."""
    sdef = standin.store.service_def("hive")
    for access in sdef["accessTypes"]:
        if access["name"] == "select":
            access["impliedGrants"] = [] if access.get("impliedGrants") else ["update", "drop"]
    standin.store.update_service_def("hive", sdef)


def _member(standin: Standin, mapped: Callable[[str], str]) -> None:
    """A user added by hand to one of pushdown's roles."""
    for role in standin.store.list_roles({}):
        if role["name"].startswith("pd_"):
            users = [*role["users"], {"name": mapped("U3"), "isAdmin": False}]
            standin.store.update_role(role["id"], {**role, "users": users}, create_missing=True)
            return


def _everyone(standin: Standin, mapped: Callable[[str], str]) -> None:
    """A hand-made allow to every user (withdrawn once the sync has reported it)."""
    body = {
        "service": "kafka",
        "name": "hand bypass",
        "resources": {"topic": {"values": ["ev*"]}},
        "policyItems": [{"users": ["{USER}"], "accesses": [{"type": "consume"}]}],
    }
    if not standin.store.list_policies({"policyName": "hand bypass"}):
        standin.store.create_policy(body, create_missing=True)


def _additional(standin: Standin, mapped: Callable[[str], str]) -> None:
    """A hand-made policy on table s1.a that also names s2.b (``additionalResources``)."""
    body = {
        "service": "hive",
        "name": "hand additional",
        "resources": _resources("s1", "a"),
        "additionalResources": [_resources("s2", "b")],
        "policyItems": [{"users": ["zed"], "accesses": [{"type": "select"}]}],
    }
    if not standin.store.list_policies({"policyName": "hand additional"}):
        standin.store.create_policy(body, create_missing=True)


def _widen(standin: Standin, mapped: Callable[[str], str]) -> None:
    """pushdown's every-table policy of s1 edited by hand to reach every database."""
    for policy in standin.store.list_policies({"serviceName": "hive"}):
        resources = policy["resources"]
        if resources.get("table", {}).get("values") == ["?*"] and resources["database"]["values"] == ["s1"]:
            edited = {**resources, "database": {"values": ["*"]}}
            if not any(
                p["resources"] == edited for p in standin.store.list_policies({"serviceName": "hive"})
            ):
                standin.store.update_policy(policy["id"], {**policy, "resources": edited})
            return


def _borrow(standin: Standin, mapped: Callable[[str], str]) -> None:
    """A hand-made policy on ``s2.b*`` allowing one of pushdown's roles to drop tables."""
    body = {
        "service": "hive",
        "name": "hand borrow",
        "resources": _resources("s2", "b*"),
        "policyItems": [{"roles": ["pd_r1"], "accesses": [{"type": "drop"}, {"type": "select"}]}],
    }
    if not standin.store.list_policies({"policyName": "hand borrow"}):
        standin.store.create_policy(body, create_missing=True)


#: the Ranger hand-made state a history plays between syncs
HAND: tuple[Callable[[Standin, Callable[[str], str]], None], ...] = (
    _deny_exceptions,
    _allow_exceptions,
    _override,
    _nested,
    _zone,
    _flip,
    _disable,
    _bypass,
    _implies,
    _member,
    _everyone,
    _additional,
    _widen,
    _borrow,
)

steps = hostile_steps(
    roles=ROLES,
    users=USERS,
    objects=OBJECTS,
    unregistered=UNREGISTERED,
    privileges=PRIVILEGES,
    schemas=SCHEMAS,
    tables=TABLES,
    hand=len(HAND),
    external=True,
    rename=False,
    grant_weight=3,
)


def start() -> Builder:
    b = Builder().users(*USERS).group("g", "u1").catalog("c", backend="rg")
    for role in ROLES:
        b.role(role)
    for schema in SCHEMAS:
        b.schema(f"c.{schema}")
    b.table("c.s1.a").table("c.s2.b").create("topic c.s1.events")
    b.create("fileset c.s2.files", properties={"location": "/data/files"})
    b.allow("r1", "catalog c", "USE_CATALOG").allow("r1", "schema c.s1", "USE_SCHEMA", "SELECT_TABLE")
    b.allow("r2", "catalog c", "USE_CATALOG", "USE_SCHEMA")
    return b.grant_role("r1", users=["u2"], groups=["g"]).grant_role("r2", users=["U3"])


def _table_events(model: Model, step: tuple[Any, ...]) -> list[Any]:
    kind, schema, table = step[:3]
    ref = ObjectRef.parse(f"table c.{schema}.{table}")
    return ch.create_object(model, ref) if kind == "create" else ch.drop_object(model, ref)


class World:
    """One history: the model, the stand-in, the backend, and what the model does not see."""

    def __init__(self, standin: Standin, mapping: str) -> None:
        self.b = start()
        self.standin = standin
        self.map = MAPPINGS[mapping]
        self.backend: RangerBackend = backend_for(standin, map_principal=self.map)
        self.external: dict[str, bool] = {}
        self.outside: set[tuple[str, str]] = set()

    def mapped(self, user: str) -> str:
        return self.map(Principal.user(user))

    def groups(self, user: str) -> list[str]:
        found = set(self.b.model.user_groups.get(user, ()))
        if user in self.external:
            found = (found | {"g"}) if self.external[user] else (found - {"g"})
        return sorted(self.map(Principal.group(g)) for g in found)

    def play(self, step: tuple[Any, ...]) -> Scope | None:
        """Play one step; the scope of the sync that follows (None: nothing to sync)."""
        kind = step[0]
        if kind == "hand":
            HAND[step[1]](self.standin, self.mapped)
            return Scope.of([ObjectRef.parse("schema c.s2")])
        if kind == "external":
            self.external[step[1]] = step[2]
            return Scope.of(principals=[Principal.user(step[1])])
        if kind == "outside":
            self.outside.add((step[1], step[2]))
            return Scope.of([ObjectRef.parse(f"schema c.{step[1]}")])
        try:
            events = (
                _table_events(self.b.model, step)
                if kind in ("create", "drop")
                else model_changes(self.b.model, step)
            )
        except ModelError:
            return None
        for event in events:
            self.b.model.apply(event)
        return Scope.union(scope_of(e) for e in events)


Check = tuple[str, Json, str, str, ObjectRef]


def _checks(model: Model, outside: set[tuple[str, str]]) -> list[Check]:
    """(service, resource, access, operation, object) over the catalog's objects, a table
    nobody created in each schema, tables created outside the model, unregistered tables."""
    out: list[Check] = []
    tables = {o for o in model.objects if o.type is T.TABLE and o.names[0] == "c"}
    for schema in (o for o in model.objects if o.type is T.SCHEMA and o.names[0] == "c"):
        d = schema.names[1]
        for access, op in DATABASE_ACCESS:
            target = ObjectRef(T.TABLE, (*schema.names, UNSEEN)) if op == "create_table" else schema
            out.append(("hive", {"database": d}, access, op, target))
        names = {UNSEEN} | {t for s, t in outside if s == d}
        names |= {ObjectRef.parse(u).names[2] for u in UNREGISTERED if u.startswith(f"table c.{d}.")}
        tables |= {ObjectRef(T.TABLE, ("c", d, t)) for t in names}
    for table in sorted(tables, key=str):
        folded = [
            t for t in tables if t.names[1] == table.names[1] and t.names[2].lower() == table.names[2].lower()
        ]
        if len(folded) > 1 and table not in model.objects:
            continue  # a case twin of a table the model holds: Hive cannot tell them apart
        for access, op in TABLE_ACCESS:
            out.append(("hive", {"database": table.names[1], "table": table.names[2]}, access, op, table))
    for obj in model.objects:
        if obj.type is T.TOPIC and obj.names[0] == "c":
            out += [("kafka", {"topic": obj.names[2]}, a, op, obj) for a, op in KAFKA_ACCESS]
        elif obj.type is T.FILESET and obj.names[0] == "c":
            path = model.objects[obj].get("location", "")
            for access, op in HDFS_ACCESS:
                out.append(("hdfs", {"path": path}, access, op, obj))
                out.append(("hdfs", {"path": path + "/part-0"}, access, op, obj))
    return out


def decisions(world: World) -> tuple[set[tuple[str, str, str]], set[tuple[str, str, str]], int]:
    """(server, evaluator, checks) as (user, access/operation, object and resource) triples."""
    model = world.b.model
    evaluator = Evaluator(model)
    checks = _checks(model, world.outside)
    present = {u for u in USERS if u in model.users}
    allowed: set[tuple[str, str, str]] = set()
    asked: list[tuple[tuple[str, str, str], Ask]] = []
    for user in (*USERS, "stranger"):
        # a removed user is held to what the users still mapping to its name may do
        judges = [user] if user in present else [u for u in present if world.mapped(u) == world.mapped(user)]
        for service, resource, access, op, obj in checks:
            where = ",".join(f"{k}={v}" for k, v in sorted(resource.items()))
            triple = (user, f"{op} ({service} {access} {where})", str(obj))
            if any(evaluator.authorize(j, op, obj, explain=False).allowed for j in judges):
                allowed.add(triple)
            asked.append((triple, (service, resource, access, world.mapped(user), world.groups(user))))
    # Ranger's own engine decides (the stand-in's held equal to it), the draw in one batch
    answers = allows(world.standin, [a for _, a in asked])
    server = {triple for (triple, _), yes in zip(asked, answers, strict=True) if yes}
    return server, allowed, len(checks) * (len(USERS) + 1)


def _withdraw_bypass(world: World, findings: tuple[str, ...]) -> None:
    """A hand-made allow reaching a model user (or every user) is reported; then withdrawn.
    One for a name no model user maps to (a removed user) is nobody pushdown knows."""
    known = {world.mapped(u) for u in world.b.model.users} | {"{USER}"}
    for policy in world.standin.store.list_policies({"policyName": "hand bypass"}):
        reaches = {u for item in policy["policyItems"] for u in item.get("users") or ()}
        assert not reaches & known or any("'hand bypass'" in f for f in findings), findings
        world.standin.store.delete_policy(policy["id"])


def test_ranger_is_never_wider_than_the_evaluator_in_a_hostile_world(
    capsys: pytest.CaptureFixture[str],
) -> None:
    tally = Tally()

    @settings(max_examples=histories(300), deadline=None, suppress_health_check=list(HealthCheck))
    @given(mapping=mapping_names, history=st.lists(steps, min_size=1, max_size=5))
    def run(mapping: str, history: list[tuple[Any, ...]]) -> None:
        with Standin() as standin:
            world = World(standin, mapping)
            reconcile(world.backend, world.b.model, Scope.everything())
            tally.histories += 1
            for step in history:
                scope = world.play(step)
                if scope is None:
                    continue
                for sync_scope in (scope, Scope.everything()):
                    plan, _ = reconcile(world.backend, world.b.model, sync_scope)
                    findings = planner.plan(world.backend, world.b.model, Scope.everything()).findings
                    _withdraw_bypass(world, (*plan.findings, *findings))
                    server, allowed, checks = decisions(world)
                    wider, narrower = compare(server, allowed)
                    tally.record(
                        checks, wider, narrower, [*plan.notes, *plan.findings, *findings], world.mapped
                    )
                    assert wider == [], (mapping, history, step, sync_scope.full, wider[:4])

    run()
    with capsys.disabled():
        print("\n" + tally.line("ranger"))
    assert tally.wider == 0 and tally.checks > 0 and tally.histories >= histories(300)
