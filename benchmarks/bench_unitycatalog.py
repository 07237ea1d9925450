#!/usr/bin/env python3
"""Benchmark the Unity Catalog backend against the lab's Unity Catalog stand-in: what a
full sync and a one-table change cost, in HTTP calls and time, as the estate grows.

The estate: catalog ``c`` with N schemas x 10 tables; role ``r`` (USE_CATALOG,
USE_SCHEMA, SELECT_TABLE on the catalog) held by ``u1``. A full sync grants SELECT per
schema; the one-table change is a DENY of SELECT_TABLE on one table, synced with the
scope its events touched: its schema's grants become per-table ones. The calls of the
one-table change should not grow with N (it reads and writes one schema's grants).

    python benchmarks/bench_unitycatalog.py --schemas 1 10 50
"""

from __future__ import annotations

import argparse
import time

from pushdown_lab.uc_standin import Standin
from pushdown_unitycatalog.backend import UnityCatalogBackend
from pushdown_unitycatalog.client import API, UnityCatalog

from pushdown.model import changes as ch
from pushdown.model.principals import Principal
from pushdown.model.privileges import Condition
from pushdown.model.securables import ObjectRef
from pushdown.model.state import Model
from pushdown.reconcile.backend import BackendContext
from pushdown.reconcile.scope import Scope, scope_of
from pushdown.reconcile.sync import reconcile

TABLES = 10
USERS = ("u1", "u2", "u3")


def estate(server: Standin, schemas: int) -> Model:
    admin, model = UnityCatalog(server.url, server.admin_token), Model()

    def do(events: list[object]) -> None:
        for e in events:
            model.apply(e)  # type: ignore[arg-type]

    admin.call("POST", API + "/catalogs", {"name": "c"})
    do(ch.create_object(model, ObjectRef.parse("catalog c")))
    for u in USERS:
        server.add_user(u)
        do(ch.add_user(model, u))
    do(ch.create_role(model, "r"))
    gates = ["USE_CATALOG", "USE_SCHEMA", "SELECT_TABLE"]
    do(ch.grant_privileges(model, "r", ObjectRef.parse("catalog c"), gates, Condition("ALLOW")))
    do(ch.grant_role(model, "r", Principal.user("u1")))
    for i in range(schemas):
        admin.call("POST", API + "/schemas", {"name": f"s{i}", "catalog_name": "c"})
        do(ch.create_object(model, ObjectRef.parse(f"schema c.s{i}")))
        for j in range(TABLES):
            admin.call(
                "POST", API + "/tables", {"name": f"t{j}", "catalog_name": "c", "schema_name": f"s{i}"}
            )
            do(ch.create_object(model, ObjectRef.parse(f"table c.s{i}.t{j}")))
    return model


def measure(schemas: int) -> str:
    with Standin() as server:
        model = estate(server, schemas)
        settings = {"url": server.url, "token": server.admin_token, "principals": list(USERS)}
        backend = UnityCatalogBackend(BackendContext("uc", settings, catalogs=frozenset({"c"})))
        start = time.perf_counter()
        reconcile(backend, model, Scope.everything())
        full, full_calls = time.perf_counter() - start, backend.uc.calls
        backend.uc.calls = 0
        deny = ch.grant_privileges(
            model, "r", ObjectRef.parse("table c.s0.t3"), ["SELECT_TABLE"], Condition("DENY")
        )
        for e in deny:
            model.apply(e)
        start = time.perf_counter()
        plan, _ = reconcile(backend, model, Scope.union(scope_of(e) for e in deny))
        one = time.perf_counter() - start
        return (
            f"{schemas * TABLES:6d} tables | full sync {full_calls:5d} calls {full:6.2f} s | "
            f"one-table DENY {backend.uc.calls:3d} calls {one * 1000:6.0f} ms "
            f"({plan.adds} added, {plan.removes} removed)"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--schemas", type=int, nargs="+", default=[1, 10, 50])
    for n in parser.parse_args().schemas:
        print(measure(n))


if __name__ == "__main__":
    main()
