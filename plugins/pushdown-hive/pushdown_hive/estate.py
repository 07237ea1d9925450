"""What a Hive Metastore holds, in the model's terms (``pushdown import --backend``).

Read by the backend's own sync reader, within its fence (grants by its grantor, roles
with its role prefix; every grant with ``manage_foreign_grants = true``). A managed role
``<role_prefix>R`` is model role ``R`` with its USER members; a user's own grants go to a
role ``grants_of_<user>``. The privilege mapping (:mod:`pushdown_hive.mapping`) is read in
reverse: ``SELECT`` on a table proposes SELECT_TABLE, ``SELECT, INSERT, UPDATE, DELETE``
MODIFY_TABLE, ``ALL`` to a user the table's ownership, ``CREATE`` on a database
CREATE_TABLE on the schema (each with the USE gates); the core keeps a proposal only
where the backend's compile of it is held already
(:func:`pushdown.reconcile.estate.adopt`). The rest is left out with its reason.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import replace
from typing import TYPE_CHECKING

from pushdown.errors import ConfigError
from pushdown.model import changes as ch
from pushdown.model.principals import Principal
from pushdown.model.securables import ObjectRef
from pushdown.model.state import Model
from pushdown.reconcile.estate import Estate, Ownership, Proposal, grants_role
from pushdown.reconcile.plan import Fact
from pushdown.reconcile.scope import Scope
from pushdown_hive.facts import GROUP, ROLE, USER, HiveGlobal, HiveGrant, HiveHeld, HiveMember, HiveRole
from pushdown_hive.identity import identity_of
from pushdown_hive.mapping import ALL, CREATE, IMPLIED_BY_ALL

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
        return backend.compile(m, seen, Scope.everything().resolve(m)).facts

    estate = Estate(
        backend.name,
        snapshot.facts,
        compile_,
        catalogs={catalog: {"backend": backend.name}},
        findings=snapshot.findings,
    )
    _principals(backend, snapshot, estate)
    _grants(backend, catalog, snapshot, estate)
    return estate


def _model_role(backend: HiveBackend, name: str) -> str | None:
    prefix = backend.role_fence
    if not backend.roles or prefix is None or not name.startswith(prefix) or name == prefix:
        return None
    return name[len(prefix) :]


def _principals(backend: HiveBackend, snapshot: HiveSnapshot, estate: Estate) -> None:
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
                estate.roles.setdefault(role, set()).add(Principal.user(fact.user))
                estate.users.add(fact.user)
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


def _grants(backend: HiveBackend, catalog: str, snapshot: HiveSnapshot, estate: Estate) -> None:
    held: dict[tuple[str, str, str, str | None], set[str]] = defaultdict(set)
    source: dict[tuple[str, str, str, str | None], set[Fact]] = defaultdict(set)
    taken = set(estate.roles)
    for fact in snapshot.facts:
        if not isinstance(fact, HiveGrant):
            continue
        why = _why(backend, fact)
        if why is not None:
            estate.why[fact] = why
            continue
        held[(fact.principal_type, fact.principal, fact.db, fact.table)].add(fact.privilege)
        source[(fact.principal_type, fact.principal, fact.db, fact.table)].add(fact)
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
            estate.users.add(principal)
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
            estate.owners.append(Ownership(target, principal, shows=shows, facts=facts))
        for model_privilege, needs in (("MODIFY_TABLE", _MODIFY), ("SELECT_TABLE", frozenset({"SELECT"}))):
            if needs <= privileges:
                shows = f"{model_privilege} for {', '.join(sorted(needs))} ON {where} of {who}"
                grants = (*gates, (target, (model_privilege,)))
                estate.proposals.append(Proposal(role, grants, shows=shows, to=to, facts=facts))


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
