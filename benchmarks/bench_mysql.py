#!/usr/bin/env python3
"""Benchmark the MySQL backend on a real throwaway MariaDB: the library hook for one grant,
a no-op full sync, and the apply of an estate against the fewest statements.

The estate (at ``--scale 1``: 1,000 accounts, 100 databases x 100 tables = 10,000
tables; accounts linearly, databases and tables with the square root of the scale):
roles with USE_CATALOG on the catalog, USE_SCHEMA (and often SELECT_TABLE or
MODIFY_TABLE) on a few databases, table-level ALLOWs, and DENY exceptions on single
tables, so a database-level grant is exact for some holders and per-table grants are
needed for others; every user holds one or two of them. One more database, ``hookdb``,
belongs to role ``hook``, held by 10 users.

1. the apply of the whole estate to empty accounts against the floor of the fewest
   statements that express the same grants, computed here independently of pushdown
   (effective privileges from bare lookups; one GRANT per (object, privilege set) naming
   every account that gets exactly that set, database-level where exact for the present
   and future tables): both statement counts, both times, the ratio (goal <= 1.10x), and
   why pushdown sends more statements when it does. Both end states are read back and
   compared.
2. the library hook: ``AccessControl.grant_privileges("hook", table, ["SELECT_TABLE"])``
   with the MySQL backend (commit, then a sync over the scope the journal names): rows
   read, queries, statements sent and time, against the floor of its own statements
   replayed bare with pymysql in the same run (goal <= 3x); the revoke undoes it
   between rounds;
3. a no-op full sync (``AccessControl.sync(full=True)`` with nothing to do): queries,
   rows and writes, at this estate and at one 10x smaller (a second server): the
   number of queries is constant, the writes 0;

The server's data directory is on /dev/shm when there is one (CREATE TABLE is ~10x
faster there); both sides of every ratio run on the same server.
"""

from __future__ import annotations

import argparse
import math
import os
import random
import sqlite3
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from harness import cli
from harness.clock import Clock
from harness.report import Report
from pushdown_lab.mariadb import LocalMariaDB, throwaway_mariadb
from pushdown_mysql.account import least_privileges
from pushdown_mysql.backend import MySQLBackend
from pushdown_mysql.mapping import DATABASE_LEVEL_EXACT, OWNER_DATABASE_PRIVILEGES, TABLE_OPERATIONS
from pushdown_mysql.statements import MAX_ACCOUNTS, statements
from pymysql.constants import CLIENT

from pushdown.app.service import AccessControl
from pushdown.host.plugins import Hooks
from pushdown.journal.store import Store
from pushdown.model import changes as ch
from pushdown.model import events as ev
from pushdown.model.principals import Principal
from pushdown.model.privileges import Condition, Privilege
from pushdown.model.securables import ObjectRef, SecurableType
from pushdown.model.state import Model
from pushdown.reconcile.backend import BackendContext
from pushdown.reconcile.planner import plan_for, resolve
from pushdown.reconcile.scope import Scope

P, T = Privilege, SecurableType
ALLOW, DENY = Condition.ALLOW, Condition.DENY
CATALOG = ObjectRef(T.CATALOG, ("c",))
HOOK_DB, HOOK_ROLE, HOOK_HOLDERS = "hookdb", "hook", 10
BACKEND = "bench"
FUTURE = "\x00future"  # a table name no server holds: stands for the tables still to come


# -- the estate ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Sizes:
    accounts: int
    databases: int
    tables: int  # per database

    @classmethod
    def at(cls, scale: float) -> Sizes:
        side = max(2, round(100 * math.sqrt(scale)))
        return cls(max(HOOK_HOLDERS, round(1000 * scale)), side, side)

    def describe(self) -> str:
        return (
            f"{self.accounts:,} accounts, {self.databases} databases x {self.tables} tables "
            f"= {self.databases * self.tables:,} tables (+ {HOOK_DB})"
        )


def db_name(i: int) -> str:
    return f"db{i:03d}"


