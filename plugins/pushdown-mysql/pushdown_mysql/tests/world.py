"""Test helpers: a model and a server kept side by side, and the login-and-try probe.

``World`` holds the model (catalog ``c`` enforced by backend ``mysql1``) and creates
the matching databases, tables and accounts on the server as an administrator.
``probe`` logs in as each model user and tries every statement on every object; each
outcome is compared with the evaluator's decision.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import pymysql
from pushdown_lab.mariadb import LocalMariaDB

from pushdown.decide.evaluator import Evaluator
from pushdown.model import changes as ch
from pushdown.model.principals import Principal
from pushdown.model.privileges import Condition
from pushdown.model.securables import ObjectRef
from pushdown.model.state import Model
from pushdown.reconcile.backend import BackendContext
from pushdown_mysql.account import least_privileges
from pushdown_mysql.backend import MySQLBackend

PUSHDOWN = "pushdown"
PUSHDOWN_PASSWORD = "pushdown-secret"
PASSWORD = "user-secret"
CATALOG = "c"
BACKEND = "mysql1"
PREFIX = "pd_"
DENIED_CODES = {1142, 1044, 1143, 1045}
_probe_names = itertools.count()


def q(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def setup_pushdown_account(server: LocalMariaDB) -> None:
    with admin(server) as cur:
        cur.execute("CREATE USER %s@%s IDENTIFIED BY %s", (PUSHDOWN, "%", PUSHDOWN_PASSWORD))
        for sql, args in least_privileges(PUSHDOWN, "%", []):
            cur.execute(sql, args)


@contextmanager
def admin(server: LocalMariaDB) -> Iterator[Any]:
    conn = server.connect()
    try:
        with conn.cursor() as cur:
            yield cur
    finally:
        conn.close()


def backend_for(
    server: LocalMariaDB, map_principal: Callable[[Principal], str] | None = None, **settings: Any
) -> MySQLBackend:
    base = {"host": server.host, "port": server.port, "user": PUSHDOWN, "password": PUSHDOWN_PASSWORD}
    if map_principal is None:
        return MySQLBackend(BackendContext(BACKEND, {**base, **settings}))
    return MySQLBackend(BackendContext(BACKEND, {**base, **settings}, map_principal=map_principal))


def do(model: Model, events: Iterable[Any]) -> None:
    for event in events:
        model.apply(event)


@dataclass
class World:
    server: LocalMariaDB
    model: Model = field(default_factory=Model)
    databases: set[str] = field(default_factory=set)
    #: the backend's setting: without it, CREATE TABLE is refused where the model allows it
    #: (narrower, and the plan says so in a note)
    create_on_database: bool = False

    def __post_init__(self) -> None:
        do(
            self.model,
            ch.create_object(
                self.model, ObjectRef.of("catalog", (CATALOG,)), properties={"backend": BACKEND}
            ),
        )

    # -- model and server side by side ----------------------------------------------

    def user(self, name: str, *, account: bool = True) -> None:
        do(self.model, ch.add_user(self.model, name))
        if account:
            with admin(self.server) as cur:
                cur.execute("DROP USER IF EXISTS %s@%s", (PREFIX + name, "%"))
                cur.execute("CREATE USER %s@%s IDENTIFIED BY %s", (PREFIX + name, "%", PASSWORD))

    def schema(self, db: str, owner: str | None = None) -> None:
        do(self.model, ch.create_object(self.model, ObjectRef.of("schema", (CATALOG, db)), owner))
        with admin(self.server) as cur:
            cur.execute(f"DROP DATABASE IF EXISTS {q(db)}")
            cur.execute(f"CREATE DATABASE {q(db)}")
            for sql, args in least_privileges(PUSHDOWN, "%", [db])[-1:]:
                cur.execute(sql, args)
        self.databases.add(db)

    def table(self, db: str, table: str, owner: str | None = None) -> None:
        do(self.model, ch.create_object(self.model, ObjectRef.of("table", (CATALOG, db, table)), owner))
        with admin(self.server) as cur:
            cur.execute(f"CREATE TABLE {q(db)}.{q(table)} (id INT) ENGINE=InnoDB")

    def drop_table(self, db: str, table: str) -> None:
        do(self.model, ch.drop_object(self.model, ObjectRef.of("table", (CATALOG, db, table))))
        with admin(self.server) as cur:
            cur.execute(f"DROP TABLE {q(db)}.{q(table)}")

    def rename_table(self, db: str, table: str, new: str) -> None:
        do(self.model, ch.rename_object(self.model, ObjectRef.of("table", (CATALOG, db, table)), new))
        with admin(self.server) as cur:
            cur.execute(f"RENAME TABLE {q(db)}.{q(table)} TO {q(db)}.{q(new)}")

    def role(self, name: str, grants: Iterable[tuple[str, str, str]] = (), to: Iterable[str] = ()) -> None:
        do(self.model, ch.create_role(self.model, name))
        for obj, privilege, condition in grants:
            self.grant(name, obj, privilege, condition)
        for user in to:
            do(self.model, ch.grant_role(self.model, name, Principal.user(user)))

    def grant(self, role: str, obj: str, privilege: str, condition: str = "ALLOW") -> None:
        ref = ObjectRef.parse(obj)
        do(self.model, ch.grant_privileges(self.model, role, ref, [privilege], Condition(condition)))

    def cleanup(self) -> None:
        """Drop the world's accounts, then its databases: each statement on its own, so one
        that fails leaves nothing else behind for later tests (the first error is raised)."""
        statements: list[tuple[str, tuple[str, ...]]] = [
            ("DROP USER IF EXISTS %s@%s", (PREFIX + user, "%")) for user in self.model.users
        ]
        for db in self.databases:
            statements.append((f"DROP DATABASE IF EXISTS {q(db)}", ()))
            like = db.replace("\\", "\\\\").replace("_", "\\_").replace("%", "\\%")
            statements.append(("DELETE FROM mysql.db WHERE Db = %s", (like,)))
        statements.append(("FLUSH PRIVILEGES", ()))
        failed: list[pymysql.Error] = []
        with admin(self.server) as cur:
            for sql, args in statements:
                try:
                    cur.execute(sql, args or None)
                except pymysql.Error as exc:
                    failed.append(exc)
        if failed:
            raise failed[0]

    # -- the proof -------------------------------------------------------------------

    def tables(self) -> list[tuple[str, str]]:
        with admin(self.server) as cur:
            cur.execute(
                "SELECT TABLE_SCHEMA, TABLE_NAME FROM information_schema.TABLES "
                "WHERE TABLE_SCHEMA NOT IN ('mysql', 'information_schema', 'performance_schema', 'sys')"
            )
            return sorted(cur.fetchall())

    def probe(self) -> Probe:
        return Probe(self).run()


@dataclass
class Probe:
    """Log in as each user, try each statement on each object, compare with the evaluator."""

    world: World
    checks: int = 0
    mismatches: list[str] = field(default_factory=list)
    #: refused although the evaluator allows it, where a plan note says so (narrower)
    narrower: list[str] = field(default_factory=list)

    def run(self) -> Probe:
        evaluator = Evaluator(self.world.model)
        users = sorted(u for u in self.world.model.users if self._can_login(u))
        tables = self.world.tables()
        dbs = sorted(self.world.databases)
        for user in users:
            with self._login(user) as cur:
                for db, t in tables:
                    self._table_dml(evaluator, cur, user, db, t)
                for db in dbs:
                    self._create_table(evaluator, cur, user, db)
                    self._create_database(cur, user)
        for db, t in tables:
            for user in users:
                with self._login(user) as cur:
                    self._drop_table(evaluator, cur, user, db, t)
        for db in dbs:
            for user in users:
                with self._login(user) as cur:
                    self._drop_database(evaluator, cur, user, db, [t for d, t in tables if d == db])
        return self

    def _can_login(self, user: str) -> bool:
        try:
            self.world.server.connect(PREFIX + user, PASSWORD).close()
        except pymysql.err.OperationalError:
            return False
        return True

    @contextmanager
    def _login(self, user: str) -> Iterator[Any]:
        conn = self.world.server.connect(PREFIX + user, PASSWORD)
        try:
            with conn.cursor() as cur:
                yield cur
        finally:
            conn.close()

    def _try(
        self, cur: Any, sql: str, expected: bool, what: str, after: Callable[[], None] | None = None
    ) -> None:
        try:
            cur.execute(sql)
            ok = True
        except pymysql.err.MySQLError as exc:
            if exc.args[0] not in DENIED_CODES:
                raise
            ok = False
        finally:
            if cur.connection.get_autocommit() is False:
                cur.connection.rollback()
        self.checks += 1
        if ok != expected:
            self.mismatches.append(
                f"{what}: server {'allowed' if ok else 'refused'}, evaluator "
                f"{'allows' if expected else 'denies'} ({sql})"
            )
        if ok and after is not None:
            after()

    def _table_dml(self, ev: Evaluator, cur: Any, user: str, db: str, t: str) -> None:
        ref = ObjectRef.of("table", (CATALOG, db, t))
        load = ev.authorize(user, "load_table", ref, explain=False).allowed
        alter = ev.authorize(user, "alter_table", ref, explain=False).allowed
        name = f"{q(db)}.{q(t)}"
        self._try(cur, f"SELECT * FROM {name} LIMIT 0", load, f"{user} SELECT {db}.{t}")
        cur.connection.autocommit(False)
        try:
            self._try(cur, f"INSERT INTO {name} (id) VALUES (1)", alter, f"{user} INSERT {db}.{t}")
            self._try(cur, f"UPDATE {name} SET id = 2 WHERE 0", alter, f"{user} UPDATE {db}.{t}")
            self._try(cur, f"DELETE FROM {name} WHERE 0", alter, f"{user} DELETE {db}.{t}")
        finally:
            cur.connection.rollback()
            cur.connection.autocommit(True)
        self._try(cur, f"ALTER TABLE {name} COMMENT = 'probe'", alter, f"{user} ALTER {db}.{t}")

    def _create_table(self, ev: Evaluator, cur: Any, user: str, db: str) -> None:
        ref = ObjectRef.of("table", (CATALOG, db, "\x00new"))
        allowed = ev.authorize(user, "create_table", ref, explain=False).allowed
        if allowed and not self.world.create_on_database:
            self.narrower.append(f"{user} CREATE TABLE in {db}")  # the plan notes it
            allowed = False
        new = f"probe_{next(_probe_names)}"

        def undo() -> None:
            with admin(self.world.server) as adm:
                adm.execute(f"DROP TABLE {q(db)}.{q(new)}")

        sql = f"CREATE TABLE {q(db)}.{q(new)} (id INT)"
        self._try(cur, sql, allowed, f"{user} CREATE TABLE in {db}", undo)

    def _create_database(self, cur: Any, user: str) -> None:
        """CREATE DATABASE needs CREATE on *.*, never granted: always refused (a plan note says so)."""
        new = f"probe_db_{next(_probe_names)}"

        def undo() -> None:
            with admin(self.world.server) as adm:
                adm.execute(f"DROP DATABASE {q(new)}")

        self._try(cur, f"CREATE DATABASE {q(new)}", False, f"{user} CREATE DATABASE", undo)

    def _drop_table(self, ev: Evaluator, cur: Any, user: str, db: str, t: str) -> None:
        ref = ObjectRef.of("table", (CATALOG, db, t))
        allowed = ev.authorize(user, "drop_table", ref, explain=False).allowed

        def undo() -> None:
            with admin(self.world.server) as adm:
                adm.execute(f"CREATE TABLE {q(db)}.{q(t)} (id INT) ENGINE=InnoDB")

        self._try(cur, f"DROP TABLE {q(db)}.{q(t)}", allowed, f"{user} DROP TABLE {db}.{t}", undo)

    def _drop_database(self, ev: Evaluator, cur: Any, user: str, db: str, tables: list[str]) -> None:
        ref = ObjectRef.of("schema", (CATALOG, db))
        allowed = ev.authorize(user, "drop_schema", ref, explain=False).allowed

        def undo() -> None:
            with admin(self.world.server) as adm:
                adm.execute(f"CREATE DATABASE {q(db)}")
                for t in tables:
                    adm.execute(f"CREATE TABLE {q(db)}.{q(t)} (id INT) ENGINE=InnoDB")

        self._try(cur, f"DROP DATABASE {q(db)}", allowed, f"{user} DROP DATABASE {db}", undo)


def held(backend: MySQLBackend) -> set[object]:
    """Every managed grant the server holds now, read back in full."""
    from pushdown.model.state import Model
    from pushdown.reconcile.scope import Scope

    model = Model()
    return set(backend.read(model, Scope.everything().resolve(model)).facts)
