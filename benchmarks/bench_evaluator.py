#!/usr/bin/env python3
"""Benchmark the privilege model and :class:`pushdown.decide.evaluator.Evaluator` at scale.

Builds the synthetic estate of ``harness.worlds`` (at ``--scale 1``: 100,000 tables,
1,000 roles, 10,000 users in 300 groups, ~10% DENY) and measures:

1. model build time and peak memory, once from events built here and applied with
   ``Model.apply`` (no validation), once through ``pushdown.model.changes`` (validated);
2. ``Evaluator.authorize`` decisions per second: load_table without and with the
   trace (``explain``), with the target given as an ObjectRef or as a name, and a
   mix of operations;
3. every user's effective privileges: the compact form (every object that carries a
   grant for a role the user holds -> frozenset of privileges) for all users, and the
   full expansion over all tables for a sample of users, extrapolated to all users;
4. floors measured in the same run: the same load_table decisions and the same
   compact effective privileges computed by bare dictionary lookups written inline
   here, printed as ratios (the floors are also checked to agree with the evaluator).

Usage::

    python benchmarks/bench_evaluator.py               # full size (several minutes)
    python benchmarks/bench_evaluator.py --scale 0.01  # quick run
    python benchmarks/bench_evaluator.py --scale 0.01 --profile   # + cProfile hot spots
"""

from __future__ import annotations

import argparse
import functools
import gc
import os
import random
import sys
import time
from collections.abc import Iterable
from typing import Any

from harness import cli
from harness.clock import Clock
from harness.memory import MemoryProbe
from harness.report import Report, fmt_bytes, fmt_s
from harness.workers import run_forked
from harness.worlds import build_from_events, build_validated, config_for, make_plan, same_model, tables_of

from pushdown.decide.evaluator import Evaluator
from pushdown.model.privileges import SUPPORTED_ON, Condition, Privilege
from pushdown.model.securables import ObjectRef, SecurableType
from pushdown.model.state import Model

P = Privilege
T = SecurableType
ALLOW, DENY = Condition.ALLOW, Condition.DENY
Calls = list[tuple[str, str, Any]]  # (user, operation, target)


# -- floors: the same answers from bare dictionary lookups -----------------------------


def _holds(priv: Privilege, bps: list[Any], roles: set[str]) -> bool:
    """Some held role ALLOWs ``priv`` on the path and none DENYs it."""
    ok = False
    for bp in bps:
        if bp:
            conds = bp.get(priv)
            if conds:
                holders = conds.get(DENY)
                if holders and not roles.isdisjoint(holders):
                    return False
                if not ok:
                    holders = conds.get(ALLOW)
                    ok = bool(holders) and not roles.isdisjoint(holders)
    return ok


def floor_load_table(model: Model, pairs: list[tuple[str, ObjectRef]], cache_roles: bool) -> list[bool]:
    """load_table decisions with the evaluator's semantics, written as inline lookups.

    load_table = load_catalog gate (own M|C or USE_CATALOG on M..C)
               and load_schema gate (load_catalog, and own M|C|S or USE_SCHEMA on M..S)
               and (own M|C|S|T or SELECT_TABLE or MODIFY_TABLE on M..T).
    """
    by_object, owners, users = model.by_object, model.owners, model.users
    use_c, use_s, sel, mod = P.USE_CATALOG, P.USE_SCHEMA, P.SELECT_TABLE, P.MODIFY_TABLE
    cache: dict[str, set[str]] = {}
    out: list[bool] = []
    append = out.append
    for user, table in pairs:
        if user not in users:
            append(False)
            continue
        roles = cache.get(user) if cache_roles else None
        if roles is None:
            roles = held_roles(model, user)
            if cache_roles:
                cache[user] = roles
        m, c, s, t = table.path
        bps = [by_object.get(m), by_object.get(c), by_object.get(s), by_object.get(t)]
        own_m, own_c, own_s = owners.get(m) == user, owners.get(c) == user, owners.get(s) == user
        if not (own_m or own_c or _holds(use_c, bps[:2], roles)):
            append(False)
        elif not (own_m or own_c or own_s or _holds(use_s, bps[:3], roles)):
            append(False)
        else:
            append(
                own_m
                or own_c
                or own_s
                or owners.get(t) == user
                or _holds(sel, bps, roles)
                or _holds(mod, bps, roles)
            )
    return out


_APPLICABLE = {t: frozenset(p for p in Privilege if t in SUPPORTED_ON[p]) for t in SecurableType}


