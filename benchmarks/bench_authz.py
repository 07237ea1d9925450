#!/usr/bin/env python3
"""Benchmark the authorization of requests and of listings, the numbers of issue 18.

Builds the synthetic estate of ``harness.worlds`` with 10,000 roles at ``--scale 1``
(10,000 users in 300 groups, 100,000 tables, ~10% DENY), adds a schema of 1,000 tables
(``cat00.wide``, 1000*scale, at least 20) and a few principals of the benchmark's own,
then measures:

1. the authorization check of one request, call by call, p50 / p99 / max, for the same
   operations and targets asked by two users holding the same roles, one directly and one
   through a group: load/create/alter/drop table, load catalog and schema, list tables,
   create schema, grant/revoke privilege, set owner, get/create/delete/grant/revoke role,
   add/remove/get user, add/get group; each run both as a request handler does it (a new
   ``Evaluator`` with the trace, as ``AccessControl``'s check does) and with one
   ``Evaluator`` kept and no trace. The floor: the load_table decisions of the same calls
   from inline dictionary lookups (``bench_evaluator.floor_load_table``);
2. list roles, users and groups (``pushdown.decide.listing.visible``) as a typical user,
   as a holder of the management privileges and as the metalake's owner, against the bare
   listing (every name sorted, no check) in the same run;
3. list the 1,000 tables of one schema with authorization (a user who sees a third of
   them, the schema's owner who sees all) against the bare listing of the schema's
   children, and the filter this replaced (every registered object scanned, each item
   checked on its own) once.

Every answer is checked: the user-held and the group-held decisions agree, with and
without the trace, load_table agrees with the floor, and every listing equals the
item-by-item filter. The exit status is 1 only when an answer is wrong, never for speed.
Gravitino's own figures (issues #12173, #9168, #8089, #11781) are printed beside the goals.

Usage::

    python benchmarks/bench_authz.py               # full size (about 5 minutes)
    python benchmarks/bench_authz.py --scale 0.01  # seconds
"""

from __future__ import annotations

import argparse
import gc
import random
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from bench_evaluator import floor_load_table
from harness import cli
from harness.clock import Clock, alternate
from harness.report import Report
from harness.worlds import World, make_world

from pushdown.decide.evaluator import Evaluator, Target, operation_named, resolve_target
from pushdown.decide.listing import visible
from pushdown.decide.requirements import OPERATIONS
from pushdown.model import events as ev
from pushdown.model.directory import EnforcedView
from pushdown.model.principals import Principal
from pushdown.model.privileges import Condition, Privilege
from pushdown.model.securables import METALAKE, ObjectRef, SecurableType
from pushdown.model.state import Model

P = Privilege
T = SecurableType
ALLOW, DENY = Condition.ALLOW, Condition.DENY
DIRECT, GROUPED, LISTER = "bench_direct", "bench_grouped", "bench_lister"
GOALS = (
    "goals (issue 18): a request's check p99 <= 1 ms, groups no slower than users; list roles / users",
    "as a non-owner <= 50 ms; 1,000 tables listed with authorization <= 2x without",
)


@dataclass
class Bench:
    """The estate and the handles the measurements use."""

    world: World
    ops_catalog: ObjectRef
    wide: ObjectRef
    wide_owner: str
    typical: str
    owner: str
    extra_roles: list[str]
    wrong: list[str] = field(default_factory=list)

    @property
    def model(self) -> Model:
        return self.world.model

    def check(self, ok: bool, what: str) -> None:
        if not ok:
            self.wrong.append(what)
            print(f"  WRONG ANSWER: {what}", flush=True)


# -- the estate ------------------------------------------------------------------------------


