"""The shapes of topics (Kafka) and filesets (HDFS, by their location): one policy per
Ranger resource, over every enforced catalog at once (they share the services). Pure.

- Objects that are one Ranger resource (topics named alike but for case, in one catalog
  or in two: Kafka's topic resource ignores case; filesets at one location) get, per
  access, the users allowed it on all of them (narrower, with a note).
- Nested locations (``/lake/raw`` holds ``/lake/raw/pii``): the outer policy is
  recursive and reaches the inner path. The inner policy gets deny items for whoever an
  enclosing location allows and it does not, so the inner fileset's DENY wins. Ranger's
  deny beats every allow, so a deny item of a middle location also reaches what lies
  under it: a user allowed deeper but denied in the middle is denied (narrower, noted).
  Without deny items (the service definition does not enable them), an outer location
  gets, per access, only the users allowed it on everything it encloses (narrower).
- A DENY on a topic or fileset is also written as deny items (where the service definition
  enables them) for the users it bars, so an allow somebody else made on a wider resource
  (``topic=*``, an enclosing path) for a group the host resolves does not beat it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from pushdown.decide.inventory import Inventory
from pushdown.model.privileges import Privilege
from pushdown.model.securables import ObjectRef, SecurableType
from pushdown.model.state import Model
from pushdown.reconcile.bindings import location_of
from pushdown_ranger.compile.fileset_paths import literal_path, nest, path_of, withhold
from pushdown_ranger.compile.naming import Group, Items, RangerNaming, exact
from pushdown_ranger.compile.principals import denied_privileges, privileges_of
from pushdown_ranger.facts import Resource
from pushdown_ranger.mapping import HDFS_ACCESS, KAFKA_ACCESS

T = SecurableType
Users = dict[str, set[str]]


def leaf_items(
    items: Items,
    by_root: Mapping[ObjectRef, list[Group]],
    inventory: Inventory,
    model: Model,
    naming: RangerNaming,
    deny_enabled: Mapping[str, bool],
    locations: Mapping[str, tuple[str, ...]] | None = None,
    held: Iterable[ObjectRef] | None = None,
) -> list[str]:
    """``held``: the topics and filesets of ``inventory`` below the roots, when the caller
    has them (else found by a walk over the inventory)."""
    notes: list[str] = []
    topics, paths, unnamed = _resources(by_root, inventory, model, notes, locations or {}, held)
    groups = {root.names[0]: g for root, g in by_root.items()}
    denied_at = denied_privileges(model, {u for gs in by_root.values() for users, _ in gs for u in users})
    for objs in topics.values():
        names = sorted({o.names[-1] for o in objs}, key=lambda n: (n != n.lower(), n))
        if any(n.lower() != names[0].lower() for n in names):
            notes.append(f"topics {_listed(objs)}: one Ranger topic but for case; nothing pushed (narrower)")
            continue
        allowed = _shared(objs, groups, KAFKA_ACCESS, naming.kafka_service, notes)
        res: tuple[Resource, ...] = (("topic", (names[0],), False),)
        barred = _barred(objs, groups, KAFKA_ACCESS, denied_at)
        kafka_deny = deny_enabled.get(naming.kafka_service, False)
        for access, users in allowed.items():
            if users:
                items.add(False, naming.kafka_service, res, access, users)
            if kafka_deny and barred[access] - users:
                items.add(True, naming.kafka_service, res, access, barred[access] - users)
    by_path = {p: _shared(objs, groups, HDFS_ACCESS, naming.hdfs_service, notes) for p, objs in paths.items()}
    bars = {p: _barred(objs, groups, HDFS_ACCESS, denied_at) for p, objs in paths.items()}
    notes += withhold(
        by_path, {p: _shared(o, groups, HDFS_ACCESS, "", []) for p, o in unnamed.items()}, paths
    )
    hdfs_deny = deny_enabled.get(naming.hdfs_service, False)
    notes += nest(items, by_path, paths, naming.hdfs_service, hdfs_deny, bars)
    return notes


def _barred(
    objs: list[ObjectRef],
    groups: Mapping[str, list[Group]],
    accesses: tuple[tuple[str, str], ...],
    denied_at: Mapping[str, set[tuple[ObjectRef, Privilege]]],
) -> Users:
    """Per access, the users a DENY of the model bars from one of ``objs`` (one of their
    roles holds a DENY on it or above it, of a privilege the access's operation needs, as
    for Hive's deny items) and who are not allowed it there. A DENY of another privilege
    bars nothing here: Ranger's implied grants widen a deny item (``publish`` and
    ``delete`` deny ``describe`` too), so a needless one would cut what the model allows."""
    out: Users = {access: set() for access, _ in accesses}
    needs = {op: privileges_of(op) for _, op in accesses}
    for obj in objs:
        path = set(obj.path)
        for users, view in groups.get(obj.names[0], []):
            mine = {u: {p for o, p in denied_at[u] if o in path} for u in users if u in denied_at}
            if not any(mine.values()):
                continue
            for access, op in accesses:
                hit = {u for u, privileges in mine.items() if not privileges.isdisjoint(needs[op])}
                if hit and not view.allowed(op, obj):
                    out[access] |= hit
    return out


def _resources(
    by_root: Mapping[ObjectRef, list[Group]],
    inventory: Inventory,
    model: Model,
    notes: list[str],
    locations: Mapping[str, tuple[str, ...]],
    held: Iterable[ObjectRef] | None = None,
) -> tuple[dict[str, list[ObjectRef]], dict[str, list[ObjectRef]], dict[str, list[ObjectRef]]]:
    """Topics by case-folded name and filesets by path, over every catalog; and the
    filesets whose HDFS path Ranger cannot name, by that path. ``held``: the topics and
    filesets below the roots (``None``: every object of the inventory there is looked at)."""
    topics: dict[str, list[ObjectRef]] = {}
    paths: dict[str, list[ObjectRef]] = {}
    unnamed: dict[str, list[ObjectRef]] = {}
    if held is None:
        objects: Iterable[ObjectRef] = (o for root in by_root for o in inventory.within(root))
    else:
        roots = set(by_root)
        objects = sorted((o for o in held if not roots.isdisjoint(o.path)), key=lambda o: o.names)
    for obj in objects:
        if obj.type is T.TOPIC:
            if exact(obj.names[-1]):
                topics.setdefault(obj.names[-1].casefold(), []).append(obj)
            else:
                notes.append(f"{obj}: {UNNAMED}; nothing pushed (narrower)")
        elif obj.type is T.FILESET:
            location = location_of(model, obj, locations)
            if not location and (model.objects.get(obj) or {}).get("location"):
                notes.append(f"{obj}: its location lies outside those configured for its catalog; {NOTHING}")
                continue
            path = path_of(location)
            if path:
                paths.setdefault(path, []).append(obj)
            else:
                notes.append(f"{obj}: no usable location (an HDFS path); nothing pushed (narrower)")
                if literal_path(location):
                    unnamed.setdefault(literal_path(location), []).append(obj)
    return topics, paths, unnamed


NOTHING = "nothing pushed (narrower)"
UNNAMED = "its name holds a * or ?, or a {, } or \\ of Ranger's tokens"


def _shared(
    objs: list[ObjectRef],
    groups: Mapping[str, list[Group]],
    accesses: tuple[tuple[str, str], ...],
    service: str,
    notes: list[str],
) -> Users:
    """Per access, the users allowed it on every one of ``objs`` (one Ranger resource)."""
    if len(objs) > 1:
        notes.append(
            f"{_listed(objs)} share one Ranger resource in {service}; each access goes to the users "
            "allowed it on all (narrower)"
        )
    out: Users = {}
    for access, op in accesses:
        every: set[str] | None = None
        for obj in objs:
            here = {u for users, view in groups.get(obj.names[0], []) if view.allowed(op, obj) for u in users}
            every = here if every is None else every & here
        out[access] = every or set()
    return out


def _listed(objs: list[ObjectRef]) -> str:
    return ", ".join(sorted(str(o) for o in objs))
