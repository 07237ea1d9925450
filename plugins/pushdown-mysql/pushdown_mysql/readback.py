"""Read the server back: inventory and grant tables, in a constant number of queries.

Every row is normalised into facts (:mod:`pushdown_mysql.facts`): privilege columns
and SET values become upper-case privilege names (``Grant`` is ``GRANT OPTION``), a
database-level row keeps the pattern MySQL stores, hosts are compared in lower case.
Ten queries per snapshot, whatever the number of accounts, databases and tables.

What a read covers is the scope in server terms (:func:`server_scope`): each region
(model users × object subtrees) becomes (accounts × databases): a user becomes its
account name, a schema of the enforced catalog becomes its database, a table widens to
its database (database-level grants are decided over all of its tables), and the
metalake or any catalog (this backend's or one it may just have stopped enforcing)
becomes every database. ``None`` means "all".
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from pushdown.reconcile.plan import Fact
from pushdown.reconcile.reach import reach_of
from pushdown.reconcile.scope import Resolved
from pushdown_mysql.compile import AccountNaming, ServerObjects
from pushdown_mysql.facts import (
    Account,
    ColumnGrant,
    Grant,
    RoleGrant,
    ServerFact,
    escape_db_pattern,
    exact_db_name,
)
from pushdown_mysql.mapping import SYSTEM_DATABASES, TABLE_TYPES
from pushdown_mysql.routines import ProxyGrant, RoutineGrant

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

    def queries(
        self,
        accounts: frozenset[str] | None = None,
        databases: frozenset[str] | None = None,
        hosts: frozenset[str] | None = None,
        *,
        lean: frozenset[str] | None = None,
        tables: frozenset[str] | None = None,
    ) -> dict[str, tuple[str, tuple[Any, ...]]]:
        """The reads of one snapshot, narrowed with WHERE to ``accounts`` and ``databases``
        (``None``: all). ``hosts`` narrows the grant tables (not ``mysql.user``, where a
        shadowing account at another host must still be seen): ``Host`` leads their primary
        keys, so a narrowed read is a key range, not a scan. Column lists are constants of
        this module; names are parameters. ``lean`` (a read-back of database-level and
        table-level grants only: the read before holds the accounts, their global grants and
        what pushdown's own account may grant) skips the inventory, the accounts and the role
        grants; ``tables`` names the grant tables it reads (``None``: ``mysql.db``,
        ``mysql.tables_priv`` and ``mysql.columns_priv``).

        MariaDB's accounts and global privileges are one row each of ``mysql.global_priv``
        (``mysql.user`` is a view over it): read once, by key (:func:`_global_priv`); MySQL 8
        reads ``mysql.user`` and its dynamic privileges."""
        user_cols = ", ".join(c for c, _ in self.user_columns())
        db_cols = ", ".join(c for c, _ in self.db_columns())
        by_user = _where(("User", accounts))
        dbs = None if databases is None else frozenset(escape_db_pattern(d) for d in databases)
        out: dict[str, tuple[str, tuple[Any, ...]]] = {
            "inventory": _inventory(databases),
            "mysql.db": _q(
                # by the User index (the accounts' rows at every host, then the hosts kept): the
                # anonymous user's rows make the primary key's Host range an index merge
                f"SELECT User, Host, Db, {db_cols} FROM mysql.db{' FORCE INDEX (User)' if accounts else ''}",  # noqa: S608
                _where(("Host", hosts), ("Db", dbs), ("User", accounts)),
            ),
            "mysql.tables_priv": _keyed(
                "User, Host, Db, Table_name, Table_priv", "mysql.tables_priv", hosts, databases, accounts
            ),
            "mysql.columns_priv": _keyed(
                "User, Host, Db, Table_name, Column_name, Column_priv",
                "mysql.columns_priv",
                hosts,
                databases,
                accounts,
            ),
        }
        if lean is not None:
            return {k: v for k, v in out.items() if k in (GRANT_TABLES if tables is None else tables)}
        if self.mariadb:  # every global privilege, past the mysql.user view's columns too
            out["mysql.global_priv"] = _global_priv(accounts)
        else:  # MySQL 8's dynamic privileges (SET_USER_ID, ROLE_ADMIN, SYSTEM_USER, …)
            out["mysql.user"] = _q(f"SELECT User, Host, 'N', {user_cols} FROM mysql.user", by_user)  # noqa: S608
            dynamic = "SELECT USER, HOST, PRIV FROM mysql.global_grants"
            out["mysql.global_grants"] = _q(dynamic, _where(("USER", accounts)))
        out["mysql.procs_priv"] = _keyed(
            "User, Host, Db, Routine_name, Routine_type, Proc_priv",
            "mysql.procs_priv",
            hosts,
            databases,
            accounts,
        )
        # read on every snapshot (one value, same round trip): a server restarted with
        # another setting folds names differently from then on
        # MySQL 8: roles every account holds (``mandatory_roles``), active at login where
        # ``activate_all_roles_on_login`` is on
        roles_set = "" if self.mariadb else ", @@mandatory_roles, @@activate_all_roles_on_login"
        out["settings"] = (f"SELECT @@lower_case_table_names{roles_set}", ())
        if databases is None:  # role and proxy grants concern no database: read them when all are
            proxies = "SELECT User, Host, Proxied_user, Proxied_host, With_grant FROM mysql.proxies_priv"
            out["mysql.proxies_priv"] = (proxies, ())
            if self.mariadb:
                roles = "SELECT User, Host, Role, '', Admin_option FROM mysql.roles_mapping"
                out["mysql.roles_mapping"] = _q(roles, by_user)
            else:
                roles = "SELECT TO_USER, TO_HOST, FROM_USER, FROM_HOST, WITH_ADMIN_OPTION "
                roles += "FROM mysql.role_edges"
                out["mysql.role_edges"] = _q(roles, _where(("TO_USER", accounts)))
        return out


Where = tuple[str, tuple[Any, ...]]

#: the grant tables of database-, table- and column-level grants (what a lean read reads)
GRANT_TABLES = frozenset({"mysql.db", "mysql.tables_priv", "mysql.columns_priv"})


def grant_table(fact: Fact) -> str | None:
    """The grant table ``fact`` is a row of (``None``: a global or role grant)."""
    if isinstance(fact, ColumnGrant):
        return "mysql.columns_priv"
    if isinstance(fact, Grant) and fact.db is not None:
        return "mysql.db" if fact.table is None else "mysql.tables_priv"
    return None


def _where(*conditions: tuple[str, frozenset[str] | None], anonymous: bool = True) -> Where:
    """``WHERE col IN %s AND …`` for the conditions that are not ``None`` (columns are
    constants); ``anonymous``: a ``Host`` condition also keeps the anonymous user's rows."""
    parts = [(col, tuple(sorted(values))) for col, values in conditions if values is not None]
    if any(not values for _, values in parts):
        return " WHERE 1 = 0", ()  # an empty IN () is a syntax error; nothing matches
    if not parts:
        return "", ()
    # the rows of the anonymous user (``''``) at any host: a login from a host they match
    # may be theirs, and their database rows apply to every user name
    text = (
        "(Host IN %s OR User = '')" if col == "Host" and anonymous else f"{col} IN %s" for col, _ in parts
    )
    return " WHERE " + " AND ".join(text), tuple(v for _, v in parts)


def _q(select: str, where: Where) -> tuple[str, tuple[Any, ...]]:
    return select + where[0], where[1]


def _keyed(
    columns: str,
    table: str,
    hosts: frozenset[str] | None,
    databases: frozenset[str] | None,
    accounts: frozenset[str] | None,
) -> tuple[str, tuple[Any, ...]]:
    """A grant table keyed ``(Host, Db, User, …)`` and without an index on ``User``, read
    for ``hosts`` (and the anonymous user's rows at any host), ``databases`` and ``accounts``
    as key ranges. ``(Host IN … OR User = '')`` would be a scan of the whole table (every
    account's table grants: 200,000 rows at 1,000 accounts x 10,000 tables) on every read;
    here the anonymous user's rows are found per host the table names (a loose scan of its
    key's first column), then by key: the same rows, read by key. Columns and table are
    constants of this module; names are parameters."""
    select = f"SELECT {columns} FROM {table}"  # noqa: S608 - constants of this module
    if not hosts or (databases is not None and not databases):
        return _q(select, _where(("Host", hosts), ("Db", databases), ("User", accounts)))
    first = _where(("Host", hosts), ("Db", databases), ("User", accounts), anonymous=False)
    if accounts is not None and "" not in accounts:
        return _q(select, first)
    own = ", ".join(f"t.{c.strip()}" for c in columns.split(","))
    second = (
        f"SELECT STRAIGHT_JOIN {own} FROM (SELECT DISTINCT Host FROM {table}) AS a "  # noqa: S608
        f"JOIN {table} AS t ON t.Host = a.Host WHERE t.User = '' AND t.Host NOT IN %s"
    )
    args: tuple[Any, ...] = (tuple(sorted(hosts)),)
    if databases is not None:
        second += " AND t.Db IN %s"
        args += (tuple(sorted(databases)),)
    return f"({select}{first[0]}) UNION ALL ({second})", first[1] + args


#: ``is_role`` and the privilege bits, as the ``mysql.user`` view computes them from ``Priv``
_GLOBAL_PRIV = (
    "SELECT {t}User, {t}Host, ELT(IFNULL(JSON_VALUE({t}Priv, '$.is_role'), 0) + 1, 'N', 'Y'), "
    "JSON_VALUE({t}Priv, '$.access') FROM "
)


def _global_priv(accounts: frozenset[str] | None) -> tuple[str, tuple[Any, ...]]:
    """MariaDB's accounts, their ``is_role`` and global privilege bits (``$.access``): the
    ``mysql.user`` view's rows and the bits only ``global_priv`` holds, in one read. Keyed
    ``(Host, User)`` without an index on ``User``: ``User IN …`` alone would scan every
    account of the server; per host (a loose scan of the key's first column), then by key,
    the same rows (a shadowing account at another host included)."""
    if accounts is None:
        return _GLOBAL_PRIV.format(t="") + "mysql.global_priv", ()
    if not accounts:
        return _GLOBAL_PRIV.format(t="") + "mysql.global_priv WHERE 1 = 0", ()
    keyed = _GLOBAL_PRIV.format(t="g.").replace("SELECT ", "SELECT STRAIGHT_JOIN ", 1)
    keyed += (
        "(SELECT DISTINCT Host FROM mysql.global_priv) AS a "
        "JOIN mysql.global_priv AS g ON g.Host = a.Host WHERE g.User IN %s"
    )
    return keyed, (tuple(sorted(accounts)),)


_TABLE_TYPES = ", ".join(f"'{t}'" for t in TABLE_TYPES)  # constants of mapping.py


def _inventory(databases: frozenset[str] | None) -> tuple[str, tuple[Any, ...]]:
    schemata = "SELECT SCHEMA_NAME, NULL FROM information_schema.SCHEMATA"
    # every kind a table grant reaches (views, system-versioned tables, sequences): a
    # database-level grant reaches them too, so a DENY on one must show
    tables = (
        "SELECT TABLE_SCHEMA, TABLE_NAME FROM information_schema.TABLES "  # noqa: S608 - constants
        f"WHERE TABLE_TYPE IN ({_TABLE_TYPES})"
    )
    if databases is None:
        return f"{schemata} UNION ALL {tables}", ()
    names = tuple(sorted(databases)) or ("",)  # an empty IN () is a syntax error
    return f"{schemata} WHERE SCHEMA_NAME IN %s UNION ALL {tables} AND TABLE_SCHEMA IN %s", (names, names)


def dialect_of(version: str) -> Dialect:
    return Dialect("mariadb" if "mariadb" in version.lower() else "mysql")


@dataclass(frozen=True)
class ServerRead:
    """One read of the server: who connects, what exists, and the grant rows read."""

    dialect: Dialect
    me: Account
    inventory: ServerObjects
    accounts: frozenset[Account]
    roles: frozenset[Account]
    grants: frozenset[ServerFact]
    #: the roles pushdown's own account holds WITH ADMIN OPTION (it may revoke those)
    admin_roles: frozenset[tuple[str, str]] = frozenset()
    #: ``lower_case_table_names``: 0 compares names as spelled, 1 and 2 in lower case
    fold: int = 0
    #: ``mysql.procs_priv`` and ``mysql.proxies_priv`` rows (never facts: only findings)
    routines: frozenset[RoutineGrant] = frozenset()
    proxies: frozenset[ProxyGrant] = frozenset()
    #: MySQL 8 ``mandatory_roles`` (roles every account holds; empty on MariaDB)
    mandatory: str = ""
    #: ``(user, host as read back, host as the row holds it)`` of every grant row whose host
    #: is not in lower case: the grant tables compare ``Host`` as bytes, so a ``DELETE``
    #: shown for such a row must name the host as spelled (:mod:`pushdown_mysql.findings`)
    spelled_hosts: frozenset[tuple[str, str, str]] = frozenset()

    def hosts_as_spelled(self, account: Account) -> list[str]:
        """The hosts the grant rows of ``account`` hold, as spelled (its own when none differ)."""
        found = sorted({raw for u, h, raw in self.spelled_hosts if (u, h) == (account.user, account.host)})
        return found or [account.host]

    @cached_property
    def own_grants(self) -> frozenset[Grant]:
        """pushdown's own grant rows: what it may grant and revoke (found once per read, as
        every check of what it may revoke asks)."""
        return frozenset(g for g in self.grants if isinstance(g, Grant) and g.account == self.me)

    def held_by(self, account: Account) -> frozenset[ServerFact]:
        return frozenset(g for g in self.grants if g.account == account)


def parse_fold(rows: list[tuple[Any, ...]]) -> int:
    """``lower_case_table_names`` (an unexpected answer counts as folding: the narrower side)."""
    try:
        return int(rows[0][0])
    except (IndexError, TypeError, ValueError):
        return 1


def parse_mandatory(rows: list[tuple[Any, ...]]) -> str:
    """MySQL 8's ``mandatory_roles`` from the settings row (empty when not read)."""
    return str(rows[0][1] or "").strip() if rows and len(rows[0]) > 1 else ""


def spelled_hosts(tables: Iterable[Iterable[tuple[Any, ...]]]) -> frozenset[tuple[str, str, str]]:
    """The ``(user, lowered host, host)`` of rows (user and host first) whose host has capitals."""
    return frozenset(
        (str(row[0]), str(row[1]).lower(), str(row[1]))
        for rows in tables
        for row in rows
        if len(row) >= 2 and str(row[1]) != str(row[1]).lower()
    )


def _account(user: str, host: str) -> Account:
    return Account(user, host.lower())


def parse_inventory(rows: Iterable[tuple[str, str | None]]) -> ServerObjects:
    databases = {db for db, _ in rows if db not in SYSTEM_DATABASES}
    tables = {(db, t) for db, t in rows if t is not None and db in databases}
    return ServerObjects(frozenset(databases), frozenset(tables))


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


#: the ``mysql.user`` view's privilege columns in the order of their bit in MariaDB's
#: ``global_priv.Priv->'$.access'`` (bit 0: ``Select_priv`` … bit 29: ``Delete_history_priv``)
VIEW_BITS = (
    "Select_priv", "Insert_priv", "Update_priv", "Delete_priv", "Create_priv", "Drop_priv",
    "Reload_priv", "Shutdown_priv", "Process_priv", "File_priv", "Grant_priv", "References_priv",
    "Index_priv", "Alter_priv", "Show_db_priv", "Super_priv", "Create_tmp_table_priv",
    "Lock_tables_priv", "Execute_priv", "Repl_slave_priv", "Repl_client_priv", "Create_view_priv",
    "Show_view_priv", "Create_routine_priv", "Alter_routine_priv", "Create_user_priv", "Event_priv",
    "Trigger_priv", "Create_tablespace_priv", "Delete_history_priv",
)  # fmt: skip


def parse_global_priv(
    dialect: Dialect, rows: Iterable[tuple[Any, ...]]
) -> tuple[set[Account], set[Account], set[Grant]]:
    """MariaDB's ``mysql.global_priv`` rows (user, host, is_role, ``$.access``): the accounts,
    the roles and every global privilege, as :func:`parse_users` and :func:`parse_access`
    give them from the ``mysql.user`` view and the bits past its columns."""
    accounts: set[Account] = set()
    roles: set[Account] = set()
    names = dict(dialect.user_columns())
    by_bit = [names[c] for c in VIEW_BITS]
    rest: list[tuple[Any, ...]] = []
    grants: set[Grant] = set()
    for user, host, is_role, access in rows:
        account = _account(user, host)
        (roles if is_role == "Y" else accounts).add(account)
        try:
            bits = int(access or 0)
        except (TypeError, ValueError):
            bits = 0  # as the view reads it: no privilege
        grants |= {Grant(account, None, None, p) for bit, p in enumerate(by_bit) if bits >> bit & 1}
        rest.append((user, host, bits))
    return accounts, roles, grants | parse_access(rest)


#: MariaDB's global privileges that ``mysql.user`` shows no column for: bit of
#: ``global_priv.Priv->'$.access'`` -> name (10.11: SET USER … SLAVE MONITOR)
ACCESS_ONLY = {
    30: "SET USER",
    31: "FEDERATED ADMIN",
    32: "CONNECTION ADMIN",
    33: "READ_ONLY ADMIN",
    34: "REPLICATION SLAVE ADMIN",
    35: "REPLICATION MASTER ADMIN",
    36: "BINLOG ADMIN",
    37: "BINLOG REPLAY",
    38: "SLAVE MONITOR",
}


def parse_access(rows: Iterable[tuple[Any, ...]]) -> set[Grant]:
    """The global privileges only ``mysql.global_priv`` holds; a bit past the known ones is
    named by its number (never dropped: it may be a privilege of a newer server)."""
    out: set[Grant] = set()
    for user, host, access in rows:
        try:
            bits = int(access or 0)
        except (TypeError, ValueError):
            continue
        for bit in range(30, bits.bit_length()):
            if bits >> bit & 1:
                name = ACCESS_ONLY.get(bit, f"PRIVILEGE BIT {bit}")
                out.add(Grant(_account(str(user), str(host)), None, None, name))
    return out


def parse_dynamic(rows: Iterable[tuple[Any, ...]]) -> set[Grant]:
    """MySQL 8's dynamic privileges (``mysql.global_grants``): global grants by their own name."""
    return {Grant(_account(str(u), str(h)), None, None, str(p).upper()) for u, h, p, *_ in rows}


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
    return {RoleGrant(_account(u, h), role, str(role_host).lower()) for u, h, role, role_host, *_ in rows}


def admin_roles(rows: Iterable[tuple[Any, ...]], me: Account) -> frozenset[tuple[str, str]]:
    """The roles ``me`` holds WITH ADMIN OPTION: (role, role host)."""
    return frozenset(
        (str(role), str(role_host).lower())
        for user, host, role, role_host, admin, *_ in rows
        if _account(user, host) == me and str(admin).upper() in ("Y", "1")
    )


def parse_columns(rows: Iterable[tuple[Any, ...]]) -> set[ColumnGrant]:
    out: set[ColumnGrant] = set()
    for user, host, db, table, column, privs in rows:
        for name in _set_values(privs):
            out.add(ColumnGrant(_account(user, host), db, table, column, name.upper()))
    return out


@dataclass(frozen=True)
class ServerRegion:
    accounts: frozenset[str] | None  # account user names; None: every managed account
    databases: frozenset[str] | None  # database names; None: every database, and global grants
    #: the grant tables read (:data:`GRANT_TABLES`); None: all that ``databases`` implies
    tables: frozenset[str] | None = None

    def covers(self, fact: Fact) -> bool:
        if not isinstance(fact, Grant | RoleGrant | ColumnGrant):
            return False
        if self.tables is not None and grant_table(fact) not in self.tables:
            return False
        if self.accounts is not None and fact.account.user not in self.accounts:
            return False
        if self.databases is None:
            return True
        if isinstance(fact, ColumnGrant):
            return fact.db in self.databases
        if isinstance(fact, RoleGrant) or fact.db is None:
            return False
        name = exact_db_name(fact.db) if fact.table is None else fact.db
        return name is not None and name in self.databases


@dataclass(frozen=True)
class ServerScope:
    regions: tuple[ServerRegion, ...]

    @property
    def accounts(self) -> frozenset[str] | None:
        """Every account any region names, or None when one covers every account."""
        out: set[str] = set()
        for r in self.regions:
            if r.accounts is None:
                return None
            out |= r.accounts
        return frozenset(out)

    @property
    def databases(self) -> frozenset[str] | None:
        out: set[str] = set()
        for r in self.regions:
            if r.databases is None:
                return None
            out |= r.databases
        return frozenset(out)

    def within(self) -> Callable[[Fact], bool]:
        regions = self.regions

        def within(fact: Fact) -> bool:
            return any(r.covers(fact) for r in regions)

        return within


def server_scope(scope: Resolved, catalog: str | None, naming: AccountNaming, fold: int = 0) -> ServerScope:
    """Per region, its accounts and the databases it reaches (:func:`reach_of`, a table
    widened to its database); a region that reaches nothing here is left out. ``fold``:
    the server's ``lower_case_table_names``; where it folds names, a schema ``c.S1`` is
    (also) the database ``s1``."""
    regions = []
    for region in scope.regions:
        mapped = None if region.users is None else (naming.try_account(u) for u in region.users)
        accounts = None if mapped is None else frozenset(a.user for a in mapped if a is not None)
        databases = reach_of(region.roots, catalog, tables=False).names
        if fold and databases is not None:
            databases = databases | {d.lower() for d in databases}
        if databases is not None and not databases:
            continue  # nothing of this server lies in the region
        regions.append(ServerRegion(accounts, databases))
    return ServerScope(tuple(regions))
