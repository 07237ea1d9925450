"""Read a Unity Catalog server back, narrowed to a scope: the schemas and tables of the
enforced catalog the scope reaches, and every principal's privileges on each
(``GET /permissions/{type}/{full_name}``; the backend's token must own the catalog or be
the metastore admin, else the server shows only the token's own grants).

A schema the scope reaches only through some of its tables (a one-table change: the
backend keeps a table root a table, :meth:`UnityCatalogBackend.widen`) is read *alone*:
its tables are listed (the compile decides the schema-level choice over all of them) but
only the schema's own grants and those of the scope's tables are asked for, not one
``GET /permissions`` per table of the schema (the open server has no call that lists the
grants of many securables at once, nor a version of a schema's grants to check a kept
copy against). The backend reads the schema whole again whenever the compile changes a
schema-level ``SELECT`` or ``MODIFY`` (:meth:`UnityCatalogBackend.read`)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

from pushdown.model.securables import ObjectRef, SecurableType
from pushdown.reconcile.scope import Resolved
from pushdown_unitycatalog.client import Refused, UnityCatalog
from pushdown_unitycatalog.compile import Held
from pushdown_unitycatalog.facts import UCGrant


@dataclass(frozen=True)
class ServerRead:
    held: Held
    grants: frozenset[UCGrant]
    #: objects the server refused to list or show (dropped meanwhile?), in words
    unread: tuple[str, ...] = field(default=())
    #: the server's owner of the catalog (when read whole) and of each schema and table
    #: read, by full name
    owners: dict[str, str] = field(default_factory=dict)
    #: the server's owner of each function, volume and registered model listed, by
    #: (securable type, full name)
    leaf_owners: dict[tuple[str, str], str] = field(default_factory=dict)


def schemas_in(scope: Resolved, catalog: str) -> set[str] | None:
    """The (lower-case) schemas of ``catalog`` the scope reaches; ``None``: all of them."""
    whole, alone = reach(scope, catalog)
    return None if whole is None else whole | set(alone)


def reach(scope: Resolved, catalog: str) -> tuple[set[str] | None, dict[str, set[str]]]:
    """What the scope reaches of ``catalog``: the (lower-case) schemas to read whole
    (``None``: every schema), and the schemas reached only through some of their tables,
    with those tables (lower case)."""
    whole: set[str] = set()
    alone: dict[str, set[str]] = {}
    for region in scope.regions:
        if region.roots is None:
            return None, {}
        for root in region.roots:
            if root.type in (SecurableType.METALAKE, SecurableType.CATALOG):
                if root.type is SecurableType.METALAKE or root.names[0].lower() == catalog:
                    return None, {}
            elif root.catalog is not None and root.catalog.lower() == catalog:
                schema = root.names[1].lower()
                if root.type is SecurableType.TABLE:
                    alone.setdefault(schema, set()).add(root.names[2].lower())
                else:
                    whole.add(schema)
    return whole, {s: t for s, t in alone.items() if s not in whole}


def read_server(
    uc: UnityCatalog, catalog: str, wanted: set[str] | None, alone: dict[str, set[str]] | None = None
) -> ServerRead:
    """The schemas ``wanted`` (``None``: all) read whole, and those of ``alone`` read on
    the schema and the named tables only (their other tables listed, not their grants)."""
    alone = alone or {}
    unread: list[str] = []
    owners: dict[str, str] = {}
    try:
        owners |= {f"{catalog}.{s}": o for s, o in uc.owners(catalog).items()}
        present = {name.split(".", 1)[1] for name in owners}
    except Refused as exc:
        if exc.status != 404:
            raise
        present, unread = set(), [f"catalog {catalog}: not on the server ({exc}); nothing is granted in it"]
    if wanted is None and (present or not unread):
        # the catalog's owner passes every check in it; the permissions API does not show it
        try:
            owners[catalog] = uc.catalog_owner(catalog)
        except Refused as exc:
            unread.append(f"catalog {catalog}: the server refused to show its owner ({exc})")
    schemas = sorted(present if wanted is None else present & (wanted | set(alone)))
    tables: dict[str, tuple[str, ...]] = {}
    leaves: dict[tuple[str, str], str] = {}
    for schema in schemas:
        try:
            listed = uc.owners(catalog, schema)
            tables[schema] = tuple(sorted(listed))
            owners |= {f"{catalog}.{schema}.{t}": o for t, o in listed.items()}
            if wanted is None or schema not in alone:
                leaves |= {(kind, f"{catalog}.{schema}.{n}"): o for kind, n, o in uc.leaves(catalog, schema)}
        except Refused as exc:
            unread.append(f"schema {catalog}.{schema}: the server refused to list its tables ({exc})")
    parts = {s: frozenset(alone[s]) for s in tables if wanted is not None and s in alone and s not in wanted}
    held = Held(catalog, tables, whole=wanted is None, alone=parts)
    grants: set[UCGrant] = set()
    for securable, name in [*_securables(held, bool(present) or not unread), *leaves]:
        try:
            for principal, privileges in uc.permissions(securable, name).items():
                grants |= {UCGrant(securable, name, principal, p) for p in privileges}
        except Refused as exc:
            unread.append(f"{securable} {name}: the server refused to show its grants ({exc})")
    return ServerRead(held, frozenset(grants), tuple(unread), owners, leaves)


def _securables(held: Held, catalog_exists: bool) -> Iterator[tuple[str, str]]:
    if held.whole and catalog_exists:
        yield ("catalog", held.catalog)
    for schema, tables in sorted(held.tables.items()):
        yield ("schema", f"{held.catalog}.{schema}")
        only = held.alone.get(schema)
        yield from (("table", f"{held.catalog}.{schema}.{t}") for t in tables if only is None or t in only)


def within(held: Held) -> object:
    """Which facts the read covers: the catalog's own only when it read the whole catalog;
    of a schema read alone, the schema's own and the named tables' only."""
    schemas = set(held.tables)
    alone = held.alone

    def covers(fact: object) -> bool:
        if not isinstance(fact, UCGrant):
            return False
        if fact.securable == "catalog":
            return held.whole and fact.name == held.catalog
        parts = fact.name.split(".")
        if not (len(parts) >= 2 and parts[0] == held.catalog and parts[1] in schemas):
            return False
        only = alone.get(parts[1])
        if only is None:
            return True
        if fact.securable == "schema":
            return len(parts) == 2
        return fact.securable == "table" and len(parts) == 3 and parts[2] in only

    return covers


def object_of(fact: UCGrant) -> ObjectRef:
    kind = {"catalog": SecurableType.CATALOG, "schema": SecurableType.SCHEMA}.get(
        fact.securable, SecurableType.TABLE
    )
    return ObjectRef(kind, tuple(fact.name.split(".")))
