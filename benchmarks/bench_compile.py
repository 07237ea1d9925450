#!/usr/bin/env python3
"""Benchmark the entitlement compiler: one scoped change, and a full compile of the estate.

Pure, no server. On the synthetic estate of ``harness.worlds`` (at ``--scale 1``:
100,000 tables, 1,000 roles, 10,000 users in 300 groups, ~10% DENY, every object owned):

1. one scoped change: one grant (ALLOW SELECT_TABLE on one table) to a role held by
   about 10 users; timed: ``EntitlementCompiler(...).compile(inventory, users=holders,
   roots=[table])``, then for each holder the schema containers and the coverages of
   load/alter/drop table as a backend expands them, then the core's ``diff`` against the
   same expansion made before the change. Measured at ``--scale S`` and at ``S/100``
   (the estate grows 100x, the change stays the same) with the growth ratio (goal < 2x;
   goal <= 50 ms at scale 1). Floor: the same decisions (holders x tables of the
   schema x 3 operations) asked of ``Evaluator.authorize(..., explain=False)`` one by one;
2. a full compile (users=None, roots=None) at ``--full-scale`` (default: the scale),
   then its compact form: every shared class view once and every owner's personal view,
   each walked over its schema containers with the coverages of the 3 operations. Time,
   peak memory, classes, class-schema pairs; beside it the evaluator per (user, table,
   operation) measured on a sample and extrapolated to users x tables x 3 (the floor).
   Goals at scale 1: <= 120 s and <= 4 GiB.

Usage::

    python benchmarks/bench_compile.py --scale 1 --full-scale 0.1   # scoped change at full size
    python benchmarks/bench_compile.py --scale 0.1 --profile        # + cProfile of the full compile
"""

from __future__ import annotations

import argparse
import random
import sys
from dataclasses import dataclass
from typing import Any

from harness import cli
from harness.clock import Clock, measure
from harness.memory import MemoryProbe
from harness.report import Report, fmt_bytes, fmt_s
from harness.worlds import World, make_world

from pushdown.decide.compiler import EntitlementCompiler, Entitlements
from pushdown.decide.evaluator import Evaluator
from pushdown.decide.inventory import Inventory
from pushdown.decide.views import View
from pushdown.model import changes as ch
from pushdown.model.securables import ObjectRef, SecurableType
from pushdown.model.state import Model
from pushdown.reconcile.plan import Plan, diff
from pushdown.reconcile.scope import Scope

T = SecurableType
OPERATIONS = ("load_table", "alter_table", "drop_table")
SCOPED_GOAL_MS, GROWTH_GOAL = 50.0, 2.0
FULL_GOAL_S, FULL_GOAL_GIB = 120.0, 4.0


@dataclass(frozen=True)
class Covered:
    """One user's compact answer for one operation on the tables of one schema."""

    user: str
    operation: str
    schema: ObjectRef
    default: bool
    exceptions: frozenset[ObjectRef]

    @property
    def key(self) -> object:
        return (self.user, self.operation, self.schema)

    def to_json(self) -> dict[str, Any]:
        return {"user": self.user, "operation": self.operation, "schema": self.schema.name}

    def __str__(self) -> str:
        return f"{self.user} {self.operation} {self.schema.name} {self.default} -{len(self.exceptions)}"


def expand(ent: Entitlements, users: list[str], schema: ObjectRef) -> set[Covered]:
    """What a backend takes from the answer: each user's coverages on ``schema``."""
    out: set[Covered] = set()
    for user in users:
        view = ent.view(user)
        for container in view.containers(T.SCHEMA):
            if container != schema:
                continue
            for op in OPERATIONS:
                cover = view.coverage(op, container)
                out.add(Covered(user, op, container, cover.default, cover.exceptions))
    return out


# -- 1. one scoped change --------------------------------------------------------------


@dataclass
class Scoped:
    scale: float
    world: World
    role: str
    table: ObjectRef
    holders: list[str]
    tables: list[ObjectRef]
    seconds: float
    cpu: float
    runs: str
    plan: Plan
    floor: float
    floor_cpu: float


