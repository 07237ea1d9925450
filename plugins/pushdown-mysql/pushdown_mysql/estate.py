"""What a MySQL/MariaDB server holds, in the model's terms (``pushdown import --backend``).

Read by the backend's own sync reader. A managed account (``<prefix><user>@<host>``) is a
model user with a role ``grants_of_<user>`` holding its grants; the privilege mapping
(:mod:`pushdown_mysql.mapping`) is read in reverse: a database or table whose grants
include what SELECT_TABLE or MODIFY_TABLE compile to is proposed as that model privilege
(with the USE gates), and the core keeps a proposal only when the backend's compile of it
is held already (:func:`pushdown.reconcile.estate.adopt`). Everything else a managed account
holds is left out with its reason; accounts outside the fence are listed, never imported.
"""

from __future__ import annotations

from collections import defaultdict
from typing import TYPE_CHECKING

from pushdown.errors import ConfigError
from pushdown.model import changes as ch
from pushdown.model.principals import Principal
from pushdown.model.securables import ObjectRef
from pushdown.model.state import Model
from pushdown.reconcile import identity
from pushdown.reconcile.estate import Estate, Proposal, grants_role
from pushdown.reconcile.plan import Fact
from pushdown.reconcile.scope import Scope
from pushdown_mysql.facts import Account, ColumnGrant, Grant, RoleGrant, exact_db_name
from pushdown_mysql.findings import ANONYMOUS
from pushdown_mysql.mapping import CREATE_TABLE_PRIVILEGE, TABLE_OPERATIONS

if TYPE_CHECKING:
    from pushdown_mysql.backend import MySQLBackend

_READS = frozenset(dict(TABLE_OPERATIONS)["load_table"])
_WRITES = frozenset(dict(TABLE_OPERATIONS)["alter_table"])
#: model privilege -> the MySQL privileges it compiles to on a table (each needs all of them)
_REVERSE = (("MODIFY_TABLE", _READS | _WRITES), ("SELECT_TABLE", _READS))


def base_model(backend: MySQLBackend, model: Model) -> tuple[Model, str]:
    """An empty model holding only the catalog this backend enforces (bound to it)."""
    catalog = backend.catalog(model)
    if catalog is None:
        raise ConfigError(
            f"backend {backend.name}: no catalog names it; name the catalog its server holds "
            f'(catalogs = ["..."] in its configuration) to import it'
        )
    base = Model()
    for event in ch.create_object(
        base, ObjectRef.of("catalog", (catalog,)), properties={"backend": backend.name}
    ):
        base.apply(event)
    return base, catalog


def read_estate(backend: MySQLBackend, model: Model) -> Estate:
    base, catalog = base_model(backend, model)
    snapshot = backend.read(base, Scope.everything().resolve(base))
    server = snapshot.server
    me = server.me

    def compile_(m: Model) -> frozenset[Fact]:
        return frozenset(backend.compile(m, snapshot, Scope.everything().resolve(m)).facts)

    estate = Estate(
        backend.name,
        frozenset(snapshot.facts),
        compile_,
        catalogs={catalog: {"backend": backend.name}},
        findings=snapshot.findings,
    )
    managed = sorted(a for a in server.accounts if backend.manages(a, me))
    users, unmapped = inverse(backend, model, managed)
    for account in sorted(server.accounts):
        reserved = account == me or account.user in RESERVED
        if account not in users and not reserved and not backend.reaches(account, me):
            estate.outside.append(f"account {account}: {_outside(backend, account)}")
    for server_role in sorted(r for r in server.roles if not r.public):
        estate.outside.append(f"role {server_role.user!r}: a server role; pushdown grants none")
    taken = set(users.values())
    by_account: dict[Account, list[Fact]] = defaultdict(list)
    for fact in snapshot.facts:
        by_account[fact.account].append(fact)  # type: ignore[attr-defined]
    for account, facts in sorted(by_account.items()):
        name = users.get(account)
        for fact in facts:
            if name is None and account in unmapped:
                estate.why[fact] = unmapped[account]
            else:
                estate.why[fact] = _why(fact, account, name is not None, facts)
        if name is not None:
            role = grants_role(name, taken)
            estate.proposals += _proposals(catalog, role, name, [f for f in facts if isinstance(f, Grant)])
    estate.users = set(users.values())
    return estate


