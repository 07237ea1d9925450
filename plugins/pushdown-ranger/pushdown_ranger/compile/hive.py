"""The Hive shapes of one catalog's tables: per database, the database-level accesses,
an every-table policy (``table=?*``) and per-table exceptions (allow or deny). Pure.

``create`` (CREATE TABLE, as Hive's and Spark's Ranger plugins ask it: on the new table)
is on the every-table resource, with a deny item on each registered table for the users
not also allowed to drop it (``create`` on an existing table replaces it:
:mod:`pushdown_ranger.mapping`); without deny items it is written only where no
registered table needs one (narrower)."""

from __future__ import annotations

from collections.abc import Iterable

from pushdown.decide.inventory import Inventory
from pushdown.decide.views import OwnerView, View
from pushdown.model.privileges import Privilege
from pushdown.model.securables import ObjectRef, SecurableType
from pushdown.model.state import Model
from pushdown_ranger.compile.classes import HiveClasses, Recorder, replay
from pushdown_ranger.compile.hive_names import TableNames, unnamable_schemas
from pushdown_ranger.compile.naming import Group, Items
from pushdown_ranger.compile.principals import denied_privileges, privileges_of
from pushdown_ranger.facts import Resource
from pushdown_ranger.mapping import DATABASE_ACCESS, NEW_TABLE_ACCESS, REPLACE_NEEDS, TABLE_ACCESS

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
    model: Model,
    service: str,
    deny: bool,
    focus: frozenset[ObjectRef] | None,
    classes: HiveClasses | None = None,
) -> list[str]:
    """``classes``: the databases with their kept classes (:mod:`.classes`): a class whose
    items are kept is not compiled again, and those compiled are kept."""
    if classes is not None:
        return _kept_items(items, groups, inventory, model, service, deny, classes)
    notes: list[str] = []
    schemas = sorted((s for s in inventory.children(root) if s.type is T.SCHEMA), key=lambda o: o.names)
    skipped = unnamable_schemas(schemas, model)
    notes += [f"{s}: {why}; nothing pushed (narrower)" for s, why in sorted(skipped.items())]
    shapes: dict[ObjectRef, TableNames] = {}
    for schema in schemas:
        if schema in skipped or (focus is not None and schema not in focus):
            continue
        shape = shapes[schema] = TableNames.of([t for t in inventory.children(schema) if t.type is T.TABLE])
        notes += shape.notes(schema)
    denied_at = denied_privileges(model, {u for users, _ in groups for u in users}) if deny else {}
    for users, view in groups:
        where = schemas if isinstance(view, OwnerView) else view.containers(T.SCHEMA)
        for schema in where:
            if schema in shapes:
                _hive_schema(items, users, view, schema, inventory, service, deny, shapes[schema])
                _hive_create(items, users, view, schema, model, service, deny, shapes[schema])
        barred = {u: denied_at[u] for u in users if u in denied_at}
        for schema, shape in shapes.items() if barred else ():
            _hive_barred(items, barred, view, schema, inventory, service, shape)
    return notes


