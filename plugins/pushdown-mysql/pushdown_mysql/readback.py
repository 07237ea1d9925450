"""Read the server back: inventory and grant tables, in a constant number of queries.

Every row is normalised into facts (:mod:`pushdown_mysql.facts`): privilege columns
and SET values become upper-case privilege names (``Grant`` is ``GRANT OPTION``), a
database-level row keeps the pattern MySQL stores, hosts are compared in lower case.
Six queries per snapshot, whatever the number of accounts, databases and tables.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from pushdown_mysql.compile import Inventory
from pushdown_mysql.facts import Account, Grant, RoleGrant
from pushdown_mysql.mapping import SYSTEM_DATABASES

_COMMON = (
    ("Select_priv", "SELECT"),
    ("Insert_priv", "INSERT"),
    ("Update_priv", "UPDATE"),
    ("Delete_priv", "DELETE"),
    ("Create_priv", "CREATE"),
    ("Drop_priv", "DROP"),
    ("Grant_priv", "GRANT OPTION"),
    ("References_priv", "REFERENCES"),
    ("Index_priv", "INDEX"),
    ("Alter_priv", "ALTER"),
    ("Create_tmp_table_priv", "CREATE TEMPORARY TABLES"),
    ("Lock_tables_priv", "LOCK TABLES"),
    ("Create_view_priv", "CREATE VIEW"),
    ("Show_view_priv", "SHOW VIEW"),
    ("Create_routine_priv", "CREATE ROUTINE"),
    ("Alter_routine_priv", "ALTER ROUTINE"),
    ("Execute_priv", "EXECUTE"),
    ("Event_priv", "EVENT"),
    ("Trigger_priv", "TRIGGER"),
)
_GLOBAL_ONLY = (
    ("Reload_priv", "RELOAD"),
    ("Shutdown_priv", "SHUTDOWN"),
    ("Process_priv", "PROCESS"),
    ("File_priv", "FILE"),
    ("Show_db_priv", "SHOW DATABASES"),
    ("Super_priv", "SUPER"),
    ("Repl_slave_priv", "REPLICATION SLAVE"),
    ("Create_user_priv", "CREATE USER"),
    ("Create_tablespace_priv", "CREATE TABLESPACE"),
)
_MARIADB_ONLY = (("Delete_history_priv", "DELETE HISTORY"),)
_TABLE_SET = {"GRANT": "GRANT OPTION", "DELETE VERSIONING ROWS": "DELETE HISTORY"}


@dataclass(frozen=True)
class Dialect:
    """What differs between MariaDB and MySQL 8 when reading grants back."""

    name: str

    @property
    def mariadb(self) -> bool:
        return self.name == "mariadb"

    def db_columns(self) -> tuple[tuple[str, str], ...]:
        return _COMMON + (_MARIADB_ONLY if self.mariadb else ())

    def user_columns(self) -> tuple[tuple[str, str], ...]:
        repl = (("Repl_client_priv", "BINLOG MONITOR" if self.mariadb else "REPLICATION CLIENT"),)
        return self.db_columns() + _GLOBAL_ONLY + repl

    def queries(self) -> dict[str, str]:
        user_cols = ", ".join(c for c, _ in self.user_columns())
        db_cols = ", ".join(c for c, _ in self.db_columns())
        is_role = "is_role" if self.mariadb else "'N'"
        roles = (
            "SELECT User, Host, Role, '' FROM mysql.roles_mapping"
            if self.mariadb
            else "SELECT TO_USER, TO_HOST, FROM_USER, FROM_HOST FROM mysql.role_edges"
        )
        return {
            "inventory": "SELECT SCHEMA_NAME, NULL FROM information_schema.SCHEMATA UNION ALL "
            "SELECT TABLE_SCHEMA, TABLE_NAME FROM information_schema.TABLES WHERE TABLE_TYPE = 'BASE TABLE'",
            # column lists are constants of this module, never input
            "mysql.user": f"SELECT User, Host, {is_role}, {user_cols} FROM mysql.user",  # noqa: S608
            "mysql.db": f"SELECT User, Host, Db, {db_cols} FROM mysql.db",  # noqa: S608
            "mysql.tables_priv": "SELECT User, Host, Db, Table_name, Table_priv FROM mysql.tables_priv",
            "mysql.roles_mapping" if self.mariadb else "mysql.role_edges": roles,
        }


def dialect_of(version: str) -> Dialect:
    return Dialect("mariadb" if "mariadb" in version.lower() else "mysql")


@dataclass(frozen=True)
class Snapshot:
    """One read of the server: who connects, what exists, and every grant row."""

    dialect: Dialect
    me: Account
    inventory: Inventory
    accounts: frozenset[Account]
    roles: frozenset[Account]
    grants: frozenset[Grant | RoleGrant]

    def held_by(self, account: Account) -> frozenset[Grant | RoleGrant]:
        return frozenset(g for g in self.grants if g.account == account)


def _account(user: str, host: str) -> Account:
    return Account(user, host.lower())


def parse_inventory(rows: Iterable[tuple[str, str | None]]) -> Inventory:
    databases = {db for db, _ in rows if db not in SYSTEM_DATABASES}
    tables = {(db, t) for db, t in rows if t is not None and db in databases}
    return Inventory(frozenset(databases), frozenset(tables))


def parse_users(
    dialect: Dialect, rows: Iterable[tuple[Any, ...]]
) -> tuple[set[Account], set[Account], set[Grant]]:
    accounts: set[Account] = set()
    roles: set[Account] = set()
    grants: set[Grant] = set()
    columns = dialect.user_columns()
    for user, host, is_role, *flags in rows:
        account = _account(user, host)
        (roles if is_role == "Y" else accounts).add(account)
        held = (p for (_, p), f in zip(columns, flags, strict=True) if f == "Y")
        grants |= {Grant(account, None, None, p) for p in held}
    return accounts, roles, grants


def parse_db(dialect: Dialect, rows: Iterable[tuple[Any, ...]]) -> set[Grant]:
    columns = dialect.db_columns()
    return {
        Grant(_account(user, host), db, None, p)
        for user, host, db, *flags in rows
        for (_, p), f in zip(columns, flags, strict=True)
        if f == "Y"
    }


def parse_tables(rows: Iterable[tuple[Any, ...]]) -> set[Grant]:
    out: set[Grant] = set()
    for user, host, db, table, privs in rows:
        for name in _set_values(privs):
            key = name.upper()
            out.add(Grant(_account(user, host), db, table, _TABLE_SET.get(key, key)))
    return out


def _set_values(value: object) -> set[str]:
    if isinstance(value, set | frozenset):
        return {str(v) for v in value if v}
    return {v for v in str(value or "").split(",") if v}


def parse_roles(rows: Iterable[tuple[Any, ...]]) -> set[RoleGrant]:
    return {RoleGrant(_account(user, host), role, role_host.lower()) for user, host, role, role_host in rows}
