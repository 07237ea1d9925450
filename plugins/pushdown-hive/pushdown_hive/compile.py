"""Compile the model into the grants a metastore should hold. Pure.

The core's entitlement compiler decides (set-wise, per class of users, DENY and the
USE gates included); this module turns its compact answer into metastore grants by
operation (:mod:`pushdown_hive.mapping`):

- table-level grants on every held table where the operation is allowed: the
  metastore has no DENY and no gates, so a schema-level ALLOW is expanded to the
  tables held, minus the denied ones, and a database-level grant is never used for
  table access (it would reach tables the model denies);
- ``CREATE`` on a database where the user may create tables there;
- model roles as metastore roles where that stays exact (:mod:`pushdown_hive.roles`),
  each holder's remaining access as grants to the user; model groups are expanded to
  their members (:func:`group_notes` says why). With the setting ``roles = false``
  everything is per-user grants (:func:`principal_notes`).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field, replace

from pushdown.decide.compiler import EntitlementCompiler
from pushdown.decide.inventory import Inventory
from pushdown.decide.views import View
from pushdown.model.principals import Principal
from pushdown.model.securables import ObjectRef, SecurableType
from pushdown.model.state import Model
from pushdown.reconcile.backend import Desired
from pushdown.reconcile.identity import Mapper
from pushdown.reconcile.scope import Region
from pushdown_hive.facts import ROLE, USER, HiveFact, HiveGrant, HiveMember, HiveRole
from pushdown_hive.identity import Identity, identity_of
from pushdown_hive.identity import notes as identity_notes
from pushdown_hive.mapping import ALL, CREATE, OPERATIONS, TABLE_OPERATIONS
from pushdown_hive.readback import ServerRead
from pushdown_hive.roles import Play, Triple, carried, holders, leads


def held_inventory(catalog: str, server: ServerRead) -> Inventory:
    """The metastore's databases and tables in model names, under ``catalog``."""
    held = Inventory.of(ObjectRef(SecurableType.SCHEMA, (catalog, d)) for d in server.databases)
    for db, table in server.tables:
        held.add(ObjectRef(SecurableType.TABLE, (catalog, db, table)))
    held.add(ObjectRef(SecurableType.CATALOG, (catalog,)))
    return held


@dataclass(frozen=True)
class RoleSetup:
    """Whether model roles become metastore roles (where exact), and their name prefix;
    ``held``: what the metastore's managed roles carry now (by prefixed name)."""

    enabled: bool = True
    prefix: str = "pd_"
    held: dict[str, set[Triple]] = field(default_factory=dict)
    #: model roles whose metastore names are one once case is folded (they carry nothing)
    twins: frozenset[str] = frozenset()