def floor_effective(model: Model, roles: set[str], obj: ObjectRef) -> frozenset[Privilege]:
    """Effective privileges with the evaluator's semantics, from bare lookups."""
    allow: set[Privilege] = set()
    deny: set[Privilege] = set()
    get = model.by_object.get
    for node in obj.path:
        bp = get(node)
        if bp:
            for priv, conds in bp.items():
                holders = conds.get(DENY)
                if holders and not roles.isdisjoint(holders):
                    deny.add(priv)
                holders = conds.get(ALLOW)
                if holders and not roles.isdisjoint(holders):
                    allow.add(priv)
    return frozenset((allow - deny) & _APPLICABLE[obj.type])


def held_roles(model: Model, user: str) -> set[str]:
    roles = set(model.user_roles.get(user, ()))
    for g in model.user_groups.get(user, ()):
        roles.update(model.group_roles.get(g, ()))
    return roles


# -- the measured work -------------------------------------------------------------------


def timed_decisions(evaluator: Evaluator, calls: Calls, explain: bool) -> tuple[Clock, list[bool]]:
    authorize = evaluator.authorize
    with Clock() as clock:
        out = [authorize(u, op, tgt, explain=explain).allowed for u, op, tgt in calls]
    return clock, out


def compact_effective(
    model: Model, evaluator: Evaluator, users: list[str], per_user: list[float] | None = None
) -> dict[str, dict[ObjectRef, frozenset[Privilege]]]:
    """Each user -> {object with a grant for a role the user holds: effective privileges}."""
    eff = evaluator.effective_privileges
    result: dict[str, dict[ObjectRef, frozenset[Privilege]]] = {}
    for user in users:
        start = time.perf_counter()
        objs = {g.object for role in model.roles_of(user) for g in model.roles[role]}
        result[user] = {obj: eff(user, obj) for obj in objs}
        if per_user is not None:
            per_user.append(time.perf_counter() - start)
    return result


def expand_users(evaluator: Evaluator, tables: list[ObjectRef], users: list[str]) -> dict[str, Any]:
    """Effective privileges of each user on every table; one user's result held at a time."""
    eff = evaluator.effective_privileges
    out: dict[str, Any] = {"users": len(users), "calls": 0, "nonempty": 0, "bytes": 0, "distinct": set()}
    with MemoryProbe() as mem, Clock() as clock:
        for user in users:
            expanded = {t: eff(user, t) for t in tables}
            out["calls"] += len(expanded)
            out["nonempty"] += sum(1 for v in expanded.values() if v)
            out["bytes"] += deep_size(expanded)
            out["distinct"].update(expanded.values())
            del expanded
    out.update(wall=clock.wall, cpu=clock.cpu, peak_mib=mem.peak_mib)
    return out


def objects_size(values: Iterable[object]) -> int:
    """sys.getsizeof summed over distinct objects (a shared frozenset counts once)."""
    return sum(sys.getsizeof(v) for v in {id(v): v for v in values}.values())


def deep_size(mapping: dict[ObjectRef, frozenset[Privilege]]) -> int:
    """Bytes of a per-user result: the dict plus its frozenset objects (keys and enums are shared)."""
    return sys.getsizeof(mapping) + objects_size(mapping.values())


def per_call(report: Report, label: str, clock: Clock, n: int, allowed: list[bool] | None = None) -> None:
    text = f"{clock.wall / n * 1e6:,.1f} us | {clock.cpu / n * 1e6:,.1f} us"
    if allowed is not None:
        text += f" | {100.0 * sum(allowed) / len(allowed):.1f}%"
    report.row(label, text)


# -- sections ----------------------------------------------------------------------------


