"""Reading the metastore back, narrowed to a scope, and normalising what it holds.

The Thrift API lists every principal's grants on one object in one call
(``list_privileges`` with no principal name), so a read costs one call for the
database list, one per database for its tables (``get_all_tables`` for a database in
scope whole; for some tables of it, ``get_table_objects_by_name`` of those names,
which answers the ones that exist and never every table of the database), and one
per database and per table in scope for the grants. A table-level change reads one
table (the backend does not widen a table to its database: every grant but
``CREATE`` is table-level, and a table's change decides nothing about its database's
``CREATE``).

Normalised: the privilege names are upper-cased (Hive's legacy authorization stores
``Select``, the SQL-standard one ``SELECT``), and only the grants whose grantor is the
backend's own are managed facts. The rest — the owner grants the metastore adds to the
tables Spark creates, grants made by hand — are findings when they reach a principal
the model manages, and are never removed unless the backend is told to own them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace

from pushdown.model.securables import ObjectRef, SecurableType
from pushdown.reconcile.reach import Reach, scope_reach
from pushdown.reconcile.scope import Region, Resolved
from pushdown_hive.facts import ROLE, USER, HiveFact, HiveGlobal, HiveGrant, HiveHeld, HiveMember, HiveRole
from pushdown_hive.identity import Identity
from pushdown_hive.metastore import Listed, Metastore, Refused, TableInfo
from pushdown_hive.roles import Play, ServerRoles

#: what a scope reaches on the metastore (the core's :class:`Reach`)
ServerScope = Reach


def fold(obj: ObjectRef, catalog: str | None) -> ObjectRef:
    """``obj`` as the metastore names it: databases and tables of ``catalog`` in lower
    case (``c.s.Secret`` is the metastore's table ``s.secret``)."""
    if catalog is None or obj.catalog != catalog or len(obj.names) < 2:
        return obj
    return ObjectRef(obj.type, (obj.names[0], *(n.lower() for n in obj.names[1:])))


def folded(scope: Resolved, catalog: str | None) -> Resolved:
    """``scope`` with every root in the metastore's names (:func:`fold`)."""
    return scope.widened(lambda obj: fold(obj, catalog))


def server_scope(scope: Resolved, catalog: str | None) -> ServerScope:
    """What ``scope`` reaches in ``catalog`` (nothing when no catalog names the backend),
    in the metastore's (lower-case) names: :func:`scope_reach` over :func:`folded`. Any
    catalog reaches every database (the core's rule, wider than this backend's earlier
    one, which skipped another catalog's root)."""
    return scope_reach(folded(scope, catalog), catalog)


@dataclass(frozen=True)
class ServerRead:
    """One read of the metastore: what it holds in scope, every grant there, and the cost."""

    databases: frozenset[str]
    tables: frozenset[tuple[str, str]]
    listed: tuple[Listed, ...]
    calls: int
    #: objects the metastore refused to list (dropped meanwhile): left out of this read
    unread: tuple[str, ...] = ()
    #: per database read by table names, the metastore's description of each table read
    #: (owner, columns): the hand-made state read needs no second call for them
    infos: Mapping[str, tuple[TableInfo, ...]] = field(default_factory=dict)


def read_server(ms: Metastore, where: ServerScope) -> ServerRead:
    """The databases, tables and grants ``where`` reaches, one call per object listed.

    A database or table the metastore refuses to list (most often dropped between two
    calls) is left out, and said: nothing is granted on it, and the rest of the read (and
    every revoke it leads to) goes on."""
    calls = 1
    present = set(ms.databases())
    wanted = present if where.databases is None else present & set(where.databases)
    tables: set[tuple[str, str]] = set()
    listed: list[Listed] = []
    unread: list[str] = []
    held: set[str] = set()
    infos: dict[str, list[TableInfo]] = {}
    for db in sorted(wanted):
        some = None if where.databases is None else where.databases[db]
        calls += 1
        try:
            if some is None:
                calls += 1
                names = ms.tables(db)
            elif some:  # the scope's tables that exist, by name: never every table of the database
                calls += 1
                try:
                    infos[db] = ms.table_infos(db, sorted(some))
                    names = [i.table for i in infos[db]]
                except Refused:  # a name it refuses: the database's list, as before
                    calls += 1
                    names = ms.tables(db)
            else:
                names = []
            listed += ms.grants_on(db, None)
        except Refused as exc:
            unread.append(f"database {db} ({exc})")
            continue
        held.add(db)
        for table in sorted(names):
            if some is not None and table not in some:
                continue
            calls += 1
            try:
                listed += ms.grants_on(db, table)
            except Refused as exc:
                unread.append(f"table {db}.{table} ({exc})")
                continue
            tables.add((db, table))
    kept = {db: tuple(i for i in found if (db, i.table) in tables) for db, found in infos.items()}
    return ServerRead(frozenset(held), frozenset(tables), tuple(listed), calls, tuple(unread), kept)


def normalised(listed: Listed) -> Listed:
    g = listed.grant
    if g.privilege.isupper():
        return listed
    return Listed(
        replace(g, privilege=g.privilege.upper()), listed.grantor, listed.grantor_type, listed.grant_option
    )


def bare_grant(g: HiveGrant) -> HiveGrant:
    """``g`` without its modifier: the privilege alone, as the metastore keys it (it
    refuses a second grant of it whoever granted the first, with or without option)."""
    return replace(g, grant_option=False) if g.grant_option else g


def ours(x: Listed, grantor: str) -> bool:
    """Granted by the backend's grantor, a USER (as it grants; a role of the same name is
    somebody else's). One it made with grant option (by hand: pushdown never does) is
    its own too, a fact of its own (the option is part of it): it is revoked when the
    model does not want it, and replaced by the grant without the option when it does."""
    return x.grantor == grantor and x.grantor_type == USER


def managed_facts(listed: Iterable[Listed], grantor: str) -> frozenset[HiveGrant]:
    """The grants the backend manages: those its grantor made (with their option)."""
    return frozenset(x.grant for x in listed if ours(x, grantor))


def foreign_findings(
    listed: Iterable[Listed], grantor: str, manages: Callable[[HiveGrant], bool], catalog: str
) -> list[str]:
    """Grants by other hands that reach a principal the model manages (or everyone: the
    ``public`` role): access paths that bypass the model, which pushdown leaves alone."""
    out = []
    for x in listed:
        g = x.grant
        if ours(x, grantor):
            continue
        everyone = g.principal_type == "ROLE" and g.principal.rstrip(" ").lower() == "public"
        if not (everyone or manages(g)):
            continue
        out.append(
            f"{g} (granted by {x.grantor_type} {x.grantor!r}, not by pushdown; in catalog "
            f"{catalog}): access that bypasses the model; pushdown leaves it alone (revoke it by hand, "
            "or set manage_foreign_grants = true)"
        )
    return sorted(out)


def object_of(catalog: str, fact: HiveGrant) -> ObjectRef:
    if fact.table is None:
        return ObjectRef(SecurableType.SCHEMA, (catalog, fact.db))
    return ObjectRef(SecurableType.TABLE, (catalog, fact.db, fact.table))


def fact_scope(
    plays: tuple[Play, ...],
    catalog: str | None,
    where: ServerScope,
    identity: Identity,
    role_prefix: str | None,
    modelled: Callable[[str], bool] = lambda role: True,
) -> Callable[[object], bool]:
    """Which facts a scope (its regions widened to the roles in play) covers: a user's
    grant on an object read, for a user the region names; a managed role's grant on an
    object read, when the role is in play; a role's member, when the role is in play
    (every role the region's users hold, in the model or on the metastore, is, where the
    region covers every object); a managed role itself, when in play or when the model has
    no such role (``modelled``; ``role_prefix``: ``None`` when roles are not managed).
    Grants to groups and other roles (never wanted) count wherever their object is read.
    Without a catalog, every fact read is covered.

    A user is named on the metastore as ``identity`` maps it, over the whole model: a
    region names the metastore users its users map to (removed users too), and a name
    no model user maps to any more (an orphan) is in every region, on the objects the
    region covers (the backend's own grants there are unwanted, whoever they were for)."""
    names = [None if p.region.users is None else identity.names_of(p.region.users) for p in plays]

    def names_user(i: int, name: str) -> bool:
        mine = names[i]
        return mine is None or name in mine or identity.orphan(name)

    def within(fact: object) -> bool:
        if catalog is None:
            return True  # no catalog names the backend: every fact it manages is unwanted
        if isinstance(fact, HiveHeld):
            return role_prefix is not None  # never wanted, read with its role
        if isinstance(fact, HiveRole):
            if role_prefix is None:
                return False
            role = fact.name[len(role_prefix) :] if fact.name.startswith(role_prefix) else None
            return (
                role is None or not modelled(role) or any(p.roles is None or role in p.roles for p in plays)
            )
        if isinstance(fact, HiveGlobal):
            return True  # never wanted, read on every sync
        if isinstance(fact, HiveMember):
            if not role_prefix or not fact.role.startswith(role_prefix):
                return True  # pushdown's membership of a role outside the fence: never wanted
            # a role in play is recomputed with all its holders: every member it has is read
            role = fact.role[len(role_prefix) :]
            return any(p.roles is None or role in p.roles for p in plays)
        if not isinstance(fact, HiveGrant) or not where.covers(fact.db, fact.table):
            return False
        obj = object_of(catalog, fact)
        if fact.principal_type == USER:
            return any(
                names_user(i, fact.principal) and Region(None, p.region.roots).covers(None, obj)
                for i, p in enumerate(plays)
            )
        if fact.principal_type == ROLE and role_prefix is not None and fact.principal.startswith(role_prefix):
            role = fact.principal[len(role_prefix) :]
            return any(
                (p.roles is None or role in p.roles) and Region(None, p.region.roots).covers(None, obj)
                for p in plays
            )
        # to a group or a role without the prefix: never wanted, so in scope wherever read
        return any(Region(None, p.region.roots).covers(None, obj) for p in plays)

    return within


def read_roles(
    ms: Metastore, prefix: str, only: frozenset[str] | None = None, known: frozenset[str] | None = None
) -> tuple[ServerRoles, int]:
    """The managed roles (named with ``prefix``), their USER members, and the roles held
    where pushdown grants none (a managed role held by a group or a role, a role held by
    a managed role): one call for the names, two per managed role read. ``only``: which
    managed roles to read the members of (``None``: every one). ``known``: the managed
    roles the metastore holds as the backend knows them (listed before, kept up to date
    by its own creates and drops): the names are then not listed again (the backend
    decides when it must list, :meth:`~pushdown_hive.backend.HiveBackend._must_list`),
    unless a role read has no members (the metastore answers so for a role that does not
    exist: dropped by another hand since)."""
    listed = known is None
    present = frozenset(n for n in ms.role_names() if n.startswith(prefix)) if known is None else known
    names = sorted(present if only is None else present & only)
    held: dict[str, list[tuple[str, str, bool]]] = {}
    nested: set[tuple[str, str, str]] = set()
    for n in names:
        try:
            held[n] = ms.members(n)
            nested |= {(role, ROLE, n) for role in ms.roles_held_by_role(n)}
        except Refused:
            if n in ms.role_names():
                raise  # there, yet unreadable: said as an error, not skipped
            held.pop(n, None)  # dropped since the names were listed: nothing of it is left
    if not listed and any(not rows for rows in held.values()):
        # the metastore answers a missing role with no members: the names tell them apart
        present = frozenset(n for n in ms.role_names() if n.startswith(prefix))
        listed = True
        held = {n: rows for n, rows in held.items() if n in present}
        nested = {edge for edge in nested if edge[2] in present}
    members = {n: frozenset(name for kind, name, _ in rows if kind == USER) for n, rows in held.items()}
    admins = {(n, name) for n, rows in held.items() for kind, name, admin in rows if kind == USER and admin}
    nested |= {(n, kind, name) for n, rows in held.items() for kind, name, _ in rows if kind != USER}
    present -= {n for n in names if n not in held}
    return ServerRoles(members, frozenset(nested), frozenset(admins), present, only), int(listed) + 2 * len(
        names
    )


def roles_of_users(ms: Metastore, prefix: str, users: Iterable[str]) -> tuple[dict[str, frozenset[str]], int]:
    """The managed roles (prefixed names) each of ``users`` (metastore user names) holds:
    one call per user. A refusal is raised (the metastore answers a user it never met
    with no roles): taken as "holds nothing", it would hide a membership to revoke."""
    out: dict[str, frozenset[str]] = {}
    for user in sorted(users):
        out[user] = frozenset(r for r in ms.roles_held_by_user(user) if r.startswith(prefix))
    return out, len(out)


def role_facts(server: ServerRoles) -> set[HiveFact]:
    """The managed roles, the USER members of those read (a membership WITH ADMIN OPTION
    is a fact of its own, never wanted) and the roles nested by hand."""
    out: set[HiveFact] = {HiveRole(n) for n in server.names()}
    out |= {HiveMember(n, u, (n, u) in server.admins) for n, users in server.members.items() for u in users}
    return out | {HiveHeld(*edge) for edge in server.nested}