def build(report: Report, args: argparse.Namespace) -> Bench:
    report.section("1. the estate")
    roles = args.roles or max(5, round(10_000 * args.scale))
    with Clock() as clock:
        world = make_world(args.scale, args.seed, roles=roles)
    model = world.model
    report.row(
        "users / groups / roles", f"{len(model.users):,} / {len(model.groups):,} / {len(model.roles):,}"
    )
    report.row("tables", len(world.plan.tables))
    report.row("grants (role, object, privilege, condition)", sum(len(g) for g in model.roles.values()))
    report.row("build (harness.worlds, events applied)", clock.wall, "s")
    rng = random.Random(args.seed + 18)
    apply = model.apply
    ops_catalog = ObjectRef(T.CATALOG, ("cat01",) if len(world.plan.catalogs) > 1 else ("cat00",))
    # the wide schema: 1,000 tables at scale 1, owned by estate users and a few by the lister
    n_wide = max(20, round(args.wide * args.scale))
    wide = ObjectRef(T.SCHEMA, ("cat00", "wide"))
    wide_owner = world.plan.catalogs[0][1]  # the catalog's owner: passes its gates, owns its tables
    apply(ev.UserAdded(LISTER))
    apply(ev.ObjectCreated(wide, (), wide_owner))
    tables = [ObjectRef(T.TABLE, (*wide.names, f"w{i:05d}")) for i in range(n_wide)]
    for i, t in enumerate(rng.sample(tables, len(tables))):  # registered in random order
        apply(ev.ObjectCreated(t, (), LISTER if i % 50 == 0 else rng.choice(world.users)))
    apply(ev.RoleCreated("bench_reader"))
    apply(
        ev.PrivilegesGranted(
            "bench_reader", ObjectRef(T.CATALOG, ("cat00",)), frozenset({P.USE_CATALOG}), ALLOW
        )
    )
    apply(ev.PrivilegesGranted("bench_reader", wide, frozenset({P.USE_SCHEMA}), ALLOW))
    for i, t in enumerate(tables):
        if i % 3 == 0:
            apply(ev.PrivilegesGranted("bench_reader", t, frozenset({P.SELECT_TABLE}), ALLOW))
        if i % 30 == 0:
            apply(ev.PrivilegesGranted("bench_reader", t, frozenset({P.SELECT_TABLE}), DENY))
    apply(ev.RoleGranted("bench_reader", Principal.user(LISTER)))
    # a typical user's groups and their roles, among those granting nothing on the schema's path
    # (a DENY SELECT_TABLE on cat00 would hide every table: the listing would show owned ones only)
    path = set(wide.path)
    quiet = [
        g
        for g in sorted(model.groups)
        if not any(grant.object in path for r in model.group_roles.get(g, ()) for grant in model.roles[r])
    ]
    for group in rng.sample(quiet, min(2, len(quiet))):
        apply(ev.GroupMemberAdded(group, LISTER))
    # two users holding the same roles: one directly, one through a group
    apply(ev.RoleCreated("bench_ops"))
    schema = ObjectRef(T.SCHEMA, (*ops_catalog.names, "sch000"))
    for obj, privileges in (
        (METALAKE, (P.MANAGE_USERS, P.MANAGE_GROUPS, P.MANAGE_GRANTS, P.CREATE_ROLE)),
        (ops_catalog, (P.USE_CATALOG, P.CREATE_SCHEMA)),
        (schema, (P.USE_SCHEMA, P.CREATE_TABLE, P.SELECT_TABLE, P.MODIFY_TABLE)),
    ):
        apply(ev.PrivilegesGranted("bench_ops", obj, frozenset(privileges), ALLOW))
    extra_roles = ["bench_ops", *rng.sample(world.plan.roles, min(6, len(world.plan.roles)))]
    apply(ev.UserAdded(DIRECT))
    apply(ev.UserAdded(GROUPED))
    apply(ev.GroupAdded("bench_group"))
    apply(ev.GroupMemberAdded("bench_group", GROUPED))
    for role in extra_roles:
        apply(ev.RoleGranted(role, Principal.user(DIRECT)))
        apply(ev.RoleGranted(role, Principal.group("bench_group")))
    typical = world.users[len(world.users) // 2]
    report.row("the wide schema's tables", n_wide)
    report.row("roles held by the typical user (directly and through groups)", len(model.roles_of(typical)))
    report.row("roles held by the two checking users (the same set)", len(extra_roles))
    return Bench(world, ops_catalog, wide, wide_owner, typical, world.plan.metalake_owner, extra_roles)


# -- 1. one request's check ------------------------------------------------------------------------


REQUESTS = (
    *("load_table", "create_table", "alter_table", "drop_table", "grant_privilege", "revoke_privilege"),
    *("set_owner", "load_catalog", "load_schema", "list_tables", "create_schema", "create_role"),
    *("get_role", "grant_role", "revoke_role", "delete_role", "add_user", "remove_user", "get_user"),
    *("add_group", "get_group"),
)


def request_calls(b: Bench, n: int, rng: random.Random) -> list[tuple[str, Target]]:
    """(operation, target) of ``n`` requests, the operations drawn evenly from ``REQUESTS``."""
    cat = b.ops_catalog.names[0]
    tables = [t for t in b.world.tables if t.names[0] == cat] or b.world.tables
    roles, users, groups = b.world.plan.roles, b.world.users, sorted(b.model.groups)
    calls: list[tuple[str, Target]] = []
    for _ in range(n):
        op = rng.choice(REQUESTS)
        target: Target
        if op in ("load_schema", "list_tables"):
            target = ObjectRef(T.SCHEMA, rng.choice(tables).names[:2])
        elif op == "load_catalog":
            target = b.ops_catalog
        elif op == "create_schema":
            target = ObjectRef(T.SCHEMA, (cat, f"new{rng.randrange(10**6)}"))
        elif op == "create_role":
            target = ObjectRef(T.ROLE, (f"new{rng.randrange(10**6)}",))
        elif op.endswith("_role"):
            target = ObjectRef(T.ROLE, (rng.choice(roles),))
        elif op.endswith("_user"):
            target = rng.choice(users)
        elif op.endswith("_group"):
            target = rng.choice(groups)
        else:
            target = rng.choice(tables)
        calls.append((op, target))
    return calls


class FullCollections:
    """The pauses of the garbage collector's full (generation 2) collections in a ``with`` block."""

    def __enter__(self) -> FullCollections:
        self.pauses: list[float] = []
        self._start = 0.0
        gc.callbacks.append(self._on_gc)
        return self

    def __exit__(self, *exc: object) -> None:
        gc.callbacks.remove(self._on_gc)

    def _on_gc(self, phase: str, info: dict[str, int]) -> None:
        if info["generation"] == 2:
            if phase == "start":
                self._start = time.perf_counter()
            else:
                self.pauses.append(time.perf_counter() - self._start)


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def timed_checks(
    model: Model, calls: list[tuple[str, Target]], fresh: bool, view: EnforcedView | None = None
) -> tuple[dict[str, list[float]], dict[str, list[bool]]]:
    """Each call timed on its own, the two users in turn (so drift hits both alike);
    ``view``: each call first takes the decision model from it, as ``AccessControl`` does."""
    times: dict[str, list[float]] = {DIRECT: [], GROUPED: []}
    answers: dict[str, list[bool]] = {DIRECT: [], GROUPED: []}
    kept = Evaluator(model)
    for op, target in calls[:200]:  # warm up: the first calls of a process pay for imports and caches
        for user in (DIRECT, GROUPED):
            Evaluator(model).authorize(user, op, target)
    clock = time.perf_counter
    for op, target in calls:
        for user in (DIRECT, GROUPED):
            if isinstance(target, ObjectRef):  # as parsed from a request: its path not yet known
                target = ObjectRef(target.type, target.names)
            start = clock()
            if view is not None:  # AccessControl's check: the decision view, a new evaluator
                allowed = Evaluator(view.of(model)).authorize(user, op, target).allowed
            elif fresh:  # what a request handler does: a new evaluator, the trace for a refusal
                allowed = Evaluator(model).authorize(user, op, target).allowed
            else:
                allowed = kept.authorize(user, op, target, explain=False).allowed
            times[user].append(clock() - start)
            answers[user].append(allowed)
    return times, answers


def section_checks(report: Report, b: Bench, args: argparse.Namespace) -> None:
    n = args.checks or max(400, round(20_000 * min(1.0, args.scale * 10)))
    report.section(
        f"2. one request's check: {n:,} requests over {len(REQUESTS)} operations, each asked by two users"
    )
    report.note(
        f"{DIRECT} holds {len(b.extra_roles)} roles directly, {GROUPED} the same roles through a group;",
        "each call timed alone (perf_counter), the two users in turn; gc on, as in a server",
    )
    report.note(*GOALS)
    report.note(
        "Gravitino: one check 106 ms at 10,000 roles (#12173); group checks 2-3x user checks (#11781)"
    )
    rng = random.Random(args.seed + 1)
    calls = request_calls(b, n, rng)
    results: dict[str, dict[str, list[float]]] = {}
    answers: dict[str, dict[str, list[bool]]] = {}
    # the directory names one member beyond the model (recorded at the last sync): every
    # decision is made on the model with that member, one copy per model version
    directory = {sorted(b.model.groups)[0]: {"bench_directory_member"}} if b.model.groups else {}
    b.model.external_members = directory
    views = EnforcedView()
    with Clock() as copying:
        views.of(b.model)
    report.row("the decision view with the directory's members: one copy per model version",
               f"{copying.wall * 1e3:.1f}", "ms")  # fmt: skip
    for label, fresh, view in (("a new Evaluator per request, with the trace", True, None),
                               ("one Evaluator kept, no trace", False, None),
                               ("as AccessControl: the decision view, new Evaluator, trace", True, views),
                               ):  # fmt: skip
        with FullCollections() as collections:
            times, said = timed_checks(b.model, calls, fresh, view)
        results[label], answers[label] = times, said
        for user, how in ((DIRECT, "user-held"), (GROUPED, "group-held")):
            ms = [t * 1e3 for t in times[user]]
            report.row(
                f"{label}: {how} p50 / p99 / max",
                f"{pct(ms, 0.5):.3f} / {pct(ms, 0.99):.3f} / {max(ms):.3f}",
                "ms",
            )
        report.row(
            "  full garbage collections during these checks: count, longest",
            f"{len(collections.pauses)}, {max(collections.pauses, default=0.0) * 1e3:.1f}",
            "ms",
        )
        report.ratio(
            f"  group-held / user-held p99 ({label})",
            pct(times[GROUPED], 0.99),
            pct(times[DIRECT], 0.99),
            target=1.0,
        )
    first, second, third = answers.values()
    b.check(first[DIRECT] == first[GROUPED], "user-held and group-held decisions differ")
    b.check(first == second, "decisions differ with and without the trace")
    b.check(first == third, "decisions differ on the decision view")
    b.model.external_members = {}
    allowed = sum(first[DIRECT])
    report.row("requests allowed / refused", f"{allowed:,} / {len(calls) - allowed:,}")
    per_op: dict[str, list[float]] = {}
    for (op, _), t in zip(
        calls, results["a new Evaluator per request, with the trace"][GROUPED], strict=True
    ):
        per_op.setdefault(op, []).append(t * 1e3)
    worst = sorted(per_op.items(), key=lambda kv: -pct(kv[1], 0.99))[:5]
    report.row("slowest operations by p99 (group-held, new Evaluator)",
               ", ".join(f"{op} {pct(v, 0.99):.3f}" for op, v in worst), "ms")  # fmt: skip
    # the floor: load_table decisions of the same calls, inline lookups (roles resolved per call)
    pairs = [(u, t) for op, t in calls if op == "load_table" for u in (DIRECT, GROUPED)]
    assert all(isinstance(t, ObjectRef) for _, t in pairs)
    refs: list[tuple[str, ObjectRef]] = [(u, t) for u, t in pairs if isinstance(t, ObjectRef)]
    with Clock() as clock:
        floor = floor_load_table(b.model, refs, cache_roles=False)
    per = clock.wall / max(1, len(refs))
    report.floor("floor: one load_table decision from inline lookups, mean", per * 1e3, "ms")
    lt = [t for (op, _), t in zip(calls, results["one Evaluator kept, no trace"][GROUPED], strict=True)
          if op == "load_table"]  # fmt: skip
    kept = Evaluator(b.model)
    decided = [kept.authorize(u, "load_table", t, explain=False).allowed for u, t in refs]
    b.check(decided == floor, "load_table decisions differ from the inline floor")
    if lt:
        report.ratio("  load_table, one Evaluator kept, mean / floor", statistics.fmean(lt), per)


# -- 2. listing principals ------------------------------------------------------------------------


def item_by_item(evaluator: Evaluator, user: str, list_op: str, container: Target) -> list[Target]:
    """The listing's definition: every item of the inventory checked on its own (what
    ``listing.visible`` did before it read the requirement's terms and the container's children)."""
    op = operation_named(list_op)
    target = resolve_target(op, container)
    if not evaluator.authorize(user, op.name, target, explain=False):
        return []
    model = evaluator.model
    assert op.lists is not None
    items: list[Target]
    if op.lists == "get_user":
        items = sorted(model.users)
    elif op.lists == "get_group":
        items = sorted(model.groups)
    elif op.lists == "get_role":
        items = [ObjectRef(T.ROLE, (r,)) for r in sorted(model.roles)]
    else:
        kind = OPERATIONS[op.lists].target
        root = target if isinstance(target, ObjectRef) else METALAKE
        items = sorted(o for o in model.objects if o.type is kind and o.is_within(root))
    return [i for i in items if evaluator.authorize(user, op.lists, i, explain=False)]


def bare(model: Model, list_op: str) -> Callable[[], list[Any]]:
    """The listing with no authorization: every name, sorted (roles as their references)."""
    if list_op == "list_roles":
        return lambda: [ObjectRef(T.ROLE, (r,)) for r in sorted(model.roles)]
    if list_op == "list_users":
        return lambda: sorted(model.users)
    return lambda: sorted(model.groups)


def section_principals(report: Report, b: Bench, args: argparse.Namespace) -> None:
    model = b.model
    report.section("3. list roles / users / groups (listing.visible), against the bare listing")
    report.note(*GOALS)
    report.note("Gravitino: listing roles took 15.9 s for a non-owner (#9168)")
    who = (
        (f"a typical user ({b.typical})", b.typical),
        (f"a holder of MANAGE_* ({DIRECT})", DIRECT),
        (f"the metalake's owner ({b.owner})", b.owner),
    )
    evaluator = Evaluator(model)
    for list_op in ("list_roles", "list_users", "list_groups"):
        subjects: dict[str, Callable[[], list[Any]]] = {"floor": bare(model, list_op)}
        for label, user in who:
            subjects[label] = lambda u=user, op=list_op: visible(evaluator, u, op, METALAKE)  # type: ignore[misc]
        for fn in subjects.values():  # warm up
            fn()
        rounds = alternate(subjects, args.repeats)
        floor = rounds.pop("floor")
        assert isinstance(floor.result, list)
        report.floor(
            f"{list_op}: the bare listing ({len(floor.result):,} items), median", floor.median * 1e3, "ms"
        )
        for label, user in who:
            m = rounds[label]
            shown = m.result
            assert isinstance(shown, list)
            report.row(
                f"  as {label}: {len(shown):,} shown, median / best",
                f"{m.median * 1e3:.3f} / {m.best * 1e3:.3f}",
                "ms",
            )
            report.ratio(f"  as {label}, / the bare listing", m.median, floor.median)
            with Clock() as slow:
                expected = item_by_item(Evaluator(model), user, list_op, METALAKE)
            b.check(shown == expected, f"{list_op} as {user} differs from the item-by-item filter")
            report.row("    the item-by-item filter (the definition, checked equal)", slow.wall * 1e3, "ms")


# -- 3. listing 1,000 tables ----------------------------------------------------------------------


def section_tables(report: Report, b: Bench, args: argparse.Namespace) -> None:
    model = b.model
    wide = b.wide
    n = len(model.kids.get(wide, ()))
    report.section(f"4. list the {n:,} tables of schema {wide.name}, with authorization and without")
    report.note(*GOALS)
    report.note("Gravitino: 1,000 tables listed in 19 s with authorization on, 0.31 s off (#8089)")

    def bare_tables() -> list[ObjectRef]:
        return sorted((o for o in model.kids.get(wide, ()) if o.type is T.TABLE), key=lambda o: o.names)

    evaluator = Evaluator(model)
    subjects: dict[str, Callable[[], list[Any]]] = {"floor": bare_tables}
    who = ((f"{LISTER} (a third granted, some denied, a few owned)", LISTER),
           (f"the catalog's owner ({b.wide_owner})", b.wide_owner))  # fmt: skip
    for label, user in who:
        subjects[label] = lambda u=user: visible(evaluator, u, "list_tables", wide)  # type: ignore[misc]
    for fn in subjects.values():  # warm up
        fn()
    rounds = alternate(subjects, args.repeats)
    floor = rounds.pop("floor")
    report.floor("the bare listing (the schema's children, sorted), median", floor.median * 1e3, "ms")
    for label, user in who:
        m = rounds[label]
        assert isinstance(m.result, list)
        report.row(
            f"as {label}: {len(m.result):,} shown, median / best",
            f"{m.median * 1e3:.3f} / {m.best * 1e3:.3f}",
            "ms",
        )
        report.ratio(f"  as {label}, / the bare listing", m.median, floor.median, target=2.0)
        with Clock() as slow:
            expected = item_by_item(Evaluator(model), user, "list_tables", wide)
        b.check(m.result == expected, f"list_tables as {user} differs from the item-by-item filter")
        report.row(
            "  the filter this replaced (every object scanned, each item checked alone)",
            slow.wall * 1e3,
            "ms",
        )
    everything = rounds[who[1][0]].result
    b.check(
        isinstance(everything, list) and len(everything) == n, "the catalog's owner does not see every table"
    )


# -- main ------------------------------------------------------------------------------------------


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    ap = cli.parser(__doc__)
    ap.add_argument("--roles", type=int, help="roles in the estate (default 10000*scale, at least 5)")
    ap.add_argument(
        "--wide", type=int, default=1000, help="tables of the wide schema at scale 1 (default 1000)"
    )
    ap.add_argument("--checks", type=int, help="requests timed (default 20000 from scale 0.1 up)")
    ap.add_argument("--repeats", type=int, default=11, help="timed rounds of each listing (default 11)")
    return ap.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    with Report("authz", args) as report:
        b = build(report, args)
        section_checks(report, b, args)
        gc.freeze()  # the estate is not garbage: the collections before each timed listing skip it
        section_principals(report, b, args)
        section_tables(report, b, args)
        report.section("answers")
        report.row("wrong answers", len(b.wrong))
        for what in b.wrong:
            report.note(what)
    return 1 if b.wrong else 0


if __name__ == "__main__":
    sys.exit(main())