def section_build(report: Report, args: argparse.Namespace) -> Model:
    report.section("1. model build")
    cfg = config_for(args.scale, args.seed, **{k: getattr(args, k) for k in SIZES})
    with Clock() as clock:
        plan = make_plan(cfg)
    report.row("generate the plan (plain data, not part of the build)", clock.wall, "s")
    with MemoryProbe() as mem, Clock() as clock:
        model = build_from_events(plan)
    grants = [g for gs in model.roles.values() for g in gs]
    levels = dict.fromkeys(("metalake", "catalog", "schema", "table"), 0)
    for g in grants:
        levels[g.object.type.value] += 1
    report.row(
        "catalogs / schemas / tables", f"{len(plan.catalogs)} / {len(plan.schemas)} / {len(plan.tables)}"
    )
    report.row("users / groups / roles", f"{len(model.users)} / {len(model.groups)} / {len(model.roles)}")
    report.row("group memberships", sum(len(m) for m in model.groups.values()))
    report.row("roles granted to users / to groups", f"{len(plan.user_roles)} / {len(plan.group_roles)}")
    held = sum(len(model.roles_of(u)) for u in plan.users) / len(plan.users)
    report.row("roles held per user (direct + through groups), mean", held)
    report.row("grant requests (role, object, privileges, condition)", len(plan.grants))
    report.row("grants (role, object, privilege, condition)", len(grants))
    report.row("  on metalake / catalogs / schemas / tables", " / ".join(map(str, levels.values())))
    n_deny = sum(1 for g in grants if g.condition is DENY)
    report.row("  DENY share of grants", 100.0 * n_deny / max(1, len(grants)), "%")
    report.row("objects carrying grants (model.by_object)", len(model.by_object))
    report.row("events applied", plan.events)
    report.row("build A: events built here + Model.apply (no validation)", clock.wall, "s wall")
    report.row("  cpu", clock.cpu, "s cpu")
    report.row("  events per second", plan.events / clock.wall, "events/s")
    report.row("  peak memory during build", mem.peak_mib, "MiB")
    report.row("  retained after build (the model)", mem.retained_mib, "MiB")
    if not args.skip_validated:
        with MemoryProbe() as mem2, Clock() as clock:
            other = build_validated(plan)
        report.row("build B: pushdown.model.changes.* (validated) + Model.apply", clock.wall, "s wall")
        report.row("  cpu", clock.cpu, "s cpu")
        report.row("  peak memory during build (model A still held)", mem2.peak_mib, "MiB")
        report.row("  identical to the model of build A", "yes" if same_model(model, other) else "NO")
        del other
    gc.collect()
    return model