def _kept_items(
    items: Items,
    groups: list[Group],
    inventory: Inventory,
    model: Model,
    service: str,
    deny: bool,
    classes: HiveClasses,
) -> list[str]:
    """:func:`hive_items` over ``classes``: each (class, database) the loops of
    :func:`hive_items` visit, its items recorded (:class:`~.classes.Recorder`) and kept
    under the class's signature there, or taken over when kept; then the kept items of the
    users :meth:`~.classes.HiveClasses.split` took out of the compiler."""
    notes = [f"{s}: {why}; nothing pushed (narrower)" for s, why in sorted(classes.skipped.items())]
    shapes = classes.shapes
    for schema, shape in shapes.items():
        notes += shape.notes(schema)
    for users, view in groups:
        owner = isinstance(view, OwnerView)
        where = set(classes.schemas if owner else view.containers(T.SCHEMA))
        barred: dict[str, set[tuple[ObjectRef, Privilege]]] | None = None  # found when first needed
        if not where.issuperset(shapes):
            barred = _barred(model, users, deny)
        visit = [s for s in shapes if s in where or barred]
        for schema in visit:
            shape, db = shapes[schema], classes.databases[schema]
            inside = schema in where
            signature = None if owner or not inside else classes.signers[schema].group(users)
            added = None if signature is None else db.get(signature)
            if added is not None:
                replay(items, added, users)
                continue
            record = Recorder()
            if inside:
                _hive_schema(record, users, view, schema, inventory, service, deny, shape)
                _hive_create(record, users, view, schema, model, service, deny, shape)
            barred = _barred(model, users, deny) if barred is None else barred
            if barred:
                _hive_barred(record, barred, view, schema, inventory, service, shape)
            record.into(items)
            classes.kept.compiled += 1
            kept = None if signature is None else record.kept(users)
            if signature is not None and kept is not None:
                db.put(signature, kept)
    classes.replay(items)
    return notes


def table_items(
    groups: list[Group],
    schema: ObjectRef,
    inventory: Inventory,
    model: Model,
    service: str,
    names: TableNames,
    tables: Iterable[ObjectRef],
) -> tuple[Recorder, int] | None:
    """What :func:`hive_items` adds, with deny items, on the resources of ``tables`` (of
    ``schema``, each Ranger's name of itself alone: no case twin) for ``groups``, decided
    over an inventory holding those tables of the database, and how many classes were
    made so (``None``: an owner's view, not decided so). A table's items come from a
    view's decision on it and its coverage's default (``_hive_schema``: an exception where
    the two differ; ``_hive_create``: a deny item where the default creates and the table
    may not be dropped), and from the DENYs barring users (``_hive_barred``: on the table,
    or above it; the caller proves none)."""
    tables = list(tables)
    mine = TableNames(
        {t: names.resource[t] for t in tables},
        {names.resource[t]: names.twins[names.resource[t]] for t in tables},
        names.open & {names.resource[t] for t in tables},
        names.unnamed,  # the every-table policy's exactness is the database's
    )
    resources = {hive_table(schema.names[1], name) for name in mine.twins}
    record, made = Recorder(), 0
    for users, view in groups:
        if isinstance(view, OwnerView):
            return None
        if schema in view.containers(T.SCHEMA):
            _hive_schema(record, users, view, schema, inventory, service, True, mine)
            _hive_create(record, users, view, schema, model, service, True, mine)
            made += 1
    record.added = [added for added in record.added if added[2] in resources]
    return record, made


def _barred(model: Model, users: frozenset[str], deny: bool) -> dict[str, set[tuple[ObjectRef, Privilege]]]:
    """The DENYs of each of ``users`` holding one (none without deny items)."""
    denied_at = denied_privileges(model, users) if deny else {}
    return {u: denied_at[u] for u in users if u in denied_at}


