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
- ``database=d, table=?*, column=*``: what a user may do on every table of ``d``,
  present and future (the compiler's coverage default); ``?*`` rather than ``*``, which
  Ranger would also match against the database itself (``alter``, ``drop`` there);
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
from pushdown.model.privileges import Condition
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
#: the table wildcard of the every-table shape (see :func:`hive_every_table`)
EVERY_TABLE = "?*"
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


def hive_every_table(d: str) -> tuple[Resource, ...]:
    """Every table of ``d``, present and future, and not ``d`` itself: ``table=?*`` matches
    every (non-empty) name, but is not Ranger's match-any ``*``, so a request on the
    database alone does not match it (with ``table=*`` it would: SELF_AND_ALL_DESCENDANTS)."""
    return (("column", ("*",), False), ("database", (d,), False), ("table", (EVERY_TABLE,), False))


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


def hive_catalog(model: Model, catalogs: Iterable[str]) -> str | None:
    """The catalog whose tables the Hive service holds: the first enforced catalog (by
    name) with tables, or with no topics or filesets."""
    for catalog in sorted(catalogs):
        root = ObjectRef(T.CATALOG, (catalog,))
        if root in model.objects:
            kinds = {o.type for o in model.within(root)}
            if T.TABLE in kinds or not kinds.intersection({T.TOPIC, T.FILESET}):
                return catalog
    return None


def compile_desired(
    model: Model,
    catalogs: Iterable[str],
    naming: Naming,
    deny_enabled: Mapping[str, bool],
    *,
    focus: frozenset[ObjectRef] | None = None,
    named_elsewhere: frozenset[str] = frozenset(),
    hive: str | None = "\x00unknown",
) -> Desired:
    """The roles and policies Ranger should hold. ``focus``: only the Hive databases of
    these schemas are compiled (``None``: everything); topics and filesets always are.
    ``named_elsewhere``: Ranger roles the policies outside the focus still name.
    ``hive``: :func:`hive_catalog`, when the caller knows it already."""
    roots = [
        ObjectRef(T.CATALOG, (c,)) for c in sorted(catalogs) if ObjectRef(T.CATALOG, (c,)) in model.objects
    ]
    notes: list[str] = []
    items = Items()
    if roots:
        inventory = _inventory(model, roots, focus)
        starts = roots if focus is None else sorted(focus | _leaf_schemas(inventory, roots), key=str)
        ent = EntitlementCompiler(model, OPERATIONS).compile(inventory, None, starts)
        hive = hive_catalog(model, catalogs) if hive == _UNKNOWN else hive
        for root in roots:
            catalog = root.names[0]
            groups = list(_groups(ent, catalog))
            if catalog == hive:
                deny = deny_enabled.get(naming.hive_service, False)
                notes += _hive(items, groups, root, inventory, naming.hive_service, deny, focus)
            elif any(o.type is T.TABLE for o in inventory.within(root)):
                notes.append(
                    f"catalog {catalog}: its tables would share Ranger service {naming.hive_service} "
                    f"with catalog {hive}; not pushed (narrower)"
                )
            notes += _leaves(items, groups, root, inventory, model, naming)
    facts: set[Fact] = set(_policies(items, model, naming))
    facts |= set(_roles(model, naming, facts, named_elsewhere))
    if not deny_enabled.get(naming.hive_service, False) and roots:
        notes.append(
            f"service {naming.hive_service}: its definition does not enable deny items "
            "(options.enableDenyAndExceptionsInPolicies); DENY and other exceptions are expressed "
            "with per-table allow items instead of a wildcard and deny items"
        )
    return Desired(frozenset(facts), tuple(sorted(set(notes))))


_UNKNOWN = "\x00unknown"


def _inventory(model: Model, roots: list[ObjectRef], focus: frozenset[ObjectRef] | None) -> Inventory:
    """What the compile looks at: everything, or with a focus, the catalogs and their
    schemas, and the objects below the focus's schemas and the schemas of leaves that
    are not tables (topics and filesets are compiled every time)."""
    if focus is None:
        return Inventory.of(o for root in roots for o in model.within(root))
    held = Inventory.of(roots)
    for root in roots:
        for schema in model.children(root):
            held.add(schema)
            kids = list(model.children(schema))
            if schema in focus or any(k.type in (T.TOPIC, T.FILESET) for k in kids):
                for kid in kids:
                    held.add(kid)
    return held


def _leaf_schemas(inventory: Inventory, roots: list[ObjectRef]) -> set[ObjectRef]:
    """The schemas holding topics or filesets (always compiled: one policy per object)."""
    return {
        o.parent
        for root in roots
        for o in inventory.within(root)
        if o.type in (T.TOPIC, T.FILESET) and o.parent
    }


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
    items: Items,
    groups: list[Group],
    root: ObjectRef,
    inventory: Inventory,
    service: str,
    deny: bool,
    focus: frozenset[ObjectRef] | None,
) -> list[str]:
    notes: list[str] = []
    schemas = sorted((s for s in inventory.children(root) if s.type is T.SCHEMA), key=lambda o: o.names)
    odd = _inexact([s.names[1] for s in schemas])
    skipped = {s for s in schemas if s.names[1] in odd}
    notes += [
        f"schema {s}: Ranger cannot name it exactly ({_WHY}); nothing pushed (narrower)"
        for s in sorted(skipped)
    ]
    awkward: dict[ObjectRef, set[ObjectRef]] = {}
    for schema in schemas:
        tables = [t for t in inventory.children(schema) if t.type is T.TABLE]
        bad = _inexact([t.names[2] for t in tables])
        if bad:
            awkward[schema] = {t for t in tables if t.names[2] in bad}
            notes.append(
                f"schema {schema}: Ranger cannot name tables {', '.join(sorted(bad))} exactly ({_WHY}); "
                "they get nothing, the others per-table items, no every-table policy (narrower)"
            )
    for users, view in groups:
        where = schemas if isinstance(view, OwnerView) else view.containers(T.SCHEMA)
        for schema in where:
            if schema not in skipped and (focus is None or schema in focus):
                _hive_schema(items, users, view, schema, inventory, service, deny, awkward.get(schema, set()))
    return notes