def compile_desired(
    model: Model,
    catalog: str | None,
    server: ServerRead,
    plays: tuple[Play, ...],
    naming: Mapper,
    roles: RoleSetup | None = None,
    identity: Identity | None = None,
) -> Desired:
    """``identity``: the whole model's user names (computed from ``naming`` when not given)."""
    if catalog is None:
        return Desired(frozenset(), ("no catalog names this backend; every managed grant is revoked",))
    setup = roles or RoleSetup(enabled=False)
    held = held_inventory(catalog, server)
    compiler = EntitlementCompiler(model, OPERATIONS)
    facts: set[HiveFact] = set()
    notes: set[str] = set()
    who = identity or identity_of(model, naming)
    notes |= identity_notes(who)
    withheld = set(who.withheld)
    naming = who.names.__getitem__  # from here on, only users that map to a name of their own
    everything = ObjectRef(SecurableType.CATALOG, (catalog,))
    twins = role_twins(model, setup.prefix) if setup.enabled else frozenset()
    setup = replace(setup, twins=twins)
    notes |= {
        f"role {role}: its metastore role {setup.prefix + role!r} is another role's once case is folded "
        "(a metastore on a case-insensitive database holds them as one): it carries nothing there, its "
        "holders get per-user grants"
        for role in sorted(twins)
    }
    if setup.enabled:  # the roles in play (the others are left as they are)
        facts |= {
            HiveRole(setup.prefix + r)
            for r in in_play(model, plays)
            if r not in twins and holders(model, r, withheld)
        }
    for play in plays:
        region = play.region
        ent = compiler.compile(held, region.users, _roots(region, catalog))
        per_user: dict[str, set[Triple]] = {}
        for user in ent.users:
            if user in withheld or user not in who.names:
                continue  # a clash, no usable name, or a user no longer in the model
            view = ent.view(user)
            per_user[user] = {(g.db, g.table, g.privilege) for g in user_grants(view, naming(user), held)}
            if region.roots is None and view.allowed(
                "create_schema", held.generic(everything, SecurableType.SCHEMA)
            ):
                notes.add(
                    f"user {user} may create schemas in catalog {catalog}, but the metastore has no grant "
                    "for creating databases that pushdown may use: not granted (narrower)"
                )
        through: dict[str, set[Triple]] = {}
        if setup.enabled:
            through = _role_facts(model, catalog, play, setup, per_user, withheld, naming, facts, notes)
        for user, triples in per_user.items():
            name = naming(user)
            via = set().union(*(through.get(r, set()) for r in model.roles_of(user))) if through else set()
            facts |= {HiveGrant(USER, name, db, t, p) for db, t, p in triples - via}
            if triples and not setup.enabled:
                notes |= principal_notes(model, user)
            elif triples:
                notes |= group_notes(model, user)
    cased = mixed_case(model, catalog, plays)
    if cased:
        facts = {f for f in facts if not (isinstance(f, HiveGrant) and _blocked(f, cased))}
        notes |= {
            f"{kind} {obj} has capitals, but the metastore keeps names in lower case: its grants, "
            f"DENYs and owner do not reach {'.'.join(names)} there, so nothing is granted on it (narrower); "
            "rename it in lower case"
            for names, (kind, obj) in sorted(cased.items())
        }
    return Desired(frozenset(facts), tuple(sorted(notes)))


def mixed_case(model: Model, catalog: str, plays: tuple[Play, ...]) -> dict[tuple[str, ...], tuple[str, str]]:
    """Schemas and tables in scope the model names with capitals, registered or not (a
    grant, a DENY or an owner names them): the metastore stores ``Sales`` as ``sales``,
    so what the model says about ``Sales`` cannot be matched there, and the lower-case
    object gets nothing (never the wider side). The plays' roots are in folded names."""
    some: set[str] = set()
    dbs: set[str] | None = some
    for play in plays:
        found = _roots(play.region, catalog)
        if found is None:
            dbs = None
            break
        some |= {r.names[1].lower() for r in found if len(r.names) > 1}
    out: dict[tuple[str, ...], tuple[str, str]] = {}
    for obj in named(model, catalog, dbs):
        folded = tuple(n.lower() for n in obj.names[1:])
        if obj.type in (SecurableType.SCHEMA, SecurableType.TABLE) and obj.names[1:] != folded:
            out[folded] = (obj.type.value, obj.name)
    return out


def named(model: Model, catalog: str, dbs: set[str] | None) -> Iterator[ObjectRef]:
    """The objects of ``catalog`` with capitals in their names that the model registers,
    grants on or gives an owner, in the databases ``dbs`` (folded names; ``None``: every
    one): by key (:meth:`Model.capitals_within`), never a pass over the whole model."""
    if dbs is None:
        dbs = {k.names[1] for k in model.capitals if k.names[0] == catalog}
    for db in sorted(dbs):
        yield from model.capitals_within(ObjectRef(SecurableType.SCHEMA, (catalog, db)))


def _blocked(fact: HiveGrant, cased: dict[tuple[str, ...], tuple[str, str]]) -> bool:
    """On a database, or a table of a database, the model spells with capitals."""
    return (fact.db,) in cased or (fact.table is not None and (fact.db, fact.table) in cased)


