#!/usr/bin/env python3
"""Benchmark the Unity Catalog backend against the lab's Unity Catalog stand-in: what a
full sync and a one-table change cost, in HTTP calls and time, as the estate grows.

The estate: catalog ``c`` with N schemas x 10 tables; role ``r`` (USE_CATALOG,
USE_SCHEMA, SELECT_TABLE on the catalog) held by ``u1``. A full sync grants SELECT per
schema; the one-table change is a DENY of SELECT_TABLE on one table, synced with the
scope its events touched: its schema's grants become per-table ones. The calls of the
one-table change should not grow with N (it reads and writes one schema's grants).

    python benchmarks/bench_unitycatalog.py --scale 1    # 1, 10 and 50 schemas
"""

from __future__ import annotations

from harness import cli
from harness.clock import Clock
from harness.report import Report
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


def measure(schemas: int) -> tuple[int, float, int, float, str]:
    """(full sync calls, its seconds, one-table change calls, its seconds, its plan)."""
    with Standin() as server:
        model = estate(server, schemas)
        settings = {"url": server.url, "token": server.admin_token, "principals": list(USERS)}
        backend = UnityCatalogBackend(BackendContext("uc", settings, catalogs=frozenset({"c"})))
        with Clock() as full:
            reconcile(backend, model, Scope.everything())
        full_calls = backend.uc.calls
        backend.uc.calls = 0
        table = ObjectRef.parse("table c.s0.t3")
        deny = ch.grant_privileges(model, "r", table, ["SELECT_TABLE"], Condition("DENY"))
        for e in deny:
            model.apply(e)
        with Clock() as one:
            plan, _ = reconcile(backend, model, Scope.union(scope_of(e) for e in deny))
        return full_calls, full.wall, backend.uc.calls, one.wall, f"{plan.adds} added, {plan.removes} removed"


def main() -> int:
    args = cli.parser(__doc__).parse_args()
    with Report("unitycatalog", args) as report:
        sizes = sorted({1, max(1, round(10 * args.scale)), max(1, round(50 * args.scale))})
        results = {n: measure(n) for n in sizes}
        for n, (calls, wall, one_calls, one_wall, plan) in results.items():
            report.section(f"an estate of {n * TABLES} tables ({n} schemas x {TABLES})")
            report.row("full sync: HTTP calls (read, apply, read back)", calls)
            report.row("full sync: time", wall, "s")
            report.row("one-table DENY, scoped: HTTP calls", one_calls)
            report.row("one-table DENY, scoped: time", one_wall, "s")
            report.row("one-table DENY: the plan", plan)
        report.section("the one-table change against the estate's size")
        smallest, largest = results[sizes[0]], results[sizes[-1]]
        report.floor(f"one-table change's calls at {sizes[0] * TABLES} tables", smallest[2], "calls")
        report.ratio(
            f"its calls at {sizes[-1] * TABLES} tables over those (goal 1.0: no growth)",
            largest[2],
            smallest[2],
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
