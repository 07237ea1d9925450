"""The least privileges pushdown's own account needs, as statements an administrator runs.

Reading back needs ``SELECT`` on eight grant tables (MariaDB; on MySQL 8,
``mysql.role_edges`` and ``mysql.global_grants`` instead of ``mysql.roles_mapping`` and
``mysql.global_priv``). Granting and revoking a privilege needs that privilege WITH GRANT
OPTION on the object, so for every database pushdown governs it needs the privileges of
:data:`~pushdown_mysql.mapping.GRANTABLE` on that database WITH GRANT OPTION. A database
pushdown holds nothing on is invisible to it (``information_schema`` filters it out) and
therefore not governed. It never needs a global (``*.*``) privilege, ``CREATE USER``,
``SUPER`` or ``RELOAD``.
"""

from __future__ import annotations

from pushdown_mysql.facts import escape_db_pattern
from pushdown_mysql.mapping import GRANTABLE
from pushdown_mysql.quoting import template_ident

_EVERY = ("user", "db", "tables_priv", "columns_priv", "procs_priv", "proxies_priv")
GRANT_TABLES_MARIADB = (*_EVERY, "roles_mapping", "global_priv")
GRANT_TABLES_MYSQL = (*_EVERY, "role_edges", "global_grants")

Statement = tuple[str, tuple[str, ...]]


def read_grants(user: str, host: str, *, mariadb: bool = True) -> list[Statement]:
    tables = GRANT_TABLES_MARIADB if mariadb else GRANT_TABLES_MYSQL
    return [(f"GRANT SELECT ON `mysql`.{template_ident(t)} TO %s@%s", (user, host)) for t in tables]


def govern_database(user: str, host: str, database: str) -> Statement:
    """Let pushdown grant and revoke on one database (name escaped: no wildcard)."""
    pattern = escape_db_pattern(database)
    privileges = ", ".join(GRANTABLE)
    return f"GRANT {privileges} ON {template_ident(pattern)}.* TO %s@%s WITH GRANT OPTION", (user, host)


def least_privileges(user: str, host: str, databases: list[str], *, mariadb: bool = True) -> list[Statement]:
    return [*read_grants(user, host, mariadb=mariadb), *(govern_database(user, host, d) for d in databases)]