def section_decisions(
    report: Report, evaluator: Evaluator, pairs: list[tuple[str, ObjectRef]], rng: random.Random
) -> Clock:
    """Section 2; returns the clock of the plain load_table run (the floor's comparison)."""
    report.section(f"2. decisions: Evaluator(model).authorize over {len(pairs):,} random (user, table) pairs")
    report.note(
        "one Evaluator reused unless said; ObjectRef targets are the model's own instances, paths warm;",
        "name targets are parsed into a fresh ObjectRef by every call",
    )
    lt_ref: Calls = [(u, "load_table", t) for u, t in pairs]
    n_extra = min(len(pairs), max(2000, len(pairs) // 4))
    lt_str: Calls = [(u, "load_table", t.name) for u, t in pairs[:n_extra]]
    ops = ("load_table", "alter_table", "drop_table", "create_table", "load_schema")
    mix: Calls = [
        (u, op, t.parent if op == "load_schema" else t)
        for (u, t), op in zip(pairs, (rng.choice(ops) for _ in pairs), strict=True)
    ]
    runs = {
        "load_table, explain=False, ObjectRef target": (lt_ref, False),
        f"load_table, explain=False, name string target ({n_extra:,} pairs)": (lt_str, False),
        "load_table, explain=True (trace), ObjectRef target": (lt_ref, True),
        "mix of 5 operations, explain=False": (mix, False),
        "mix of 5 operations, explain=True (trace)": (mix, True),
    }
    out: dict[str, list[bool]] = {}
    clocks: dict[str, Clock] = {}
    for label, (calls, explain) in runs.items():
        clocks[label], out[label] = timed_decisions(evaluator, calls, explain)
        report.row(label, len(calls) / clocks[label].wall, "decisions/s")
        per_call(report, "  per decision wall | cpu | allowed share", clocks[label], len(calls), out[label])
    model = evaluator.model
    with Clock() as clock:
        fresh = [Evaluator(model).authorize(u, op, t, explain=False).allowed for u, op, t in lt_ref[:n_extra]]
    label = f"load_table, explain=False, new Evaluator(model) per call ({n_extra:,} pairs)"
    report.row(label, len(fresh) / clock.wall, "decisions/s")
    per_call(report, "  per decision wall | cpu", clock, len(fresh))
    first, *others = out.values()
    consistent = first[:n_extra] == fresh == others[0] and first == others[1] and others[2] == others[3]
    report.row(
        "same decisions with and without explain / for ObjectRef and name", "yes" if consistent else "NO"
    )
    counts = dict.fromkeys(ops, 0)
    for _, op, _ in mix:
        counts[op] += 1
    print("  mix: " + ", ".join(f"{op} {n:,}" for op, n in counts.items()))
    section_decision_floor(report, model, pairs, clocks[next(iter(runs))], first)
    return clocks[next(iter(runs))]


def section_decision_floor(
    report: Report, model: Model, pairs: list[tuple[str, ObjectRef]], subject: Clock, agree: list[bool]
) -> None:
    report.section("4a. floor: the same load_table decisions from bare dict lookups (inline here)")
    report.note(
        "4 path nodes x role-set intersection over model.by_object + owner lookups;",
        "compared with the evaluator's first run of section 2 on the same pairs",
    )
    for label, cache in (
        ("roles resolved per call", False),
        ("roles cached per user (as Evaluator does)", True),
    ):
        with Clock() as clock:
            floor = floor_load_table(model, pairs, cache)
        report.floor(f"floor, {label}", len(pairs) / clock.wall, "decisions/s")
        report.ratio("  evaluator / floor, wall", subject.wall, clock.wall)
        report.ratio("  evaluator / floor, cpu", subject.cpu, clock.cpu)
        report.row(
            "  decisions differing from the evaluator", sum(a != b for a, b in zip(floor, agree, strict=True))
        )


def section_compact(report: Report, evaluator: Evaluator, users: list[str], floor_users: int | None) -> None:
    model = evaluator.model
    report.section(f"3a. effective privileges, compact form, all {len(users):,} users")
    report.note(
        "for each user: every object with a grant for a role the user holds ->",
        "Evaluator.effective_privileges(user, object); all results kept in memory",
    )
    per_user: list[float] = []
    with MemoryProbe() as mem, Clock() as clock:
        compact = compact_effective(model, evaluator, users, per_user)
    entries = sum(len(v) for v in compact.values())
    values = [p for v in compact.values() for p in v.values()]
    distinct = set(values)
    report.row("time, all users", clock.wall, "s wall")
    report.row("  cpu", clock.cpu, "s cpu")
    report.row(
        "  per user | per (user, object), wall",
        f"{clock.wall / len(users) * 1e3:,.2f} ms | {clock.wall / max(1, entries) * 1e6:,.1f} us",
    )
    report.row("(user, object) entries | non-empty", f"{entries:,} | {sum(1 for p in values if p):,}")
    report.row("  objects per user, mean", entries / len(users))
    report.row("peak memory while computing", mem.peak_mib, "MiB")
    report.row("retained (all results held)", mem.retained_mib, "MiB")
    report.row("  of which frozenset objects (sys.getsizeof)", fmt_bytes(objects_size(values)))
    report.row(
        "  distinct privilege sets (by value) among the entries | their bytes",
        f"{len(distinct):,} | {fmt_bytes(sum(map(sys.getsizeof, distinct)))}",
    )
    del values, distinct
    n_floor = min(len(users), floor_users or max(100, len(users) // 10))
    report.section(
        f"4b. floor: the same compact effective privileges from bare dict lookups ({n_floor:,} users)"
    )
    report.note(f"the first {n_floor:,} users of 3a; the evaluator time is their share of 3a")
    mismatches = 0
    with Clock() as clock:
        for user in users[:n_floor]:
            roles = held_roles(model, user)
            mine = compact[user]
            for obj in {g.object for role in roles for g in model.roles[role]}:
                mismatches += floor_effective(model, roles, obj) != mine.get(obj)
    eval_s = sum(per_user[:n_floor])
    report.floor("floor time (roles resolved once per user)", clock.wall, "s wall")
    report.row("evaluator time for the same users (from 3a)", eval_s, "s wall")
    report.ratio("  evaluator / floor", eval_s, clock.wall)
    report.row("  entries differing from the evaluator", mismatches)


def section_expansion(
    report: Report, evaluator: Evaluator, users: list[str], args: argparse.Namespace
) -> None:
    tables = tables_of(evaluator.model)
    n_expand = min(args.expand_users, len(users))
    sample = random.Random(args.seed + 2).sample(users, n_expand)
    jobs = max(1, min(args.jobs, n_expand))
    report.section(
        f"3b. effective privileges, full expansion: {n_expand} sampled users x all {len(tables):,} tables"
    )
    report.note(
        "Evaluator.effective_privileges(user, table) for every table; each worker holds one",
        f"user's result at a time; {jobs} forked worker process(es), users split between them",
    )
    with Clock() as clock:
        parts = run_forked(
            lambda chunk: expand_users(evaluator, tables, chunk), [sample[i::jobs] for i in range(jobs)]
        )
    calls = sum(p["calls"] for p in parts)
    cpu = sum(p["cpu"] for p in parts)
    size = sum(p["bytes"] for p in parts) / n_expand
    report.row(f"time, {n_expand} users x {len(tables):,} tables, {jobs} worker(s)", clock.wall, "s wall")
    report.row("  cpu, summed over workers", cpu, "s cpu")
    report.row(
        "  per user | per (user, table), cpu", f"{cpu / n_expand * 1e3:,.1f} ms | {cpu / calls * 1e6:,.2f} us"
    )
    report.row(
        "  (user, table) pairs with a non-empty result", f"{sum(p['nonempty'] for p in parts):,} of {calls:,}"
    )
    report.row("  distinct privilege sets among them", len(set().union(*(p["distinct"] for p in parts))))
    report.row(
        "peak RSS growth per worker (one user's result at a time), max",
        max(p["peak_mib"] for p in parts),
        "MiB",
    )
    report.note("RSS growth can read low here: workers reuse memory the parent freed after 3a")
    report.row("one user's expansion, dict + frozensets (sys.getsizeof)", fmt_bytes(size))
    print(f"  EXTRAPOLATED to all {len(users):,} users (linear in users; not measured):")
    all_cpu = cpu / n_expand * len(users)
    report.row(f"  EXTRAPOLATED cpu time, {len(users):,} users x {len(tables):,} tables", fmt_s(all_cpu))
    report.row(f"  EXTRAPOLATED wall time on {jobs} worker(s)", fmt_s(all_cpu / jobs))
    report.row("  EXTRAPOLATED memory to hold every user's expansion at once", fmt_bytes(size * len(users)))


# -- main --------------------------------------------------------------------------------

SIZES = ("catalogs", "schemas", "tables", "roles", "users", "groups")


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    ap = cli.parser(__doc__)
    ap.add_argument("--catalogs", type=int, help="default 10")
    ap.add_argument("--schemas", type=int, help="schemas per catalog (default 100*sqrt(scale))")
    ap.add_argument("--tables", type=int, help="tables per schema (default 100*sqrt(scale))")
    ap.add_argument("--roles", type=int, help="default 1000*scale")
    ap.add_argument("--users", type=int, help="default 10000*scale")
    ap.add_argument("--groups", type=int, help="default 300*scale")
    ap.add_argument(
        "--pairs",
        type=int,
        help="random (user, table) pairs per decision run (default 200000*scale, at least 2000)",
    )
    ap.add_argument(
        "--expand-users",
        type=int,
        default=100,
        help="users whose privileges are expanded over every table (default 100)",
    )
    ap.add_argument(
        "--jobs",
        type=int,
        default=min(2, os.cpu_count() or 1),
        help="forked worker processes for the full expansion only (default: min(2, cores))",
    )
    ap.add_argument(
        "--floor-users",
        type=int,
        help="users for the effective-privileges floor (default 10%% of users, at least 100)",
    )
    ap.add_argument(
        "--skip-validated",
        action="store_true",
        help="do not also build the model through pushdown.model.changes",
    )
    ap.add_argument(
        "--profile",
        action="store_true",
        help="after the measurements, print cProfile hot spots of the evaluator",
    )
    ap.add_argument("--profile-top", type=int, default=18)
    return ap.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    with Report("evaluator", args) as report:
        model = section_build(report, args)
        tables, users = tables_of(model), sorted(model.users)
        with Clock() as clock:
            for t in tables:  # ObjectRef.path / .parent are cached properties
                _ = t.path
        report.row("setup: warm ObjectRef.path of every table (cached_property)", clock.wall, "s")
        rng = random.Random(args.seed + 1)
        n_pairs = args.pairs or max(2000, round(200_000 * args.scale))
        pairs = [(rng.choice(users), rng.choice(tables)) for _ in range(n_pairs)]
        evaluator = Evaluator(model)
        section_decisions(report, evaluator, pairs, rng)
        section_compact(report, evaluator, users, args.floor_users)
        gc.collect()
        section_expansion(report, evaluator, users, args)
    if args.profile:
        profile(report, evaluator, pairs, users, args.profile_top)
    return 0


def profile(
    report: Report, evaluator: Evaluator, pairs: list[tuple[str, ObjectRef]], users: list[str], top: int
) -> None:
    calls: Calls = [(u, "load_table", t) for u, t in pairs[:20_000]]
    for explain in (False, True):
        report.profile(
            f"{len(calls):,} load_table decisions, explain={explain}",
            functools.partial(timed_decisions, evaluator, calls, explain),
            top,
        )
    k = min(len(users), 200)
    report.profile(
        f"compact effective privileges, {k} users",
        lambda: compact_effective(evaluator.model, evaluator, users[:k]),
        top,
    )


if __name__ == "__main__":
    sys.exit(main())
