"""The ``mysql`` backend: one MySQL/MariaDB server enforces one catalog.

``plan`` reads the server once (:mod:`pushdown_mysql.readback`, six queries),
compiles the model against that inventory (:mod:`pushdown_mysql.compile`) and diffs
inside the server scope (:mod:`pushdown_mysql.scoping`). ``apply`` runs the fewest
GRANT/REVOKE statements (:mod:`pushdown_mysql.statements`) on one connection.

Fence: the backend manages the accounts ``<account_prefix><user>@<account_host>``
(settings; default ``pd_`` and ``%``), never its own account, never roles, never
``root``/``mariadb.sys``/``mysql``/``PUBLIC``. An empty prefix manages every account at
that host: the configuration then gives it the whole server. It never creates or
drops accounts.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from typing import Any

from pushdown.errors import BackendError, ConfigError
from pushdown.model.securables import SecurableType
from pushdown.model.state import Model
from pushdown.reconcile.backend import Backend, BackendContext, Capabilities, Desired, Progress
from pushdown.reconcile.plan import Fact, Op, Plan, diff
from pushdown.reconcile.scope import Scope
from pushdown_mysql.compile import Naming, compile_desired
from pushdown_mysql.connection import Connection, ConnectionSettings
from pushdown_mysql.diagnose import missing_for
from pushdown_mysql.facts import Account, Grant, RoleGrant
from pushdown_mysql.readback import (
    Dialect,
    Snapshot,
    dialect_of,
    parse_db,
    parse_inventory,
    parse_roles,
    parse_tables,
    parse_users,
)
from pushdown_mysql.scoping import server_scope
from pushdown_mysql.statements import Statement, statements


@dataclasses.dataclass(frozen=True)
class Session:
    """Who we are on the current connection (asked once per connection)."""

    raw: Any
    dialect: Dialect
    me: Account


RESERVED_USERS = frozenset({"root", "mariadb.sys", "mysql", "PUBLIC", ""})


def settings_from(context: BackendContext) -> ConnectionSettings:
    password = context.secret("password") or context.setting("password", "")
    return ConnectionSettings(
        host=str(context.setting("host", "127.0.0.1")),
        port=int(context.setting("port", 3306)),
        user=str(context.setting("user", required=True)),
        password=str(password),
        unix_socket=context.setting("unix_socket"),
        connect_timeout=float(context.setting("connect_timeout", 5.0)),
    )


class MySQLBackend(Backend):
    kind = "mysql"
    capabilities = Capabilities(
        securable_types=frozenset({SecurableType.CATALOG, SecurableType.SCHEMA, SecurableType.TABLE})
    )

    def __init__(self, context: BackendContext) -> None:
        super().__init__(context)
        self.connection = Connection(context.name, settings_from(context))
        self.naming = Naming(
            prefix=str(context.setting("account_prefix", "pd_")),
            host=str(context.setting("account_host", "%")).lower(),
            map_principal=context.map_principal,
        )
        self._session: Session | None = None
        self.last: Snapshot | None = None

    # -- reading ---------------------------------------------------------------------

    def _whoami(self) -> Session:
        raw = self.connection.raw
        if self._session is None or self._session.raw is not raw:
            rows = self.connection.query("SELECT VERSION(), CURRENT_USER()", why="asking who we are")
            version, me = rows[0]
            user, _, host = str(me).rpartition("@")
            self._session = Session(raw, dialect_of(str(version)), Account(user, host.lower()))
        return self._session

    def read(self) -> Snapshot:
        """One snapshot of the server: a constant number of queries."""
        session = self._whoami()
        dialect = session.dialect
        queries = dialect.queries().items()
        rows = {key: self.connection.query(sql, why=f"reading {key}") for key, sql in queries}
        accounts, roles, global_grants = parse_users(dialect, rows["mysql.user"])
        role_key = "mysql.roles_mapping" if dialect.mariadb else "mysql.role_edges"
        grants = global_grants | parse_db(dialect, rows["mysql.db"]) | parse_tables(rows["mysql.tables_priv"])
        snap = Snapshot(
            dialect,
            session.me,
            parse_inventory(rows["inventory"]),
            frozenset(accounts),
            frozenset(roles),
            frozenset(grants | parse_roles(rows[role_key])),
        )
        self.last = snap
        return snap

    def manages(self, account: Account, me: Account) -> bool:
        return (
            account != me
            and account.host == self.naming.host
            and account.user.startswith(self.naming.prefix)
            and account.user not in RESERVED_USERS
        )

    # -- the contract ----------------------------------------------------------------

    def catalog(self, model: Model) -> str | None:
        catalogs = sorted(self.enforces(model))
        if len(catalogs) > 1:
            raise ConfigError(
                f"backend {self.name}: one MySQL server enforces one catalog, but {', '.join(catalogs)} "
                "name it; give each catalog its own backend"
            )
        return catalogs[0] if catalogs else None

    def desired(self, model: Model, scope: Scope) -> Desired:
        return self._desired(model, self.read())

    def _desired(self, model: Model, snap: Snapshot) -> Desired:
        managed = frozenset(a for a in snap.accounts if self.manages(a, snap.me))
        return compile_desired(model, self.catalog(model), snap.inventory, managed, self.naming)

    def actual(self, scope: Scope) -> Iterable[Fact]:
        """Every managed fact; :meth:`plan` narrows both sides to the server scope."""
        return self._actual(self.read())

    def _actual(self, snap: Snapshot) -> set[Fact]:
        return {g for g in snap.grants if self.manages(g.account, snap.me)}

    def plan(self, model: Model, scope: Scope) -> Plan:
        snap = self.read()
        want = self._desired(model, snap)
        where = server_scope(model, scope, self.catalog(model), self.naming)
        plan = diff(self.name, want.facts, self._actual(snap), where, order=self.order, notes=want.notes)
        return dataclasses.replace(plan, scope=scope)

    def apply(self, ops: tuple[Op, ...], progress: Progress) -> None:
        todo = statements(ops)
        for done, statement in enumerate(todo):
            try:
                self.connection.execute(statement.template, statement.args)
            except Exception as exc:
                raise self._failed(exc, statement, done, len(todo)) from exc
            progress(statement.ops)

    def _failed(self, exc: Exception, statement: Statement, done: int, total: int) -> BackendError:
        doing = f"{statement.display()} (statement {done + 1} of {total}; the first {done} were applied)"

        def diagnose(code: int, words: str) -> str:
            me = self.last.me if self.last else Account(self.connection.settings.user, "?")
            missing = missing_for(self.last, statement) if self.last else ()
            lacks = ", ".join(missing) or "a privilege"
            needs = ", ".join(statement.privileges)
            return (
                f"pushdown's account {me} lacks {lacks} on {statement.on} (to change {needs} there it "
                "needs each of them WITH GRANT OPTION); "
            )

        return self.connection.translate(exc, doing, diagnose)

    def close(self) -> None:
        self.connection.close()


__all__ = ["Grant", "MySQLBackend", "RoleGrant"]
