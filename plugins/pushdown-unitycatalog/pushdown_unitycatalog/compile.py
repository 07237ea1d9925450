"""Compile the model into the grants a Unity Catalog server should hold. Pure.

The core's entitlement compiler decides (DENY, the USE gates and owners included); this
module turns its answer into Unity Catalog privileges by operation
(:mod:`pushdown_unitycatalog.mapping`), for each user the fence lets pushdown manage:

- ``USE CATALOG`` / ``USE SCHEMA`` exactly where the model lets the user load the catalog
  or the schema (the server then shows them, as the model does);
- ``SELECT`` and ``MODIFY`` on a schema where the operation is allowed on every table the
  server holds there and on a table that does not exist yet (Unity Catalog's inheritance
  reaches tables created later: a schema-level grant is exact only then); else on each
  allowed table — never on the catalog;
- ``CREATE TABLE`` on a schema, ``CREATE SCHEMA`` on the catalog, where the model lets
  the user create one there.

Groups are expanded to their members (the open server has no groups); DENY and the
gates are compiled away (the server has no DENY). Schemas and tables the model spells
with capitals get nothing (the server keeps names in lower case): a note says so.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field

from pushdown.decide.area import Area
from pushdown.decide.compiler import EntitlementCompiler
from pushdown.decide.inventory import Inventory
from pushdown.decide.views import View
from pushdown.model.securables import ObjectRef, SecurableType
from pushdown.model.state import Model
from pushdown.reconcile.backend import Desired
from pushdown_unitycatalog.facts import UCGrant
from pushdown_unitycatalog.mapping import (
    CREATE_SCHEMA,
    CREATE_TABLE,
    MODIFY,
    OPERATIONS,
    SELECT,
    USE_CATALOG,
    USE_SCHEMA,
)


@dataclass(frozen=True)
class Held:
    """What the server holds in the enforced catalog (lower-case names): schema -> tables
    (every table the server lists there). ``whole``: every schema of the catalog was read
    (else only ``tables``' keys). ``alone``: the schemas whose grants were read only on the
    schema itself and the tables named here (a one-table scope,
    :func:`pushdown_unitycatalog.readback.read_server`); the compile still decides over
    every table of ``tables``."""

    catalog: str
    tables: dict[str, tuple[str, ...]]
    whole: bool = True
    alone: dict[str, frozenset[str]] = field(default_factory=dict)

    def inventory(self) -> Inventory:
        inv = Inventory.of([ObjectRef(SecurableType.CATALOG, (self.catalog,))])
        for schema, tables in self.tables.items():
            inv.add(ObjectRef(SecurableType.SCHEMA, (self.catalog, schema)))
            for t in tables:
                inv.add(ObjectRef(SecurableType.TABLE, (self.catalog, schema, t)))
        return inv


def compile_desired(
    model: Model, held: Held, name_of: Callable[[str], str | None], notes: set[str] | None = None
) -> Desired:
    """``name_of(user)``: the server principal of a model user, ``None`` when pushdown may
    not manage it (outside the fence, or a name shared with another user)."""
    notes = set() if notes is None else notes
    inventory = held.inventory()
    blocked = _blocked(model, held.catalog)
    named = _named_tables(model, held.catalog, held.tables)
    compiler = EntitlementCompiler(model, OPERATIONS)
    holders, anyone = _holders(model, inventory, held.catalog)
    ent = compiler.compile(inventory, holders | ({anyone} if anyone is not None else set()))
    if anyone is not None and any(_grants(ent.view(anyone), held, inventory, blocked, named)):
        ent = compiler.compile(inventory)  # a user with nothing in the catalog gets something: all
    facts: set[UCGrant] = set()
    for user in ent.users:
        principal = name_of(user)
        view = ent.view(user)
        grants = set(_grants(view, held, inventory, blocked, named))
        if principal is None:
            if grants:
                notes.add(f"user {user}: not a principal pushdown manages here; nothing granted (narrower)")
            continue
        facts |= {UCGrant(s, n, principal, p) for s, n, p in grants}
        notes |= _owner_notes(model, user, view, held)
    notes |= _group_notes(model)
    notes |= _case_notes(model, held.catalog)
    return Desired(frozenset(facts), tuple(sorted(notes)))


Triple = tuple[str, str, str]


def _holders(model: Model, inventory: Inventory, catalog: str) -> tuple[set[str], str | None]:
    """The users whose decisions in ``catalog`` can differ from a user's with nothing
    there, found by the model's indexes (never a pass over every user): the holders of the
    roles with a grant on the catalog's held objects or on their paths, the owners of its
    objects (held or not) and of the paths, the service admins. Any other user decides
    like ``anyone`` (one of them, ``None`` when there is none): the same class with no
    role of the area, not an admin, owning nothing there (the compiler's own classes,
    :meth:`EntitlementCompiler._part`), so the same grants; compiling ``anyone`` with the
    holders tells whether they all get nothing."""
    area = Area.of(model, inventory, {ObjectRef(SecurableType.CATALOG, (catalog,))})
    out: set[str] = set(model.service_admins)
    for role in area.role_nodes:
        out |= model.holders_of(role)
    key = ObjectRef(SecurableType.CATALOG, (catalog,))
    for obj in itertools.chain(area.above, area.inside, model.marked_within(key)):
        owner = model.owners.get(obj)
        if owner is not None:
            out.add(owner)
    out &= model.users
    anyone = next((u for u in model.users if u not in out), None)  # at most len(out) + 1 steps
    return out, anyone


def _grants(
    view: View,
    held: Held,
    inventory: Inventory,
    blocked: set[tuple[str, ...]],
    named: dict[str, set[ObjectRef]],
) -> Iterator[Triple]:
    allowed = view.allowed
    catalog = ObjectRef(SecurableType.CATALOG, (held.catalog,))
    if not allowed("load_catalog", catalog):
        return
    yield ("catalog", held.catalog, USE_CATALOG)
    if allowed("create_schema", inventory.generic(catalog, SecurableType.SCHEMA)):
        yield ("catalog", held.catalog, CREATE_SCHEMA)
    for schema, tables in sorted(held.tables.items()):
        if _cased(schema) or (schema,) in blocked:
            continue
        kept = tuple(t for t in tables if (schema, t) not in blocked)
        more = named.get(schema, set())
        yield from _schema_grants(view, held.catalog, schema, tables, kept, inventory, more)


def _schema_grants(
    view: View,
    catalog: str,
    schema: str,
    tables: tuple[str, ...],
    kept: tuple[str, ...],
    inv: Inventory,
    named: set[ObjectRef],
) -> Iterator[Triple]:
    """``kept``: the tables that may get grants (not one the model spells with capitals);
    ``named``: tables of the schema the model names (a grant, a DENY, an owner) that the
    server may not hold yet: a schema-level grant would reach them the day they appear,
    so it is used only where they are allowed too."""
    allowed = view.allowed
    ref = ObjectRef(SecurableType.SCHEMA, (catalog, schema))
    full = f"{catalog}.{schema}"
    if not allowed("load_schema", ref):
        return
    yield ("schema", full, USE_SCHEMA)
    new = inv.generic(ref, SecurableType.TABLE)
    if allowed("create_table", new):
        yield ("schema", full, CREATE_TABLE)
    refs = [ObjectRef(SecurableType.TABLE, (catalog, schema, t)) for t in kept if not _cased(t)]
    reads = {r for r in refs if allowed("load_table", r)}
    writes = {r for r in reads if allowed("alter_table", r)}
    whole = len(refs) == len(tables)  # a table with capitals is never covered by a schema grant
    for privilege, on, future in (
        (SELECT, reads, allowed("load_table", new)),
        (MODIFY, writes, allowed("load_table", new) and allowed("alter_table", new)),
    ):
        later = all(
            allowed("load_table", t) and (privilege == SELECT or allowed("alter_table", t)) for t in named
        )
        if whole and future and later and len(on) == len(refs):
            yield ("schema", full, privilege)
            continue
        yield from (("table", ".".join(r.names), privilege) for r in sorted(on, key=lambda r: r.names))


def _cased(name: str) -> bool:
    return name != name.lower()


def _owner_notes(model: Model, user: str, view: View, held: Held) -> set[str]:
    """What an owner in the model cannot be on the server (ownership is the creator's)."""
    return {
        f"user {user} owns {obj.type.value} {'.'.join(obj.names)}: Unity Catalog's permissions API cannot "
        "give ownership, so the owner gets the privileges above (USE, SELECT, MODIFY, CREATE), not DROP "
        "or the right to grant (narrower)"
        for obj in sorted(model.owned_by.get(user, ()), key=lambda o: o.names)
        if obj.catalog == held.catalog and view.allowed("load_catalog", obj.path[1])
    }


def _blocked(model: Model, catalog: str) -> set[tuple[str, ...]]:
    """The server names (folded) of schemas and tables the model spells with capitals: what
    the model says of ``Big`` cannot be matched to the server's ``big``, so ``big`` gets
    nothing and its schema no schema-level SELECT or MODIFY (never the wider side)."""
    return {tuple(n.lower() for n in obj.names[1:]) for obj in _capitals(model, catalog)}


def _named_tables(model: Model, catalog: str, schemas: Iterable[str]) -> dict[str, set[ObjectRef]]:
    """The tables the model names (registered, granted or owned) in each of ``schemas``
    (server names, lower case), by key: the tables below the schema spelled in lower case
    (:attr:`Model.kids`, :meth:`Model.marked_within`) and those spelled with capitals
    (:meth:`Model.capitals_within`), never a pass over every object of the model."""
    out: dict[str, set[ObjectRef]] = {}
    for schema in schemas:
        key = ObjectRef(SecurableType.SCHEMA, (catalog, schema))
        found = {
            obj
            for obj in itertools.chain(
                model.children(key), model.marked_within(key), model.capitals_within(key)
            )
            if obj.type is SecurableType.TABLE  # as the model names it: its own DENY decides
        }
        if found:
            out[schema] = found
    return out


def _capitals(model: Model, catalog: str) -> Iterator[ObjectRef]:
    """The schemas and tables of ``catalog`` whose names have capitals (registered, granted
    or owned), by the model's index (keyed by schema in lower case: as many keys as such
    schemas, not objects)."""
    for key, spelled in model.capitals.items():
        if key.names[0] == catalog:
            yield from spelled


def _group_notes(model: Model) -> set[str]:
    return {
        f"group {g}: the open Unity Catalog server has no groups; its members get its grants one by one"
        for g, members in model.groups.items()
        if members
    }


def _case_notes(model: Model, catalog: str) -> set[str]:
    return {
        f"{obj.type.value} {'.'.join(obj.names)} has capitals, but Unity Catalog keeps names in "
        "lower case: nothing is granted on it (narrower); rename it in lower case"
        for obj in _capitals(model, catalog)
    }
