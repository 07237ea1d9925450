"""Benchmark: apply 10,000 grants against the floor, and a no-op sync. Prints numbers.

    python benchmarks/bench_mysql.py [--users 100] [--tables 100] [--rounds 3]

The floor is the very statements the backend sends, rendered once, replayed by a bare
pymysql loop on one connection (the same least-privileged account) in the same run.
Floor and backend alternate; the best round of each is reported.
"""

from __future__ import annotations

import argparse
import time

from pushdown_mysql.account import least_privileges
from pushdown_mysql.backend import MySQLBackend
from pushdown_mysql.server import throwaway_mariadb
from pushdown_mysql.statements import statements

from pushdown.model import changes as ch
from pushdown.model.principals import Principal
from pushdown.model.securables import ObjectRef
from pushdown.model.state import Model
from pushdown.reconcile.backend import BackendContext
from pushdown.reconcile.plan import Op
from pushdown.reconcile.scope import Scope
from pushdown.reconcile.sync import reconcile


def build(server, users: int, tables: int) -> Model:
    model = Model()
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

    def do(events):
        for e in events:
            model.apply(e)

    do(ch.create_object(model, ObjectRef.of("catalog", "c"), properties={"backend": "bench"}))
    do(ch.create_object(model, ObjectRef.of("schema", "c.bench")))
    do(ch.create_role(model, "reader"))
    for priv in ("USE_CATALOG", "USE_SCHEMA", "SELECT_TABLE"):
        do(ch.grant_privileges(model, "reader", ObjectRef.of("catalog", "c"), [priv]))
    for u in range(users):
        do(ch.add_user(model, f"u{u}"))
        do(ch.grant_role(model, "reader", Principal.user(f"u{u}")))
    return model


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--users", type=int, default=100)
    parser.add_argument("--tables", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    with throwaway_mariadb() as server:
        model = build(server, args.users, args.tables)
        settings = {"host": server.host, "port": server.port, "user": "pushdown", "password": "pw"}
        backend = MySQLBackend(BackendContext("bench", settings))
        t0 = time.perf_counter()
        plan = backend.plan(model, Scope.everything())
        plan_s = time.perf_counter() - t0
        grants = plan.ops
        undo = tuple(Op("remove", op.fact) for op in grants)
        raw = server.connect("pushdown", "pw")
        with raw.cursor() as cur:
            texts = [cur.mogrify(s.template, s.args) for s in statements(grants)]
            undo_texts = [cur.mogrify(s.template, s.args) for s in statements(undo)]
        floor, ours = [], []
        for _ in range(args.rounds):
            with raw.cursor() as cur:
                t0 = time.perf_counter()
                for text in texts:
                    cur.execute(text)
                floor.append(time.perf_counter() - t0)
                for text in undo_texts:
                    cur.execute(text)
            t0 = time.perf_counter()
            backend.apply(grants, lambda n: None)
            ours.append(time.perf_counter() - t0)
            with raw.cursor() as cur:
                for text in undo_texts:
                    cur.execute(text)
        raw.close()
        reconcile(backend, model, Scope.everything())
        q0, w0 = backend.connection.queries, backend.connection.writes
        t0 = time.perf_counter()
        noop, applied = reconcile(backend, model, Scope.everything())
        noop_s = time.perf_counter() - t0
        queries, writes = backend.connection.queries - q0, backend.connection.writes - w0
        backend.close()
    best_floor, best_ours = min(floor), min(ours)
    print(f"grants: {len(grants)} in {len(texts)} statements ({args.users} users x {args.tables} tables)")
    print(f"plan (read back + compile): {plan_s:.3f} s")
    print(f"floor (bare pymysql loop):  {best_floor:.3f} s  rounds: {', '.join(f'{x:.3f}' for x in floor)}")
    print(f"pushdown apply:             {best_ours:.3f} s  rounds: {', '.join(f'{x:.3f}' for x in ours)}")
    print(f"ratio: {best_ours / best_floor:.3f}x the floor (target <= 1.10x)")
    print(
        f"no-op sync: {noop_s:.3f} s, {queries} queries, {writes} writes, plan empty: {noop.empty}, "
        f"applied: {applied}"
    )


if __name__ == "__main__":
    main()
