#!/usr/bin/env python3
"""Benchmark the privilege model and :class:`pushdown.evaluator.Evaluator` at scale.

Builds a synthetic metalake (default: 10 catalogs x 100 schemas x 100 tables = 100,000
tables, 1,000 roles, 10,000 users in 300 groups, grants at every level with ~10% DENY,
roles granted to users and to groups) and measures:

1. model build time and peak memory, once from events built here and applied with
   ``Model.apply`` (no validation), once through ``pushdown.changes`` (validated);
2. ``Evaluator.authorize`` decisions per second: load_table without and with the
   trace (``explain``), with the target given as an ObjectRef or as a name, and a
   mix of operations;
3. every user's effective privileges: the compact form (every object that carries a
   grant for a role the user holds -> frozenset of privileges) for all users, and the
   full expansion over all tables for a sample of users, extrapolated to all users;
4. floors measured in the same run: the same load_table decisions and the same
   compact effective privileges computed by bare dictionary lookups written inline
   here, printed as ratios (the floors are also checked to agree with the evaluator).

Memory is the resident set size (RSS) high-water mark of this process, read from
``/proc/self/status`` (VmHWM) after resetting it through ``/proc/self/clear_refs``;
"peak" is that high-water mark minus the RSS at the start of the step. Where the
reset is not available the script falls back to ``resource.getrusage().ru_maxrss``
(a whole-process peak) and says so.

Usage::

    python benchmarks/bench_evaluator.py               # full size (several minutes)
    python benchmarks/bench_evaluator.py --scale 0.01  # quick run
    python benchmarks/bench_evaluator.py --scale 0.01 --profile   # + cProfile hot spots
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import io
import math
import os
import platform
import pstats
import random
import resource
import sys
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from pushdown import changes
from pushdown import events as ev
from pushdown.evaluator import Evaluator
from pushdown.model import Model
from pushdown.privileges import SUPPORTED_ON, Condition, Privilege
from pushdown.scope import Principal
from pushdown.securables import METALAKE, ObjectRef, SecurableType

P = Privilege
T = SecurableType
ALLOW, DENY = Condition.ALLOW, Condition.DENY
perf = time.perf_counter


# -- memory ------------------------------------------------------------------------------


def _status_kib(key: str) -> int | None:
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith(key + ":"):
                    return int(line.split()[1])
    except OSError:
        return None
    return None


def _reset_hwm() -> bool:
    try:
        with open("/proc/self/clear_refs", "w") as fh:
            fh.write("5")
        return True
    except OSError:
        return False


HWM_RESETTABLE = _reset_hwm() and _status_kib("VmHWM") is not None
MEMORY_METHOD = (
    "RSS high-water mark (VmHWM, reset via /proc/self/clear_refs) minus RSS at step start"
    if HWM_RESETTABLE
    else "resource.getrusage(RUSAGE_SELF).ru_maxrss (whole-process peak, not reset per step)"
)


class MemoryProbe:
    """Peak and retained RSS of one step, in MiB."""

    def __enter__(self) -> MemoryProbe:
        gc.collect()
        self.start = _rss_kib()
        if HWM_RESETTABLE:
            _reset_hwm()
        return self

    def __exit__(self, *exc: object) -> None:
        self.end = _rss_kib()
        if HWM_RESETTABLE:
            high = _status_kib("VmHWM") or 0
        else:
            high = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        self.peak_mib = max(0, high - self.start) / 1024
        self.retained_mib = (self.end - self.start) / 1024


def _rss_kib() -> int:
    rss = _status_kib("VmRSS")
    return rss if rss is not None else resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


# -- output ------------------------------------------------------------------------------


def section(title: str) -> None:
    print(f"\n== {title}")


def row(label: str, value: Any, unit: str = "") -> None:
    if isinstance(value, float):
        text = f"{value:,.3f}" if abs(value) < 100 else f"{value:,.1f}"
    elif isinstance(value, int):
        text = f"{value:,}"
    else:
        text = str(value)
    print(f"  {label:<66} {text:>16}  {unit}".rstrip(), flush=True)


# -- the synthetic model -----------------------------------------------------------------


@dataclass
class Config:
    catalogs: int
    schemas: int  # per catalog
    tables: int  # per schema
    roles: int
    users: int
    groups: int
    pairs: int
    expand_users: int
    seed: int
    deny_share: float = 0.10


@dataclass
class Plan:
    """The whole synthetic model as plain data, built before anything is timed."""

    users: list[str]
    groups: dict[str, list[str]]  # group -> members
    catalogs: list[tuple[tuple[str, ...], str]]  # (names, owner)
    schemas: list[tuple[tuple[str, ...], str]]
    tables: list[tuple[tuple[str, ...], str]]
    metalake_owner: str
    roles: list[str]
    grants: list[tuple[str, tuple[str, ...], frozenset[Privilege], Condition]] = field(default_factory=list)
    user_roles: list[tuple[str, str]] = field(default_factory=list)  # (role, user)
    group_roles: list[tuple[str, str]] = field(default_factory=list)  # (role, group)


def make_plan(cfg: Config) -> Plan:
    rng = random.Random(cfg.seed)
    users = [f"user{i:05d}" for i in range(cfg.users)]
    group_names = [f"group{i:03d}" for i in range(cfg.groups)]
    groups: dict[str, list[str]] = {g: [] for g in group_names}
    for user in users:  # every user is in 1-3 groups (2 on average)
        for g in rng.sample(group_names, min(len(group_names), rng.randint(1, 3))):
            groups[g].append(user)
    cats = [f"cat{i:02d}" for i in range(cfg.catalogs)]
    catalogs = [((c,), rng.choice(users)) for c in cats]
    schemas = [((c, f"sch{j:03d}"), rng.choice(users)) for c in cats for j in range(cfg.schemas)]
    tables = [
        ((c, s, f"tbl{k:04d}"), rng.choice(users))
        for (c, s), _ in schemas
        for k in range(cfg.tables)
    ]
    plan = Plan(users, groups, catalogs, schemas, tables, users[0],
                [f"role{i:04d}" for i in range(cfg.roles)])

    merged: dict[tuple[str, tuple[str, ...], Condition], set[Privilege]] = {}

    def grant(role: str, names: tuple[str, ...], allow: Iterable[Privilege], deny: list[Privilege]) -> None:
        if rng.random() < cfg.deny_share:
            cond, privs = DENY, {rng.choice(deny)}
        else:
            cond, privs = ALLOW, set(allow)
        merged.setdefault((role, names, cond), set()).update(privs)

    n_schema_grants = min(6, cfg.schemas)
    n_table_grants = min(40, cfg.schemas * cfg.tables)
    for role in plan.roles:
        home = rng.randrange(cfg.catalogs)
        if rng.random() < 0.02:
            grant(role, (), (P.USE_CATALOG, P.USE_SCHEMA, P.SELECT_TABLE), [P.MODIFY_TABLE, P.CREATE_TABLE])
        cat_ids = {home} | ({rng.randrange(cfg.catalogs)} if rng.random() < 0.3 else set())
        for c in sorted(cat_ids):
            extra = rng.sample([P.USE_SCHEMA, P.SELECT_TABLE, P.CREATE_SCHEMA, P.CREATE_TABLE, P.MODIFY_TABLE],
                               rng.randint(0, 2))
            grant(role, (cats[c],), (P.USE_CATALOG, *extra),
                  [P.USE_CATALOG, P.USE_SCHEMA, P.SELECT_TABLE, P.MODIFY_TABLE, P.CREATE_TABLE])
        my_schemas = rng.sample(range(cfg.schemas), n_schema_grants)
        for s in my_schemas:
            extra = rng.sample([P.SELECT_TABLE, P.CREATE_TABLE, P.MODIFY_TABLE], rng.randint(0, 2))
            grant(role, (cats[home], f"sch{s:03d}"), (P.USE_SCHEMA, *extra),
                  [P.USE_SCHEMA, P.SELECT_TABLE, P.MODIFY_TABLE])
        for _ in range(n_table_grants):
            s = rng.choice(my_schemas) if rng.random() < 0.8 else rng.randrange(cfg.schemas)
            names = (cats[home], f"sch{s:03d}", f"tbl{rng.randrange(cfg.tables):04d}")
            allow = rng.choice(((P.SELECT_TABLE,), (P.SELECT_TABLE, P.MODIFY_TABLE), (P.MODIFY_TABLE,)))
            grant(role, names, allow, [P.SELECT_TABLE, P.MODIFY_TABLE])
    plan.grants = [(r, names, frozenset(privs), cond) for (r, names, cond), privs in merged.items()]

    for user in users:  # 0-3 roles granted directly (1.5 on average)
        for role in rng.sample(plan.roles, min(len(plan.roles), rng.randint(0, 3))):
            plan.user_roles.append((role, user))
    for g in group_names:  # 2-4 roles per group (3 on average)
        for role in rng.sample(plan.roles, min(len(plan.roles), rng.randint(2, 4))):
            plan.group_roles.append((role, g))
    return plan


_TYPE_BY_DEPTH = {0: T.METALAKE, 1: T.CATALOG, 2: T.SCHEMA, 3: T.TABLE}


def build_from_events(plan: Plan) -> Model:
    """Build the model from events constructed here, applied without validation."""
    model = Model()
    apply = model.apply
    for user in plan.users:
        apply(ev.UserAdded(user))
    for group, members in plan.groups.items():
        apply(ev.GroupAdded(group))
        for user in sorted(members):
            apply(ev.GroupMemberAdded(group, user))
    refs: dict[tuple[str, ...], ObjectRef] = {(): METALAKE}
    backend = (("backend", "hive"),)
    for kind, items in ((T.CATALOG, plan.catalogs), (T.SCHEMA, plan.schemas), (T.TABLE, plan.tables)):
        for names, owner in items:
            ref = refs[names] = ObjectRef(kind, names)
            apply(ev.ObjectCreated(ref, backend if kind is T.CATALOG else (), owner))
    apply(ev.OwnerSet(METALAKE, plan.metalake_owner, None))
    for role in plan.roles:
        apply(ev.RoleCreated(role))
    for role, names, privs, cond in plan.grants:
        apply(ev.PrivilegesGranted(role, refs[names], privs, cond))
    for role, user in plan.user_roles:
        apply(ev.RoleGranted(role, Principal.user(user)))
    for role, group in plan.group_roles:
        apply(ev.RoleGranted(role, Principal.group(group)))
    return model


def build_validated(plan: Plan) -> Model:
    """Build the same model through pushdown.changes (every request validated)."""
    model = Model()

    def do(events: list[ev.Event]) -> None:
        for e in events:
            model.apply(e)

    for user in plan.users:
        do(changes.add_user(model, user))
    for group, members in plan.groups.items():
        do(changes.add_group(model, group, members))
    refs: dict[tuple[str, ...], ObjectRef] = {(): METALAKE}
    for kind, items in ((T.CATALOG, plan.catalogs), (T.SCHEMA, plan.schemas), (T.TABLE, plan.tables)):
        for names, owner in items:
            ref = refs[names] = ObjectRef(kind, names)
            do(changes.create_object(model, ref, owner, {"backend": "hive"} if kind is T.CATALOG else None))
    do(changes.set_owner(model, METALAKE, plan.metalake_owner))
    for role in plan.roles:
        do(changes.create_role(model, role))
    for role, names, privs, cond in plan.grants:
        do(changes.grant_privileges(model, role, refs[names], privs, cond))
    for role, user in plan.user_roles:
        do(changes.grant_role(model, role, Principal.user(user)))
    for role, group in plan.group_roles:
        do(changes.grant_role(model, role, Principal.group(group)))
    return model


def same_model(a: Model, b: Model) -> bool:
    return (
        a.users == b.users and a.groups == b.groups and a.roles == b.roles
        and dict(a.user_roles) == dict(b.user_roles) and dict(a.group_roles) == dict(b.group_roles)
        and a.owners == b.owners and a.objects == b.objects and a.by_object == b.by_object
        and dict(a.user_groups) == dict(b.user_groups)
    )


# -- floors: the same answers from bare dictionary lookups -----------------------------


def floor_load_table(model: Model, pairs: list[tuple[str, ObjectRef]], cache_roles: bool) -> list[bool]:
    """load_table decisions with the evaluator's semantics, written as inline lookups.

    load_table = load_catalog gate (own M|C or USE_CATALOG on M..C)
               and load_schema gate (load_catalog, and own M|C|S or USE_SCHEMA on M..S)
               and (own M|C|S|T or SELECT_TABLE or MODIFY_TABLE on M..T);
    a privilege holds when some held role ALLOWs it on the path and none DENYs it.
    """
    by_object, owners, users = model.by_object, model.owners, model.users
    user_roles, group_roles, user_groups = model.user_roles, model.group_roles, model.user_groups
    use_c, use_s, sel, mod = P.USE_CATALOG, P.USE_SCHEMA, P.SELECT_TABLE, P.MODIFY_TABLE
    cache: dict[str, set[str]] = {}
    out: list[bool] = []
    append = out.append

    def holds(priv: Privilege, bps: list[Any], roles: set[str]) -> bool:
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

    for user, table in pairs:
        if user not in users:
            append(False)
            continue
        roles = cache.get(user) if cache_roles else None
        if roles is None:
            roles = set(user_roles.get(user, ()))
            for g in user_groups.get(user, ()):
                roles.update(group_roles.get(g, ()))
            if cache_roles:
                cache[user] = roles
        m, c, s, t = table.path
        bps = [by_object.get(m), by_object.get(c), by_object.get(s), by_object.get(t)]
        own_m, own_c, own_s = owners.get(m) == user, owners.get(c) == user, owners.get(s) == user
        if not (own_m or own_c or holds(use_c, bps[:2], roles)):
            append(False)
        elif not (own_m or own_c or own_s or holds(use_s, bps[:3], roles)):
            append(False)
        else:
            append(own_m or own_c or own_s or owners.get(t) == user
                   or holds(sel, bps, roles) or holds(mod, bps, roles))
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


# -- timed steps -------------------------------------------------------------------------


def timed_decisions(evaluator: Evaluator, calls: list[tuple[str, str, Any]], explain: bool) -> tuple[float, list[bool]]:
    authorize = evaluator.authorize
    gc.collect()
    start = perf()
    if explain:
        out = [authorize(u, op, tgt, explain=True).allowed for u, op, tgt in calls]
    else:
        out = [authorize(u, op, tgt, explain=False).allowed for u, op, tgt in calls]
    return perf() - start, out


def compact_effective(model: Model, evaluator: Evaluator, users: list[str]) -> dict[str, dict[ObjectRef, frozenset[Privilege]]]:
    eff = evaluator.effective_privileges
    role_grants = model.roles
    result: dict[str, dict[ObjectRef, frozenset[Privilege]]] = {}
    for user in users:
        objs = {g.object for role in model.roles_of(user) for g in role_grants[role]}
        result[user] = {obj: eff(user, obj) for obj in objs}
    return result


def deep_size(mapping: dict[ObjectRef, frozenset[Privilege]]) -> int:
    """Bytes of a per-user result: the dict plus its frozensets (keys and enums are shared)."""
    return sys.getsizeof(mapping) + sum(sys.getsizeof(v) for v in mapping.values())


def fmt_s(seconds: float) -> str:
    if seconds >= 3600:
        return f"{seconds / 3600:,.1f} h"
    if seconds >= 60:
        return f"{seconds / 60:,.1f} min"
    return f"{seconds:,.2f} s"


def fmt_bytes(n: float) -> str:
    for unit, size in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if n >= size:
            return f"{n / size:,.1f} {unit}"
    return f"{n:,.0f} B"


def profile(label: str, fn: Callable[[], object], top: int) -> None:
    prof = cProfile.Profile()
    prof.enable()
    fn()
    prof.disable()
    buf = io.StringIO()
    stats = pstats.Stats(prof, stream=buf).strip_dirs().sort_stats("tottime")
    stats.print_stats(top)
    section(f"cProfile: {label} (top {top} by own time)")
    lines = buf.getvalue().splitlines()
    start = next((i for i, line in enumerate(lines) if line.lstrip().startswith("ncalls")), 0)
    for line in lines[start:]:
        if line.strip():
            print("  " + line)


# -- main --------------------------------------------------------------------------------


def parse_args(argv: list[str] | None) -> tuple[Config, argparse.Namespace]:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--scale", type=float, default=1.0,
                    help="multiply every size by this (objects, roles, users, groups, pairs); default 1")
    ap.add_argument("--catalogs", type=int, default=10)
    ap.add_argument("--schemas", type=int, help="schemas per catalog (default 100*sqrt(scale))")
    ap.add_argument("--tables", type=int, help="tables per schema (default 100*sqrt(scale))")
    ap.add_argument("--roles", type=int, help="default 1000*scale")
    ap.add_argument("--users", type=int, help="default 10000*scale")
    ap.add_argument("--groups", type=int, help="default 300*scale")
    ap.add_argument("--pairs", type=int, help="random (user, table) pairs per decision run (default 200000*scale)")
    ap.add_argument("--expand-users", type=int, default=100,
                    help="users whose privileges are expanded over every table (default 100)")
    ap.add_argument("--seed", type=int, default=20240601)
    ap.add_argument("--skip-validated", action="store_true",
                    help="do not also build the model through pushdown.changes")
    ap.add_argument("--profile", action="store_true",
                    help="after the measurements, print cProfile hot spots of the evaluator")
    ap.add_argument("--profile-top", type=int, default=18)
    args = ap.parse_args(argv)
    s = args.scale
    if s <= 0:
        ap.error("--scale must be positive")
    side = max(1, round(100 * math.sqrt(s)))
    cfg = Config(
        catalogs=args.catalogs,
        schemas=args.schemas or side,
        tables=args.tables or side,
        roles=args.roles or max(5, round(1000 * s)),
        users=args.users or max(20, round(10000 * s)),
        groups=args.groups or max(3, round(300 * s)),
        pairs=args.pairs or max(2000, round(200_000 * s)),
        expand_users=args.expand_users,
        seed=args.seed,
    )
    return cfg, args


def main(argv: list[str] | None = None) -> int:
    cfg, args = parse_args(argv)
    wall0 = perf()
    section("environment")
    row("python", f"{platform.python_implementation()} {platform.python_version()}")
    row("platform", platform.platform(terse=True))
    row("cores (os.cpu_count)", os.cpu_count() or 0)
    try:
        row("cores usable by this process (sched_getaffinity)", len(os.sched_getaffinity(0)))
    except AttributeError:
        pass
    row("scale", args.scale)
    row("seed", str(cfg.seed))
    row("memory measure", "RSS" if HWM_RESETTABLE else "ru_maxrss")
    print(f"  ({MEMORY_METHOD})")

    # -- 1. build ------------------------------------------------------------------------
    section("1. model build")
    start = perf()
    plan = make_plan(cfg)
    row("generate the plan (plain data, not part of the build)", perf() - start, "s")
    with MemoryProbe() as mem:
        start = perf()
        model = build_from_events(plan)
        build_s = perf() - start
    n_tables = len(plan.tables)
    n_grants = sum(len(g) for g in model.roles.values())
    n_deny = sum(1 for g in model.roles.values() for x in g if x.condition is DENY)
    levels = {name: 0 for name in ("metalake", "catalog", "schema", "table")}
    for grants in model.roles.values():
        for g in grants:
            levels[g.object.type.value] += 1
    row("catalogs / schemas / tables", f"{len(plan.catalogs)} / {len(plan.schemas)} / {n_tables}")
    row("users / groups / roles", f"{len(model.users)} / {len(model.groups)} / {len(model.roles)}")
    row("group memberships", sum(len(m) for m in model.groups.values()))
    row("roles granted to users / to groups", f"{len(plan.user_roles)} / {len(plan.group_roles)}")
    row("roles held per user (direct + through groups), mean",
        sum(len(model.roles_of(u)) for u in plan.users) / len(plan.users))
    row("grants (role, object, privilege, condition)", n_grants)
    row("  on metalake / catalogs / schemas / tables",
        " / ".join(str(levels[k]) for k in ("metalake", "catalog", "schema", "table")))
    row("  DENY share", 100.0 * n_deny / max(1, n_grants), "%")
    row("objects carrying grants (model.by_object)", len(model.by_object))
    n_events = (len(plan.users) + len(plan.groups) + sum(len(m) for m in plan.groups.values())
                + len(plan.catalogs) + len(plan.schemas) + n_tables + 1 + len(plan.roles)
                + len(plan.grants) + len(plan.user_roles) + len(plan.group_roles))
    row("events applied", n_events)
    row("build: events built here + Model.apply (no validation)", build_s, "s")
    row("  events per second", n_events / build_s, "events/s")
    row("  peak memory during build", mem.peak_mib, "MiB")
    row("  retained after build (the model)", mem.retained_mib, "MiB")
    if not args.skip_validated:
        with MemoryProbe() as mem2:
            start = perf()
            other = build_validated(plan)
            valid_s = perf() - start
        row("build: pushdown.changes.* (validated) + Model.apply", valid_s, "s")
        row("  peak memory during build", mem2.peak_mib, "MiB")
        row("  identical to the event-built model", "yes" if same_model(model, other) else "NO")
        del other
    gc.collect()

    tables = [o for o in model.objects if o.type is T.TABLE]
    users = sorted(model.users)
    rng = random.Random(cfg.seed + 1)
    pairs = [(rng.choice(users), rng.choice(tables)) for _ in range(cfg.pairs)]
    evaluator = Evaluator(model)

    # -- 2. decisions --------------------------------------------------------------------
    section(f"2. decisions: Evaluator(model).authorize over {cfg.pairs:,} random (user, table) pairs")
    print("  (one Evaluator reused; ObjectRef targets are the model's own instances)")
    lt_ref = [(u, "load_table", t) for u, t in pairs]
    lt_str = [(u, "load_table", t.name) for u, t in pairs]
    ops = ("load_table", "alter_table", "drop_table", "create_table", "load_schema")
    mix = [
        (u, op, t.parent if op == "load_schema" else t)
        for (u, t), op in zip(pairs, (rng.choice(ops) for _ in pairs), strict=True)
    ]
    results: dict[str, list[bool]] = {}
    for label, calls, explain in (
        ("load_table, explain=False, ObjectRef target", lt_ref, False),
        ("load_table, explain=False, name string target", lt_str, False),
        ("load_table, explain=True (trace), ObjectRef target", lt_ref, True),
        ("mix of 5 operations, explain=False", mix, False),
        ("mix of 5 operations, explain=True (trace)", mix, True),
    ):
        secs, out = timed_decisions(evaluator, calls, explain)
        results[label] = out
        row(label, len(calls) / secs, "decisions/s")
        row("  mean per decision | allowed share",
            f"{secs / len(calls) * 1e6:,.1f} us | {100.0 * sum(out) / len(out):.1f}%")
    agree = results["load_table, explain=False, ObjectRef target"]
    assert agree == results["load_table, explain=False, name string target"]
    assert agree == results["load_table, explain=True (trace), ObjectRef target"]
    assert results["mix of 5 operations, explain=False"] == results["mix of 5 operations, explain=True (trace)"]
    mix_counts = {op: 0 for op in ops}
    for _, op, _ in mix:
        mix_counts[op] += 1
    print("  mix: " + ", ".join(f"{op} {n:,}" for op, n in mix_counts.items()))

    # -- 4. floor (decisions) ------------------------------------------------------------
    section("4a. floor: the same load_table decisions from bare dict lookups (inline here)")
    print("  (4 path nodes x role-set intersection over model.by_object + owner lookups)")
    eval_rate = len(pairs) / timed_decisions(evaluator, lt_ref, False)[0]
    for label, cache in (("roles resolved per call (like the evaluator)", False),
                         ("roles cached per user", True)):
        gc.collect()
        start = perf()
        floor = floor_load_table(model, pairs, cache)
        secs = perf() - start
        mismatches = sum(1 for a, b in zip(floor, agree, strict=True) if a != b)
        row(f"floor, {label}", len(pairs) / secs, "decisions/s")
        row("  evaluator (explain=False, re-measured) is slower by", (len(pairs) / secs) / eval_rate, "x")
        row("  decisions differing from the evaluator", mismatches)

    # -- 3. effective privileges ---------------------------------------------------------
    section(f"3a. effective privileges, compact form, all {len(users):,} users")
    print("  (for each user: every object with a grant for a role the user holds ->")
    print("   Evaluator.effective_privileges(user, object); all results kept in memory)")
    with MemoryProbe() as mem:
        start = perf()
        compact = compact_effective(model, evaluator, users)
        compact_s = perf() - start
    entries = sum(len(v) for v in compact.values())
    nonempty = sum(1 for v in compact.values() for p in v.values() if p)
    row("time, all users", compact_s, "s")
    row("  per user | per (user, object)",
        f"{compact_s / len(users) * 1e3:,.2f} ms | {compact_s / max(1, entries) * 1e6:,.1f} us")
    row("(user, object) entries | non-empty", f"{entries:,} | {nonempty:,}")
    row("  objects per user, mean", entries / len(users))
    row("peak memory while computing", mem.peak_mib, "MiB")
    row("retained (all results held)", mem.retained_mib, "MiB")

    section("4b. floor: the same compact effective privileges from bare dict lookups")
    gc.collect()
    start = perf()
    mismatches = 0
    role_grants = model.roles
    for user in users:
        roles = held_roles(model, user)
        objs = {g.object for role in roles for g in role_grants[role]}
        mine = compact[user]
        for obj in objs:
            if floor_effective(model, roles, obj) != mine.get(obj):
                mismatches += 1
    floor_s = perf() - start
    row("floor time, all users (roles resolved once per user)", floor_s, "s")
    row("  evaluator is slower by", compact_s / floor_s, "x")
    row("  entries differing from the evaluator", mismatches)
    del compact
    gc.collect()

    n_expand = min(cfg.expand_users, len(users))
    sample = random.Random(cfg.seed + 2).sample(users, n_expand)
    section(f"3b. effective privileges, full expansion: {n_expand} sampled users x all {n_tables:,} tables")
    print("  (Evaluator.effective_privileges(user, table) for every table; one user's result")
    print("   held at a time)")
    eff = evaluator.effective_privileges
    sizes: list[int] = []
    nonempty = 0
    with MemoryProbe() as mem:
        start = perf()
        for user in sample:
            expanded = {t: eff(user, t) for t in tables}
            nonempty += sum(1 for v in expanded.values() if v)
            sizes.append(deep_size(expanded))
            del expanded
        expand_s = perf() - start
    calls = n_expand * n_tables
    row(f"time, {n_expand} users x {n_tables:,} tables", expand_s, "s")
    row("  per user | per (user, table)",
        f"{expand_s / n_expand * 1e3:,.1f} ms | {expand_s / calls * 1e6:,.2f} us")
    row("  (user, table) pairs with a non-empty result", f"{nonempty:,} of {calls:,}")
    row("peak memory while computing (one user's result at a time)", mem.peak_mib, "MiB")
    row("one user's expansion, dict + frozensets (sys.getsizeof)", sum(sizes) / len(sizes) / 2**20, "MiB")
    all_users = len(users)
    print(f"  EXTRAPOLATED to all {all_users:,} users (linear in users, not measured):")
    row(f"  EXTRAPOLATED time, {all_users:,} users x {n_tables:,} tables",
        fmt_s(expand_s / n_expand * all_users))
    row("  EXTRAPOLATED memory to hold every user's expansion at once",
        fmt_bytes(sum(sizes) / len(sizes) * all_users))

    section("run")
    row("total wall time of this run", perf() - wall0, "s")
    row("process peak RSS (ru_maxrss)", resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, "MiB")

    if args.profile:
        n = min(len(lt_ref), 20_000)
        profile(f"{n:,} load_table decisions, explain=False",
                lambda: timed_decisions(evaluator, lt_ref[:n], False), args.profile_top)
        profile(f"{n:,} load_table decisions, explain=True",
                lambda: timed_decisions(evaluator, lt_ref[:n], True), args.profile_top)
        k = min(len(users), 200)
        profile(f"compact effective privileges, {k} users",
                lambda: compact_effective(model, evaluator, users[:k]), args.profile_top)
    return 0


if __name__ == "__main__":
    sys.exit(main())
