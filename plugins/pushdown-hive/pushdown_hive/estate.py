"""What a Hive Metastore holds, in the model's terms (``pushdown import --backend``).

Read by the backend's own sync reader, within its fence (grants by its grantor, roles
with its role prefix; every grant with ``manage_foreign_grants = true``). A managed role
``<role_prefix>R`` is model role ``R`` with its USER members; a user's own grants go to a
role ``grants_of_<user>``. The privilege mapping (:mod:`pushdown_hive.mapping`) is read in
reverse: ``SELECT`` on a table proposes SELECT_TABLE, ``SELECT, INSERT, UPDATE, DELETE``
MODIFY_TABLE, ``ALL`` to a user the table's ownership, ``CREATE`` on a database
CREATE_TABLE on the schema (each with the USE gates); a table's metastore owner (a USER)
is proposed as its model owner, with the gates it needs, before any other user holding
``ALL`` there (the model has one owner). The core keeps a proposal only where the
backend's compile of it is held already (:func:`pushdown.reconcile.estate.adopt`): an
owner compiles to ``ALL`` on the table to that user. The rest is left out with its reason;
a database's owner, and a table's GROUP or ROLE owner, are listed as outside the fence.

A metastore user is a model user only through the mapping the sync uses, inverted
(:func:`inverse`): the model user (of the configured store's, or the metastore's own
names) that ``pushdown_map_principal`` maps to exactly that name. A name no model user
maps to, or that two map to (a clash the sync withholds), is imported as nobody.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import replace
from typing import TYPE_CHECKING

from pushdown.errors import ConfigError, TemporaryBackendError
from pushdown.model import changes as ch
from pushdown.model.principals import Principal
from pushdown.model.securables import ObjectRef
from pushdown.model.state import Model
from pushdown.reconcile.estate import Estate, Ownership, Proposal, grants_role
from pushdown.reconcile.identity import inverse as invert
from pushdown.reconcile.plan import Fact
from pushdown.reconcile.scope import Scope
from pushdown_hive.facts import GROUP, ROLE, USER, HiveGlobal, HiveGrant, HiveHeld, HiveMember, HiveRole
from pushdown_hive.identity import identity_of
from pushdown_hive.mapping import ALL, CREATE, IMPLIED_BY_ALL
from pushdown_hive.metastore import Refused, TableInfo, Unreachable

if TYPE_CHECKING:
    from pushdown_hive.backend import HiveBackend, HiveSnapshot

_MODIFY = frozenset({"SELECT", "INSERT", "UPDATE", "DELETE"})


def read_estate(backend: HiveBackend, model: Model) -> Estate:
    catalog = backend.catalog(model)
    if catalog is None:
        raise ConfigError(
            f"backend {backend.name}: no catalog names it (or several do); name the one catalog its "
            'metastore holds (catalogs = ["..."] in its configuration) to import it'
        )
    base = Model()
    bound = ObjectRef.of("catalog", (catalog,))
    for event in ch.create_object(base, bound, properties={"backend": backend.name}):
        base.apply(event)
    snapshot = backend.read(base, Scope.everything().resolve(base))

    def compile_(m: Model) -> frozenset[Fact]:
        seen = replace(snapshot, identity=identity_of(m, backend.naming))
        return frozenset(backend.compile(m, seen, Scope.everything().resolve(m)).facts)

    estate = Estate(
        backend.name,
        frozenset(snapshot.facts),
        compile_,
        catalogs={catalog: {"backend": backend.name}},
        findings=snapshot.findings,
    )
    owners = _owners(backend, snapshot)
    names = _server_users(snapshot, owners)
    who = inverse(backend, model, names)
    _principals(backend, snapshot, estate, who)
    _grants(backend, catalog, snapshot, estate, who, owners)
    return estate


def inverse(backend: HiveBackend, model: Model, names: set[str]) -> dict[str, tuple[str | None, str]]:
    """Each metastore user name of ``names`` -> (its model user, "") or (``None``, why not):
    the mapping the sync uses (``pushdown_map_principal``, names compared as the backend's
    identity compares them: case folded) inverted by :func:`pushdown.reconcile.identity.inverse`."""
    return invert(
        model.users, names, backend.naming, caseless=True, describe=lambda n: f"metastore user {n!r}"
    )


def _server_users(snapshot: HiveSnapshot, owners: dict[tuple[str, str], TableInfo]) -> set[str]:
    names = {f.user for f in snapshot.facts if isinstance(f, HiveMember)}
    names |= {f.principal for f in snapshot.facts if isinstance(f, HiveGrant) and f.principal_type == USER}
    return names | {i.owner for i in owners.values() if i.owner and i.owner_type == USER}


def _owners(backend: HiveBackend, snapshot: HiveSnapshot) -> dict[tuple[str, str], TableInfo]:
    """The metastore's owner of each table read (one ``get_table_objects_by_name`` per
    database), by (database, table)."""
    by_db: dict[str, list[str]] = defaultdict(list)
    for db, table in snapshot.server.tables:
        by_db[db].append(table)
    out: dict[tuple[str, str], TableInfo] = {}
    for db, tables in sorted(by_db.items()):
        try:
            infos = backend.metastore.table_infos(db, sorted(tables))
        except Unreachable as exc:
            raise TemporaryBackendError(
                backend.name, f"the metastore did not answer while reading table owners ({exc})"
            ) from exc
        except Refused:
            continue  # dropped meanwhile: nothing of it is imported as its owner
        finally:
            backend.calls += 1
        out.update({(db, info.table.lower()): info for info in infos})
    return out


def _model_role(backend: HiveBackend, name: str) -> str | None:
    prefix = backend.role_fence
    if not backend.roles or prefix is None or not name.startswith(prefix) or name == prefix:
        return None
    return name[len(prefix) :]


def _principals(
    backend: HiveBackend, snapshot: HiveSnapshot, estate: Estate, who: dict[str, tuple[str | None, str]]
) -> None:
    for fact in snapshot.facts:
        if isinstance(fact, HiveRole):
            role = _model_role(backend, fact.name)
            if role is None:
                estate.why[fact] = "a role in the fence that names no model role"
            else:
                estate.roles.setdefault(role, set())
        elif isinstance(fact, HiveMember):
            role = _model_role(backend, fact.role)
            if fact.admin:
                estate.why[fact] = (
                    "admin option: the model manages grants through ownership and MANAGE_GRANTS"
                )
            elif role is not None:
                user, why_not = who[fact.user]
                if user is None:
                    estate.why[fact] = why_not
                else:
                    estate.roles.setdefault(role, set()).add(Principal.user(user))
                    estate.users.add(user)
        elif isinstance(fact, HiveHeld):
            estate.why[fact] = (
                f"a role held by a {fact.principal_type.lower()}: pushdown grants metastore roles to users "
                "only (a model group is expanded to its members)"
            )
        elif isinstance(fact, HiveGlobal):
            estate.why[fact] = "a server-level privilege: it covers every database and table"
    for fact in snapshot.facts:
        role = _model_role(backend, fact.name) if isinstance(fact, HiveRole) else None
        if role is not None and not estate.roles.get(role):
            estate.why[fact] = (
                "a role no user holds: pushdown keeps a metastore role only while a user holds it"
            )
        if not backend.roles and isinstance(fact, HiveRole | HiveMember):
            estate.why[fact] = (
                "with roles = false the backend keeps no metastore role (every grant is per user)"
            )


def _grants(
    backend: HiveBackend,
    catalog: str,
    snapshot: HiveSnapshot,
    estate: Estate,
    mapped: dict[str, tuple[str | None, str]],
    owners: dict[tuple[str, str], TableInfo],
) -> None:
    held: dict[tuple[str, str, str, str | None], set[str]] = defaultdict(set)
    source: dict[tuple[str, str, str, str | None], set[Fact]] = defaultdict(set)
    taken = set(estate.roles)
    for fact in snapshot.facts:
        if not isinstance(fact, HiveGrant):
            continue
        why = _why(backend, fact)
        principal = fact.principal
        if why is None and fact.principal_type == USER:
            user, why_not = mapped[fact.principal]
            why = why_not or None
            principal = user or principal
        if why is not None:
            estate.why[fact] = why
            continue
        held[(fact.principal_type, principal, fact.db, fact.table)].add(fact.privilege)
        source[(fact.principal_type, principal, fact.db, fact.table)].add(fact)
    for key in held:
        if key[0] == USER:
            estate.users.add(key[1])
    alls: dict[tuple[str, str], list[Ownership]] = defaultdict(list)
    for key, privileges in sorted(held.items(), key=lambda kv: (kv[0][3] is not None, kv[0])):
        ptype, principal, db, table = key
        facts = frozenset(source[key])
        to: tuple[Principal, ...] = ()
        if ptype == USER and backend.roles:
            for fact in facts:
                estate.why[fact] = (
                    "a user's own grant: the model grants through roles, and with roles = true the backend "
                    "makes each a metastore role (with roles = false it grants per user, and this imports)"
                )
        if ptype == USER:
            role, to = grants_role(principal, taken), (Principal.user(principal),)
        else:
            role = _model_role(backend, principal) or ""
        schema = ObjectRef.of("schema", (catalog, db))
        gates = ((ObjectRef.of("catalog", (catalog,)), ("USE_CATALOG",)), (schema, ("USE_SCHEMA",)))
        where = f"`{db}`" if table is None else f"`{db}`.`{table}`"
        who = f"{ptype.lower()} {principal}"
        if table is None:
            estate.proposals.append(
                Proposal(
                    role,
                    (*gates, (schema, ("CREATE_TABLE",))),
                    shows=f"CREATE_TABLE for CREATE ON {where} of {who}",
                    to=to,
                    facts=facts,
                )
            )
            continue
        target = ObjectRef.of("table", (catalog, db, table))
        if ALL in privileges and ptype == USER:
            shows = f"owner of {where} for ALL of {who}"
            gated = Proposal(role, gates, shows=f"the USE gates of {who}", to=to)
            alls[(db, table)].append(Ownership(target, principal, shows=shows, facts=facts, needs=gated))
        for model_privilege, needs in (("MODIFY_TABLE", _MODIFY), ("SELECT_TABLE", frozenset({"SELECT"}))):
            if needs <= privileges:
                shows = f"{model_privilege} for {', '.join(sorted(needs))} ON {where} of {who}"
                grants = (*gates, (target, (model_privilege,)))
                estate.proposals.append(Proposal(role, grants, shows=shows, to=to, facts=facts))
    _table_owners(catalog, estate, mapped, owners, alls, taken)
    for db in sorted(snapshot.server.databases):
        _database_owner(backend, db, estate)


def _table_owners(
    catalog: str,
    estate: Estate,
    who: dict[str, tuple[str | None, str]],
    owners: dict[tuple[str, str], TableInfo],
    alls: dict[tuple[str, str], list[Ownership]],
    taken: set[str],
) -> None:
    """Each table's metastore owner (a USER some model user maps to, in the import) as its
    model owner, tried before the other users holding ``ALL`` there: the model has one
    owner, and the core refuses any whose compile (``ALL`` to that user) is not held."""
    for (db, table), info in sorted(owners.items()):
        where = f"`{db}`.`{table}`"
        tried = alls.pop((db, table), [])
        user = None
        if not info.owner:
            pass
        elif info.owner_type != USER:
            estate.outside.append(
                f"owner of table {where}: {info.owner_type} {info.owner!r}: the model's owners are users"
            )
        elif who[info.owner][0] is None:
            estate.outside.append(f"owner of table {where}: user {info.owner!r}: {who[info.owner][1]}")
        elif who[info.owner][0] not in estate.users:
            estate.outside.append(
                f"owner of table {where}: user {info.owner!r}: holds nothing in pushdown's fence "
                "(no grant by its grantor, no managed role)"
            )
        else:
            user = who[info.owner][0]
        first: list[Ownership] = []
        if user is not None:
            role = grants_role(user, taken)
            schema = ObjectRef.of("schema", (catalog, db))
            gates = ((ObjectRef.of("catalog", (catalog,)), ("USE_CATALOG",)), (schema, ("USE_SCHEMA",)))
            facts = frozenset(f for o in tried if o.user == user for f in o.facts)
            needs = Proposal(role, gates, shows=f"the USE gates of user {user}", to=(Principal.user(user),))
            target = ObjectRef.of("table", (catalog, db, table))
            shows = f"owner of {where}: user {user} (its metastore owner {info.owner!r})"
            first = [Ownership(target, user, shows=shows, facts=facts, needs=needs)]
        estate.owners += first + [o for o in tried if o.user != user]
    for tried in alls.values():  # a table whose owner was not read (dropped meanwhile)
        estate.owners += tried


def _database_owner(backend: HiveBackend, db: str, estate: Estate) -> None:
    """A database's owner is never imported: the model's owner of a schema owns every
    table in it, present and future, where the metastore's owns none of them."""
    try:
        owner, kind = backend.metastore.database_owner(db)
    except Unreachable as exc:
        raise TemporaryBackendError(
            backend.name, f"the metastore did not answer while reading database owners ({exc})"
        ) from exc
    except Refused:
        return
    finally:
        backend.calls += 1
    if owner:
        estate.outside.append(
            f"owner of database `{db}`: {kind} {owner!r}: the model's owner of a schema owns every table in "
            "it, present and future, where the metastore's database owner owns none of them"
        )


def _why(backend: HiveBackend, fact: HiveGrant) -> str | None:
    """Why the model cannot say ``fact`` as such (``None``: a proposal may)."""
    if fact.grant_option:
        return "grant option: the model manages grants through ownership and MANAGE_GRANTS"
    if fact.principal_type == GROUP:
        return "a grant to a metastore group: pushdown grants to users and roles (a model group is expanded)"
    if fact.principal_type == ROLE and _model_role(backend, fact.principal) is None:
        return "a grant to a role outside the role prefix"
    if fact.table is None and fact.privilege != CREATE:
        return (
            f"a database-level {fact.privilege}: it reaches every table, present and future, where the "
            "model grants per table (and its DENY could not cut it)"
        )
    if fact.table is not None and fact.privilege not in IMPLIED_BY_ALL | {ALL}:
        return f"no model privilege compiles to {fact.privilege} alone or less"
    return None
