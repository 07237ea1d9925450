"""The Hive shapes of one catalog's tables: per database, the database-level accesses,
an every-table policy (``table=?*``) and per-table exceptions (allow or deny). Pure."""

from __future__ import annotations

from pushdown.decide.inventory import Inventory
from pushdown.decide.views import OwnerView, View
from pushdown.model.securables import ObjectRef, SecurableType
from pushdown_ranger.facts import Resource
from pushdown_ranger.mapping import DATABASE_ACCESS, TABLE_ACCESS
from pushdown_ranger.naming import WHY, Group, Items, inexact

T = SecurableType
#: the table wildcard of the every-table shape (see :func:`hive_every_table`)
EVERY_TABLE = "?*"


def hive_database(d: str) -> tuple[Resource, ...]:
    return (("database", (d,), False),)


def hive_every_table(d: str) -> tuple[Resource, ...]:
    """Every table of ``d``, present and future, and not ``d`` itself: ``table=?*`` matches
    every (non-empty) name, but is not Ranger's match-any ``*``, so a request on the
    database alone does not match it (with ``table=*`` it would: SELF_AND_ALL_DESCENDANTS)."""
    return (("column", ("*",), False), ("database", (d,), False), ("table", (EVERY_TABLE,), False))


def hive_table(d: str, t: str) -> tuple[Resource, ...]:
    return (("column", ("*",), False), ("database", (d,), False), ("table", (t,), False))


def hive_items(
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
    odd = inexact([s.names[1] for s in schemas])
    skipped = {s for s in schemas if s.names[1] in odd}
    notes += [
        f"schema {s}: Ranger cannot name it exactly ({WHY}); nothing pushed (narrower)"
        for s in sorted(skipped)
    ]
    awkward: dict[ObjectRef, set[ObjectRef]] = {}
    for schema in schemas:
        tables = [t for t in inventory.children(schema) if t.type is T.TABLE]
        bad = inexact([t.names[2] for t in tables])
        if bad:
            awkward[schema] = {t for t in tables if t.names[2] in bad}
            notes.append(
                f"schema {schema}: Ranger cannot name tables {', '.join(sorted(bad))} exactly ({WHY}); "
                "they get nothing, the others per-table items, no every-table policy (narrower)"
            )
    for users, view in groups:
        where = schemas if isinstance(view, OwnerView) else view.containers(T.SCHEMA)
        for schema in where:
            if schema not in skipped and (focus is None or schema in focus):
                _hive_schema(items, users, view, schema, inventory, service, deny, awkward.get(schema, set()))
    return notes


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
