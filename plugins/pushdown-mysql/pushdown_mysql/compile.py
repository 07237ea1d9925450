"""Compile the model into the grants a MySQL server should hold. Pure.

The core's entitlement compiler decides (set-wise, per class of users, DENY and the
USE gates included); this module turns its compact answer into grants:

- a database-level grant where it is exact: the operation is allowed on every table
  of the database, present and future, and the privilege enables nothing more at the
  database level than on its tables (``SELECT``, ``INSERT``, ``UPDATE``, ``DELETE``,
  ``INDEX``; not ``ALTER`` or ``DROP``, which would also alter or drop the database);
- table-level grants where an exception (a DENY, an ALLOW or an owner of its own on
  some table) forces them;
- a schema owner's database-level privileges (exact: ownership is not subject to DENY).

Groups are expanded to their member users (MySQL has no groups); nothing is ever
granted on ``*.*``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from pushdown.decide.engine import LOCAL, Engine
from pushdown.decide.inventory import Inventory
from pushdown.decide.views import View
from pushdown.model.principals import Principal
from pushdown.model.securables import ObjectRef, SecurableType
from pushdown.model.state import Model
from pushdown.reconcile.backend import Desired
from pushdown.reconcile.identity import KeptIdentity, map_one
from pushdown.reconcile.plan import Fact
from pushdown.reconcile.scope import Region, Resolved
from pushdown_mysql.facts import Account, Grant, escape_db_pattern
from pushdown_mysql.identity import withheld as withheld_users
from pushdown_mysql.mapping import (
    CREATE_TABLE_PRIVILEGE,
    DATABASE_LEVEL_EXACT,
    OPERATIONS,
    OWNER_DATABASE_PRIVILEGES,
    TABLE_OPERATIONS,
)
from pushdown_mysql.names import (
    Key,
    blocked,
    fold_notes,
    folded,
    folding_twins,
    keyed_objects,
    named,
    unseen_notes,
    with_named_tables,
)
from pushdown_mysql.quoting import quote_ident


@dataclass(frozen=True)
class ServerObjects:
    """The databases and base tables on the server (system databases left out)."""

    databases: frozenset[str] = frozenset()
    tables: frozenset[tuple[str, str]] = frozenset()

    def tables_in(self, db: str) -> list[str]:
        return sorted(t for d, t in self.tables if d == db)

    def in_model(self, catalog: str) -> Inventory:
        """The same objects in model names, under ``catalog``."""
        held = Inventory.of(ObjectRef(SecurableType.SCHEMA, (catalog, d)) for d in self.databases)
        for db, table in self.tables:
            held.add(ObjectRef(SecurableType.TABLE, (catalog, db, table)))
        held.add(ObjectRef(SecurableType.CATALOG, (catalog,)))
        return held


@dataclass(frozen=True)
class AccountNaming:
    """How a model user becomes an account: ``prefix + mapped name`` at ``host``."""

    prefix: str = "pd_"
    host: str = "%"
    map_principal: Callable[[Principal], str] = field(default=lambda p: p.name, compare=False)
    #: changes when the hook's answers may have (see BackendContext.mapping_version)
    mapping_version: Callable[[], object] = field(default=lambda: None, compare=False)
    #: whether the kept mapping may be trusted for users a sync does not grant to (see
    #: BackendContext.mapping_stable; ``False``: every user is mapped again on each sync)
    mapping_stable: Callable[[], bool] = field(default=lambda: False, compare=False)
    #: every user's mapped name, kept between syncs (a new naming, a new keeper)
    kept: KeptIdentity = field(init=False, compare=False, repr=False)

    def __post_init__(self) -> None:
        kept = KeptIdentity(self.mapped, version=self.mapping_version, stable=self.mapping_stable)
        object.__setattr__(self, "kept", kept)

    def account(self, user: str) -> Account:
        return Account(self.prefix + self.map_principal(Principal.user(user)), self.host)

    def mapped(self, user: str) -> str:
        """The name ``pushdown_map_principal`` gives ``user`` (may raise)."""
        return self.map_principal(Principal.user(user))

    def try_account(self, user: str) -> Account | None:
        """:meth:`account`, or ``None`` when the mapping hook fails or gives no usable name
        (:func:`pushdown.reconcile.identity.map_one`: that user then gets nothing; it
        never stops the other users' changes)."""
        name, _ = map_one(self.mapped, user)
        return None if name is None else Account(self.prefix + name, self.host)


def compile_desired(
    model: Model,
    catalog: str | None,
    inventory: ServerObjects,
    accounts: frozenset[Account],
    naming: AccountNaming,
    scope: Resolved,
    *,
    create_on_database: bool = False,
    engine: Engine = LOCAL,
    fold: int = 0,
    unmanaged: frozenset[Account] = frozenset(),
) -> Desired:
    """``fold`` is the server's ``lower_case_table_names`` (see :mod:`pushdown_mysql.names`);
    ``unmanaged`` the accounts and roles on the server that pushdown never manages."""
    if catalog is None:
        return Desired(frozenset(), ("no catalog names this backend; every managed grant is revoked",))
    held = inventory.in_model(catalog)
    facts: set[Fact] = set()
    withheld, notes = withheld_users(model, naming, scope)
    cased: dict[Key, str] = {}
    keyed = keyed_objects(model, catalog) if fold else None  # only a folding server asks for all
    for region in scope.regions:
        roots = _roots(region, catalog, fold)
        names = named(model, catalog, roots, keyed)
        twins = folding_twins(model, catalog, roots, keyed) if keyed is not None else set()
        cased |= folded(names | twins, held, catalog, fold)
        known = with_named_tables(held, catalog, names)
        ent = engine.compile(model, OPERATIONS, known, region.users, roots)
        for user in ent.users:
            if user in withheld:
                continue
            account = naming.try_account(user)
            if account is None:
                continue
            view = ent.view(user)
            grants = set(user_grants(view, account, held, create_on_database))
            if grants and account in unmanaged:
                notes.append(
                    f"user {user} maps to account {account}, which pushdown never manages (its own account "
                    f"or a name the server reserves): refused, {len(grants)} grant(s) withheld"
                )
                continue
            if grants and account not in accounts:
                notes.append(
                    f"user {user}: account {account} does not exist on the server; "
                    f"{len(grants)} grant(s) withheld (create the account and sync again)"
                )
                continue
            facts |= grants
            notes += create_notes(view, user, catalog, create_on_database)
            notes += unseen_notes(view, user, held)
            new_schema = held.generic(ObjectRef(SecurableType.CATALOG, (catalog,)), SecurableType.SCHEMA)
            if region.roots is None and view.allowed("create_schema", new_schema):
                notes.append(
                    f"user {user} may create schemas in catalog {catalog}, but MySQL allows CREATE DATABASE "
                    "only through CREATE on *.*, which pushdown never grants: not granted (narrower)"
                )
    if cased:
        facts = {f for f in facts if not (isinstance(f, Grant) and blocked(f, cased))}
        notes += fold_notes(cased, fold)
    return Desired(frozenset(facts), tuple(sorted(set(notes))))


def _roots(region: Region, catalog: str, fold: int = 0) -> list[ObjectRef] | None:
    """The region's roots inside the enforced catalog; ``None`` for all of it. Where the
    server folds names, a root also stands for its lower-case spelling (``c.S1`` is the
    database ``s1`` there)."""
    if region.roots is None:
        return None
    out = []
    for root in region.roots:
        if root.type in (SecurableType.METALAKE, SecurableType.CATALOG):
            return None
        if root.catalog == catalog:
            out.append(root)
            lower = ObjectRef(root.type, (root.names[0], *(n.lower() for n in root.names[1:])))
            if fold and lower != root:
                out.append(lower)
    return out


def user_grants(
    view: View, account: Account, held: Inventory, create_on_database: bool = False
) -> Iterator[Grant]:
    for schema in view.containers(SecurableType.SCHEMA):
        yield from database_grants(view, account, schema, held, create_on_database)


def may_create_tables(view: View, schema: ObjectRef) -> bool:
    """Whether the user may create tables in ``schema`` (gate included), as an owner or not."""
    if not view.allowed("load_schema", schema):
        return False
    return view.allowed("drop_schema", schema) or view.coverage("create_table", schema).default


def database_grants(
    view: View, account: Account, schema: ObjectRef, held: Inventory, create_on_database: bool = False
) -> Iterator[Grant]:
    db = schema.names[1]
    pattern = escape_db_pattern(db)
    if not view.allowed("load_schema", schema):
        return  # every table operation and create_table need the schema gate
    if create_on_database and may_create_tables(view, schema):
        yield Grant(account, pattern, None, CREATE_TABLE_PRIVILEGE)
    if view.allowed("drop_schema", schema):
        yield from (Grant(account, pattern, None, p) for p in OWNER_DATABASE_PRIVILEGES)
        return
    for operation, privileges in TABLE_OPERATIONS:
        cover = view.coverage(operation, schema)
        for privilege in privileges:
            if cover.exact_container and privilege in DATABASE_LEVEL_EXACT:
                yield Grant(account, pattern, None, privilege)
            else:
                yield from (Grant(account, db, t.names[2], privilege) for t in cover.members(held))


def create_notes(view: View, user: str, catalog: str, create_on_database: bool) -> Iterator[str]:
    """Where the user may create tables: ``CREATE`` on ```d`.*`` is wider than the model
    (it also creates the database itself once it is gone, and shows every table's
    definition), so it is granted only when the setting accepts it; either way, say so."""
    for schema in view.containers(SecurableType.SCHEMA):
        if not may_create_tables(view, schema):
            continue
        db = schema.names[1]
        wider = (
            f"CREATE on {quote_ident(escape_db_pattern(db))}.* would also let them CREATE DATABASE "
            f"{quote_ident(db)} once it is dropped (the model decides create_schema in catalog {catalog} "
            "apart) and read the definition of every table there (SHOW CREATE TABLE)"
        )
        if create_on_database:
            accepted = wider.replace("would also let", "also lets")
            yield (
                f"user {user} may create tables in {schema.name}: CREATE granted, accepted as wider "
                f"(create_on_database = true): {accepted}"
            )
        else:
            yield (
                f"user {user} may create tables in {schema.name}, but {wider}; not granted (narrower); "
                "set create_on_database = true to accept"
            )
