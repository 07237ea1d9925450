"""What the model names in the enforced catalog, and how the server's names match it. Pure.

Two ways a database-level grant, or a grant on a server object, could reach more than
the model decides:

- **Objects the model names but the server does not hold (yet).** A DENY, an ALLOW or
  an owner on a table that nobody registered, or that is registered but not created:
  ``SELECT ON crm.*`` would reach it the moment someone creates it. So the inventory the
  compiler decides over holds every table the model names (registered, granted or
  owned) below a database the server holds; such a table is an exception to its
  database, and the database's grants are listed table by table (narrower: a table
  created by hand gets its own grants at the next sync). :func:`unseen_notes` says so.
- **Servers that fold names** (``lower_case_table_names`` 1 or 2): ``Secret`` in the
  model and ``secret`` on the server are one table there, two in the model. Like the
  Hive backend, a database or table the model names with capitals (or, with 2, the
  server holds with capitals) gets nothing on the server, and a note says so
  (:func:`folded`, :func:`blocked`).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from pushdown.decide.inventory import Inventory
from pushdown.decide.views import View
from pushdown.model.securables import ObjectRef, SecurableType
from pushdown.model.state import Model
from pushdown_mysql.facts import Grant, exact_db_name
from pushdown_mysql.mapping import TABLE_OPERATIONS

_DATA = (SecurableType.SCHEMA, SecurableType.TABLE)


def named(
    model: Model, catalog: str, roots: list[ObjectRef] | None, keyed: list[ObjectRef] | None = None
) -> set[ObjectRef]:
    """Schemas and tables of ``catalog`` (within ``roots``; ``None``: all of it) that the
    model names: registered, or carrying a grant or an owner, registered or not.
    ``keyed``: :func:`keyed` of the model, when a compile asks for several roots."""
    where = [ObjectRef(SecurableType.CATALOG, (catalog,))] if roots is None else roots
    out = {obj for root in where for obj in model.within(root) if obj.type in _DATA}
    if keyed is None:  # by key: the model's index of what is granted or owned below each root
        out.update(o for root in where for o in model.marked_within(root) if o.type in _DATA)
        return out
    for obj in keyed:
        if any(obj.is_within(r) for r in where):
            out.add(obj)
    return out


def folding_twins(
    model: Model, catalog: str, roots: list[ObjectRef] | None, keyed: list[ObjectRef]
) -> set[ObjectRef]:
    """On a server that folds names: the schemas and tables the model names (registered,
    granted or owned) whose database is, once folded, one that ``roots`` reach. ``c.S1``
    blocks the database ``s1`` for everyone, so a sync that reaches ``s1`` through
    ``c.s1.a`` (a table created or granted by hand there) must see it too."""
    if roots is None:
        return named(model, catalog, None, keyed)
    dbs = {r.names[1].lower() for r in roots if len(r.names) >= 2}
    top = ObjectRef(SecurableType.CATALOG, (catalog,))
    schemas = [o for o in model.children(top) if o.type is SecurableType.SCHEMA and o.names[1].lower() in dbs]
    out = {o for schema in schemas for o in model.within(schema) if o.type in _DATA}
    return out | {o for o in keyed if len(o.names) >= 2 and o.names[1].lower() in dbs}


def keyed_objects(model: Model, catalog: str) -> list[ObjectRef]:
    """The schemas and tables of ``catalog`` that carry a grant or an owner (by key: the
    model's index of the catalog, never the other catalogs' objects)."""
    top = ObjectRef(SecurableType.CATALOG, (catalog,))
    return [o for o in model.marked_within(top) if o.type in _DATA]


def with_named_tables(held: Inventory, catalog: str, names: Iterable[ObjectRef]) -> Inventory:
    """The server's objects plus the tables the model names below a database the server
    holds but that the server does not hold itself: they keep a database-level grant
    from being "exact". Grants are still only ever listed for held tables."""
    extra = [o for o in names if o.type is SecurableType.TABLE and o not in held and o.parent in held]
    if not extra:
        return held
    known = Inventory.of(held.within(ObjectRef(SecurableType.CATALOG, (catalog,))))
    for obj in extra:
        known.add(obj)
    return known


def unseen_notes(view: View, user: str, held: Inventory) -> Iterator[str]:
    """Where a database-level grant would be exact but for tables the server does not hold."""
    for schema in view.containers(SecurableType.SCHEMA):
        unseen: set[ObjectRef] = set()
        for operation, _ in TABLE_OPERATIONS:
            cover = view.coverage(operation, schema)
            if cover.default and cover.exceptions and not any(e in held for e in cover.exceptions):
                unseen |= cover.exceptions
        if unseen:
            shown = ", ".join(sorted(o.name for o in unseen)[:5]) + (", ..." if len(unseen) > 5 else "")
            yield (
                f"user {user}: a grant on all of {schema.name} would also reach {shown}, which the model "
                "names but the server does not hold yet; granted table by table instead (narrower: a table "
                "created there by hand gets its grants at the next sync)"
            )


Key = tuple[str, ...]


def folded(names: Iterable[ObjectRef], held: Inventory, catalog: str, fold: int) -> dict[Key, str]:
    """With ``lower_case_table_names`` ``fold`` (1 or 2), the databases and tables (as
    lower-case keys: ``(db,)`` or ``(db, table)``) nothing may be granted on, each with
    the reason; ``{}`` when the server compares names as they are spelled (0)."""
    if not fold:
        return {}
    out: dict[Key, str] = {}
    for obj in names:
        parts = obj.names[1:]
        if parts != tuple(n.lower() for n in parts):
            out[tuple(n.lower() for n in parts)] = f"{obj.type.value} {obj.name} has capitals"
    if fold == 2:  # the server keeps the spelling but compares in lower case
        for obj in held.within(ObjectRef(SecurableType.CATALOG, (catalog,))):
            parts = obj.names[1:]
            if obj.type in _DATA and parts != tuple(n.lower() for n in parts):
                out.setdefault(tuple(n.lower() for n in parts), f"the server holds {'.'.join(parts)}")
    return out


def blocked(grant: Grant, keys: dict[Key, str]) -> bool:
    """Whether ``grant`` lies on a database, or a table of a database, that ``keys`` block."""
    if grant.db is None:
        return False
    db = grant.db if grant.table is not None else exact_db_name(grant.db)
    if db is None:
        return True
    if (db.lower(),) in keys:
        return True
    return grant.table is not None and (db.lower(), grant.table.lower()) in keys


def fold_notes(keys: dict[Key, str], fold: int) -> Iterator[str]:
    for key, why in sorted(keys.items()):
        yield (
            f"{why}, but the server compares names in lower case (lower_case_table_names = {fold}): "
            f"the model's grants, DENYs and owners there cannot be told apart from those of other spellings, "
            f"so nothing is granted on {'.'.join(key)} (narrower); rename it in lower case"
        )
