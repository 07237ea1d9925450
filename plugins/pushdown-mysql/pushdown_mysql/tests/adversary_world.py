"""The MySQL adversary's server side: reset between histories, and the check after a sync.

:class:`Checker` turns what the server enforces (:mod:`.enforced`) and what the evaluator
decides into the triples :func:`tests.adversary.compare` takes: (model user, MySQL
privilege, ``"d.t"`` or ``"d"``). A pool user is checked through the account it maps to
now, removed users included (the evaluator allows them nothing), except a removed user
whose account a present user maps to as well (two users colliding under a mapping): the
account is then the present user's login, and who else holds its credentials is the
identity system's business, not something pushdown can see or revoke.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from pushdown_lab.mariadb import LocalMariaDB

from pushdown.decide.evaluator import Evaluator
from pushdown.model.securables import ObjectRef, SecurableType
from pushdown.model.state import Model
from pushdown_mysql.mapping import DATABASE_LEVEL_EXACT, OWNER_DATABASE_PRIVILEGES, TABLE_OPERATIONS

from .enforced import LOGIN_PRIVILEGES, Routine, by_login, from_grant_tables
from .world import PASSWORD, PREFIX, q

Triple = tuple[str, str, str]
#: a table name no history draws: the stand-in for "a table nobody named yet"
FUTURE = "zz_future"
#: every how many checks the grant-table answer is proven against logging in
LOGIN_EVERY = 7


def reset_server(
    server: LocalMariaDB, accounts: Iterable[str], schemas: Iterable[str], base: Iterable[tuple[str, str]]
) -> None:
    """Every account and PUBLIC without privileges (global, routine and proxy ones too), no
    hand-made role, routine, shadowing, anonymous or other account, only the base tables."""
    names = sorted(accounts)
    with _cursor(server) as cur:
        cur.execute(
            "REVOKE ALL PRIVILEGES, GRANT OPTION FROM " + ", ".join("%s@'%%'" for _ in names), tuple(names)
        )
        for role in ROLES:
            cur.execute(f"DROP ROLE IF EXISTS {role}")
        for user in names:
            for host in SHADOW_HOSTS:
                cur.execute("DROP USER IF EXISTS %s@%s", (user, host))
        for user, host in OTHERS:
            cur.execute("DROP USER IF EXISTS %s@%s", (user, host))
        for schema in schemas:
            cur.execute(f"DROP PROCEDURE IF EXISTS {q(schema)}.adv_p")
            cur.execute(f"DROP FUNCTION IF EXISTS {q(schema)}.adv_f")
        for table in ("db", "tables_priv", "columns_priv", "procs_priv", "roles_mapping"):
            cur.execute(f"DELETE FROM mysql.{table} WHERE User = 'PUBLIC'")
        cur.execute("DELETE FROM mysql.proxies_priv WHERE User IN %s", (tuple(names),))
        cur.execute("FLUSH PRIVILEGES")
        cur.execute("SELECT 1 FROM mysql.user WHERE User = 'PUBLIC' AND 'Y' IN (Select_priv, Process_priv)")
        if cur.fetchall():
            cur.execute("REVOKE SELECT, PROCESS ON *.* FROM PUBLIC")
        wanted = set(base)
        cur.execute(
            "SELECT TABLE_SCHEMA, TABLE_NAME FROM information_schema.TABLES WHERE TABLE_SCHEMA IN %s",
            (tuple(schemas),),
        )
        held = {(str(d), str(t)) for d, t in cur.fetchall()}
        for d, t in sorted(held - wanted):
            cur.execute(f"DROP TABLE {q(d)}.{q(t)}")
        for d, t in sorted(wanted - held):
            cur.execute(f"CREATE TABLE {q(d)}.{q(t)} (id INT) ENGINE=MEMORY")


#: what the adversary's hand-made state creates besides grants to the pool's accounts
ROLES = ("adv_hr", "adv_inner", "adv_outer", "adv_pub", "adv_pub_kept")
SHADOW_HOSTS = ("127.0.0.1", "localhost", "127.0.0.%")
OTHERS = (("", "%"), ("", "127.0.0.1"), ("adv_other", "%"))

_ADMINS: dict[str, Any] = {}


@contextmanager
def _cursor(server: LocalMariaDB) -> Iterator[Any]:
    """A cursor on one administrator connection per server, kept for the whole test."""
    conn = _ADMINS.get(server.socket)
    if conn is None or not conn.open:
        conn = _ADMINS[server.socket] = server.connect()
    with conn.cursor() as cur:
        yield cur


def close_admins() -> None:
    for conn in _ADMINS.values():
        conn.close()
    _ADMINS.clear()


@dataclass
class Checker:
    server: LocalMariaDB
    users: tuple[str, ...]
    schemas: tuple[str, ...] = ("s1", "s2")
    catalog: str = "c"
    fold: int = 0
    checks: int = 0
    logins: int = 0
    #: what the grant tables' answer allowed and logging in did not (an over-approximation)
    over: int = 0

    def check(self, model: Model, mapped: Callable[[str], str]) -> tuple[set[Triple], set[Triple], int]:
        """(what the server enforces, what the evaluator decides, decisions compared)."""
        account = {u: PREFIX + mapped(u) for u in self.users}
        with _cursor(self.server) as cur:
            cur.execute(
                "SELECT TABLE_SCHEMA, TABLE_NAME FROM information_schema.TABLES WHERE TABLE_SCHEMA IN %s",
                (self.schemas,),
            )
            tables = sorted((str(d), str(t)) for d, t in cur.fetchall())
            cur.execute(
                "SELECT ROUTINE_SCHEMA, ROUTINE_TYPE, ROUTINE_NAME FROM information_schema.ROUTINES "
                "WHERE ROUTINE_SCHEMA IN %s",
                (self.schemas,),
            )
            routines = sorted((str(d), str(k), str(n)) for d, k, n in cur.fetchall())
            held = from_grant_tables(cur, set(account.values()), tables, self.fold, routines)
        self.checks += 1
        if self.checks % LOGIN_EVERY == 0:
            self._prove(held, set(account.values()), tables, routines)
        # a removed user whose account a present user now maps to is that user's login:
        # pushdown cannot tell who holds its credentials (the identity system must)
        present = {account[u] for u in self.users if u in model.users}
        checked = [u for u in self.users if u in model.users or account[u] not in present]
        server = {(u, p, o) for u in checked for a, p, o in held if a == account[u]}
        evaluator, decided = self._decide(model, tables, checked)
        return server, evaluator, decided

    def _prove(
        self, held: set[Triple], accounts: set[str], tables: list[tuple[str, str]], routines: list[Routine]
    ) -> None:
        """The grant tables' answer holds all that logging in finds (for the privileges tried:
        table DML, and EXECUTE by calling each routine)."""
        by_tables = {t for t in held if t[1] in LOGIN_PRIVILEGES and "." in t[2]}
        tried = by_login(self.server, accounts, PASSWORD, tables, routines)
        assert tried <= by_tables, sorted(tried - by_tables)
        self.logins += 1
        self.over += len(by_tables - tried)

    def _decide(
        self, model: Model, tables: list[tuple[str, str]], users: list[str]
    ) -> tuple[set[Triple], int]:
        ev = Evaluator(model)
        out: set[Triple] = set()
        decided = 0

        def allowed(user: str, operation: str, obj: ObjectRef) -> bool:
            nonlocal decided
            decided += 1
            return bool(ev.authorize(user, operation, obj, explain=False).allowed)

        spell = Spellings(model, self.catalog, self.fold)
        for user in users:
            for d, t in tables:
                for operation, privileges in TABLE_OPERATIONS:
                    if all(allowed(user, operation, obj) for obj in spell.tables(d, t)):
                        out |= {(user, p, f"{d}.{t}") for p in privileges}
            for d in self.schemas:
                out |= self._database(user, d, spell, tables, allowed)
        return out, decided

    def _database(
        self,
        user: str,
        d: str,
        spell: Spellings,
        tables: list[tuple[str, str]],
        allowed: Callable[[str, str, ObjectRef], bool],
    ) -> set[Triple]:
        """Database-level rights: an owner's, CREATE, and a privilege on every table there is
        or will be (the model's named tables, the server's, and one nobody named), under
        every spelling the server takes for the same database."""
        schemas = spell.schemas(d)
        if all(allowed(user, "drop_schema", s) for s in schemas):
            return {(user, p, d) for p in (*OWNER_DATABASE_PRIVILEGES, "CREATE")}
        out: set[Triple] = set()
        futures = [ObjectRef(SecurableType.TABLE, (*s.names, FUTURE)) for s in schemas]
        if all(allowed(user, "create_table", f) for f in futures):
            out.add((user, "CREATE", d))
        every = {*futures, *(o for o in spell.named if o.parent in schemas)}
        every |= {o for sd, t in tables if sd == d for o in spell.tables(sd, t)}
        for operation, privileges in TABLE_OPERATIONS:
            if all(allowed(user, operation, o) for o in every):
                out |= {(user, p, d) for p in privileges if p in DATABASE_LEVEL_EXACT}
        return out


class Spellings:
    """The model objects one server name stands for: itself, and where the server folds
    names (``lower_case_table_names`` 1), every spelling the model names that folds to it.
    The server may allow something only if the evaluator allows it under every one."""

    def __init__(self, model: Model, catalog: str, fold: int) -> None:
        objs = {*model.objects, *model.by_object, *model.owners}
        self.catalog = catalog
        self.fold = fold
        self.named = {o for o in objs if o.type is SecurableType.TABLE and o.catalog == catalog}
        names = {
            o.names[1]
            for o in objs
            if o.type in (SecurableType.SCHEMA, SecurableType.TABLE) and o.catalog == catalog
        }
        self.schema_names = names

    def _key(self, name: str) -> str:
        return name.lower() if self.fold else name

    def schemas(self, d: str) -> list[ObjectRef]:
        spelled = {d} | {n for n in self.schema_names if self._key(n) == self._key(d)}
        return [ObjectRef(SecurableType.SCHEMA, (self.catalog, n)) for n in sorted(spelled)]

    def tables(self, d: str, t: str) -> list[ObjectRef]:
        out = {ObjectRef(SecurableType.TABLE, (*s.names, t)) for s in self.schemas(d)}
        if self.fold:
            out |= {
                ObjectRef(SecurableType.TABLE, (*s.names, o.names[2]))
                for o in self.named
                if self._key(o.names[1]) == self._key(d) and self._key(o.names[2]) == self._key(t)
                for s in self.schemas(d)
            }
        return sorted(out, key=lambda o: o.names)
