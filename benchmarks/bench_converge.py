"""Benchmark: removing objects from the model costs time linear in what is removed.

    python benchmarks/bench_converge.py [--scale 1.0] [--sizes 1000,10000,100000]

For each size N it builds a model of N tables (100 per schema, one catalog), each owned
by a user and carrying a grant held by one of 3 roles (10 roles in all, held by a group),
and records it in a fresh store. Then it shrinks that model to a single user, as a spec that lists only that
user would: ``converge`` (the pure computation) and ``AccessControl.load_model`` (the
computation plus the store's one write transaction). It prints seconds per phase and
microseconds per removed object, which stays flat when the cost is linear.
``--scale 0.01`` runs in about a second (CI).
"""

from __future__ import annotations

import argparse
import copy
import tempfile
import time
from pathlib import Path

from pushdown.app.converge import converge
from pushdown.app.service import AccessControl
from pushdown.journal.store import Store
from pushdown.model import changes as ch
from pushdown.model.events import Event
from pushdown.model.principals import Principal
from pushdown.model.securables import ObjectRef
from pushdown.model.state import Model

PER_SCHEMA = 100


def build(tables: int) -> Model:
    model = Model()

    def do(events: list[Event]) -> None:
        for event in events:
            model.apply(event)

    for user in ("keeper", "owner", "reader"):
        do(ch.add_user(model, user))
    do(ch.add_group(model, "readers", ["reader"]))
    do(ch.create_object(model, ObjectRef.of("catalog", "c"), properties={"backend": "b"}))
    for r in range(10):
        do(ch.create_role(model, f"r{r}", owner="owner"))
        do(ch.grant_role(model, f"r{r}", Principal.group("readers")))
    for t in range(tables):
        schema = ObjectRef.of("schema", ("c", f"s{t // PER_SCHEMA}"))
        if t % PER_SCHEMA == 0:
            do(ch.create_object(model, schema, creator="owner"))
        table = ObjectRef.of("table", (*schema.names, f"t{t}"))
        do(ch.create_object(model, table, creator="owner"))
        do(ch.grant_privileges(model, f"r{t % 3}", table, ["SELECT_TABLE"]))
    return model


def one_user() -> Model:
    target = Model()
    target.apply(ch.add_user(target, "keeper")[0])
    return target


def measure(tables: int, workdir: Path) -> dict[str, float]:
    model = build(tables)
    started = time.perf_counter()
    events = converge(copy.deepcopy(model), one_user())
    pure = time.perf_counter() - started
    control = AccessControl(Store(workdir / f"bench-{tables}.db"), push=False)
    control.load_model(model)
    started = time.perf_counter()
    result = control.load_model(one_user())
    whole = time.perf_counter() - started
    assert len(result.events) == len(events) and control.model.users == {"keeper"}
    assert not control.model.objects and control.store.load().objects == {}
    control.close()
    return {"objects": len(model.objects), "events": len(events), "converge": pure, "load_model": whole}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scale", type=float, default=1.0, help="multiply every size (0.01 for CI)")
    parser.add_argument("--sizes", default="1000,10000,100000", help="table counts, comma-separated")
    args = parser.parse_args()
    sizes = [max(10, int(int(s) * args.scale)) for s in args.sizes.split(",")]
    print(f"{'objects removed':>16} {'events':>8} {'converge s':>11} {'load_model s':>13} {'µs/object':>10}")
    with tempfile.TemporaryDirectory() as tmp:
        for size in sizes:
            row = measure(size, Path(tmp))
            per = row["load_model"] / row["objects"] * 1e6
            print(
                f"{row['objects']:>16,.0f} {row['events']:>8,.0f} {row['converge']:>11.2f} "
                f"{row['load_model']:>13.2f} {per:>10.1f}"
            )


if __name__ == "__main__":
    main()
