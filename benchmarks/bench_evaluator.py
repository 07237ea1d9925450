#!/usr/bin/env python3
"""Benchmark the privilege model and :class:`pushdown.decide.evaluator.Evaluator` at scale.

Builds a synthetic metalake (default: 10 catalogs x 100 schemas x 100 tables = 100,000
tables, 1,000 roles, 10,000 users in 300 groups, grants at every level with ~10% DENY,
roles granted to users and to groups) and measures:

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
import pickle
import platform
import pstats
import random
import resource
import sys
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from pushdown.decide import evaluator as evaluator_module
from pushdown.decide.evaluator import Evaluator
from pushdown.model import changes
from pushdown.model import events as ev
from pushdown.model.principals import Principal
from pushdown.model.privileges import SUPPORTED_ON, Condition, Privilege
from pushdown.model.securables import METALAKE, ObjectRef, SecurableType
from pushdown.model.state import Model

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
    jobs: int = 1
    #: chance that one generated grant request is a DENY; DENY requests carry one privilege
    #: and ALLOW requests 1-3, so 0.14 gives ~10% DENY among (role, object, privilege) grants
    deny_request_share: float = 0.14


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
    Owned = list[tuple[tuple[str, ...], str]]  # (name segments, owner)
    catalogs: Owned = [((c,), rng.choice(users)) for c in cats]
    schemas: Owned = [((c, f"sch{j:03d}"), rng.choice(users)) for c in cats for j in range(cfg.schemas)]
    tables: Owned = [
        ((*names, f"tbl{k:04d}"), rng.choice(users)) for names, _ in schemas for k in range(cfg.tables)
    ]
    plan = Plan(
        users, groups, catalogs, schemas, tables, users[0], [f"role{i:04d}" for i in range(cfg.roles)]
    )

    merged: dict[tuple[str, tuple[str, ...], Condition], set[Privilege]] = {}

    def grant(role: str, names: tuple[str, ...], allow: Iterable[Privilege], deny: list[Privilege]) -> None:
        if rng.random() < cfg.deny_request_share:
            cond, privs = DENY, {rng.choice(deny)}
        else:
            cond, privs = ALLOW, set(allow)
        merged.setdefault((role, names, cond), set()).update(privs)

    n_schema_grants = min(5, cfg.schemas)
    n_table_grants = min(25, cfg.schemas * cfg.tables)
    for role in plan.roles:
        home = rng.randrange(cfg.catalogs)
        if rng.random() < 0.02:
            grant(role, (), (P.USE_CATALOG, P.USE_SCHEMA, P.SELECT_TABLE), [P.MODIFY_TABLE, P.CREATE_TABLE])
        cat_ids = {home} | ({rng.randrange(cfg.catalogs)} if rng.random() < 0.3 else set())
        for c in sorted(cat_ids):
            extra = rng.sample(
                [P.USE_SCHEMA, P.SELECT_TABLE, P.CREATE_SCHEMA, P.CREATE_TABLE, P.MODIFY_TABLE],
                rng.randint(0, 2),
            )
            grant(
                role,
                (cats[c],),
                (P.USE_CATALOG, *extra),
                [P.USE_CATALOG, P.USE_SCHEMA, P.SELECT_TABLE, P.MODIFY_TABLE, P.CREATE_TABLE],
            )
        my_schemas = rng.sample(range(cfg.schemas), n_schema_grants)
        for s in my_schemas:
            extra = rng.sample([P.SELECT_TABLE, P.CREATE_TABLE, P.MODIFY_TABLE], rng.randint(0, 2))
            grant(
                role,
                (cats[home], f"sch{s:03d}"),
                (P.USE_SCHEMA, *extra),
                [P.USE_SCHEMA, P.SELECT_TABLE, P.MODIFY_TABLE],
            )
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
    """Build the same model through pushdown.model.changes (every request validated)."""
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
        a.users == b.users
        and a.groups == b.groups
        and a.roles == b.roles
        and dict(a.user_roles) == dict(b.user_roles)
        and dict(a.group_roles) == dict(b.group_roles)
        and a.owners == b.owners
        and a.objects == b.objects
        and a.by_object == b.by_object
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
            append(
                own_m
                or own_c
                or own_s
                or owners.get(t) == user
                or holds(sel, bps, roles)
                or holds(mod, bps, roles)
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


# -- timing helpers ----------------------------------------------------------------------


class Clock:
    """Wall (perf_counter) and CPU (process_time) seconds of one step."""

    def __enter__(self) -> Clock:
        gc.collect()
        self.wall0, self.cpu0 = perf(), time.process_time()
        return self

    def __exit__(self, *exc: object) -> None:
        self.wall = perf() - self.wall0
        self.cpu = time.process_time() - self.cpu0


def timed_decisions(
    evaluator: Evaluator, calls: list[tuple[str, str, Any]], explain: bool
) -> tuple[Clock, list[bool]]:
    authorize = evaluator.authorize
    with Clock() as clock:
        if explain:
            out = [authorize(u, op, tgt, explain=True).allowed for u, op, tgt in calls]
        else:
            out = [authorize(u, op, tgt, explain=False).allowed for u, op, tgt in calls]
    return clock, out


def compact_effective(
    model: Model, evaluator: Evaluator, users: list[str], per_user: list[float] | None = None
) -> dict[str, dict[ObjectRef, frozenset[Privilege]]]:
    """Each user -> {object with a grant for a role the user holds: effective privileges}."""
    eff = evaluator.effective_privileges
    role_grants = model.roles
    result: dict[str, dict[ObjectRef, frozenset[Privilege]]] = {}
    for user in users:
        start = perf()
        objs = {g.object for role in model.roles_of(user) for g in role_grants[role]}
        result[user] = {obj: eff(user, obj) for obj in objs}
        if per_user is not None:
            per_user.append(perf() - start)
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


def run_forked(fn: Callable[[list[str]], dict[str, Any]], chunks: list[list[str]]) -> list[dict[str, Any]]:
    """Run ``fn(chunk)`` in one forked child per chunk (the model is shared copy-on-write)."""
    if len(chunks) == 1 or not hasattr(os, "fork"):
        return [fn(chunk) for chunk in chunks]
    children = []
    for chunk in chunks:
        read_fd, write_fd = os.pipe()
        pid = os.fork()
        if pid == 0:  # child
            os.close(read_fd)
            code = 0
            try:
                payload = pickle.dumps(fn(chunk))
            except BaseException as exc:  # report, never fall through into the parent's code
                payload, code = pickle.dumps(RuntimeError(f"worker failed: {exc!r}")), 1
            with os.fdopen(write_fd, "wb") as fh:
                fh.write(payload)
            os._exit(code)
        os.close(write_fd)
        children.append((pid, read_fd))
    results = []
    for pid, read_fd in children:
        with os.fdopen(read_fd, "rb") as fh:
            result = pickle.loads(fh.read())
        os.waitpid(pid, 0)
        if isinstance(result, BaseException):
            raise result
        results.append(result)
    return results


def objects_size(values: Iterable[object]) -> int:
    """sys.getsizeof summed over distinct objects (a shared frozenset counts once)."""
    return sum(sys.getsizeof(v) for v in {id(v): v for v in values}.values())


def deep_size(mapping: dict[ObjectRef, frozenset[Privilege]]) -> int:
    """Bytes of a per-user result: the dict plus its frozenset objects (keys and enums are shared)."""
    return sys.getsizeof(mapping) + objects_size(mapping.values())


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


def loadavg() -> str:
    try:
        return " ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        return "n/a"


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
    ap = argparse.ArgumentParser(
        description=(__doc__ or "").split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument(
        "--scale",
        type=float,
        default=1.0,
        help="multiply every size by this (objects, roles, users, groups, pairs); default 1",
    )
    ap.add_argument("--catalogs", type=int, default=10)
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
    ap.add_argument("--seed", type=int, default=20240601)
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
        jobs=max(1, args.jobs),
    )
    return cfg, args


def main(argv: list[str] | None = None) -> int:
    cfg, args = parse_args(argv)
    wall0, cpu0 = perf(), time.process_time()
    section("environment")
    row("python", f"{platform.python_implementation()} {platform.python_version()}")
    row("platform", platform.platform(terse=True))
    row("cores (os.cpu_count)", os.cpu_count() or 0)
    if hasattr(os, "sched_getaffinity"):
        row("cores usable by this process (sched_getaffinity)", len(os.sched_getaffinity(0)))
    row("load average at start (1/5/15 min)", loadavg())
    row("pushdown.decide.evaluator imported from", os.path.dirname(evaluator_module.__file__ or "?"))
    row("scale", args.scale)
    row("seed", str(cfg.seed))
    row("memory measure", "RSS" if HWM_RESETTABLE else "ru_maxrss")
    print(f"  ({MEMORY_METHOD})")
    print("  (times: wall = perf_counter, cpu = process_time of this process; rates use wall)")

    # -- 1. build ------------------------------------------------------------------------
    section("1. model build")
    with Clock() as clock:
        plan = make_plan(cfg)
    row("generate the plan (plain data, not part of the build)", clock.wall, "s")
    with MemoryProbe() as mem, Clock() as clock:
        model = build_from_events(plan)
    n_tables = len(plan.tables)
    n_grants = sum(len(g) for g in model.roles.values())
    n_deny = sum(1 for g in model.roles.values() for x in g if x.condition is DENY)
    levels = dict.fromkeys(("metalake", "catalog", "schema", "table"), 0)
    for grants in model.roles.values():
        for g in grants:
            levels[g.object.type.value] += 1
    row("catalogs / schemas / tables", f"{len(plan.catalogs)} / {len(plan.schemas)} / {n_tables}")
    row("users / groups / roles", f"{len(model.users)} / {len(model.groups)} / {len(model.roles)}")
    row("group memberships", sum(len(m) for m in model.groups.values()))
    row("roles granted to users / to groups", f"{len(plan.user_roles)} / {len(plan.group_roles)}")
    row(
        "roles held per user (direct + through groups), mean",
        sum(len(model.roles_of(u)) for u in plan.users) / len(plan.users),
    )
    row("grant requests (role, object, privileges, condition)", len(plan.grants))
    row("grants (role, object, privilege, condition)", n_grants)
    row(
        "  on metalake / catalogs / schemas / tables",
        " / ".join(str(levels[k]) for k in ("metalake", "catalog", "schema", "table")),
    )
    row("  DENY share of grants", 100.0 * n_deny / max(1, n_grants), "%")
    row("objects carrying grants (model.by_object)", len(model.by_object))
    n_events = (
        len(plan.users)
        + len(plan.groups)
        + sum(len(m) for m in plan.groups.values())
        + len(plan.catalogs)
        + len(plan.schemas)
        + n_tables
        + 1
        + len(plan.roles)
        + len(plan.grants)
        + len(plan.user_roles)
        + len(plan.group_roles)
    )
    row("events applied", n_events)
    row("build A: events built here + Model.apply (no validation)", clock.wall, "s wall")
    row("  cpu", clock.cpu, "s cpu")
    row("  events per second", n_events / clock.wall, "events/s")
    row("  peak memory during build", mem.peak_mib, "MiB")
    row("  retained after build (the model)", mem.retained_mib, "MiB")
    if not args.skip_validated:
        with MemoryProbe() as mem2, Clock() as clock:
            other = build_validated(plan)
        row("build B: pushdown.model.changes.* (validated) + Model.apply", clock.wall, "s wall")
        row("  cpu", clock.cpu, "s cpu")
        row("  peak memory during build (model A still held)", mem2.peak_mib, "MiB")
        row("  identical to the model of build A", "yes" if same_model(model, other) else "NO")
        del other
    gc.collect()

    tables = [o for o in model.objects if o.type is T.TABLE]
    users = sorted(model.users)
    with Clock() as clock:
        for t in tables:  # ObjectRef.path / .parent are cached properties
            _ = t.path
    row("setup: warm ObjectRef.path of every table (cached_property)", clock.wall, "s")
    rng = random.Random(cfg.seed + 1)
    pairs = [(rng.choice(users), rng.choice(tables)) for _ in range(cfg.pairs)]
    evaluator = Evaluator(model)

    # -- 2. decisions --------------------------------------------------------------------
    section(f"2. decisions: Evaluator(model).authorize over {cfg.pairs:,} random (user, table) pairs")
    print("  (one Evaluator reused unless said; ObjectRef targets are the model's own instances, paths warm;")
    print("   name targets are parsed into a fresh ObjectRef by every call)")
    lt_ref = [(u, "load_table", t) for u, t in pairs]
    n_extra = min(len(pairs), max(2000, len(pairs) // 4))
    lt_str = [(u, "load_table", t.name) for u, t in pairs[:n_extra]]
    ops = ("load_table", "alter_table", "drop_table", "create_table", "load_schema")
    mix = [
        (u, op, t.parent if op == "load_schema" else t)
        for (u, t), op in zip(pairs, (rng.choice(ops) for _ in pairs), strict=True)
    ]
    results: dict[str, list[bool]] = {}
    clocks: dict[str, Clock] = {}
    for label, calls, explain in (
        ("load_table, explain=False, ObjectRef target", lt_ref, False),
        (f"load_table, explain=False, name string target ({n_extra:,} pairs)", lt_str, False),
        ("load_table, explain=True (trace), ObjectRef target", lt_ref, True),
        ("mix of 5 operations, explain=False", mix, False),
        ("mix of 5 operations, explain=True (trace)", mix, True),
    ):
        clock, out = timed_decisions(evaluator, calls, explain)
        results[label], clocks[label] = out, clock
        row(label, len(calls) / clock.wall, "decisions/s")
        row(
            "  per decision wall | cpu | allowed share",
            f"{clock.wall / len(calls) * 1e6:,.1f} us | {clock.cpu / len(calls) * 1e6:,.1f} us"
            f" | {100.0 * sum(out) / len(out):.1f}%",
        )
    with Clock() as clock:
        fresh = [Evaluator(model).authorize(u, op, t, explain=False).allowed for u, op, t in lt_ref[:n_extra]]
    row(
        f"load_table, explain=False, new Evaluator(model) per call ({n_extra:,} pairs)",
        len(fresh) / clock.wall,
        "decisions/s",
    )
    row(
        "  per decision wall | cpu",
        f"{clock.wall / len(fresh) * 1e6:,.1f} us | {clock.cpu / len(fresh) * 1e6:,.1f} us",
    )
    eval_clock = clocks["load_table, explain=False, ObjectRef target"]
    agree = results["load_table, explain=False, ObjectRef target"]
    consistent = (
        agree[:n_extra] == fresh
        and agree[:n_extra] == results[f"load_table, explain=False, name string target ({n_extra:,} pairs)"]
        and agree == results["load_table, explain=True (trace), ObjectRef target"]
        and results["mix of 5 operations, explain=False"]
        == results["mix of 5 operations, explain=True (trace)"]
    )
    row("same decisions with and without explain / for ObjectRef and name", "yes" if consistent else "NO")
    mix_counts = dict.fromkeys(ops, 0)
    for _, op, _ in mix:
        mix_counts[op] += 1
    print("  mix: " + ", ".join(f"{op} {n:,}" for op, n in mix_counts.items()))

    # -- 4. floor (decisions) ------------------------------------------------------------
    section("4a. floor: the same load_table decisions from bare dict lookups (inline here)")
    print("  (4 path nodes x role-set intersection over model.by_object + owner lookups;")
    print("   compared with the evaluator's first run of section 2 on the same pairs)")
    for label, cache in (
        ("roles resolved per call", False),
        ("roles cached per user (as Evaluator does)", True),
    ):
        with Clock() as clock:
            floor = floor_load_table(model, pairs, cache)
        mismatches = sum(1 for a, b in zip(floor, agree, strict=True) if a != b)
        row(f"floor, {label}", len(pairs) / clock.wall, "decisions/s")
        row(
            "  evaluator / floor, wall | cpu",
            f"{eval_clock.wall / clock.wall:,.1f}x | {eval_clock.cpu / clock.cpu:,.1f}x",
        )
        row("  decisions differing from the evaluator", mismatches)

    # -- 3. effective privileges ---------------------------------------------------------
    section(f"3a. effective privileges, compact form, all {len(users):,} users")
    print("  (for each user: every object with a grant for a role the user holds ->")
    print("   Evaluator.effective_privileges(user, object); all results kept in memory)")
    per_user: list[float] = []
    with MemoryProbe() as mem, Clock() as clock:
        compact = compact_effective(model, evaluator, users, per_user)
    entries = sum(len(v) for v in compact.values())
    values = [p for v in compact.values() for p in v.values()]
    nonempty = sum(1 for p in values if p)
    distinct = set(values)
    row("time, all users", clock.wall, "s wall")
    row("  cpu", clock.cpu, "s cpu")
    row(
        "  per user | per (user, object), wall",
        f"{clock.wall / len(users) * 1e3:,.2f} ms | {clock.wall / max(1, entries) * 1e6:,.1f} us",
    )
    row("(user, object) entries | non-empty", f"{entries:,} | {nonempty:,}")
    row("  objects per user, mean", entries / len(users))
    row("peak memory while computing", mem.peak_mib, "MiB")
    row("retained (all results held)", mem.retained_mib, "MiB")
    row("  of which frozenset objects (sys.getsizeof)", fmt_bytes(objects_size(values)))
    row(
        "  distinct privilege sets (by value) among the entries | their bytes",
        f"{len(distinct):,} | {fmt_bytes(sum(map(sys.getsizeof, distinct)))}",
    )
    del values, distinct

    n_floor = min(len(users), args.floor_users or max(100, len(users) // 10))
    floor_users = users[:n_floor]
    section(f"4b. floor: the same compact effective privileges from bare dict lookups ({n_floor:,} users)")
    print(f"  (the first {n_floor:,} users of 3a; the evaluator time is their share of 3a)")
    mismatches = 0
    role_grants = model.roles
    with Clock() as clock:
        for user in floor_users:
            roles = held_roles(model, user)
            objs = {g.object for role in roles for g in role_grants[role]}
            mine = compact[user]
            for obj in objs:
                if floor_effective(model, roles, obj) != mine.get(obj):
                    mismatches += 1
    eval_s = sum(per_user[:n_floor])
    row("floor time (roles resolved once per user)", clock.wall, "s wall")
    row("evaluator time for the same users (from 3a)", eval_s, "s wall")
    row("  evaluator / floor", eval_s / clock.wall, "x")
    row("  entries differing from the evaluator", mismatches)
    del compact
    gc.collect()

    n_expand = min(cfg.expand_users, len(users))
    sample = random.Random(cfg.seed + 2).sample(users, n_expand)
    jobs = max(1, min(cfg.jobs, n_expand))
    section(f"3b. effective privileges, full expansion: {n_expand} sampled users x all {n_tables:,} tables")
    print("  (Evaluator.effective_privileges(user, table) for every table; each worker holds one")
    print(f"   user's result at a time; {jobs} forked worker process(es), users split between them)")
    chunks = [sample[i::jobs] for i in range(jobs)]
    with Clock() as clock:
        parts = run_forked(lambda chunk: expand_users(evaluator, tables, chunk), chunks)
    calls = sum(p["calls"] for p in parts)
    cpu = sum(p["cpu"] for p in parts)
    size = sum(p["bytes"] for p in parts) / n_expand
    row(f"time, {n_expand} users x {n_tables:,} tables, {jobs} worker(s)", clock.wall, "s wall")
    row("  cpu, summed over workers", cpu, "s cpu")
    row(
        "  per user | per (user, table), cpu", f"{cpu / n_expand * 1e3:,.1f} ms | {cpu / calls * 1e6:,.2f} us"
    )
    row(
        "  (user, table) pairs with a non-empty result", f"{sum(p['nonempty'] for p in parts):,} of {calls:,}"
    )
    row("  distinct privilege sets among them", len(set().union(*(p["distinct"] for p in parts))))
    row(
        "peak RSS growth per worker (one user's result at a time), max",
        max(p["peak_mib"] for p in parts),
        "MiB",
    )
    print("  (RSS growth can read low here: workers reuse memory the parent freed after 3a)")
    row("one user's expansion, dict + frozensets (sys.getsizeof)", fmt_bytes(size))
    print(f"  EXTRAPOLATED to all {len(users):,} users (linear in users; not measured):")
    row(
        f"  EXTRAPOLATED cpu time, {len(users):,} users x {n_tables:,} tables",
        fmt_s(cpu / n_expand * len(users)),
    )
    row(f"  EXTRAPOLATED wall time on {jobs} worker(s)", fmt_s(cpu / n_expand * len(users) / jobs))
    row("  EXTRAPOLATED memory to hold every user's expansion at once", fmt_bytes(size * len(users)))

    section("run")
    row("total wall time of this run", perf() - wall0, "s")
    row("cpu time of this process (workers excluded)", time.process_time() - cpu0, "s")
    row("process peak RSS (ru_maxrss)", resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, "MiB")
    row("load average at end (1/5/15 min)", loadavg())

    if args.profile:
        n = min(len(lt_ref), 20_000)
        profile(
            f"{n:,} load_table decisions, explain=False",
            lambda: timed_decisions(evaluator, lt_ref[:n], False),
            args.profile_top,
        )
        profile(
            f"{n:,} load_table decisions, explain=True",
            lambda: timed_decisions(evaluator, lt_ref[:n], True),
            args.profile_top,
        )
        k = min(len(users), 200)
        profile(
            f"compact effective privileges, {k} users",
            lambda: compact_effective(model, evaluator, users[:k]),
            args.profile_top,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