def _hive_barred(
    items: Items,
    barred: dict[str, set[tuple[ObjectRef, Privilege]]],
    view: View,
    schema: ObjectRef,
    inventory: Inventory,
    service: str,
    names: TableNames,
) -> None:
    """Deny items for the users a DENY of the model bars (on the schema, its catalog or one of
    its tables, of a privilege the operation needs), wherever they are not allowed: a user
    holding only a DENY, with no allow to cut, is denied in Ranger too, so an allow somebody
    else made on a wider resource (``database=*``) for a group the host resolves does not
    beat it (issue 23, N9). A deny item for a user the model does not allow is never narrower."""
    d = schema.names[1]
    # the DENYs that can bar here, by where they are: on the schema or above it (every
    # table), or on one table (that table only); a barred user with neither is skipped,
    # and a table no DENY names is looked at only when one is above it
    up = set(schema.path)
    above: dict[str, set[Privilege]] = {}
    on_table: dict[ObjectRef, dict[str, set[Privilege]]] = {}
    for user, denied in barred.items():
        for obj, privilege in denied:
            if obj in up:
                above.setdefault(user, set()).add(privilege)
            elif obj in names.resource:
                on_table.setdefault(obj, {}).setdefault(user, set()).add(privilege)
    if not above and not on_table:
        return

    def who(op: str, tables: Iterable[ObjectRef] = ()) -> set[str]:
        privs = privileges_of(op)
        out = {u for u, held in above.items() if not held.isdisjoint(privs)}
        for table in tables:
            out |= {u for u, held in on_table.get(table, {}).items() if not held.isdisjoint(privs)}
        return out

    for access, op in DATABASE_ACCESS:
        users = who(op) if above else set()
        if users and not view.allowed(op, schema):
            items.add(True, service, hive_database(d), access, users)
    for access, op in NEW_TABLE_ACCESS:
        users = who(op) if above else set()
        if users and not view.coverage(op, schema).default:
            items.add(True, service, hive_every_table(d), access, users)
    named = names.twins if above else {n: names.twins[n] for n in {names.resource[t] for t in on_table}}
    for access, op in TABLE_ACCESS:
        users = who(op) if above else set()
        if users:
            cover = view.coverage(op, schema)
            if not cover.default and not cover.exceptions:
                items.add(True, service, hive_every_table(d), access, users)
        for name, twins in sorted(named.items()):
            users = who(op, twins)
            if users and not any(view.allowed(op, t) for t in twins):
                items.add(True, service, hive_table(d, name), access, users)


def _hive_schema(
    items: Items,
    users: frozenset[str],
    view: View,
    schema: ObjectRef,
    inventory: Inventory,
    service: str,
    deny: bool,
    names: TableNames,
) -> None:
    """``names``: how the schema's tables are named in Ranger (:class:`TableNames`)."""
    d = schema.names[1]
    for access, op in DATABASE_ACCESS:
        if isinstance(view, OwnerView) and view.allowed(op, schema):
            items.add(False, service, hive_database(d), access, users)
    wild_res = hive_every_table(d)
    for access, op in TABLE_ACCESS:
        cover = view.coverage(op, schema)
        wild = names.wildcard and cover.default
        if wild and cover.exceptions and not deny:
            wild = False  # the exceptions would need deny items
        if wild:
            items.add(False, service, wild_res, access, users)
        differing = cover.exceptions if wild == cover.default else set(cover.members(inventory))
        for table in differing:
            name = names.resource.get(table)
            if name is None:
                continue
            allowed = all(cover.allowed(t) for t in names.twins[name]) and (
                cover.default or name not in names.open
            )
            if allowed != wild:
                items.add(not allowed, service, hive_table(d, name), access, users)


def _hive_create(
    items: Items,
    users: frozenset[str],
    view: View,
    schema: ObjectRef,
    model: Model,
    service: str,
    deny: bool,
    names: TableNames,
) -> None:
    """``create`` on every table of the schema for users allowed to create tables there,
    and a deny item on each registered table they may not drop (a ``create`` there replaces
    it). Without deny items, or where the every-table resource would reach a table Ranger
    cannot name, nothing where a deny item would be needed (narrower)."""
    d = schema.names[1]
    for access, op in NEW_TABLE_ACCESS:
        if not names.wildcard or not view.coverage(op, schema).default:
            continue
        drop = view.coverage(REPLACE_NEEDS, schema)
        kept = sorted(
            name
            for name, twins in names.twins.items()
            if any(t in model.objects for t in twins)
            and not (all(drop.allowed(t) for t in twins) and (drop.default or name not in names.open))
        )
        if kept and not deny:
            continue
        items.add(False, service, hive_every_table(d), access, users)
        for name in kept:
            items.add(True, service, hive_table(d, name), access, users)
