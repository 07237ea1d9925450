"""The shapes of topics (Kafka) and filesets (HDFS, by their location): one policy per
object. Pure."""

from __future__ import annotations

from pushdown.decide.inventory import Inventory
from pushdown.model.securables import ObjectRef, SecurableType
from pushdown.model.state import Model
from pushdown_ranger.facts import Resource
from pushdown_ranger.mapping import HDFS_ACCESS, KAFKA_ACCESS
from pushdown_ranger.naming import Group, Items, Naming, exact, inexact

T = SecurableType


def leaf_items(
    items: Items, groups: list[Group], root: ObjectRef, inventory: Inventory, model: Model, naming: Naming
) -> list[str]:
    """Topics and filesets: one policy per object; objects sharing one resource get the
    intersection of their users (narrower)."""
    notes: list[str] = []
    per_object: dict[ObjectRef, dict[str, set[str]]] = {}
    resource_of: dict[ObjectRef, tuple[str, tuple[Resource, ...]]] = {}
    held = list(inventory.within(root))
    odd_topics = inexact([o.names[-1] for o in held if o.type is T.TOPIC])
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
    return text if text.startswith("/") and exact(text) else ""