def _role_facts(
    model: Model,
    catalog: str,
    play: Play,
    setup: RoleSetup,
    per_user: dict[str, set[Triple]],
    withheld: set[str],
    naming: Mapper,
    facts: set[HiveFact],
    notes: set[str],
) -> dict[str, set[Triple]]:
    """What each role of the play's users carries (recomputed for the roles in play, as
    held for the others), adding the roles' grants and memberships to ``facts``."""
    through: dict[str, set[Triple]] = {}
    users = set(per_user)
    for role in sorted({r for u in users for r in model.roles_of(u)} | set(play.roles or ())):
        name = setup.prefix + role
        if play.roles is not None and role not in play.roles:
            # its holders' decisions did not change; nor did its members (out of scope)
            through[role] = setup.held.get(name, set())
            continue
        who = None if role in setup.twins else holders(model, role, withheld)
        if who is None:
            notes.add(
                f"role {role}: carries nothing in the metastore (a holder's name clashes, or the role's "
                "own); per-user grants"
            )
            through[role] = set()
            continue
        mine = carried(model, role, catalog, who, per_user)
        through[role] = mine
        facts |= {HiveGrant(ROLE, name, db, t, p) for db, t, p in mine}
        facts |= {HiveMember(name, naming(u)) for u in who}
        lead = leads(model, role, catalog)
        apart = sum(1 for u in who for t in per_user.get(u, set()) - mine if lead(t))
        if apart:
            notes.add(
                f"role {role}: {apart} grant(s) its own ALLOWs lead to stay per-user grants to its "
                f"holders, not on metastore role {name} (DENY, USE gates or owners make its holders "
                "differ there; the metastore has none of these)"
            )
    return through


def in_play(model: Model, plays: tuple[Play, ...]) -> Iterable[str]:
    """The model roles some play recomputes (every role when one play takes them all)."""
    if any(p.roles is None for p in plays):
        return model.roles
    return {r for p in plays for r in p.roles or () if r in model.roles}


def role_twins(model: Model, prefix: str) -> frozenset[str]:
    """Model roles whose metastore names are one once case is folded (``R`` and ``r``):
    kept with the model object and its count of roles created and deleted
    (:attr:`Model.roster_stamped`), so a sync of the same model with no role come or gone
    makes no set of every role again."""
    last = _LAST_TWINS[0] if _LAST_TWINS else None
    if last is not None and last[0] is model and last[1] == model.roster_stamped and last[2] == prefix:
        return last[3]
    twins = _twins(frozenset(model.roles), prefix)
    _LAST_TWINS[:] = [(model, model.roster_stamped, prefix, twins)]
    return twins


#: the last :func:`role_twins` answer: (model, its roster count, prefix, twins)
_LAST_TWINS: list[tuple[Model, int, str, frozenset[str]]] = []


@functools.lru_cache(maxsize=4)
def _twins(roles: frozenset[str], prefix: str) -> frozenset[str]:
    """:func:`role_twins` of a set of roles, kept while the model's roles stay the same."""
    by_name: dict[str, set[str]] = {}
    for role in roles:
        by_name.setdefault((prefix + role).casefold(), set()).add(role)
    return frozenset(r for roles in by_name.values() if len(roles) > 1 for r in roles)


def group_notes(model: Model, user: str) -> set[str]:
    return {
        f"group {group}: its members get its roles and grants one by one, not through metastore "
        f"GROUP {group!r} (the metastore resolves groups through Hadoop's group mapping, which "
        "pushdown cannot read)"
        for group, members in sorted(model.groups.items())
        if user in members
    }


def principal_notes(model: Model, user: str) -> set[str]:
    """Why a user's access through roles and groups is pushed as per-user grants
    (the setting ``roles = false``)."""
    out = {
        f"role {role}: pushed as per-user grants to its holders (setting roles = false)"
        for role in sorted(model.roles_of(user))
    }
    return out | group_notes(model, user)


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


def mapped(map_principal: Callable[[Principal], str]) -> Mapper:
    return lambda user: map_principal(Principal.user(user))
