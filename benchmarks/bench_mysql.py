#!/usr/bin/env python3
"""Benchmark the MySQL backend: apply 10,000 grants against the floor, and a no-op sync.

A throwaway MariaDB holds ``--users`` accounts and ``--tables`` tables (100 x 100 at
``--scale 1``, with the square root of the scale); one role reads the whole catalog. The
floor is the very statements the backend sends, rendered once, replayed by a bare pymysql
loop on one connection (the same least-privileged account). Floor and backend alternate;
the best round of each is reported.
"""

from __future__ import annotations

import argparse
import math
import sys

from harness import cli
from harness.clock import alternate, measure
from harness.report import Report
from pushdown_mysql.account import least_privileges
from pushdown_mysql.backend import MySQLBackend
from pushdown_mysql.server import LocalMariaDB, throwaway_mariadb
from pushdown_mysql.statements import statements

from pushdown.model import changes as ch
from pushdown.model import events as ev
from pushdown.model.principals import Principal
from pushdown.model.securables import ObjectRef
from pushdown.model.state import Model
from pushdown.reconcile.backend import BackendContext
from pushdown.reconcile.plan import remove
from pushdown.reconcile.planner import plan_for
from pushdown.reconcile.scope import Scope
from pushdown.reconcile.sync import reconcile

CATALOG, DATABASE = ObjectRef.of("catalog", "c"), ObjectRef.of("schema", "c.bench")


def prepare_server(server: LocalMariaDB, users: int, tables: int) -> None:
    """pushdown's own account, one database of ``tables`` tables, ``users`` managed accounts."""
    admin = server.connect()
    with admin.cursor() as cur:
        cur.execute("CREATE USER 'pushdown'@'%' IDENTIFIED BY 'pw'")
        for sql, args in least_privileges("pushdown", "%", ["bench"]):
            cur.execute(sql, args)
        cur.execute("CREATE DATABASE bench")
        for t in range(tables):
            cur.execute(f"CREATE TABLE bench.t{t} (id INT)")
        for u in range(users):
            cur.execute("CREATE USER %s@'%%'", (f"pd_u{u}",))
    admin.close()


def build_model(users: int) -> Model:
    """Role ``reader`` reads catalog ``c`` and is held by every user."""
    model = Model()

    def do(events: list[ev.Event]) -> None:
        for e in events:
            model.apply(e)

    do(ch.create_object(model, CATALOG, properties={"backend": "bench"}))
    do(ch.create_object(model, DATABASE))
    do(ch.create_role(model, "reader"))
    do(ch.grant_privileges(model, "reader", CATALOG, ["USE_CATALOG", "USE_SCHEMA", "SELECT_TABLE"]))
    for u in range(users):
        do(ch.add_user(model, f"u{u}"))
        do(ch.grant_role(model, "reader", Principal.user(f"u{u}")))
    return model


def run(report: Report, server: LocalMariaDB, args: argparse.Namespace) -> None:
    prepare_server(server, args.users, args.tables)
    model = build_model(args.users)
    settings = {"host": server.host, "port": server.port, "user": "pushdown", "password": "pw"}
    backend = MySQLBackend(BackendContext("bench", settings))
    planned = measure(lambda: plan_for(backend, model, Scope.everything()))
    plan, snapshot, _ = planned.result
    grants = plan.ops
    undo = tuple(remove(op.fact) for op in grants)
    raw = server.connect("pushdown", "pw")
    with raw.cursor() as cur:
        texts = [cur.mogrify(s.template, s.args) for s in statements(grants)]
        undo_texts = [cur.mogrify(s.template, s.args) for s in statements(undo)]

    def replay(sql: list[str]) -> None:
        with raw.cursor() as cur:
            for text in sql:
                cur.execute(text)

    report.section(f"1. apply {len(grants):,} grants ({args.users} users x {args.tables} tables)")
    report.row("grants | statements", f"{len(grants):,} | {len(texts):,}")
    report.row("plan (read back + compile)", planned.best, "s")
    runs = alternate(
        {"floor": lambda: replay(texts), "pushdown": lambda: backend.apply(plan, snapshot, lambda n: None)},
        args.rounds,
        between=lambda: replay(undo_texts),
    )
    floor, ours = runs["floor"], runs["pushdown"]
    report.floor("floor: the same statements, bare pymysql loop (best round)", floor.best)
    report.row("  rounds", floor.runs(), "s")
    report.row("pushdown apply (best round)", ours.best, "s")
    report.row("  rounds", ours.runs(), "s")
    report.ratio("pushdown apply / floor", ours.best, floor.best, target=1.10)
    raw.close()

    report.section("2. a sync with nothing to do (scope: everything)")
    reconcile(backend, model, Scope.everything())
    q0, w0 = backend.connection.queries, backend.connection.writes
    noop = measure(lambda: reconcile(backend, model, Scope.everything()))
    plan, applied = noop.result
    report.row("time", noop.best, "s")
    report.row("queries | writes", f"{backend.connection.queries - q0} | {backend.connection.writes - w0}")
    report.row("plan empty | applied", f"{plan.empty} | {applied}")
    backend.close()


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    ap = cli.parser(__doc__)
    ap.add_argument("--users", type=int, help="managed accounts (default 100*sqrt(scale))")
    ap.add_argument("--tables", type=int, help="tables (default 100*sqrt(scale))")
    ap.add_argument("--rounds", type=int, default=3, help="rounds of floor and apply (default 3)")
    args = ap.parse_args(argv)
    side = max(2, round(100 * math.sqrt(args.scale)))
    args.users = args.users or side
    args.tables = args.tables or side
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    with Report("mysql", args) as report, throwaway_mariadb() as server:
        report.row("server", f"throwaway MariaDB on {server.host}:{server.port}")
        run(report, server, args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
