"""Compile the model into the roles and policies Ranger should hold. Pure.

The core's entitlement compiler decides, set-wise, for classes of users (the same roles
where it matters, owners apart), with DENY and the USE_CATALOG / USE_SCHEMA gates
included. Ranger has no "use" gate, and one user's decision can depend on the
combination of roles they hold (a DENY of one role beats the ALLOW of another), so a
grant is not pushed role by role. Instead, for every resource and access, the users
the model allows form a set, and that set is written as Ranger roles:

- the Ranger role of a model role when *every* holder of that role is in the set
  (exact: the role's items say nothing about anybody outside it);
- a per-user Ranger role (``user_role_prefix`` + user) for the rest.

Shapes, per Hive database ``d``:

- ``database=d``: the database-level accesses (``create`` tables, ``alter``, ``drop``);
- ``database=d, table=*, column=*``: what a user may do on every table of ``d``,
  present and future (the compiler's coverage default);
- ``database=d, table=t, column=*``: the exceptions: allow items where ``t`` allows
  more than the wildcard, deny items where it allows less (a DENY on ``t``, a gate).
  Without deny items (the service definition does not enable them), a user whose
  wildcard access has an exception gets per-table items instead (exact, no wildcard).

Topics and filesets get one policy per object (``topic=t``; ``path=<location>``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field

from pushdown.decide.compiler import EntitlementCompiler, Entitlements
from pushdown.decide.inventory import Inventory
from pushdown.decide.views import OwnerView, View
from pushdown.model.principals import Principal
from pushdown.model.securables import ObjectRef, SecurableType
from pushdown.model.state import Model
from pushdown.reconcile.backend import Desired
from pushdown.reconcile.plan import Fact
from pushdown_ranger.facts import Pair, PolicyFact, Resource, RoleFact
from pushdown_ranger.mapping import (
    DATABASE_ACCESS,
    HDFS_ACCESS,
    KAFKA_ACCESS,
    OPERATIONS,
    TABLE_ACCESS,
    WILDCARD_CHARS,
)

T = SecurableType
Group = tuple[frozenset[str], View]


@dataclass(frozen=True)
class Naming:
    """Services and names: which Ranger names pushdown writes."""

    hive_service: str = "hive"
    hdfs_service: str = "hdfs"
    kafka_service: str = "kafka"
    role_prefix: str = "pd_"
    user_role_prefix: str = "pdu_"
    map_principal: Callable[[Principal], str] = field(default=lambda p: p.name, compare=False)

    def role(self, role: str) -> str:
        return self.role_prefix + role

    def user_role(self, user: str) -> str:
        return self.user_role_prefix + self.user(user)

    def user(self, user: str) -> str:
        return self.map_principal(Principal.user(user))

    def group(self, group: str) -> str:
        return self.map_principal(Principal.group(group))

    def ours(self, ranger_role: str) -> bool:
        return ranger_role.startswith((self.role_prefix, self.user_role_prefix))

    @property
    def services(self) -> tuple[str, ...]:
        return (self.hive_service, self.hdfs_service, self.kafka_service)


def hive_database(d: str) -> tuple[Resource, ...]:
    return (("database", (d,), False),)


def hive_table(d: str, t: str) -> tuple[Resource, ...]:
    return (("column", ("*",), False), ("database", (d,), False), ("table", (t,), False))


class Items:
    """Users per (service, resources, access), allowed and denied."""

    def __init__(self) -> None:
        self.allow: dict[tuple[str, tuple[Resource, ...]], dict[str, set[str]]] = {}
        self.deny: dict[tuple[str, tuple[Resource, ...]], dict[str, set[str]]] = {}

    def add(
        self, deny: bool, service: str, res: tuple[Resource, ...], access: str, users: Iterable[str]
    ) -> None:
        table = self.deny if deny else self.allow
        table.setdefault((service, res), {}).setdefault(access, set()).update(users)


def compile_desired(
    model: Model, catalogs: Iterable[str], naming: Naming, deny_enabled: Mapping[str, bool]
) -> Desired:
    roots = [
        ObjectRef(T.CATALOG, (c,)) for c in sorted(catalogs) if ObjectRef(T.CATALOG, (c,)) in model.objects
    ]
    notes: list[str] = []
    items = Items()
    if roots:
        inventory = Inventory.of(o for root in roots for o in model.within(root))
        ent = EntitlementCompiler(model, OPERATIONS).compile(inventory, None, roots)
        hive_owner: str | None = None
        for root in roots:
            catalog = root.names[0]
            groups = list(_groups(ent, catalog))
            kinds = {o.type for o in inventory.within(root)}
            if T.TABLE in kinds or not kinds.intersection({T.TOPIC, T.FILESET}):
                if hive_owner is None:
                    hive_owner = catalog
                    deny = deny_enabled.get(naming.hive_service, False)
                    notes += _hive(items, groups, root, inventory, naming.hive_service, deny)
                else:
                    notes.append(
                        f"catalog {catalog}: its tables would share Ranger service {naming.hive_service} "
                        f"with catalog {hive_owner}; not pushed (narrower)"
                    )
            notes += _leaves(items, groups, root, inventory, model, naming)
    facts: set[Fact] = set(_policies(items, model, naming))
    facts |= set(_roles(model, naming, facts))
    if not deny_enabled.get(naming.hive_service, False) and roots:
        notes.append(
            f"service {naming.hive_service}: its definition does not enable deny items "
            "(options.enableDenyAndExceptionsInPolicies); DENY and other exceptions are expressed "
            "with per-table allow items instead of a wildcard and deny items"
        )
    return Desired(frozenset(facts), tuple(sorted(set(notes))))


def _groups(ent: Entitlements, catalog: str) -> Iterable[Group]:
    """Users deciding alike in ``catalog``: a class without its owners, and each owner."""
    owners = ent.owners.get(catalog, {})
    for users, view in ent.classes.get(catalog, []):
        plain = frozenset(u for u in users if u not in owners)
        if plain:
            yield plain, view
    for user, owner_view in sorted(owners.items()):
        yield frozenset({user}), owner_view


def _exact(name: str) -> bool:
    return not WILDCARD_CHARS.intersection(name)


def _hive(
    items: Items, groups: list[Group], root: ObjectRef, inventory: Inventory, service: str, deny: bool
) -> list[str]:
    notes: list[str] = []
    schemas = sorted((s for s in inventory.children(root) if s.type is T.SCHEMA), key=lambda o: o.names)
    odd = {s for s in schemas if not _exact(s.names[1])}
    notes += [
        f"schema {s}: its name holds a Ranger wildcard (* or ?); nothing pushed (narrower)" for s in odd
    ]
    plain = {s: [t for t in inventory.children(s) if t.type is T.TABLE] for s in schemas if s not in odd}
    awkward = {s for s, tables in plain.items() if not all(_exact(t.names[2]) for t in tables)}
    notes += [
        f"schema {s}: a table name holds a Ranger wildcard (* or ?); such tables get nothing and the "
        "others per-table items (narrower)"
        for s in sorted(awkward, key=lambda o: o.names)
    ]
    for users, view in groups:
        where = schemas if isinstance(view, OwnerView) else view.containers(T.SCHEMA)
        for schema in where:
            if schema in plain:
                _hive_schema(items, users, view, schema, inventory, service, deny, schema not in awkward)
    return notes


def _hive_schema(
    items: Items,
    users: frozenset[str],
    view: View,
    schema: ObjectRef,
    inventory: Inventory,
    service: str,
    deny: bool,
    wildcard: bool,
) -> None:
    d = schema.names[1]
    on_db: dict[str, bool] = {}
    for access, op in DATABASE_ACCESS:
        if op == "create_table":
            ok = view.coverage(op, schema).default
        else:
            ok = isinstance(view, OwnerView) and view.allowed(op, schema)
        on_db[access] = ok
        if ok:
            items.add(False, service, hive_database(d), access, users)
    wild_res = (("column", ("*",), False), ("database", (d,), False), ("table", ("*",), False))
    for access, op in TABLE_ACCESS:
        cover = view.coverage(op, schema)
        # a table wildcard also matches the database: only where the database allows it too
        wild = wildcard and cover.default and on_db.get(access, True)
        if wild and cover.exceptions and not deny:
            wild = False  # the exceptions would need deny items
        if wild:
            items.add(False, service, wild_res, access, users)
        differing = cover.exceptions if wild == cover.default else set(cover.members(inventory))
        for table in differing:
            if table not in inventory or not _exact(table.names[2]):
                continue
            allowed = cover.allowed(table)
            if allowed != wild:
                items.add(not allowed, service, hive_table(d, table.names[2]), access, users)


def _leaves(
    items: Items, groups: list[Group], root: ObjectRef, inventory: Inventory, model: Model, naming: Naming
) -> list[str]:
    """Topics and filesets: one policy per object; objects sharing one resource get the
    intersection of their users (narrower)."""
    notes: list[str] = []
    per_object: dict[ObjectRef, dict[str, set[str]]] = {}
    resource_of: dict[ObjectRef, tuple[str, tuple[Resource, ...]]] = {}
    for obj in inventory.within(root):
        if obj.type is T.TOPIC:
            if _exact(obj.names[-1]):
                resource_of[obj] = (naming.kafka_service, (("topic", (obj.names[-1],), False),))
            else:
                notes.append(
                    f"topic {obj}: its name holds a Ranger wildcard (* or ?); nothing pushed (narrower)"
                )
        elif obj.type is T.FILESET:
            location = (model.objects.get(obj) or {}).get("location", "")
            path = _path(location)
            if path:
                resource_of[obj] = (naming.hdfs_service, (("path", (path,), True),))
            else:
                notes.append(
                    f"fileset {obj}: no usable location property (an HDFS path); nothing pushed (narrower)"
                )
    for obj in resource_of:
        accesses = KAFKA_ACCESS if obj.type is T.TOPIC else HDFS_ACCESS
        per_object[obj] = {a: set() for a, _ in accesses}
        for users, view in groups:
            for access, op in accesses:
                if view.allowed(op, obj):
                    per_object[obj][access] |= users
    by_resource: dict[tuple[str, tuple[Resource, ...]], list[ObjectRef]] = {}
    for obj, where in resource_of.items():
        by_resource.setdefault(where, []).append(obj)
    for (service, res), objs in sorted(by_resource.items(), key=lambda kv: str(kv[0])):
        if len(objs) > 1:
            names = ", ".join(sorted(str(o) for o in objs))
            notes.append(
                f"{names} share one Ranger resource in {service}; "
                "each access goes to the users allowed it on all"
            )
        for access in per_object[objs[0]]:
            everywhere = set.intersection(*(per_object[o][access] for o in objs))
            if everywhere:
                items.add(False, service, res, access, everywhere)
    return notes


def _path(location: str) -> str:
    """The path of an HDFS location (``hdfs://nn:8020/a/b`` -> ``/a/b``), or ``""``."""
    text = location.strip()
    if "://" in text:
        text = text.split("://", 1)[1]
        text = text[text.find("/") :] if "/" in text else ""
    text = text.rstrip("/") or ("/" if text.startswith("/") else "")
    return text if text.startswith("/") and _exact(text) else ""


def _policies(items: Items, model: Model, naming: Naming) -> Iterable[PolicyFact]:
    holders = {r: frozenset(model.holders_of(r)) for r in model.roles}
    for key in sorted(set(items.allow) | set(items.deny), key=str):
        allow = _pairs(items.allow.get(key, {}), model, holders, naming)
        deny = _pairs(items.deny.get(key, {}), model, holders, naming)
        if allow or deny:
            yield PolicyFact(key[0], key[1], allow, deny)


def _pairs(
    by_access: dict[str, set[str]], model: Model, holders: dict[str, frozenset[str]], naming: Naming
) -> frozenset[Pair]:
    """Each access's users as Ranger roles: a model role whose holders all belong, and a
    per-user role for anybody left."""
    out: set[Pair] = set()
    for access, users in by_access.items():
        candidates = {r for u in users for r in model.roles_of(u)}
        fitting = sorted(
            (r for r in candidates if holders.get(r) and holders[r] <= users),
            key=lambda r: (-len(holders[r]), r),
        )
        covered: set[str] = set()
        for role in fitting:  # the largest first; a role adding nobody new is left out
            if not holders[role] <= covered:
                covered |= holders[role]
                out.add((naming.role(role), access))
        out.update((naming.user_role(u), access) for u in users - covered)
    return frozenset(out)


def _roles(model: Model, naming: Naming, facts: set[Fact]) -> Iterable[RoleFact]:
    for role in model.roles:
        users = frozenset(naming.user(u) for u in model.role_users.get(role, ()))
        groups = frozenset(naming.group(g) for g in model.role_groups.get(role, ()))
        yield RoleFact(naming.role(role), users, groups)
    named = {r for f in facts if isinstance(f, PolicyFact) for r, _ in f.allow | f.deny}
    for user in model.users:
        name = naming.user_role(user)
        if name in named:
            yield RoleFact(name, frozenset({naming.user(user)}))