def inverse(
    backend: MySQLBackend, model: Model, accounts: list[Account]
) -> tuple[dict[Account, str], dict[Account, str]]:
    """The managed ``accounts``' model users, and why the others have none: the mapping
    the sync uses (``<account_prefix>`` + ``pushdown_map_principal``) inverted by the
    core's :func:`pushdown.reconcile.identity.inverse` over the names of the accounts at
    the managed host, without the prefix (an account elsewhere is no model user's: the
    sync makes every account at that host)."""
    naming = backend.naming
    names = {a: a.user[len(naming.prefix) :] for a in accounts}
    at_host = {name for a, name in names.items() if a.host == naming.host}
    found = identity.inverse(
        model.users,
        at_host,
        naming.mapped,
        describe=lambda name: f"account {Account(naming.prefix + name, naming.host)}",
    )
    users: dict[Account, str] = {}
    unmapped: dict[Account, str] = {}
    for account, name in names.items():
        user, why = found[name] if account.host == naming.host else (None, "")
        if user is not None:
            users[account] = user
        else:
            unmapped[account] = why or f"no model user maps to account {account} (pushdown_map_principal)"
    return users, unmapped


#: accounts the server keeps for itself (never managed; not listed)
RESERVED = frozenset({"root", "mariadb.sys", "mysql"})


def _outside(backend: MySQLBackend, account: Account) -> str:
    naming = backend.naming
    if not account.user.startswith(naming.prefix):
        return f"not a managed account (their names start with {naming.prefix!r})"
    return f"not at the managed host {naming.host!r}"


def _proposals(catalog: str, role: str, user: str, grants: list[Grant]) -> list[Proposal]:
    """Per database and per table, the model privileges whose compile the grants cover,
    widest first (the core refuses any whose compile the server does not hold)."""
    on: dict[tuple[str, str | None], set[str]] = defaultdict(set)
    for g in grants:
        if g.db is None:
            continue
        db = g.db if g.table is not None else exact_db_name(g.db)
        if db is not None:
            on[(db, g.table)].add(g.privilege)
    out: list[Proposal] = []
    for (db, table), privileges in sorted(on.items(), key=lambda kv: (kv[0][1] is not None, kv[0])):
        schema = ObjectRef.of("schema", (catalog, db))
        target = schema if table is None else ObjectRef.of("table", (catalog, db, table))
        gates = ((ObjectRef.of("catalog", (catalog,)), ("USE_CATALOG",)), (schema, ("USE_SCHEMA",)))
        where = f"`{db}`.*" if table is None else f"`{db}`.`{table}`"
        facts = frozenset(
            g for g in grants if (g.db == db or exact_db_name(g.db or "") == db) and g.table == table
        )
        found: list[tuple[str, frozenset[str]]] = []
        if table is None and CREATE_TABLE_PRIVILEGE in privileges:  # granted with create_on_database
            found.append(("CREATE_TABLE", frozenset({CREATE_TABLE_PRIVILEGE})))
        for model_privilege, needs in _REVERSE:
            if table is None:
                needs = needs - {"ALTER"}  # compiled per table (ALTER on `d`.* alters the database)
            if needs <= privileges:
                found.append((model_privilege, needs))
        for model_privilege, needs in found:
            shows = f"{model_privilege} for {', '.join(sorted(needs))} ON {where} of user {user}"
            grants_ = (*gates, (target, (model_privilege,)))
            out.append(Proposal(role, grants_, shows=shows, to=(Principal.user(user),), facts=facts))
    return out


def _why(fact: Fact, account: Account, managed: bool, facts: list[Fact]) -> str:
    if not managed:
        if account.public:
            return "PUBLIC: every account holds it; the model has no principal for everyone"
        if account.user == ANONYMOUS:
            return "the anonymous account: its rows reach every user name; the model has no such principal"
        return f"host pattern {account.host!r}: the model has one account per user, at the managed host"
    if isinstance(fact, ColumnGrant):
        return "a column grant: the model decides nothing per column"
    if isinstance(fact, RoleGrant):
        return "a MySQL role: pushdown grants no server role (it compiles the model's roles per user)"
    assert isinstance(fact, Grant)
    if fact.privilege == "GRANT OPTION":
        return "grant option: the model manages grants through ownership and MANAGE_GRANTS"
    if fact.db is None:
        return "a global privilege (*.*): pushdown never grants on *.*"
    if fact.table is None and exact_db_name(fact.db) is None:
        return "a wildcard database pattern: the model names each schema"
    if fact.privilege == CREATE_TABLE_PRIVILEGE and fact.table is None:
        return (
            "CREATE on a database also lets its holder create the database once it is dropped: pushdown "
            "grants it for the model's CREATE_TABLE only with create_on_database = true"
        )
    if fact.privilege not in _READS | _WRITES:
        return f"no model privilege compiles to {fact.privilege} alone or less"
    if fact.table is not None and any(
        isinstance(f, Grant)
        and f.table is None
        and f.privilege == fact.privilege
        and exact_db_name(f.db or "") == fact.db
        for f in facts
    ):
        return "the database-level grant covers it (the model says it once)"
    return (
        "the model's SELECT_TABLE compiles to SELECT, its MODIFY_TABLE to SELECT, INSERT, UPDATE, "
        "DELETE, ALTER and INDEX together: what is held here is less"
    )
