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

import copy
import sys
import tempfile
import time
from pathlib import Path

from harness import cli
from harness.report import Report

from pushdown.app.service import AccessControl
from pushdown.app.service.converge import converge
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
    bare = copy.deepcopy(model)
    started = time.perf_counter()
    for event in events:  # the floor: the same removals applied to memory, unchecked, unstored
        bare.apply(event)
    floor = time.perf_counter() - started
    control = AccessControl(Store(workdir / f"bench-{tables}.db"), push=False)
    control.load_model(model)
    started = time.perf_counter()
    result = control.load_model(one_user())
    whole = time.perf_counter() - started
    assert len(result.events) == len(events) and control.model.users == {"keeper"}
    assert not control.model.objects and control.store.load().objects == {}
    control.close()
    return {
        "objects": len(model.objects),
        "events": len(events),
        "converge": pure,
        "floor": floor,
        "load_model": whole,
    }


def main(argv: list[str] | None = None) -> int:
    ap = cli.parser(__doc__)
    ap.add_argument("--sizes", default="1000,10000,100000", help="table counts, comma-separated")
    args = ap.parse_args(argv)
    sizes = [max(10, int(int(s) * args.scale)) for s in args.sizes.split(",")]
    with Report("converge", args) as report, tempfile.TemporaryDirectory() as tmp:
        for size in sizes:
            row = measure(size, Path(tmp))
            report.section(f"shrink a model of {row['objects']:,.0f} objects to one user")
            report.row("events", int(row["events"]))
            report.row("converge (pure)", row["converge"], "s")
            report.floor("floor: the same events applied to memory, unchecked", row["floor"])
            report.row("load_model (converge + one store transaction)", row["load_model"], "s")
            report.row("per removed object", row["load_model"] / row["objects"] * 1e6, "µs")
            report.ratio("load_model / floor", row["load_model"], row["floor"])
    return 0


if __name__ == "__main__":
    sys.exit(main())
