"""Compile the model into the grants a MySQL server should hold. Pure.

Groups are expanded to their member users (the evaluator decides per user), DENY and
the USE gates are compiled away by asking the evaluator per concrete table read from
the server's inventory, and nothing is ever granted on ``*.*``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from pushdown.decide.evaluator import Evaluator
from pushdown.model.principals import Principal
from pushdown.model.securables import ObjectRef, SecurableType
from pushdown.model.state import Model
from pushdown.reconcile.backend import Desired
from pushdown.reconcile.plan import Fact
from pushdown_mysql.facts import Account, Grant, escape_db_pattern
from pushdown_mysql.mapping import CREATE_TABLE_PRIVILEGE, OWNER_DATABASE_PRIVILEGES, TABLE_OPERATIONS

#: The name of "a table that does not exist yet", for create_table decisions.
NEW = "\x00new"


@dataclass(frozen=True)
class Inventory:
    """The databases and base tables on the server (system databases left out)."""

    databases: frozenset[str] = frozenset()
    tables: frozenset[tuple[str, str]] = frozenset()

    def tables_in(self, db: str) -> list[str]:
        return sorted(t for d, t in self.tables if d == db)


@dataclass(frozen=True)
class Naming:
    """How a model user becomes an account: ``prefix + mapped name`` at ``host``."""

    prefix: str = "pd_"
    host: str = "%"
    map_principal: Callable[[Principal], str] = field(default=lambda p: p.name, compare=False)

    def account(self, user: str) -> Account:
        return Account(self.prefix + self.map_principal(Principal.user(user)), self.host)


def compile_desired(
    model: Model, catalog: str | None, inventory: Inventory, accounts: frozenset[Account], naming: Naming
) -> Desired:
    if catalog is None:
        return Desired(frozenset(), ("no catalog names this backend; every managed grant is revoked",))
    evaluator = Evaluator(model)
    facts: set[Fact] = set()
    notes: list[str] = []
    for user in sorted(model.users):
        account = naming.account(user)
        grants = set(user_grants(evaluator, user, account, catalog, inventory))
        if grants and account not in accounts:
            notes.append(
                f"user {user}: account {account} does not exist on the server; "
                f"{len(grants)} grant(s) withheld (create the account and sync again)"
            )
            continue
        facts |= grants
        if evaluator.authorize(user, "create_schema", ObjectRef.of("schema", (catalog, NEW)), explain=False):
            notes.append(
                f"user {user} may create schemas in catalog {catalog}, but MySQL allows CREATE DATABASE "
                "only through CREATE on *.*, which pushdown never grants: not granted (narrower)"
            )
    return Desired(frozenset(facts), tuple(notes))


def user_grants(
    evaluator: Evaluator, user: str, account: Account, catalog: str, inventory: Inventory
) -> Iterator[Grant]:
    for db in sorted(inventory.databases):
        yield from database_grants(evaluator, user, account, (catalog, db), inventory.tables_in(db))


def database_grants(
    evaluator: Evaluator, user: str, account: Account, schema: tuple[str, str], tables: list[str]
) -> Iterator[Grant]:
    def allowed(operation: str, target: ObjectRef) -> bool:
        return evaluator.authorize(user, operation, target, explain=False).allowed

    pattern = escape_db_pattern(schema[1])
    if not allowed("load_schema", ObjectRef(SecurableType.SCHEMA, schema)):
        return  # every table operation and create_table need the schema gate
    if allowed("drop_schema", ObjectRef(SecurableType.SCHEMA, schema)):
        yield from (Grant(account, pattern, None, p) for p in OWNER_DATABASE_PRIVILEGES)
        return
    if allowed("create_table", ObjectRef(SecurableType.TABLE, (*schema, NEW))):
        yield Grant(account, pattern, None, CREATE_TABLE_PRIVILEGE)
    for table in tables:
        target = ObjectRef(SecurableType.TABLE, (*schema, table))
        for operation, privileges in TABLE_OPERATIONS:
            if not allowed(operation, target):
                break  # drop_table implies alter_table implies load_table
            yield from (Grant(account, schema[1], table, p) for p in privileges)