def table_name(i: int) -> str:
    return f"t{i:04d}"


def estate_events(sizes: Sizes, seed: int) -> list[ev.Event]:
    """The model as validated events: objects, users, roles, grants, holders."""
    rng = random.Random(seed)
    model = Model()
    out: list[ev.Event] = []

    def do(events: list[ev.Event]) -> None:
        for e in events:
            model.apply(e)
            out.append(e)

    do(ch.create_object(model, CATALOG, properties={"backend": BACKEND}))
    dbs = [db_name(i) for i in range(sizes.databases)] + [HOOK_DB]
    for db in dbs:
        schema = ObjectRef(T.SCHEMA, ("c", db))
        do(ch.create_object(model, schema))
        for t in range(sizes.tables if db != HOOK_DB else 3):
            do(ch.create_object(model, ObjectRef(T.TABLE, ("c", db, table_name(t)))))
    users = [f"u{i:04d}" for i in range(sizes.accounts)]
    for user in users:
        do(ch.add_user(model, user))
    roles = [f"r{i:03d}" for i in range(max(3, sizes.accounts // 10))]
    n_schemas = min(3, sizes.databases)
    for role in roles:
        do(ch.create_role(model, role))
        do(ch.grant_privileges(model, role, CATALOG, [P.USE_CATALOG]))
        mine = rng.sample(range(sizes.databases), n_schemas)
        for d in mine:
            schema = ObjectRef(T.SCHEMA, ("c", db_name(d)))
            extra = rng.choice(([], [P.SELECT_TABLE], [P.SELECT_TABLE], [P.MODIFY_TABLE]))
            do(ch.grant_privileges(model, role, schema, [P.USE_SCHEMA, *extra]))
            if extra and rng.random() < 0.5:  # an exception: per-table grants for this role there
                for t in rng.sample(range(sizes.tables), min(2, sizes.tables)):
                    table = ObjectRef(T.TABLE, ("c", db_name(d), table_name(t)))
                    do(ch.grant_privileges(model, role, table, extra, DENY))
        for _ in range(10):
            table = ObjectRef(
                T.TABLE, ("c", db_name(rng.choice(mine)), table_name(rng.randrange(sizes.tables)))
            )
            privs = rng.choice(([P.SELECT_TABLE], [P.MODIFY_TABLE], [P.SELECT_TABLE, P.MODIFY_TABLE]))
            do(ch.grant_privileges(model, role, table, privs))
    for user in users:
        for role in rng.sample(roles, rng.randint(1, 2)):
            do(ch.grant_role(model, role, Principal.user(user)))
    do(ch.create_role(model, HOOK_ROLE))
    do(ch.grant_privileges(model, HOOK_ROLE, CATALOG, [P.USE_CATALOG]))
    do(ch.grant_privileges(model, HOOK_ROLE, ObjectRef(T.SCHEMA, ("c", HOOK_DB)), [P.USE_SCHEMA]))
    for user in rng.sample(users, HOOK_HOLDERS):
        do(ch.grant_role(model, HOOK_ROLE, Principal.user(user)))
    return out


def prepare_server(server: LocalMariaDB, sizes: Sizes) -> None:
    """pushdown's own least-privileged account, the databases and tables, the accounts."""
    dbs = [db_name(i) for i in range(sizes.databases)] + [HOOK_DB]
    admin = server.connect()
    with admin.cursor() as cur:
        cur.execute("CREATE USER 'pushdown'@'%' IDENTIFIED BY 'pw'")
        for sql, args in least_privileges("pushdown", "%", dbs):
            cur.execute(sql, args)
        for db in dbs:
            cur.execute(f"CREATE DATABASE `{db}`")
            for t in range(sizes.tables if db != HOOK_DB else 3):
                cur.execute(f"CREATE TABLE `{db}`.`{table_name(t)}` (id INT) ENGINE=MEMORY")
        for u in range(sizes.accounts):
            cur.execute("CREATE USER %s@'%%'", (f"pd_u{u:04d}",))
    admin.close()


@dataclass
class Estate:
    server: LocalMariaDB
    sizes: Sizes
    ac: AccessControl
    backend: MySQLBackend
    sent: list[tuple[str, tuple[Any, ...]]] = field(default_factory=list)
    #: every batch of reads sent in one round trip (``Connection.query_many``)
    batches: list[list[tuple[str, tuple[Any, ...]]]] = field(default_factory=list)
    seconds: dict[str, float] = field(default_factory=lambda: {"query": 0.0, "execute": 0.0})

    @property
    def model(self) -> Model:
        return self.ac.model

    def counters(self) -> tuple[int, int, int]:
        c = self.backend.connection
        return c.queries, c.rows, c.writes

    def close(self) -> None:
        self.ac.close()


def open_estate(server: LocalMariaDB, sizes: Sizes, seed: int) -> Estate:
    prepare_server(server, sizes)
    settings = {"host": server.host, "port": server.port, "user": "pushdown", "password": "pw"}
    # the context AccessControl.open gives a backend: the principal mapping through the
    # plugins' hook (kept across syncs while no plugin implements it, as in a deployment)
    hooks = Hooks.load()
    context = BackendContext(
        BACKEND,
        settings,
        map_principal=lambda p: hooks.map_principal(BACKEND, p),
        mapping_version=hooks.mapping_version,
        mapping_stable=hooks.mapping_stable,
    )
    backend = MySQLBackend(context)
    ac = AccessControl(Store(":memory:"), {BACKEND: backend}, push=False)
    events = estate_events(sizes, seed)
    ac.change(lambda model: events)
    estate = Estate(server, sizes, ac, backend)
    _record(estate)
    return estate


def _record(estate: Estate) -> None:
    """Count the seconds spent waiting on the server, and keep every statement sent."""
    conn = estate.backend.connection
    query, execute, query_many = conn.query, conn.execute, conn.query_many

    def timed_query(sql: str, args: Any = None, *, why: str = "") -> list[tuple[Any, ...]]:
        start = time.perf_counter()
        rows = query(sql, args, why=why)
        estate.seconds["query"] += time.perf_counter() - start
        return rows

    def recorded_execute(sql: str, args: Any = None) -> None:
        estate.sent.append((sql, tuple(args or ())))
        start = time.perf_counter()
        execute(sql, args)
        estate.seconds["execute"] += time.perf_counter() - start

    def recorded_many(reads: Any, *, why: str = "") -> dict[str, list[tuple[Any, ...]]]:
        estate.batches.append([(sql, tuple(args or ())) for sql, args in reads.values()])
        start = time.perf_counter()
        rows = query_many(reads, why=why)
        estate.seconds["query"] += time.perf_counter() - start
        return rows

    conn.query = timed_query  # type: ignore[method-assign]
    conn.query_many = recorded_many  # type: ignore[method-assign]
    conn.execute = recorded_execute  # type: ignore[method-assign]


@contextmanager
def server() -> Iterator[LocalMariaDB]:
    with throwaway_mariadb("/dev/shm" if os.path.isdir("/dev/shm") else None) as s:
        yield s


# -- the floor of the fewest statements, computed here ---------------------------------------


def _holds(model: Model, priv: Privilege, path: tuple[ObjectRef, ...], roles: set[str]) -> bool:
    """Some held role ALLOWs ``priv`` on the path and none DENYs it (bare lookups)."""
    ok = False
    for node in path:
        conds = model.by_object.get(node, {}).get(priv)
        if conds:
            if not roles.isdisjoint(conds.get(DENY, ())):
                return False
            ok = ok or not roles.isdisjoint(conds.get(ALLOW, ()))
    return ok


def table_privileges(model: Model, roles: set[str], table: ObjectRef) -> set[str]:
    """The MySQL privileges the model gives these roles on one table (no owners here)."""
    path = table.path
    if not (_holds(model, P.USE_CATALOG, path[:2], roles) and _holds(model, P.USE_SCHEMA, path[:3], roles)):
        return set()
    out: set[str] = set()
    modify = _holds(model, P.MODIFY_TABLE, path, roles)
    if modify or _holds(model, P.SELECT_TABLE, path, roles):
        out.add("SELECT")
    if modify:
        out.update(dict(TABLE_OPERATIONS)["alter_table"])
    return out


def floor_statements(
    model: Model, naming: Callable[[str], str]
) -> dict[tuple[str, str, frozenset[str]], list[str]]:
    """(database, table or '*', privileges) -> every account that gets exactly those there."""
    assert not any(o.type in (T.CATALOG, T.SCHEMA, T.TABLE) and model.owners.get(o) for o in model.objects)
    by_roles: dict[frozenset[str], list[str]] = {}
    for user in sorted(model.users):
        by_roles.setdefault(frozenset(model.roles_of(user)), []).append(naming(user))
    schemas = sorted(o for o in model.objects if o.type is T.SCHEMA)
    tables = {s: sorted(model.children(s)) for s in schemas}
    groups: dict[tuple[str, str, frozenset[str]], list[str]] = {}
    for roles, accounts in by_roles.items():
        held = set(roles)
        for schema in gated(model, held, schemas):
            db = schema.names[1]
            per_table = {t.names[2]: table_privileges(model, held, t) for t in tables[schema]}
            future = table_privileges(model, held, ObjectRef(T.TABLE, (*schema.names, FUTURE)))
            on_db = {p for p in future & DATABASE_LEVEL_EXACT if all(p in ps for ps in per_table.values())}
            if on_db:
                groups.setdefault((db, "*", frozenset(on_db)), []).extend(accounts)
            for name, privs in per_table.items():
                if privs - on_db:
                    groups.setdefault((db, name, frozenset(privs - on_db)), []).extend(accounts)
    assert not set(OWNER_DATABASE_PRIVILEGES) - {"CREATE", "DROP", "ALTER"} - DATABASE_LEVEL_EXACT
    return groups


def gated(model: Model, roles: set[str], schemas: list[ObjectRef]) -> list[ObjectRef]:
    """The schemas where these roles may hold USE_SCHEMA (the gate of every table privilege):
    all of them when it is granted above the schemas, else those with a grant of their own."""
    grants = [g for role in roles for g in model.roles[role]]
    if any(len(g.object.names) < 2 and g.privilege is P.USE_SCHEMA for g in grants):
        return schemas
    near = {g.object.path[2] for g in grants if len(g.object.names) >= 2}
    return [s for s in schemas if s in near]


def floor_texts(raw: Any, groups: dict[tuple[str, str, frozenset[str]], list[str]]) -> list[str]:
    order = {"SELECT": 0, "INSERT": 1, "UPDATE": 2, "DELETE": 3, "INDEX": 4, "ALTER": 5}
    out = []
    with raw.cursor() as cur:
        for (db, table, privs), accounts in sorted(groups.items(), key=lambda kv: (kv[0][0], kv[0][1])):
            on = f"`{db}`.*" if table == "*" else f"`{db}`.`{table}`"
            names = ", ".join(cur.mogrify("%s@%s", (a, "%")) for a in sorted(accounts))
            out.append(f"GRANT {', '.join(sorted(privs, key=order.__getitem__))} ON {on} TO {names}")
    return out


# -- the sections ----------------------------------------------------------------------------


def replay(raw: Any, texts: list[str]) -> None:
    with raw.cursor() as cur:
        for text in texts:
            cur.execute(text)


def bare(raw: Any, sent: list[tuple[str, tuple[Any, ...]]]) -> list[str]:
    with raw.cursor() as cur:
        return [cur.mogrify(sql, args) for sql, args in sent]


def section_1_apply(report: Report, estate: Estate, rounds: int) -> None:
    model, backend = estate.model, estate.backend
    report.section(
        f"1. apply the estate to empty accounts against the fewest statements ({estate.sizes.describe()})"
    )
    report.note(
        "floor: computed here from bare lookups, one GRANT per (object, privilege set) naming every",
        "account with exactly that set (no cap on accounts), database-level where exact for present",
        "and future tables, replayed bare with pymysql; rounds alternate, all grants revoked between",
    )
    with Clock() as clock:
        plan, snapshot, _ = plan_for(backend, model, Scope.everything())
    ours = statements(plan.ops)
    report.row("pushdown: plan from empty (read + compile + diff)", clock.wall, "s")
    with Clock() as clock:
        groups = floor_statements(model, lambda u: backend.naming.account(u).user)
    raw = estate.server.connect("pushdown", "pw")
    admin = estate.server.connect()
    texts = floor_texts(raw, groups)
    report.row("floor: computed here", clock.wall, "s")
    accounts = [f"pd_u{u:04d}" for u in range(estate.sizes.accounts)]

    def reset() -> None:
        with admin.cursor() as cur:
            for i in range(0, len(accounts), 200):
                chunk = accounts[i : i + 200]
                cur.execute(
                    "REVOKE ALL PRIVILEGES, GRANT OPTION FROM " + ", ".join("%s@'%%'" for _ in chunk), chunk
                )

    def state() -> frozenset[object]:
        return backend.read(model, resolve(backend, model, Scope.everything())).facts

    floor_s, ours_s = [], []
    same = True
    for _ in range(max(1, rounds)):
        reset()
        with Clock() as clock:
            replay(raw, texts)
        floor_s.append(clock.wall)
        after_floor = state()
        reset()
        with Clock() as clock:
            applied = backend.apply(plan, snapshot, lambda n: None)
        ours_s.append(clock.wall)
        same = same and not applied.failures and state() == after_floor
    grants = sum(1 for op in plan.ops)
    report.row("grants (account, object, privilege) in the plan", grants)
    report.row("statements: pushdown | floor", f"{len(ours):,} | {len(texts):,}")
    capped = sum(math.ceil(len(a) / MAX_ACCOUNTS) for a in groups.values())
    report.row(f"  floor split at MAX_ACCOUNTS = {MAX_ACCOUNTS} accounts per statement", capped)
    if len(ours) > len(texts):
        why = (
            "the per-statement account cap (statements.MAX_ACCOUNTS)"
            if len(ours) <= capped
            else "see the plan"
        )
        report.note(
            f"pushdown sends {len(ours) - len(texts):,} statement(s) more than the floor; "
            f"{capped - len(texts):,} of them come from {why}:",
            f"N accounts sharing one (object, privileges) take ceil(N / {MAX_ACCOUNTS}) statements",
        )
    largest = max((len(a) for a in groups.values()), default=0)
    report.row("  accounts in the largest floor statement", largest)
    report.row("same grants on the server after either (read back)", "yes" if same else "NO")
    report.floor("floor: the fewest statements, bare pymysql (best round)", min(floor_s), "s")
    report.row("  rounds", ", ".join(f"{s:.3f}" for s in floor_s), "s")
    report.row("pushdown apply of its plan (best round)", min(ours_s), "s")
    report.row("  rounds", ", ".join(f"{s:.3f}" for s in ours_s), "s")
    report.ratio("pushdown apply / floor", min(ours_s), min(floor_s), target=1.10)
    raw.close()
    admin.close()


def section_3_noop(report: Report, estates: list[Estate]) -> None:
    report.section("3. a no-op full sync (AccessControl.sync(full=True), nothing to do)")
    counts = []
    for estate in estates:
        estate.ac.sync(full=True)  # converge first
        before = estate.counters()
        sent = len(estate.sent)
        with Clock() as clock:
            results = estate.ac.sync(full=True)
        q, r, w = (b - a for a, b in zip(before, estate.counters(), strict=True))
        empty = all(res.ok and res.plan is not None and res.plan.empty for res in results)
        report.row(f"estate: {estate.sizes.describe()}", "")
        report.row("  queries | rows read | writes", f"{q} | {r:,} | {w}")
        report.row("  statements sent | plan empty", f"{len(estate.sent) - sent} | {empty}")
        report.row("  time", clock.wall, "s")
        counts.append(q)
    report.row("queries constant across estate sizes", "yes" if len(set(counts)) == 1 else f"NO: {counts}")


def section_2_hook(report: Report, estate: Estate, rounds: int) -> None:
    ac = estate.ac
    table = ObjectRef(T.TABLE, ("c", HOOK_DB, table_name(0)))
    report.section(
        f"2. the library hook: SELECT_TABLE on {table.name} to role {HOOK_ROLE} ({HOOK_HOLDERS} holders)"
    )
    report.note(
        "AccessControl.grant_privileges with the MySQL backend: commit + journal, then a sync over",
        "the journal's scope (read narrowed, compile, diff, apply, read back the touched keys);",
        "floor: the statements it sent, replayed bare with pymysql; revoke undoes each between rounds",
    )
    stable = estate.backend.naming.mapping_stable()
    report.row("principal mapping kept across syncs", "yes (no plugin maps names)" if stable else "no")
    ac.push = True
    raw = estate.server.connect("pushdown", "pw")
    multi = estate.server.connect("pushdown", "pw", client_flag=CLIENT.MULTI_STATEMENTS)
    hook_s, floor_s, reads_s, durable_s = [], [], [], []
    reads_texts: list[str] = []
    numbers: tuple[int, ...] = ()
    waited = 0.0
    examined = 0
    for _ in range(max(1, rounds)):
        handler0 = rows_examined(estate)
        before, sent0, batch0 = estate.counters(), len(estate.sent), len(estate.batches)
        server0 = dict(estate.seconds)
        with Clock() as clock:
            done = ac.grant_privileges(HOOK_ROLE, table, ["SELECT_TABLE"])
        hook_s.append(clock.wall)
        assert not done.lagging, done.lagging
        grant_sent = estate.sent[sent0:]
        grant_batches = estate.batches[batch0:]
        q, r, w = (b - a for a, b in zip(before, estate.counters(), strict=True))
        numbers = (q, r, w, len(grant_sent))
        waited = sum(estate.seconds.values()) - sum(server0.values())
        examined = rows_examined(estate) - handler0
        sent1 = len(estate.sent)
        undone = ac.revoke_privileges(HOOK_ROLE, table, ["SELECT_TABLE"])
        assert not undone.lagging, undone.lagging
        revoke_sent = estate.sent[sent1:]
        grant_texts, revoke_texts = bare(raw, grant_sent), bare(raw, revoke_sent)
        with Clock() as clock:
            replay(raw, grant_texts)
        floor_s.append(clock.wall)
        replay(raw, revoke_texts)
        # the guarantees' floor: the same scoped read, statements and read back, bare
        reads_texts = [";\n".join(bare(raw, batch)) for batch in grant_batches]
        with Clock() as clock:
            replay_many(multi, reads_texts[:1])
            replay(raw, grant_texts)
            replay_many(multi, reads_texts[1:])
        reads_s.append(clock.wall)
        replay(raw, revoke_texts)
        durable_s.append(durable_commits(2))
    q, r, w, n = numbers
    report.row("queries | rows read | statements sent", f"{q} | {r:,} | {n}")
    report.row("  rows the server examined for them (session Handler_read_*)", examined)
    report.row("  of the estate's rows a full read returns", estate_rows(estate))
    if examined > 10 * max(1, r) + 1000:
        report.note(
            "the server examines more rows than it returns: mysql.user is read by User alone (a",
            "shadowing account at another host must still be seen), and information_schema",
            "builds its rows for the databases in scope before filtering them",
        )
    for sql, args in grant_sent:
        report.note(f"sent: {sql % tuple(repr(a) for a in args)}")
    report.row("pushdown hook (best round)", min(hook_s) * 1e3, "ms")
    report.row("  rounds", ", ".join(f"{s * 1e3:.1f}" for s in hook_s), "ms")
    report.row("  of which waiting on the server (queries + statements, last round)", waited * 1e3, "ms")
    report.floor("floor: its statements replayed bare (best round)", min(floor_s) * 1e3, "ms")
    report.ratio("pushdown hook / floor", min(hook_s), min(floor_s), target=3.0)
    report.note(
        "what the guarantees cost bare: the scoped read before (the server's state, one batch),",
        "the statements, and the read back after (one batch), sent with pymysql as pushdown sends them",
    )
    each = [t.count(";") + 1 for t in reads_texts]
    report.row("  read batches | statements in each", f"{len(reads_texts)} | {each}")
    report.floor("floor: read + its statements + read back, bare (best round)", min(reads_s) * 1e3, "ms")
    report.ratio("pushdown hook / read + statements + read back", min(hook_s), min(reads_s))
    report.row(
        "  2 durable SQLite commits (file, FULL sync; the change and the cursor in a deployment)",
        min(durable_s) * 1e3,
        "ms",
    )
    ac.push = False
    raw.close()
    multi.close()


def replay_many(raw: Any, texts: list[str]) -> None:
    """Each text (several statements) in one round trip, every result set read."""
    with raw.cursor() as cur:
        for text in texts:
            cur.execute(text)
            while cur.nextset():
                pass


def durable_commits(n: int) -> float:
    """Seconds for ``n`` small write transactions on a SQLite file with a full sync (WAL)."""
    with tempfile.TemporaryDirectory() as tmp:
        db = sqlite3.connect(os.path.join(tmp, "floor.db"), isolation_level=None)
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=FULL")
        db.execute("CREATE TABLE t (k INTEGER PRIMARY KEY, v TEXT)")
        start = time.perf_counter()
        for i in range(n):
            db.execute("BEGIN IMMEDIATE")
            db.execute("INSERT INTO t (v) VALUES (?)", (str(i),))
            db.execute("COMMIT")
        took = time.perf_counter() - start
        db.close()
    return took


def rows_examined(estate: Estate) -> int:
    """Rows the server read for the backend's session so far (its Handler_read_* counters),
    asked on the same session without counting as one of its queries."""
    with estate.backend.connection.raw.cursor() as cur:
        cur.execute("SHOW SESSION STATUS LIKE 'Handler_read%%'")
        return sum(int(value) for _, value in cur.fetchall())


def estate_rows(estate: Estate) -> int:
    before = estate.backend.connection.rows
    model = estate.model
    estate.backend.read(model, resolve(estate.backend, model, Scope.everything()))
    return estate.backend.connection.rows - before


def run(report: Report, args: argparse.Namespace) -> None:
    big, small = Sizes.at(args.scale), Sizes.at(args.scale / 10)
    report.row("estate", big.describe())
    report.row("second estate (no-op sync only)", small.describe())
    with server() as one:
        report.row("server", f"throwaway MariaDB on {one.host}:{one.port}, data in {one.base}")
        with Clock() as clock:
            estate = open_estate(one, big, args.seed)
        report.row("setup: tables, accounts, model (not timed below)", clock.wall, "s")
        if args.rounds > 0:
            section_1_apply(report, estate, args.rounds)
        estate.ac.sync(full=True)
        section_2_hook(report, estate, args.hook_rounds)
        with server() as two:
            other = open_estate(two, small, args.seed)
            section_3_noop(report, [other, estate])
            other.close()
        estate.close()


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    ap = cli.parser(__doc__)
    ap.add_argument(
        "--rounds", type=int, default=2, help="rounds of floor and apply (default 2; 0 leaves section 1 out)"
    )
    ap.add_argument("--hook-rounds", type=int, default=5, help="rounds of the hook and its floor (default 5)")
    return ap.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    with Report("mysql", args) as report:
        run(report, args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
