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
"""

from __future__ import annotations

from collections.abc import Mapping

from pushdown.decide.inventory import Inventory
from pushdown.model.securables import ObjectRef, SecurableType
from pushdown.model.state import Model
from pushdown_ranger.facts import Resource
from pushdown_ranger.fileset_paths import nest, path_of
from pushdown_ranger.mapping import HDFS_ACCESS, KAFKA_ACCESS
from pushdown_ranger.naming import Group, Items, Naming, exact

T = SecurableType
Users = dict[str, set[str]]


def leaf_items(
    items: Items,
    by_root: Mapping[ObjectRef, list[Group]],
    inventory: Inventory,
    model: Model,
    naming: Naming,
    deny_enabled: Mapping[str, bool],
) -> list[str]:
    notes: list[str] = []
    topics, paths = _resources(by_root, inventory, model, notes)
    groups = {root.names[0]: g for root, g in by_root.items()}
    for objs in topics.values():
        names = sorted({o.names[-1] for o in objs}, key=lambda n: (n != n.lower(), n))
        if any(n.lower() != names[0].lower() for n in names):
            notes.append(f"topics {_listed(objs)}: one Ranger topic but for case; nothing pushed (narrower)")
            continue
        allowed = _shared(objs, groups, KAFKA_ACCESS, naming.kafka_service, notes)
        res: tuple[Resource, ...] = (("topic", (names[0],), False),)
        for access, users in allowed.items():
            if users:
                items.add(False, naming.kafka_service, res, access, users)
    by_path = {p: _shared(objs, groups, HDFS_ACCESS, naming.hdfs_service, notes) for p, objs in paths.items()}
    notes += nest(items, by_path, paths, naming.hdfs_service, deny_enabled.get(naming.hdfs_service, False))
    return notes


def _resources(
    by_root: Mapping[ObjectRef, list[Group]], inventory: Inventory, model: Model, notes: list[str]
) -> tuple[dict[str, list[ObjectRef]], dict[str, list[ObjectRef]]]:
    """Topics by case-folded name and filesets by path, over every catalog."""
    topics: dict[str, list[ObjectRef]] = {}
    paths: dict[str, list[ObjectRef]] = {}
    for obj in (o for root in by_root for o in inventory.within(root)):
        if obj.type is T.TOPIC:
            if exact(obj.names[-1]):
                topics.setdefault(obj.names[-1].casefold(), []).append(obj)
            else:
                notes.append(f"{obj}: {UNNAMED}; nothing pushed (narrower)")
        elif obj.type is T.FILESET:
            path = path_of((model.objects.get(obj) or {}).get("location", ""))
            if path:
                paths.setdefault(path, []).append(obj)
            else:
                notes.append(f"{obj}: no usable location (an HDFS path); nothing pushed (narrower)")
    return topics, paths


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
