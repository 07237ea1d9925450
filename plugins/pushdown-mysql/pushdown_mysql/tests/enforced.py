"""What the server enforces for a set of accounts, two ways that must agree.

:func:`from_grant_tables` reads the grant tables as an administrator (one round trip)
and applies MariaDB's own rules: a privilege on ``d.t`` is held when the account (or a
role it may activate, transitively, or ``PUBLIC``) holds it globally, through any
``mysql.db`` pattern that matches ``d`` (``_`` and ``%`` are wildcards, ``\\`` escapes),
on the table, or on any column of it (a column grant is counted as reaching the table:
never a blind spot); a database, table or column row counts when its user is the login's
name and its host matches the client (MariaDB matches those rows by name and client host,
not by the account the login authenticated as). :func:`by_login` logs in as each account and tries ``SELECT``,
``INSERT``, ``UPDATE`` and ``DELETE`` on every table (rolled back). The adversary reads
the grant tables after every sync (cheap) and proves on a sample that the first answer
holds everything the second finds (it may only over-approximate: a false "wider", never a
missed one), so what it compares with the evaluator covers what the server enforces.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

import pymysql
from pushdown_lab.mariadb import LocalMariaDB

from pushdown_mysql.diagnose import pattern_matches
from pushdown_mysql.facts import Account
from pushdown_mysql.readback import (
    Dialect,
    parse_access,
    parse_columns,
    parse_db,
    parse_roles,
    parse_tables,
    parse_users,
)
from pushdown_mysql.routines import parse_proxies, parse_routines

from .world import DENIED_CODES, q

Key = tuple[str, str]  # (account user, account host)
#: (account user, privilege, object): an object is "d.t" or, for database-level rights, "d"
Held = set[tuple[str, str, str]]
LOGIN_PRIVILEGES = ("SELECT", "INSERT", "UPDATE", "DELETE", "EXECUTE")
DIALECT = Dialect("mariadb")


def from_grant_tables(
    cur: Any,
    users: Iterable[str],
    tables: list[tuple[str, str]],
    fold: int,
    routines: Sequence[Routine] = (),
) -> Held:
    """What each account ``user@'%'`` holds on each of ``tables`` and their databases, on each
    of ``routines`` (``"PROCEDURE d.p"``: EXECUTE, ALTER ROUTINE) and as a proxy
    (``"PROXY"`` on the proxied account)."""
    reads = DIALECT.queries()
    # the mysql.user view and the bits past its columns, read apart from the backend's
    # own read of mysql.global_priv (which this oracle checks)
    user_cols = ", ".join(c for c, _ in DIALECT.user_columns())
    reads["mysql.user"] = (f"SELECT User, Host, is_role, {user_cols} FROM mysql.user", ())
    reads["mysql.global_priv"] = (
        "SELECT User, Host, JSON_VALUE(Priv, '$.access') FROM mysql.global_priv",
        (),
    )
    rows: dict[str, list[tuple[Any, ...]]] = {}
    for key in (
        "mysql.user", "mysql.db", "mysql.tables_priv", "mysql.columns_priv", "mysql.roles_mapping",
        "mysql.procs_priv", "mysql.proxies_priv", "mysql.global_priv",
    ):  # fmt: skip
        sql, args = reads[key]
        cur.execute(sql, args or None)
        rows[key] = list(cur.fetchall())
    logins, _, grants = parse_users(DIALECT, rows["mysql.user"])
    facts = grants | parse_db(DIALECT, rows["mysql.db"]) | parse_tables(rows["mysql.tables_priv"])
    facts |= parse_access(rows["mysql.global_priv"])
    columns = parse_columns(rows["mysql.columns_priv"])
    edges: dict[Key, set[Key]] = {}
    for r in parse_roles(rows["mysql.roles_mapping"]):
        edges.setdefault((r.account.user, r.account.host), set()).add((r.role, ""))
    by_holder: dict[Key, list[Right]] = {}
    for g in facts:
        by_holder.setdefault((g.account.user, g.account.host), []).append((g.db, g.table, g.privilege))
    for c in columns:
        by_holder.setdefault((c.account.user, c.account.host), []).append((c.db, c.table, c.privilege))
    for rg in parse_routines(rows["mysql.procs_priv"]):
        right = (rg.db, f"{ROUTINE}{rg.kind}{ROUTINE}{rg.routine}", rg.privilege)
        by_holder.setdefault((rg.account.user, rg.account.host), []).append(right)
    for p in parse_proxies(rows["mysql.proxies_priv"]):
        right = (PROXY, str(p.proxied), "PROXY")
        by_holder.setdefault((p.account.user, p.account.host), []).append(right)
    out: Held = set()
    for user in users:
        holders = {("PUBLIC", "")}
        for login in _logins(user, logins):
            holders |= _reach(login, edges)
        holders |= _reach(("PUBLIC", ""), edges)
        rights = [r for h in holders for r in by_holder.get(h, ())]
        # database, table and column rows are matched by user name and the client's host,
        # whichever account the login authenticated as: every row of that user whose host
        # pattern matches 127.0.0.1 may apply (the first match, for a database row: this
        # over-approximates, it never misses what the server allows); a database row of the
        # anonymous user ('') matches every user name
        for (name, host), held in by_holder.items():
            if (name, host) in holders or not pattern_matches(host, CLIENT):
                continue
            if name == user:
                rights += [r for r in held if r[0] is not None]
            elif name == "":
                rights += [r for r in held if r[0] is not None and r[1] is None]
        out |= _expand(user, rights, tables, fold, routines)
    return out


CLIENT = "127.0.0.1"
#: a right's table field naming a routine (``"\x00PROCEDURE\x00p"``), and a proxy right's db field
ROUTINE, PROXY = "\x00", "\x00proxy"
Right = tuple[str | None, str | None, str]
Routine = tuple[str, str, str]  # (database, kind, name)


def _specific(host: str) -> tuple[int, int]:
    """MariaDB's order of hosts when it picks a login's account: a literal host first, then
    the longer literal prefix; ``%`` last (lower sorts first)."""
    wild = [i for i, ch in enumerate(host) if ch in "%_"]
    return (0, 0) if not wild else (1, -wild[0])


def _logins(user: str, accounts: Iterable[Account]) -> list[Key]:
    """The accounts a login as ``user`` from 127.0.0.1 over TCP may be (names are not
    resolved): the most specific host that matches, the named user before the anonymous one
    at the same host; where an anonymous account sorts first, a login as ``user`` without a
    password is that account: both count (an over-approximation)."""
    matching = [a for a in accounts if a.user in (user, "") and pattern_matches(a.host, CLIENT)]
    ranked = sorted(matching, key=lambda a: (_specific(a.host), a.user == ""))
    out: list[Key] = []
    for a in ranked:
        out.append((a.user, a.host))
        if a.user == user:
            break
    return out or [(user, "%")]


def _reach(start: Key, edges: dict[Key, set[Key]]) -> set[Key]:
    seen, todo = {start}, [start]
    while todo:
        for nxt in edges.get(todo.pop(), ()):
            if nxt not in seen:
                seen.add(nxt)
                todo.append(nxt)
    return seen


def _same(a: str, b: str, fold: int) -> bool:
    return a.lower() == b.lower() if fold else a == b


def _expand(
    user: str, rights: list[Right], tables: list[tuple[str, str]], fold: int, routines: Sequence[Routine]
) -> Held:
    out: Held = set()
    databases = sorted({d for d, _ in tables})
    for db, table, privilege in rights:
        if db == PROXY:
            out.add((user, privilege, str(table)))
        elif table is not None and table.startswith(ROUTINE):
            _, kind, name = table.split(ROUTINE)
            out.add((user, privilege, f"{kind} {db}.{name}"))
        elif db is None:  # global
            out |= {(user, privilege, f"{d}.{t}") for d, t in tables} | {
                (user, privilege, d) for d in databases
            }
            out |= _routines(user, privilege, routines, lambda d: True)
        elif table is None:
            hit = [
                d for d in databases if pattern_matches(db.lower() if fold else db, d.lower() if fold else d)
            ]
            out |= {(user, privilege, d) for d in hit}
            out |= {(user, privilege, f"{d}.{t}") for d, t in tables if d in hit}
            out |= _routines(user, privilege, routines, lambda d, db=db: pattern_matches(db, d))
        else:
            out |= {
                (user, privilege, f"{d}.{t}")
                for d, t in tables
                if _same(d, db, fold) and _same(t, table, fold)
            }
    return out


def _routines(user: str, privilege: str, routines: Sequence[Routine], where: Callable[[str], bool]) -> Held:
    """A global or database-level EXECUTE / ALTER ROUTINE reaches every routine there."""
    if privilege not in ("EXECUTE", "ALTER ROUTINE"):
        return set()
    return {(user, privilege, f"{kind} {d}.{name}") for d, kind, name in routines if where(d)}


def by_login(
    server: LocalMariaDB,
    users: Iterable[str],
    password: str,
    tables: list[tuple[str, str]],
    routines: Sequence[Routine] = (),
) -> Held:
    """What each account may do on each table and routine, by trying it (LOGIN_PRIVILEGES)."""
    out: Held = set()
    for user in users:
        try:
            conn = server.connect(user, password)
        except pymysql.err.OperationalError:
            continue  # no such account: it may do nothing
        try:
            conn.autocommit(False)
            with conn.cursor() as cur:
                cur.execute("SELECT ROLE_NAME FROM information_schema.APPLICABLE_ROLES")
                roles = sorted({str(r[0]) for r in cur.fetchall()})
                for role in (None, *roles):  # one role is active at a time; the user may pick any
                    cur.execute("SET ROLE NONE" if role is None else f"SET ROLE {q(role)}")
                    out |= {(user, p, o) for p, o in _try_all(conn, cur, tables)}
                    out |= {(user, "EXECUTE", r) for r in _call_all(cur, routines)}
        finally:
            conn.close()
    return out


def _call_all(cur: Any, routines: Sequence[Routine]) -> set[str]:
    out: set[str] = set()
    for d, kind, name in routines:
        sql = f"CALL {q(d)}.{q(name)}()" if kind == "PROCEDURE" else f"SELECT {q(d)}.{q(name)}()"
        try:
            cur.execute(sql)
            cur.fetchall()
            while cur.nextset():
                pass
        except pymysql.err.MySQLError as exc:
            if exc.args[0] in (EXECUTE_DENIED, *DENIED_CODES):
                continue
        out.add(f"{kind} {d}.{name}")  # ran, or failed past the privilege check
    return out


EXECUTE_DENIED = 1370


def _try_all(conn: Any, cur: Any, tables: list[tuple[str, str]]) -> set[tuple[str, str]]:
    out: set[tuple[str, str]] = set()
    for d, t in tables:
        name = f"{q(d)}.{q(t)}"
        for privilege, sql in (
            ("SELECT", f"SELECT * FROM {name} LIMIT 0"),
            ("INSERT", f"INSERT INTO {name} (id) VALUES (1)"),
            ("UPDATE", f"UPDATE {name} SET id = 2 WHERE 0"),
            ("DELETE", f"DELETE FROM {name} WHERE 0"),
        ):
            if _tries(cur, sql):
                out.add((privilege, f"{d}.{t}"))
        conn.rollback()
    return out


def _tries(cur: Any, sql: str) -> bool:
    try:
        cur.execute(sql)
    except pymysql.err.MySQLError as exc:
        if exc.args[0] not in DENIED_CODES:
            raise
        return False
    return True