_WHY = "a * or ?, or a name equal to another but for case: Hive's resources ignore case"


def _inexact(names: list[str]) -> set[str]:
    """Names a Ranger resource value cannot single out: wildcards, or a case-folded twin."""
    folded: dict[str, list[str]] = {}
    for name in names:
        folded.setdefault(name.casefold(), []).append(name)
    twins = {n for same in folded.values() if len(same) > 1 for n in same}
    return twins | {n for n in names if not _exact(n)}


def _hive_schema(
    items: Items,
    users: frozenset[str],
    view: View,
    schema: ObjectRef,
    inventory: Inventory,
    service: str,
    deny: bool,
    odd: set[ObjectRef],
) -> None:
    """``odd``: tables Ranger cannot name exactly (none: the every-table shape is exact)."""
    d = schema.names[1]
    wildcard = not odd
    for access, op in DATABASE_ACCESS:
        if op == "create_table":
            ok = view.coverage(op, schema).default
        else:
            ok = isinstance(view, OwnerView) and view.allowed(op, schema)
        if ok:
            items.add(False, service, hive_database(d), access, users)
    wild_res = hive_every_table(d)
    for access, op in TABLE_ACCESS:
        cover = view.coverage(op, schema)
        wild = wildcard and cover.default
        if wild and cover.exceptions and not deny:
            wild = False  # the exceptions would need deny items
        if wild:
            items.add(False, service, wild_res, access, users)
        differing = cover.exceptions if wild == cover.default else set(cover.members(inventory))
        for table in differing:
            if table not in inventory or table in odd:
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
    held = list(inventory.within(root))
    odd_topics = _inexact([o.names[-1] for o in held if o.type is T.TOPIC])
    for obj in held:
        if obj.type is T.TOPIC:
            if obj.names[-1] not in odd_topics:
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
    allows = {r for r, grants in model.roles.items() if any(g.condition is Condition.ALLOW for g in grants)}
    denies = {r for r, grants in model.roles.items() if any(g.condition is Condition.DENY for g in grants)}
    for key in sorted(set(items.allow) | set(items.deny), key=str):
        allow = _pairs(items.allow.get(key, {}), model, holders, naming, allows)
        deny = _pairs(items.deny.get(key, {}), model, holders, naming, denies)
        if allow or deny:
            yield PolicyFact(key[0], key[1], allow, deny)


def _pairs(
    by_access: dict[str, set[str]],
    model: Model,
    holders: dict[str, frozenset[str]],
    naming: Naming,
    alike: set[str],
) -> frozenset[Pair]:
    """Each access's users as Ranger roles: a model role whose holders all belong (the
    largest first; among equals, one with grants of the item's kind, ``alike``), and a
    per-user role for anybody left."""
    out: set[Pair] = set()
    for access, users in by_access.items():
        candidates = {r for u in users for r in model.roles_of(u)}
        fitting = sorted(
            (r for r in candidates if holders.get(r) and holders[r] <= users),
            key=lambda r: (-len(holders[r]), r not in alike, r),
        )
        covered: set[str] = set()
        for role in fitting:  # the largest first; a role adding nobody new is left out
            if not holders[role] <= covered:
                covered |= holders[role]
                out.add((naming.role(role), access))
        out.update((naming.user_role(u), access) for u in users - covered)
    return frozenset(out)


def _roles(model: Model, naming: Naming, facts: set[Fact], elsewhere: frozenset[str]) -> Iterable[RoleFact]:
    for role in model.roles:
        users = frozenset(naming.user(u) for u in model.role_users.get(role, ()))
        groups = frozenset(naming.group(g) for g in model.role_groups.get(role, ()))
        yield RoleFact(naming.role(role), users, groups)
    named = elsewhere | {r for f in facts if isinstance(f, PolicyFact) for r, _ in f.allow | f.deny}
    for user in model.users:
        name = naming.user_role(user)
        if name in named:
            yield RoleFact(name, frozenset({naming.user(user)}))
