"""The facts the MySQL backend plans with: privileges and role memberships of accounts.

Facts are in server terms (account, database, table, privilege), so what is read back
from the grant tables compares equal to what the model compiles to. A database-level
grant carries the *pattern* MySQL stores in ``mysql.db`` (``_`` and ``%`` are
wildcards there; an exact database name is stored escaped), so a hand-made wildcard
grant never compares equal to an exact one.

A fact is its own key: a grant either exists or it does not (there is nothing to
"change" about a MySQL grant row). :func:`pushdown_mysql.readback.server_scope` says
which facts a scope covers.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pushdown_mysql.quoting import quote_ident, quote_string

#: Privileges in the order MySQL prints them; the only names facts carry.
PRIVILEGE_ORDER = (
    "SELECT",
    "INSERT",
    "UPDATE",
    "DELETE",
    "CREATE",
    "DROP",
    "RELOAD",
    "SHUTDOWN",
    "PROCESS",
    "FILE",
    "GRANT OPTION",
    "REFERENCES",
    "INDEX",
    "ALTER",
    "SHOW DATABASES",
    "SUPER",
    "CREATE TEMPORARY TABLES",
    "LOCK TABLES",
    "EXECUTE",
    "REPLICATION SLAVE",
    "BINLOG MONITOR",
    "CREATE VIEW",
    "SHOW VIEW",
    "CREATE ROUTINE",
    "ALTER ROUTINE",
    "CREATE USER",
    "EVENT",
    "TRIGGER",
    "CREATE TABLESPACE",
    "DELETE HISTORY",
    "SET USER",
    "FEDERATED ADMIN",
    "CONNECTION ADMIN",
    "READ_ONLY ADMIN",
    "REPLICATION SLAVE ADMIN",
    "REPLICATION MASTER ADMIN",
    "BINLOG ADMIN",
    "BINLOG REPLAY",
    "SLAVE MONITOR",
)
RANK = {p: i for i, p in enumerate(PRIVILEGE_ORDER)}


def escape_db_pattern(name: str) -> str:
    """The ``mysql.db`` pattern that matches exactly the database ``name``."""
    return name.replace("\\", "\\\\").replace("_", "\\_").replace("%", "\\%")


def exact_db_name(pattern: str) -> str | None:
    """The one database a ``mysql.db`` pattern matches, or ``None`` for a wildcard."""
    out: list[str] = []
    i = 0
    while i < len(pattern):
        ch = pattern[i]
        if ch == "\\" and i + 1 < len(pattern):
            out.append(pattern[i + 1])
            i += 2
            continue
        if ch in "_%":
            return None
        out.append(ch)
        i += 1
    return "".join(out)


@dataclass(frozen=True, order=True)
class Account:
    user: str
    host: str

    @property
    def public(self) -> bool:
        """``PUBLIC`` (MariaDB >= 10.11): a role every account holds, named by a keyword."""
        return self.user == "PUBLIC" and self.host == ""

    def sql(self) -> str:
        if self.public:
            return "PUBLIC"
        return f"{quote_string(self.user)}@{quote_string(self.host)}"

    def __str__(self) -> str:
        return self.sql()


@dataclass(frozen=True, order=True)
class Grant:
    """``privilege`` held by ``account`` globally (``db is None``), on every table of a
    database pattern (``table is None``), or on one table."""

    account: Account
    db: str | None
    table: str | None
    privilege: str

    @property
    def level(self) -> str:
        return "global" if self.db is None else "database" if self.table is None else "table"

    def on(self) -> str:
        if self.db is None:
            return "*.*"
        if self.table is None:
            return f"{quote_ident(self.db)}.*"
        return f"{quote_ident(self.db)}.{quote_ident(self.table)}"

    @property
    def key(self) -> Grant:
        return self

    def to_json(self) -> dict[str, Any]:
        a = self.account
        return {"grant": [a.user, a.host, self.db, self.table, self.privilege]}

    def __str__(self) -> str:
        return f"{self.privilege} ON {self.on()} TO {self.account}"


@dataclass(frozen=True, order=True)
class RoleGrant:
    """``account`` holds ``role`` (pushdown never grants one; it revokes them from the
    accounts it manages, since a role would widen what the model decides)."""

    account: Account
    role: str
    role_host: str = ""

    @property
    def key(self) -> RoleGrant:
        return self

    def to_json(self) -> dict[str, Any]:
        return {"role": [self.account.user, self.account.host, self.role, self.role_host]}

    def role_sql(self) -> str:
        if self.role_host:  # MySQL 8: roles are accounts
            return f"{quote_string(self.role)}@{quote_string(self.role_host)}"
        return quote_ident(self.role)

    def __str__(self) -> str:
        return f"ROLE {self.role_sql()} TO {self.account}"


@dataclass(frozen=True, order=True)
class ColumnGrant:
    """``privilege`` on one column of a table (``mysql.columns_priv``). The model decides
    nothing per column, so on a managed account such a grant only widens: it is revoked."""

    account: Account
    db: str
    table: str
    column: str
    privilege: str

    @property
    def key(self) -> ColumnGrant:
        return self

    def on(self) -> str:
        return f"{quote_ident(self.db)}.{quote_ident(self.table)}"

    def to_json(self) -> dict[str, Any]:
        a = self.account
        return {"column": [a.user, a.host, self.db, self.table, self.column, self.privilege]}

    def __str__(self) -> str:
        return f"{self.privilege} ({quote_ident(self.column)}) ON {self.on()} TO {self.account}"


ServerFact = Grant | RoleGrant | ColumnGrant


def fact_from_json(data: Mapping[str, Any]) -> ServerFact:
    """Rebuild a fact from ``to_json`` (a saved plan)."""
    if "grant" in data:
        user, host, db, table, privilege = data["grant"]
        return Grant(Account(str(user), str(host)), db, table, str(privilege))
    if "column" in data:
        user, host, db, table, column, privilege = data["column"]
        return ColumnGrant(Account(str(user), str(host)), str(db), str(table), str(column), str(privilege))
    user, host, role, role_host = data["role"]
    return RoleGrant(Account(str(user), str(host)), str(role), str(role_host))
