"""What a Unity Catalog server holds, in the model's terms (``pushdown import --backend``).

Read by the backend's own sync reader, within its fence (the principals named by
``principals`` or starting with ``principal_prefix``): each such principal is a model user
with a role ``grants_of_<user>``; the privilege mapping (:mod:`pushdown_unitycatalog.mapping`)
is read in reverse: ``USE CATALOG`` / ``USE SCHEMA`` as the USE gates, ``CREATE SCHEMA`` on
the catalog and ``CREATE TABLE`` on a schema as CREATE_SCHEMA / CREATE_TABLE, ``SELECT`` on
a schema or table as SELECT_TABLE, ``SELECT`` with ``MODIFY`` as MODIFY_TABLE (with the
gates each needs), and the server's owner of a table as its owner; the core keeps a
proposal only where the backend's compile of it is held already
(:func:`pushdown.reconcile.estate.adopt`).

A principal is a model user only through the mapping the sync uses, inverted
(:func:`pushdown.reconcile.identity.inverse`, names compared as the backend's identity
compares them, case folded): the model user (of the configured store's, or the server's
own principal names) that ``pushdown_map_principal`` maps to exactly that name. A principal
no model user maps to, or that two map to (a clash the sync withholds), is imported as
nobody: its grants are left out with the reason, its tables' ownership listed as outside.
"""

from __future__ import annotations

from collections import defaultdict
from typing import TYPE_CHECKING

from pushdown.errors import ConfigError
from pushdown.model import changes as ch
from pushdown.model.principals import Principal
from pushdown.model.securables import ObjectRef
from pushdown.model.state import Model
from pushdown.reconcile.estate import Estate, Ownership, Proposal, grants_role
from pushdown.reconcile.identity import inverse
from pushdown.reconcile.plan import Fact
from pushdown.reconcile.scope import Scope
from pushdown_unitycatalog.facts import UCGrant
from pushdown_unitycatalog.mapping import CREATE_SCHEMA, CREATE_TABLE, MODIFY, SELECT, USE_CATALOG, USE_SCHEMA

if TYPE_CHECKING:
    from pushdown_unitycatalog.backend import UnityCatalogBackend

Gates = tuple[tuple[ObjectRef, tuple[str, ...]], ...]


def read_estate(backend: UnityCatalogBackend, model: Model) -> Estate:
    catalogs = sorted(c for c in backend.enforces(model) if c == c.lower())
    if not catalogs:
        raise ConfigError(
            f"backend {backend.name}: no catalog (in lower case) names it; name the catalogs to import "
            '(catalogs = ["..."] in its configuration)'
        )
    base = Model()
    for catalog in catalogs:
        props = {"backend": backend.name}
        for event in ch.create_object(base, ObjectRef.of("catalog", (catalog,)), properties=props):
            base.apply(event)
    snapshot = backend.read(base, Scope.everything().resolve(base))

    def compile_(m: Model) -> frozenset[Fact]:
        return frozenset(backend.compile(m, snapshot, Scope.everything().resolve(m)).facts)

    estate = Estate(
        backend.name,
        frozenset(snapshot.facts),
        compile_,
        catalogs={c: {"backend": backend.name} for c in catalogs},
        findings=snapshot.findings,
    )
    owners = {
        name: owner
        for read in snapshot.reads
        for name, owner in read.owners.items()
        if backend.managed(owner) and name.count(".") == 2
    }
    names = {f.principal for f in snapshot.facts if isinstance(f, UCGrant)} | set(owners.values())
    kept = backend.kept
    who = inverse(
        model.users,
        names,
        kept.mapper,
        caseless=kept.caseless,
        unusable=kept.unusable,
        describe=lambda n: f"principal {n!r}",
    )
    on: dict[tuple[str, str, str], set[str]] = defaultdict(set)
    source: dict[tuple[str, str, str], set[Fact]] = defaultdict(set)
    for fact in snapshot.facts:
        assert isinstance(fact, UCGrant)
        user, why = who[fact.principal]
        if user is None:
            estate.why[fact] = why
            continue
        estate.users.add(user)
        reason = _why(fact)
        if reason:
            estate.why[fact] = reason
        if fact.securable in ("catalog", "schema", "table"):
            on[(user, fact.securable, fact.name)].add(fact.privilege)
            source[(user, fact.securable, fact.name)].add(fact)
    taken = set(estate.users)
    for (user, securable, name), privileges in sorted(on.items(), key=lambda kv: _depth(kv[0][1])):
        role = grants_role(user, taken)
        facts = frozenset(source[(user, securable, name)])
        parts = tuple(name.split("."))
        top = ObjectRef.of("catalog", parts[:1])
        use_catalog: Gates = ((top, ("USE_CATALOG",)),)
        where = f"{securable} {name} of {user}"

        found: list[tuple[Gates, str]] = []
        if securable == "catalog":
            if USE_CATALOG in privileges:
                found.append((use_catalog, "USE_CATALOG"))
            if CREATE_SCHEMA in privileges:
                found.append(((*use_catalog, (top, ("CREATE_SCHEMA",))), "CREATE_SCHEMA"))
        else:
            schema = ObjectRef.of("schema", parts[:2])
            gates: Gates = (*use_catalog, (schema, ("USE_SCHEMA",)))
            target = schema if securable == "schema" else ObjectRef.of("table", parts)
            if securable == "schema" and USE_SCHEMA in privileges:
                found.append((gates, "USE_SCHEMA"))
            if securable == "schema" and CREATE_TABLE in privileges:
                found.append(((*gates, (schema, ("CREATE_TABLE",))), "CREATE_TABLE"))
            if {SELECT, MODIFY} <= privileges:
                found.append(((*gates, (target, ("MODIFY_TABLE",))), "MODIFY_TABLE"))
            if SELECT in privileges:
                found.append(((*gates, (target, ("SELECT_TABLE",))), "SELECT_TABLE"))
        to = (Principal.user(user),)
        for grants, what in found:
            estate.proposals.append(Proposal(role, grants, shows=f"{what} for {where}", to=to, facts=facts))
    for name, owner in sorted(owners.items()):
        user, why = who[owner]
        if user is None:
            estate.outside.append(f"owner of table {name}: {why}")
            continue
        table = ObjectRef.of("table", tuple(name.split(".")))
        shown = owner if user == owner else f"{owner} (model user {user})"
        estate.owners.append(Ownership(table, user, shows=f"owner of table {name}: {shown}"))
    return estate


def _depth(securable: str) -> int:
    return {"catalog": 0, "schema": 1, "table": 2}.get(securable, 3)


def _why(fact: UCGrant) -> str | None:
    if fact.securable not in ("catalog", "schema", "table"):
        return f"a grant on a {fact.securable}: the model has no such securable here"
    if fact.privilege == MODIFY:
        return "MODIFY without SELECT: the model's MODIFY_TABLE also reads"
    if fact.privilege in (USE_CATALOG, USE_SCHEMA, CREATE_SCHEMA, CREATE_TABLE, SELECT):
        return None
    return f"no model privilege compiles to {fact.privilege} alone or less"
