"""Compile the model into the grants a metastore should hold. Pure.

The core's entitlement compiler decides (set-wise, per class of users, DENY and the
USE gates included); this module turns its compact answer into metastore grants by
operation (:mod:`pushdown_hive.mapping`):

- table-level grants on every held table where the operation is allowed: the
  metastore has no DENY and no gates, so a schema-level ALLOW is expanded to the
  tables held, minus the denied ones, and a database-level grant is never used for
  table access (it would reach tables the model denies);
- ``CREATE`` on a database where the user may create tables there;
- one grant per user (``USER`` principals): see :func:`principal_notes` for why the
  model's groups and roles are not pushed as metastore groups and roles.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from pushdown.decide.compiler import EntitlementCompiler
from pushdown.decide.inventory import Inventory
from pushdown.decide.views import View
from pushdown.model.principals import Principal
from pushdown.model.securables import ObjectRef, SecurableType
from pushdown.model.state import Model
from pushdown.reconcile.backend import Desired
from pushdown.reconcile.scope import Region, Resolved
from pushdown_hive.facts import USER, HiveGrant
from pushdown_hive.mapping import ALL, CREATE, OPERATIONS, TABLE_OPERATIONS
from pushdown_hive.readback import ServerRead

Naming = Callable[[str], str]


def held_inventory(catalog: str, server: ServerRead) -> Inventory:
    """The metastore's databases and tables in model names, under ``catalog``."""
    held = Inventory.of(ObjectRef(SecurableType.SCHEMA, (catalog, d)) for d in server.databases)
    for db, table in server.tables:
        held.add(ObjectRef(SecurableType.TABLE, (catalog, db, table)))
    held.add(ObjectRef(SecurableType.CATALOG, (catalog,)))
    return held


def compile_desired(
    model: Model, catalog: str | None, server: ServerRead, scope: Resolved, naming: Naming
) -> Desired:
    if catalog is None:
        return Desired(frozenset(), ("no catalog names this backend; every managed grant is revoked",))
    held = held_inventory(catalog, server)
    compiler = EntitlementCompiler(model, OPERATIONS)
    facts: set[HiveGrant] = set()
    notes: set[str] = set()
    clashing = _clashes(model, scope, naming)
    notes |= {
        f"users {', '.join(sorted(users))} all map to metastore user {name!r}: their grants are withheld "
        "(narrower) until pushdown_map_principal tells them apart"
        for name, users in clashing.items()
    }
    withheld = {u for users in clashing.values() for u in users}
    for region in scope.regions:
        roots = _roots(region, catalog)
        ent = compiler.compile(held, region.users, roots)
        for user in ent.users:
            if user in withheld:
                continue
            view = ent.view(user)
            mine = set(user_grants(view, naming(user), held))
            facts |= mine
            if mine:
                notes |= principal_notes(model, user)
            everything = ObjectRef(SecurableType.CATALOG, (catalog,))
            if region.roots is None and view.allowed(
                "create_schema", held.generic(everything, SecurableType.SCHEMA)
            ):
                notes.add(
                    f"user {user} may create schemas in catalog {catalog}, but the metastore has no grant "
                    "for creating databases that pushdown may use: not granted (narrower)"
                )
    return Desired(frozenset(facts), tuple(sorted(notes)))


def principal_notes(model: Model, user: str) -> set[str]:
    """Why a user's access through roles and groups is pushed as per-user grants."""
    out = set()
    for role in sorted(model.roles_of(user)):
        out.add(
            f"role {role}: pushed as per-user grants to its holders, not as a metastore role (the metastore "
            "has no DENY and no USE gates, so what a role allows depends on its holders' other roles)"
        )
    for group, members in sorted(model.groups.items()):
        if user in members:
            out.add(
                f"group {group}: pushed as per-user grants to its members, not to metastore GROUP {group!r} "
                "(the metastore resolves groups through Hadoop's group mapping, which pushdown cannot read)"
            )
    return out


def user_grants(view: View, name: str, held: Inventory) -> Iterator[HiveGrant]:
    for schema in view.containers(SecurableType.SCHEMA):
        yield from database_grants(view, name, schema, held)


def database_grants(view: View, name: str, schema: ObjectRef, held: Inventory) -> Iterator[HiveGrant]:
    db = schema.names[1]
    if not view.allowed("load_schema", schema):
        return  # every table operation and create_table need the schema gate
    if view.allowed("create_table", held.generic(schema, SecurableType.TABLE)):
        yield HiveGrant(USER, name, db, None, CREATE)
    owned = {t.names[2] for t in view.coverage("drop_table", schema).members(held)}
    yield from (HiveGrant(USER, name, db, t, ALL) for t in sorted(owned))
    for operation, privileges in TABLE_OPERATIONS:
        for table in view.coverage(operation, schema).members(held):
            if table.names[2] in owned:
                continue
            yield from (HiveGrant(USER, name, db, table.names[2], p) for p in privileges)


def _clashes(model: Model, scope: Resolved, naming: Naming) -> dict[str, set[str]]:
    """Metastore user names that two or more model users map to: none of them gets any."""
    everyone = any(r.users is None for r in scope.regions)
    users = model.users if everyone else {u for r in scope.regions for u in r.users or ()}
    by_name: dict[str, set[str]] = {}
    for user in users:
        by_name.setdefault(naming(user), set()).add(user)
    return {n: us for n, us in by_name.items() if len(us) > 1}


def _roots(region: Region, catalog: str) -> list[ObjectRef] | None:
    """The region's roots inside the enforced catalog; ``None`` for all of it."""
    if region.roots is None:
        return None
    out = []
    for root in region.roots:
        if root.type in (SecurableType.METALAKE, SecurableType.CATALOG):
            if root.type is SecurableType.METALAKE or root.names[0] == catalog:
                return None
            continue
        if root.catalog == catalog:
            out.append(root)
    return out


def mapped(map_principal: Callable[[Principal], str]) -> Naming:
    return lambda user: map_principal(Principal.user(user))
