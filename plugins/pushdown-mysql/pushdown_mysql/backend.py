"""The ``mysql`` backend: one MySQL/MariaDB server enforces one catalog.

``read`` reads the server once, narrowed to the scope with WHERE clauses
(:mod:`pushdown_mysql.readback`); ``compile`` turns the
core's entitlement compiler's answer into grants (:mod:`pushdown_mysql.compile`);
``apply`` runs the fewest GRANT/REVOKE statements (:mod:`pushdown_mysql.statements`)
on one connection, and a statement the server refuses does not stop the others.

Fence: the backend manages the accounts ``<account_prefix><user>@<account_host>``
(settings; default ``pd_`` and ``%``), never its own account, never roles, never
``root``/``mariadb.sys``/``mysql``. The rows of a principal that reaches a managed login
(``PUBLIC``, the anonymous user ``''``, a managed user name at another host) are
revoked where they reach a governed database and pushdown may revoke them, and their
role memberships where pushdown holds the role WITH ADMIN OPTION; the rest is reported
with the statement to run (:mod:`pushdown_mysql.findings`, :mod:`pushdown_mysql.routines`).
An empty prefix manages every account at that host: the configuration then gives it
the whole server. It never creates or drops accounts. ``SURFACE`` lists every grant
table, principal form and modifier of the server and what the backend does with it
(:mod:`pushdown_mysql.surface`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from pushdown.errors import BackendError, PermanentBackendError, TemporaryBackendError
from pushdown.model.securables import ObjectRef, SecurableType
from pushdown.model.state import Model
from pushdown.reconcile.backend import (
    Applied,
    Backend,
    BackendContext,
    Capabilities,
    Desired,
    Failure,
    Progress,
    Snapshot,
    fingerprint,
)
from pushdown.reconcile.estate import Estate
from pushdown.reconcile.plan import Fact, Plan
from pushdown.reconcile.reach import one_catalog
from pushdown.reconcile.scope import Region, Resolved, Scope
from pushdown.reconcile.settings import Settings
from pushdown_mysql.compile import AccountNaming, compile_desired
from pushdown_mysql.connection import Connection, ConnectionSettings, error_parts
from pushdown_mysql.diagnose import pattern_covers, refusal
from pushdown_mysql.discovery import SUMMARY_SQL, changed, summary_of
from pushdown_mysql.facts import (
    Account,
    ColumnGrant,
    Grant,
    RoleGrant,
    ServerFact,
    exact_db_name,
    fact_from_json,
)
from pushdown_mysql.findings import (
    ANONYMOUS,
    PUBLIC,
    in_reach,
    mandatory_findings,
    orphan,
    orphan_findings,
    public_findings,
    shadow_findings,
    stuck,
)
from pushdown_mysql.identity import sharing
from pushdown_mysql.readback import (
    Dialect,
    ServerRead,
    ServerRegion,
    ServerScope,
    admin_roles,
    dialect_of,
    grant_table,
    parse_columns,
    parse_db,
    parse_dynamic,
    parse_fold,
    parse_global_priv,
    parse_inventory,
    parse_mandatory,
    parse_roles,
    parse_tables,
    parse_users,
    server_scope,
    spelled_hosts,
)
from pushdown_mysql.routines import parse_proxies, parse_routines, proxy_findings, routine_findings
from pushdown_mysql.statements import Statement, statements
from pushdown_mysql.surface import ENTRIES


@dataclasses.dataclass(frozen=True)
class Session:
    """Who we are on the current connection (asked once per connection)."""

    raw: Any
    dialect: Dialect
    me: Account
    #: ``lower_case_table_names`` when the connection was made (it changes only with a restart)
    fold: int = 0


RESERVED_USERS = frozenset({"root", "mariadb.sys", "mysql", "PUBLIC", ""})


def settings_from(context: BackendContext) -> ConnectionSettings:
    """The connection settings, each checked (a :class:`ConfigError` names backend and key)."""
    s = Settings.of(context)
    return ConnectionSettings(
        host=s.text("host", "127.0.0.1"),
        port=s.port("port", 3306),
        user=s.text("user", required=True),
        password=context.secret("password") or s.secret_text("password"),
        unix_socket=s.optional_text("unix_socket"),
        connect_timeout=s.seconds("connect_timeout", 5.0),
    )


#: the grant tables whose rows name their user and host first (the role table is the dialect's)
_ROW_TABLES = ("mysql.db", "mysql.tables_priv", "mysql.columns_priv", "mysql.global_grants")


class MySQLBackend(Backend):
    kind = "mysql"
    capabilities = Capabilities(
        securable_types=frozenset({SecurableType.CATALOG, SecurableType.SCHEMA, SecurableType.TABLE})
    )
    SURFACE = ENTRIES

    def __init__(self, context: BackendContext) -> None:
        super().__init__(context)
        self.connection = Connection(context.name, settings_from(context))
        s = Settings.of(context)
        self.naming = AccountNaming(
            prefix=s.text("account_prefix", "pd_", empty=True),
            host=s.text("account_host", "%").lower(),
            map_principal=context.map_principal,
            mapping_version=context.mapping_version,
            mapping_stable=context.mapping_stable,
        )
        self.create_on_database = s.flag("create_on_database")
        self._session: Session | None = None

    # -- reading ---------------------------------------------------------------------

    def _whoami(self) -> Session:
        raw = self.connection.raw
        if self._session is None or self._session.raw is not raw:
            rows = self.connection.query(
                "SELECT VERSION(), CURRENT_USER(), @@lower_case_table_names", why="asking who we are"
            )
            version, me, fold = rows[0]
            user, _, host = str(me).rpartition("@")
            account = Account(user, host.lower())
            self._session = Session(raw, dialect_of(str(version)), account, parse_fold([(fold,)]))
        return self._session

    def read(self, model: Model, scope: Resolved) -> MySQLSnapshot:
        """One snapshot of the server narrowed to ``scope``: a constant number of queries,
        each with a WHERE on the accounts and databases the scope names."""
        catalogs = sorted(self.enforces(model))
        catalog = catalogs[0] if len(catalogs) == 1 else None
        everything = Scope.everything().resolve(model)
        if len(catalogs) > 1:  # a configuration error: read everything, keep only what all decide
            scope = everything
        fold = self._whoami().fold
        scope = sharing(folded_scope(scope, catalog, fold), model, self.naming)
        where = server_scope(scope, catalog, self.naming, fold)
        server = self._read(where.accounts, where.databases)
        if server.fold != fold:  # changed underneath (a restart): read and decide it all again
            self._session = None
            scope = everything
            where = server_scope(scope, catalog, self.naming, server.fold)
            server = self._read(None, None)
        within = where.within()

        def mine(a: Account) -> bool:
            return self.manages(a, server.me)

        def reaches(a: Account) -> bool:
            return self.reaches(a, server.me)

        # rows whose account does not exist: no REVOKE removes them (findings.orphan)
        orphans = frozenset(g for g in server.grants if reaches(g.account) and orphan(server, g))
        rows = server.grants - orphans
        managed = frozenset(g for g in rows if self._governs(g, server) and within(g))
        beyond, stuck_findings = stuck(server, managed)
        others = (g for g in rows if not mine(g.account) and reaches(g.account))
        found = (
            *self._ambiguous(catalogs),
            *orphan_findings(server, orphans),
            *public_findings([g for g in others if not self._governs(g, server)]),
            *shadow_findings(server, mine),
            *stuck_findings,
            *routine_findings(server.routines, reaches),
            *proxy_findings(server.proxies, reaches),
            *mandatory_findings(server),
        )
        return MySQLSnapshot(
            facts=managed - beyond,
            within=within,
            findings=found,
            fingerprint=fingerprint(managed, found),
            server=server,
            where=where,
            resolved=scope,
        )

    def _read(
        self,
        accounts: frozenset[str] | None,
        databases: frozenset[str] | None,
        *,
        lean: bool = False,
        more_hosts: frozenset[str] = frozenset(),
        tables: frozenset[str] | None = None,
    ) -> ServerRead:
        session = self._whoami()
        dialect = session.dialect
        hosts = None
        if accounts is not None:  # our own rows name what we may grant; PUBLIC's reach everyone
            accounts = accounts | {session.me.user, PUBLIC, ANONYMOUS}
            hosts = frozenset({self.naming.host, session.me.host, "", *more_hosts})  # "": PUBLIC's host
        own = frozenset({session.me.user}) if lean else None
        reads = dialect.queries(accounts, databases, hosts, lean=own, tables=tables)
        rows = self.connection.query_many(reads, why=f"reading {', '.join(reads)}")
        if "mysql.global_priv" in rows:
            accounts_found, roles, global_grants = parse_global_priv(dialect, rows["mysql.global_priv"])
        else:  # MySQL 8; a lean read reads no account (the read before holds them)
            accounts_found, roles, global_grants = parse_users(dialect, rows.get("mysql.user", []))
        role_key = "mysql.roles_mapping" if dialect.mariadb else "mysql.role_edges"
        grants = global_grants | parse_db(dialect, rows.get("mysql.db", []))
        grants |= parse_tables(rows.get("mysql.tables_priv", []))
        grants |= parse_dynamic(rows.get("mysql.global_grants", []))
        role_rows = rows.get(role_key, [])
        snap = ServerRead(
            dialect,
            session.me,
            parse_inventory(rows.get("inventory", [])),
            frozenset(accounts_found),
            frozenset(roles),
            frozenset(grants | parse_columns(rows.get("mysql.columns_priv", [])) | parse_roles(role_rows)),
            admin_roles(role_rows, session.me),
            parse_fold(rows["settings"]) if "settings" in rows else 0,
            frozenset(parse_routines(rows.get("mysql.procs_priv", []))),
            frozenset(parse_proxies(rows.get("mysql.proxies_priv", []))),
            parse_mandatory(rows.get("settings", [])),
            spelled_hosts(rows.get(t, []) for t in (*_ROW_TABLES, role_key)),
        )
        return snap

    def _governs(self, fact: ServerFact, server: ServerRead) -> bool:
        """A row pushdown keeps equal to the model: a managed account's; and those of a
        principal that reaches a managed login (:meth:`reaches`: PUBLIC, the anonymous user,
        a managed user name at another host), desired none: their grants on what pushdown
        governs and may revoke, and their roles (revoked where pushdown holds the role WITH
        ADMIN OPTION, else reported: :func:`~pushdown_mysql.findings.stuck`)."""
        account = fact.account
        if self.manages(account, server.me):
            return True
        if not self.reaches(account, server.me):
            return False
        return isinstance(fact, RoleGrant) or in_reach(server, fact)

    def reaches(self, account: Account, me: Account) -> bool:
        """Whether ``account``'s rows can apply to a login as a managed account: PUBLIC's (every
        account holds them), the anonymous user's (its database rows match every user name;
        a login from a host it matches more closely is that account), or an account with a
        managed user name at another host (a login from there is that account)."""
        if self.manages(account, me):
            return True
        if account.user == me.user:
            return False  # pushdown's own name at any host (an empty prefix would match it)
        return (
            account.public
            or account.user == ANONYMOUS
            or self.manages(Account(account.user, self.naming.host), me)
        )

    def manages(self, account: Account, me: Account) -> bool:
        return (
            account != me
            and account.host == self.naming.host
            and account.user.startswith(self.naming.prefix)
            and account.user not in RESERVED_USERS
        )

    # -- the contract ----------------------------------------------------------------

    def _ambiguous(self, catalogs: list[str]) -> tuple[str, ...]:
        if len(catalogs) < 2:
            return ()
        return (
            f"one MySQL server enforces one catalog, but {', '.join(catalogs)} name backend {self.name}: "
            "until one remains, a grant stays only where every one of them decides it (narrower); "
            "give each catalog its own backend",
        )

    def on_server(self, model: Model, obj: ObjectRef) -> bool | None:
        """Whether the server holds the database of a schema, or the table of a table
        (one query on ``information_schema``; names compared as the server compares them:
        exactly, or case-folded where it folds names). pushdown's account sees every
        database it may grant on, so one it cannot see gives nobody anything."""
        if obj.type not in (SecurableType.SCHEMA, SecurableType.TABLE):
            return False  # the server holds no topics, filesets, models: nothing to claim
        fold = self._whoami().fold
        if obj.type is SecurableType.SCHEMA:
            sql = "SELECT SCHEMA_NAME FROM information_schema.SCHEMATA WHERE LOWER(SCHEMA_NAME) = LOWER(%s)"
        else:
            sql = (
                "SELECT TABLE_SCHEMA, TABLE_NAME FROM information_schema.TABLES "
                "WHERE LOWER(TABLE_SCHEMA) = LOWER(%s) AND LOWER(TABLE_NAME) = LOWER(%s)"
            )
        names = obj.names[1:]
        rows = self.connection.query(sql, names, why=f"asking whether the server holds {obj}")
        found = {tuple(str(v) for v in r) for r in rows}
        if fold:
            return any(tuple(v.casefold() for v in f) == tuple(n.casefold() for n in names) for f in found)
        return tuple(names) in found

    def catalog(self, model: Model) -> str | None:
        return one_catalog(self.name, "MySQL server", self.enforces(model))

    def compile(self, model: Model, snapshot: Snapshot, scope: Resolved) -> Desired:
        assert isinstance(snapshot, MySQLSnapshot)
        server = snapshot.server
        scope = snapshot.resolved or scope
        managed = frozenset(a for a in server.accounts if self.manages(a, server.me))
        catalogs = sorted(self.enforces(model))
        if len(catalogs) > 1:  # no error stops the narrowing: what every catalog decides, at most
            everything = Scope.everything().resolve(model)
            parts = [self._compile(model, c, server, managed, everything) for c in catalogs]
            facts = frozenset.intersection(*(frozenset(p.facts) for p in parts))
            return Desired(facts, tuple(sorted({n for p in parts for n in p.notes})))
        return self._compile(model, catalogs[0] if catalogs else None, server, managed, scope)

    def _compile(
        self,
        model: Model,
        catalog: str | None,
        server: ServerRead,
        managed: frozenset[Account],
        scope: Resolved,
    ) -> Desired:
        return compile_desired(
            model,
            catalog,
            server.inventory,
            managed,
            self.naming,
            scope,
            create_on_database=self.create_on_database,
            engine=self.context.engine,
            fold=server.fold,
            unmanaged=(server.accounts | server.roles) - managed,
        )

    def apply(self, plan: Plan, snapshot: Snapshot, progress: Progress) -> Applied:
        assert isinstance(snapshot, MySQLSnapshot)
        todo = statements(plan.ops)
        failures: list[Failure] = []
        done = 0
        for index, statement in enumerate(todo):
            done += self._run(statement, Step(index, len(todo), snapshot.server), failures)
            progress(statement.ops)
        return Applied(done, tuple(failures))

    def _run(self, statement: Statement, step: Step, failures: list[Failure]) -> int:
        """Run one statement; how many operations it did. A refusal is recorded; a statement
        naming several accounts that fails in any way (an "already gone" error included:
        MariaDB stops at the first account it fails on, MySQL 8 undoes the whole statement)
        is run again account by account, so one account never holds back another's change. A
        refused ``REVOKE`` of several privileges for one account is run again one privilege at a
        time, so a privilege the server would revoke is never held back by one it refuses."""
        try:
            self.connection.execute(statement.template, statement.args)
            return statement.ops
        except Exception as exc:
            code, _ = error_parts(exc)
            gone = statement.revoking and code in ALREADY_GONE
            error = None if gone else self._failed(exc, statement, step)
            if isinstance(error, TemporaryBackendError):
                raise error from exc
            if len(statement.accounts) > 1:
                return sum(self._run(single, step, failures) for single in statement.split())
            if error is None:
                return self._gone(statement, code, failures)
            grants = [f for f in statement.facts if isinstance(f, Grant)]
            if statement.revoking and len(grants) > 1:
                return sum(self._run(single, step, failures) for single in statement.per_privilege())
            failures.append(Failure((), str(error)))
            return 0

    def _gone(self, statement: Statement, code: int, failures: list[Failure]) -> int:
        """A ``REVOKE`` naming one account answered "no such grant" (1141, 1147, 1403): the
        account was dropped or the grant revoked meanwhile, or the grant is held in a row the
        ``REVOKE`` does not reach (the account dropped but its row left or written by hand, its
        host spelled otherwise). That account's rows are read again: the statement counts as done
        only when none of them holds what it revokes; otherwise, or when the read fails, it is
        reported (never taken as done)."""
        try:
            left = self._still_held(statement)
        except TemporaryBackendError:
            raise
        except Exception as exc:  # reported: never taken as done
            failures.append(
                Failure((), f"{statement.display()} answered no such grant ({code}), and reading the "
                f"account's grants again to confirm failed: {exc}")
            )  # fmt: skip
            return 0
        if not left:
            return statement.ops  # gone: the account's rows hold none of it
        rows = "; ".join(f"{g} (host as read: {g.account.host!r})" for g in sorted(left, key=str))
        failures.append(
            Failure(
                (),
                f"{statement.display()} answered no such grant ({code}) but the server still "
                f"holds it: {rows}. The REVOKE does not reach that row (its account does not "
                f"exist, or the row names it under another host spelling or database pattern); "
                f"see the findings for the statements that remove it",
            )
        )
        return 0

    def _still_held(self, statement: Statement) -> frozenset[ServerFact]:
        """The grant rows of ``statement``'s user, read again at every host and database,
        that hold what the statement revokes: the same privilege on the same database, table
        or column (names and hosts compared without case; a database pattern covering the
        statement's counts too), for the account the statement named only (:func:`_same_account`:
        the same user at another host is another account)."""
        (account,) = statement.accounts
        dialect = self._whoami().dialect
        tables = frozenset(t for f in statement.facts if (t := grant_table(f)) is not None)
        reads = dialect.queries(frozenset({account.user}), None, None, lean=frozenset(), tables=tables)
        rows = self.connection.query_many(reads, why="reading a grant the server said is gone")
        held: set[ServerFact] = set(parse_db(dialect, rows.get("mysql.db", [])))
        held |= parse_tables(rows.get("mysql.tables_priv", []))
        held |= parse_columns(rows.get("mysql.columns_priv", []))
        return frozenset(g for g in held if any(_holds(g, f) for f in statement.facts))

    def discover(self, model: Model, seen: str | None) -> tuple[Scope, str | None]:
        """Databases whose tables changed since the last sync (:mod:`pushdown_mysql.discovery`)."""
        catalogs = sorted(self.enforces(model))
        if len(catalogs) != 1:  # none, or a configuration error under which every read is full
            return Scope.nothing(), seen
        catalog = catalogs[0]
        rows = self.connection.query(SUMMARY_SQL, why="summarising the databases and tables")
        now = summary_of(catalog, rows)
        return changed(seen, now), now

    def reread(
        self, model: Model, scope: Resolved, plan: Plan, snapshot: Snapshot, applied: Applied | None = None
    ) -> Snapshot:
        """Read back only the accounts, databases and grant tables the plan touched; keep the rest."""
        assert isinstance(snapshot, MySQLSnapshot)
        touched = [op.fact for op in plan.ops if isinstance(op.fact, Grant | RoleGrant | ColumnGrant)]
        accounts = frozenset(f.account.user for f in touched)
        databases = _touched_databases(touched)
        # database- and table-level grants only: no inventory, no other account's global rows
        hosts = frozenset(f.account.host for f in touched)  # a shadowing account's too
        tables = None if databases is None else _touched_tables(plan)
        server = self._read(accounts, databases, lean=databases is not None, more_hosts=hosts, tables=tables)
        region = ServerRegion(accounts, databases, tables)
        fresh = {
            g
            for g in server.grants
            if self._governs(g, snapshot.server) and region.covers(g) and not orphan(snapshot.server, g)
        }  # a lean read holds no account: which exist, as read before
        fresh -= stuck(snapshot.server, fresh)[0]  # what pushdown may revoke: as read before
        kept = {f for f in snapshot.facts if not region.covers(f)}
        facts = frozenset(f for f in kept | fresh if snapshot.within(f))
        return replace(snapshot, facts=facts)

    def fact_from_json(self, data: Mapping[str, Any]) -> Fact:
        return fact_from_json(data)

    def _failed(self, exc: Exception, statement: Statement, step: Step) -> BackendError:
        done, total = step.index, step.total
        doing = f"{statement.display()} (statement {done + 1} of {total}; the first {done} were run)"

        def diagnose(code: int, words: str) -> str:
            return refusal(step.server, step.server.me, statement, code)

        error = self.connection.translate(exc, doing, diagnose)
        if error_parts(exc)[0] == NO_ACCOUNT and isinstance(error, PermanentBackendError):
            accounts = ", ".join(str(a) for a in statement.accounts)
            return PermanentBackendError(
                self.name,
                f"the server holds no account {accounts} in memory although its grant tables were "
                "read to hold one: the account was made under another spelling (a user name with "
                "trailing spaces: the tables store it without them, the server matches it as "
                "written until FLUSH PRIVILEGES or a restart), dropped since the read, or its rows "
                "written by hand; run "
                f"FLUSH PRIVILEGES and sync again; {str(error).removeprefix(f'{error.backend}: ')}",
            )
        return error

    def estate(self, model: Model) -> Estate:
        """What the server holds, as model items (:mod:`pushdown_mysql.estate`)."""
        from pushdown_mysql.estate import read_estate

        return read_estate(self, model)

    def close(self) -> None:
        self.connection.close()


def _holds(row: ServerFact, fact: ServerFact) -> bool:
    """Whether the grant row ``row`` (read back) holds what revoking ``fact`` takes away."""
    if isinstance(row, RoleGrant) or isinstance(fact, RoleGrant) or row.db is None or fact.db is None:
        return False
    a, b = row.account, fact.account
    if not _same_account(a, b) or row.privilege != fact.privilege:
        return False
    if isinstance(fact, Grant) and fact.table is None:  # a database pattern
        return row.table is None and (row.db.lower() == fact.db.lower() or pattern_covers(row.db, fact.db))
    if row.table is None or fact.table is None or row.db.lower() != fact.db.lower():
        return False
    if row.table.lower() != fact.table.lower():
        return False
    if isinstance(fact, ColumnGrant):
        return isinstance(row, ColumnGrant) and row.column.lower() == fact.column.lower()
    return not isinstance(row, ColumnGrant)


def _same_account(row: Account, asked: Account) -> bool:
    """Whether a grant row read back is the account a statement named, as the grant tables
    compare them: ``User`` and ``Host`` are ``CHAR`` columns, stored without trailing spaces
    and compared with PAD SPACE (the row ``pd_bob`` is the account ``'pd_bob '`` the next time
    the server loads its accounts), hosts without case. Another host is another account."""
    return row.user.rstrip(" ") == asked.user.rstrip(" ") and (
        row.host.rstrip(" ").lower() == asked.host.rstrip(" ").lower()
    )


#: REVOKE of a grant that is not there (MariaDB 1141 / 1147, MySQL 1141 / 1147 / 1403).
ALREADY_GONE = frozenset({1141, 1147, 1403})

#: GRANT or REVOKE naming an account the server does not hold in memory.
NO_ACCOUNT = 1133


@dataclass(frozen=True)
class Step:
    """Where an apply is: the statement's index, their number, and the read it follows
    (what a refusal is diagnosed against)."""

    index: int
    total: int
    server: ServerRead


@dataclass(frozen=True, kw_only=True)
class MySQLSnapshot(Snapshot):
    server: ServerRead
    where: ServerScope
    #: the scope the snapshot was read for (wider than asked: see :func:`folded_scope`)
    resolved: Resolved | None = None


def folded_scope(scope: Resolved, catalog: str | None, fold: int) -> Resolved:
    """Where the server folds names, a change that names a database or table with capitals
    decides for every user there (none of them may be granted anything on it): such a
    region covers every user."""
    if not fold or catalog is None:
        return scope
    regions = []
    for r in scope.regions:
        cased = any(o.catalog == catalog and any(n != n.lower() for n in o.names[1:]) for o in r.roots or ())
        regions.append(Region(None, r.roots) if cased and r.users is not None else r)
    return Resolved(tuple(regions))


def _touched_tables(plan: Plan) -> frozenset[str]:
    """The grant tables the plan's statements write: a database-level grant's row in
    ``mysql.db``, a table-level one's in ``mysql.tables_priv`` (a table-level REVOKE takes the
    privilege from the table's column rows too: ``mysql.columns_priv``), a column grant's in
    ``mysql.columns_priv``."""
    out: set[str] = set()
    for op in plan.ops:
        for fact in (op.before, op.after):
            table = None if fact is None else grant_table(fact)
            if table is not None:
                out.add(table)
        if op.before is not None and grant_table(op.before) == "mysql.tables_priv":
            out.add("mysql.columns_priv")
    return frozenset(out)


def _touched_databases(facts: list[ServerFact]) -> frozenset[str] | None:
    out: set[str] = set()
    for fact in facts:
        if isinstance(fact, ColumnGrant):
            out.add(fact.db)
            continue
        if isinstance(fact, RoleGrant) or fact.db is None:
            return None
        name = exact_db_name(fact.db) if fact.table is None else fact.db
        if name is None:
            return None
        out.add(name)
    return frozenset(out)


__all__ = ["Grant", "MySQLBackend", "RoleGrant"]