def scoped_change(scale: float, seed: int, repeats: int) -> Scoped:
    world = make_world(scale, seed)
    model = world.model
    role = world.small_role(10)
    table = table_for(model, role) or world.table()
    holders = sorted(model.holders_of(role))
    schema = table.parent
    assert schema is not None
    inventory = Inventory.of(model.objects)  # what the backend's server holds (read before)
    before = expand(
        EntitlementCompiler(model, OPERATIONS).compile(inventory, holders, [table]), holders, schema
    )
    for event in ch.grant_privileges(model, role, table, ["SELECT_TABLE"]):
        model.apply(event)
    scope = Scope.of(pairs=[])

    def change() -> Plan:
        ent = EntitlementCompiler(model, OPERATIONS).compile(inventory, holders, [table])
        return diff("bench", expand(ent, holders, schema), before, scope)

    timed = measure(change, repeats=repeats, warmup=1)
    tables = sorted(t for t in inventory.children(schema) if t.type is T.TABLE)
    floor = measure(lambda: evaluator_decisions(model, holders, tables), repeats=max(1, repeats // 2))
    return Scoped(
        scale, world, role, table, holders, tables, timed.best, timed.best_cpu, timed.runs(), timed.result,
        floor.best, floor.best_cpu,
    )  # fmt: skip


def table_for(model: Model, role: str) -> ObjectRef | None:
    """A table without a grant of its own, in a schema where ``role`` has a grant, that some
    holder may not load yet but whose schema the holder may load (so the grant shows)."""
    authorize = Evaluator(model).authorize
    holders = sorted(model.holders_of(role))
    schemas = sorted(g.object for g in model.roles[role] if g.object.type is T.SCHEMA)
    for schema in schemas:
        for obj in sorted(model.children(schema)):
            if obj.type is not T.TABLE or obj in model.by_object:
                continue
            for user in holders:
                if authorize(user, "load_schema", schema, explain=False).allowed:
                    if not authorize(user, "load_table", obj, explain=False).allowed:
                        return obj
            break  # one table per schema is enough to tell
    return None


def evaluator_decisions(model: Model, users: list[str], tables: list[ObjectRef]) -> int:
    authorize = Evaluator(model).authorize
    return sum(authorize(u, op, t, explain=False).allowed for u in users for t in tables for op in OPERATIONS)


def section_scoped(report: Report, args: argparse.Namespace) -> None:
    small_scale = args.scale / 100
    report.section(
        f"1. one scoped change at scale {args.scale:g} and at scale {small_scale:g} (100x smaller)"
    )
    report.note(
        "one ALLOW SELECT_TABLE on one table to the role held by ~10 users; timed: compile(users=holders,",
        "roots=[table]) + each holder's schema containers and load/alter/drop coverages + core diff;",
        "best of --repeats; ratios use cpu time (process_time), which a busy shared machine does not inflate",
    )
    done = [scoped_change(s, args.seed, args.repeats) for s in (small_scale, args.scale)]
    for one in done:
        cfg = one.world.config
        tables = cfg.catalogs * cfg.schemas * cfg.tables
        report.row(
            f"scale {one.scale:g}: users / tables / roles",
            f"{cfg.users:,} / {tables:,} / {cfg.roles:,}",
        )
        report.row("  role | holders | table", f"{one.role} | {len(one.holders)} | {one.table.name}")
        report.row("  compile + expand + diff, best wall", one.seconds * 1e3, "ms")
        report.row("  compile + expand + diff, best cpu", one.cpu * 1e3, "ms cpu")
        report.row("  runs (wall)", one.runs, "s")
        report.row("  plan: coverages changed", len(one.plan.ops))
        pairs = len(one.holders) * len(one.tables) * len(OPERATIONS)
        report.floor(
            f"  floor: evaluator, {pairs:,} (user, table, op) of that schema, cpu", one.floor_cpu * 1e3, "ms"
        )
        report.row("  the same, wall", one.floor * 1e3, "ms")
        report.ratio("  compile / evaluator per pair, cpu", one.cpu, one.floor_cpu)
    small, big = done
    report.ratio(
        f"growth: scale {args.scale:g} / scale {small_scale:g}, cpu", big.cpu, small.cpu, GROWTH_GOAL
    )
    report.row(
        f"goal at scale 1: <= {SCOPED_GOAL_MS:g} ms; here (cpu | wall)",
        f"{big.cpu * 1e3:.1f} | {big.seconds * 1e3:.1f}",
        "ms",
    )


# -- 2. a full compile ---------------------------------------------------------------------


@dataclass
class Full:
    classes: int = 0
    class_pairs: int = 0
    owner_views: int = 0
    owner_pairs: int = 0
    coverages: int = 0
    users_in_classes: int = 0


def compact(ent: Entitlements) -> Full:
    """Every shared class view once, every owner's personal view: schemas and coverages."""
    out = Full()
    seen: set[int] = set()

    def walk(view: View) -> int:
        pairs = 0
        for schema in view.containers(T.SCHEMA):
            pairs += 1
            for op in OPERATIONS:
                view.coverage(op, schema)
        out.coverages += pairs * len(OPERATIONS)
        return pairs

    for part, classes in ent.classes.items():
        if not part:  # the metalake's own level answers for the metalake and catalogs only;
            continue  # its schemas are the catalogs' parts' (CompositeView.containers agrees)
        for users, view in classes:
            if id(view) in seen:
                continue
            seen.add(id(view))
            out.classes += 1
            out.users_in_classes += len(users)
            out.class_pairs += walk(view)
    for part, owners in ent.owners.items():
        for owner in owners.values() if part else ():
            out.owner_views += 1
            out.owner_pairs += walk(owner.personal)
    return out


def full_compile(model: Model, inventory: Inventory) -> tuple[Entitlements, Full]:
    ent = EntitlementCompiler(model, OPERATIONS).compile(inventory)
    return ent, compact(ent)


def section_full(report: Report, args: argparse.Namespace) -> None:
    scale = args.full_scale or args.scale
    report.section(f"2. a full compile of the estate at scale {scale:g}")
    report.note(
        "compile(users=None, roots=None), then every catalog's shared class views (once) and every",
        "owner's personal view walked over containers(SCHEMA) with the coverages of load/alter/drop",
        "table (the metalake's own level is left out: it holds no schema, as in CompositeView)",
    )
    with Clock() as clock:
        world = make_world(scale, args.seed)
    model = world.model
    inventory = Inventory.of(model.objects)
    cfg = world.config
    n_tables = len(world.tables)
    report.row("users / tables / roles", f"{cfg.users:,} / {n_tables:,} / {cfg.roles:,}")
    report.row("build the estate (not timed below)", clock.wall, "s")
    with MemoryProbe() as mem, Clock() as total:
        with Clock() as step:
            ent = EntitlementCompiler(model, OPERATIONS).compile(inventory)
        compiled = step.wall
        with Clock() as step:
            found = compact(ent)
        expanded = step.wall
    report.row("compile (users=None, roots=None)", compiled, "s")
    report.row("compact form: containers + coverages", expanded, "s")
    report.row("full compile, total", total.wall, "s")
    report.row("  cpu", total.cpu, "s cpu")
    report.row("peak memory", mem.peak_mib, "MiB")
    report.row("  retained (the answer held)", mem.retained_mib, "MiB")
    report.row("parts (catalogs + the metalake level)", len(ent.classes))
    report.row("  classes of the metalake level (not walked)", len(ent.classes.get("", ())))
    report.row("classes (shared views, each counted once)", found.classes)
    report.row("  users per class, mean", found.users_in_classes / max(1, found.classes))
    report.row("class-schema pairs", found.class_pairs)
    report.row(
        "owners' personal views | their schema pairs", f"{found.owner_views:,} | {found.owner_pairs:,}"
    )
    report.row("coverages computed", found.coverages)
    report.row(
        f"goals at scale 1: <= {FULL_GOAL_S:g} s, <= {FULL_GOAL_GIB:g} GiB; here",
        f"{fmt_s(total.wall)}, {fmt_bytes(mem.peak_mib * 2**20)}",
    )
    rng = random.Random(args.seed + 3)
    users, tables = world.users, world.tables
    sample = [(rng.choice(users), rng.choice(OPERATIONS), rng.choice(tables)) for _ in range(args.sample)]
    authorize = Evaluator(model).authorize
    with Clock() as clock:
        for user, op, table in sample:
            authorize(user, op, table, explain=False)
    per_pair = clock.wall / len(sample)
    pairs = len(users) * n_tables * len(OPERATIONS)
    report.row(f"evaluator per (user, table, op), {len(sample):,} sampled", per_pair * 1e6, "us")
    report.floor(f"EXTRAPOLATED evaluator, {pairs:,} (user, table, op)", per_pair * pairs, "s")
    report.ratio("full compile / evaluator extrapolated", total.wall, per_pair * pairs)
    del ent
    if args.profile:
        report.profile(
            f"full compile at scale {scale:g}", lambda: full_compile(model, inventory), args.profile_top
        )


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    ap = cli.parser(__doc__)
    ap.add_argument(
        "--full-scale", type=cli.positive_float, help="scale of the full compile (default: --scale)"
    )
    ap.add_argument("--skip-full", action="store_true", help="only the scoped change")
    ap.add_argument("--repeats", type=int, default=5, help="timed runs of the scoped change (default 5)")
    ap.add_argument("--sample", type=int, default=20_000, help="evaluator calls sampled (default 20,000)")
    ap.add_argument("--profile", action="store_true", help="print cProfile hot spots of the full compile")
    ap.add_argument("--profile-top", type=int, default=25)
    return ap.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    with Report("compile", args) as report:
        section_scoped(report, args)
        if not args.skip_full:
            section_full(report, args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
