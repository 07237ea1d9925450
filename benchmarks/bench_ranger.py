#!/usr/bin/env python3
"""Benchmark the Ranger backend against a Ranger Admin stand-in: REST calls and time for a
full sync of an estate and for single model changes, against the per-privilege shape.

The estate (at ``--scale 1``: 1,000 roles held by 1,000 users, 100 Hive databases x 100
tables = 10,000 tables; roles and users linearly, databases and tables with the square
root of the scale): role ``r<i>`` has USE_CATALOG on the catalog, USE_SCHEMA and
SELECT_TABLE on three databases, MODIFY_TABLE on the first, and every tenth one a DENY of
SELECT_TABLE and MODIFY_TABLE on one table of the first; user ``u<i>`` holds ``r<i>``,
every tenth user also the next role.

The floor is the per-privilege shape (Gravitino's Ranger plugin), run in the same process
against a second stand-in: every role created with its members, then for every privilege
and each resource set it maps to (a database: ``db`` for USE_SCHEMA; ``db.*`` and
``db.*.*`` for a table privilege on a database; ``db.t`` and ``db.t.*`` on a table) one
search for the policy, then one update of it (or a create when there is none).

1. a full sync of the estate: pushdown's REST calls (reads, writes), the writes per
   changed policy or role (goal <= 1), time; the floor's calls and time; the ratio of
   calls (goal: >= 10x fewer, i.e. <= 0.10x);
2. single model changes on the synced estate, each as pushdown syncs it (the scope its
   events name) and as the per-privilege shape pushes it: calls, writes and time;
   then commit -> enforced over 50 one-table grants and 10 role memberships (p50, p99;
   goals <= 50 ms, <= 250 ms): the change applied, synced over its scope, and the
   stand-in's engine asked until it allows it (the rest after the sync is the stand-in
   building its engine from the changed policies); Ranger 2.9's engine (the lab's judge)
   is asked the same questions at the end; the floor of each change is the GETs its sync
   made (the version check), made again bare against the same stand-in (``--growth``:
   the estate 100x smaller first, then the growth of both, change and floor);
3. a no-op sync: its calls (goal: the one version check: the services' policy versions
   and the role version, answered 304) and writes (0).
"""

from __future__ import annotations

import base64
import gc
import http.client
import json
import math
import sys
import time
import urllib.parse
from collections.abc import Callable
from typing import Any

from harness import cli
from harness.clock import Clock
from harness.report import Report
from pushdown_lab.ranger_standin import Standin
from pushdown_ranger.backend import RangerBackend

from pushdown.host.plugins import Hooks
from pushdown.model import changes as ch
from pushdown.model import events as ev
from pushdown.model.principals import Principal
from pushdown.model.privileges import Condition
from pushdown.model.securables import ObjectRef, SecurableType
from pushdown.model.state import Model
from pushdown.reconcile.backend import BackendContext
from pushdown.reconcile.scope import Scope, scope_of
from pushdown.reconcile.sync import reconcile

T = SecurableType
Grant = tuple[str, ObjectRef, str, Condition]
ACCESS = {"USE_SCHEMA": ["select"], "SELECT_TABLE": ["select"], "MODIFY_TABLE": ["update", "alter"]}


def sizes(scale: float, issue: bool = False) -> tuple[int, int, int]:
    """(Hive databases, tables in each, roles = users); ``issue``: issue 30's estate at
    scale 1 (10,000 users and roles, 100 databases x 1,000 tables = 100,000 tables)."""
    side = max(5, round(100 * math.sqrt(scale)))
    if issue:
        return side, max(5, round(1000 * math.sqrt(scale))), max(4, round(10000 * scale))
    return side, side, max(4, round(1000 * scale))


def apply(model: Model, events: list[ev.Event]) -> list[ev.Event]:
    for event in events:
        model.apply(event)
    return events


def estate(scale: float, issue: bool = False) -> tuple[Model, list[Grant]]:
    schemas, tables, roles = sizes(scale, issue)
    m = Model()
    catalog = ObjectRef(T.CATALOG, ("c",))
    apply(m, ch.create_object(m, catalog, None, {"backend": "rg"}))
    for s in range(schemas):
        apply(m, ch.create_object(m, ObjectRef(T.SCHEMA, ("c", f"s{s}")), None, None))
        for t in range(tables):
            apply(m, ch.create_object(m, ObjectRef(T.TABLE, ("c", f"s{s}", f"t{t}")), None, None))
    grants: list[Grant] = []
    for i in range(roles):
        role, user = f"r{i}", f"u{i}"
        apply(m, ch.add_user(m, user))
        apply(m, ch.create_role(m, role))
        mine = [ObjectRef(T.SCHEMA, ("c", f"s{(i + k) % schemas}")) for k in range(3)]
        grants.append((role, catalog, "USE_CATALOG", Condition.ALLOW))
        grants += [(role, s, p, Condition.ALLOW) for s in mine for p in ("USE_SCHEMA", "SELECT_TABLE")]
        grants.append((role, mine[0], "MODIFY_TABLE", Condition.ALLOW))
        if i % 10 == 0:
            table = ObjectRef(T.TABLE, (*mine[0].names, f"t{i % tables}"))
            grants += [(role, table, p, Condition.DENY) for p in ("SELECT_TABLE", "MODIFY_TABLE")]
    for role, obj, privilege, condition in grants:
        apply(m, ch.grant_privileges(m, role, obj, [privilege], condition))
    for i in range(roles):
        apply(m, ch.grant_role(m, f"r{i}", Principal.user(f"u{i}")))
        if i % 10 == 0:
            apply(m, ch.grant_role(m, f"r{(i + 1) % roles}", Principal.user(f"u{i}")))
    return m, grants


def standin() -> Standin:
    ranger = Standin().start()
    for service in ("hive", "hdfs", "kafka"):
        ranger.create_service(service, service)
    return ranger


def backend_on(ranger: Standin) -> RangerBackend:
    user, password = ranger.auth
    settings = {"url": ranger.url, "user": user}
    # the context AccessControl.open gives a backend: the principal mapping through the
    # plugins' hook (kept across syncs while no plugin implements it, as in a deployment)
    hooks = Hooks.load()
    return RangerBackend(
        BackendContext(
            "rg",
            settings,
            secret=lambda k: password if k == "password" else None,
            map_principal=lambda p: hooks.map_principal("rg", p),
            mapping_version=hooks.mapping_version,
            mapping_stable=hooks.mapping_stable,
        )
    )


def calls(ranger: Standin) -> tuple[int, int]:
    """(reads, writes) served since the last reset."""
    log = ranger.request_log
    reads = sum(1 for m, _, _ in log if m == "GET")
    return reads, len(log) - reads


# -- the per-privilege shape --------------------------------------------------------------


class PerPrivilege:
    """Gravitino's way: for every privilege, search the policy of each resource set, then update it."""

    def __init__(self, ranger: Standin) -> None:
        self.backend = backend_on(ranger)  # only for its client (the same retries and counters)
        self.api = self.backend.api

    def roles(self, model: Model, only: tuple[str, ...] | None = None) -> None:
        for role in sorted(model.roles) if only is None else only:
            users = [{"name": u, "isAdmin": False} for u in sorted(model.role_users.get(role, ()))]
            self.api.create_role("hive", {"name": role, "users": users, "groups": [], "roles": []})

    def grant(self, role: str, obj: ObjectRef, privilege: str, condition: Condition) -> None:
        for resources in resource_sets(obj, privilege):
            self.push(role, resources, ACCESS[privilege], condition is Condition.DENY)

    def push(self, role: str, resources: dict[str, str], accesses: list[str], deny: bool) -> None:
        query = {"serviceName": "hive", **{f"resource:{k}": v for k, v in resources.items()}}
        found = [
            p for p in self.api.call("search policy", lambda: self.api.client.find_policies(query)) or []
        ]
        same = [p for p in found if set(p["resources"]) == set(resources)]
        item = {"accesses": [{"type": a, "isAllowed": True} for a in accesses], "roles": [role]}
        field = "denyPolicyItems" if deny else "policyItems"
        if same:
            policy = dict(same[0])
            policy[field] = [*(policy.get(field) or []), item]
            self.api.update_policy(int(policy["id"]), policy)
        else:
            name = "per-privilege " + ",".join(f"{k}={v}" for k, v in sorted(resources.items()))
            body = {"service": "hive", "name": name, field: [item]}
            body["resources"] = {k: {"values": [v]} for k, v in resources.items()}
            self.api.create_policy(body)


def resource_sets(obj: ObjectRef, privilege: str) -> list[dict[str, str]]:
    if privilege == "USE_CATALOG":
        return []  # no Hive resource: the per-privilege shape pushes nothing for it
    if obj.type is T.SCHEMA:
        db = obj.names[1]
        if privilege == "USE_SCHEMA":
            return [{"database": db}]
        return [{"database": db, "table": "*"}, {"database": db, "table": "*", "column": "*"}]
    db, table = obj.names[1], obj.names[2]
    return [{"database": db, "table": table}, {"database": db, "table": table, "column": "*"}]


# -- the run ----------------------------------------------------------------------------


def timed(fn: Callable[[], Any]) -> tuple[Any, float]:
    with Clock() as clock:
        out = fn()
    return out, clock.wall


def main() -> int:
    parser = cli.parser(__doc__)
    parser.add_argument(
        "--issue-estate",
        action="store_true",
        help="issue 30's estate at --scale 1: 10,000 users and roles, 100 x 1,000 = 100,000 tables"
        " (the per-privilege shape pushes section 2's changes only: the estate takes minutes)",
    )
    parser.add_argument(
        "--gc-freeze",
        action="store_true",
        help="gc.freeze() after the full sync (as a daemon may after loading its model): the"
        " cyclic collector then no longer walks the estate's objects on every collection",
    )
    parser.add_argument(
        "--growth",
        action="store_true",
        help="run the estate 100x smaller first (--scale / 100), in the same process, and print"
        " the growth of commit -> enforced and of its floor (the sync's reads, bare) between them",
    )
    args = parser.parse_args()
    with Report("ranger", args) as report:
        scales = [args.scale / 100, args.scale] if args.growth else [args.scale]
        found = {s: _one_estate(report, args, s) for s in scales}
        if args.growth:
            _growth(report, found[scales[0]], found[scales[1]], scales)
    return 0


def _one_estate(report: Report, args: Any, scale: float) -> dict[str, dict[str, float]]:
    schemas, tables, roles = sizes(scale, args.issue_estate)
    t0 = time.perf_counter()
    model, grants = estate(scale, args.issue_estate)
    report.section(f"the estate (scale {scale:g})")
    report.row("Hive databases x tables", f"{schemas} x {tables}")
    report.row("tables", schemas * tables)
    report.row("roles (each held by one or two of as many users)", roles)
    report.row("privileges granted", len(grants))
    report.row("model built in", time.perf_counter() - t0, "s")
    ours, floor = standin(), standin()
    try:
        return run(report, model, grants, ours, floor, args.gc_freeze, whole_floor=not args.issue_estate)
    finally:
        ours.stop()
        floor.stop()
        if args.gc_freeze:
            gc.unfreeze()


def _growth(
    report: Report,
    small: dict[str, dict[str, float]],
    large: dict[str, dict[str, float]],
    scales: list[float],
) -> None:
    """Each change's p50 and p99 at both scales, its growth, and the floor's (the same reads
    made bare against the same stand-in) with its growth: what of the growth is the server's."""
    report.section(f"growth from scale {scales[0]:g} to {scales[1]:g} (goal <= 1.5x)")
    for label in small:
        a, b = small[label], large[label]
        for key in ("p50", "p99", "sync p50", "sync cpu p50", "floor p50", "floor p99"):
            report.row(
                f"{label}: {key}, scale {scales[0]:g} -> {scales[1]:g}", f"{a[key]:.2f} -> {b[key]:.2f}", "ms"
            )
        report.ratio(f"{label}: growth of the p50 (goal <= 1.5x)", b["p50"], a["p50"], 1.5)
        report.ratio(f"{label}: growth of the sync's p50", b["sync p50"], a["sync p50"])
        report.ratio(
            f"{label}: growth of the sync's cpu p50 (load aside)", b["sync cpu p50"], a["sync cpu p50"]
        )
        report.ratio(
            f"{label}: growth of the floor's p50 (the server's reads, bare)", b["floor p50"], a["floor p50"]
        )
        report.row(
            f"{label}: p50 less the floor's p50, scale {scales[0]:g} -> {scales[1]:g}",
            f"{a['p50'] - a['floor p50']:.2f} -> {b['p50'] - b['floor p50']:.2f}",
            "ms",
        )


def run(
    report: Report,
    model: Model,
    grants: list[Grant],
    ours: Standin,
    floor: Standin,
    freeze: bool = False,
    whole_floor: bool = True,
) -> dict[str, dict[str, float]]:
    """The three sections; ``whole_floor`` False: the per-privilege shape pushes only the
    single changes of section 2 (its role created first), not the estate; ``freeze``: the
    objects alive after the full sync are moved out of the cyclic collector's reach."""
    backend = backend_on(ours)
    report.section("1. a full sync of the estate")
    ours.reset_log()
    (plan, _), wall = timed(lambda: reconcile(backend, model, Scope.everything()))
    reads, writes = calls(ours)
    report.row("pushdown: roles and policies to write (plan operations)", len(plan.ops))
    report.row("pushdown: REST reads", reads)
    report.row("pushdown: REST writes", writes)
    report.row("pushdown: writes per changed policy or role (goal <= 1)", writes / max(1, len(plan.ops)))
    report.row("pushdown: full sync (read, compile, apply, read back)", wall, "s")
    if whole_floor:
        _per_privilege_estate(report, model, grants, floor, reads + writes, wall)
    else:
        PerPrivilege(floor).roles(model, only=("r1",))
        report.note("the per-privilege shape is not run over the estate (minutes at this size)")
    report.row("gc.freeze() after the full sync", freeze)
    if freeze:
        gc.collect()
        gc.freeze()
    changed(report, model, ours, backend, floor)
    found = enforced(report, model, backend, ours)

    report.section("3. a no-op sync")
    ours.reset_log()
    (plan, _), wall = timed(lambda: reconcile(backend, model, Scope.everything()))
    reads, writes = calls(ours)
    report.row("no-op full sync: REST reads (goal: the version check, 2)", reads)
    report.row("no-op full sync: REST writes (goal 0)", writes)
    report.row("no-op full sync: time (the compile is local)", wall, "s")
    report.row("no-op full sync: plan operations", len(plan.ops))
    return found


def _per_privilege_estate(
    report: Report, model: Model, grants: list[Grant], floor: Standin, ours: int, wall: float
) -> None:
    naive = PerPrivilege(floor)
    floor.reset_log()
    _, floor_wall = timed(lambda: (naive.roles(model), [naive.grant(*g) for g in grants]))
    f_reads, f_writes = calls(floor)
    report.row("per-privilege shape: REST reads (searches)", f_reads)
    report.row("per-privilege shape: REST writes", f_writes)
    report.floor("per-privilege shape: REST calls", f_reads + f_writes, "calls")
    report.row("per-privilege shape: time", floor_wall, "s")
    report.ratio("pushdown's calls over the per-privilege shape's (goal <= 0.10x)", ours, f_reads + f_writes)
    report.ratio("pushdown's time over the per-privilege shape's", wall, floor_wall)


def changed(
    report: Report, model: Model, ours: Standin, backend: RangerBackend, floor: Standin | None
) -> None:
    report.section("2. single model changes, each synced over the scope its events name")
    role = "r1"  # it reads databases s1, s2 and s3: the changes are about s4
    table = ObjectRef(T.TABLE, ("c", "s4", "t0"))
    schema = ObjectRef(T.SCHEMA, ("c", "s4"))
    apply(model, ch.add_user(model, "newcomer"))
    changes: list[tuple[str, Callable[[], list[ev.Event]], Grant | None]] = [
        (
            "ALLOW USE_SCHEMA on a database to a role (nothing to read there yet)",
            lambda: ch.grant_privileges(model, role, schema, ["USE_SCHEMA"], Condition.ALLOW),
            (role, schema, "USE_SCHEMA", Condition.ALLOW),
        ),
        (
            "ALLOW SELECT_TABLE on a table to a role",
            lambda: ch.grant_privileges(model, role, table, ["SELECT_TABLE"], Condition.ALLOW),
            (role, table, "SELECT_TABLE", Condition.ALLOW),
        ),
        (
            "DENY SELECT_TABLE on a table to a role",
            lambda: ch.grant_privileges(model, role, table, ["SELECT_TABLE"], Condition.DENY),
            (role, table, "SELECT_TABLE", Condition.DENY),
        ),
        (
            "ALLOW SELECT_TABLE on a database to a role",
            lambda: ch.grant_privileges(model, role, schema, ["SELECT_TABLE"], Condition.ALLOW),
            (role, schema, "SELECT_TABLE", Condition.ALLOW),
        ),
        (
            "grant a role to one more user",
            lambda: ch.grant_role(model, role, Principal.user("newcomer")),
            None,
        ),
    ]
    total = [0, 0]
    naive = PerPrivilege(floor)
    for label, change, grant in changes:
        events = apply(model, change())
        scope = Scope.union(scope_of(e) for e in events)
        ours.reset_log()
        (plan, _), wall = timed(lambda: reconcile(backend, model, scope))  # noqa: B023 - run at once
        reads, writes = calls(ours)
        report.row(f"{label}: pushdown calls (reads + writes)", f"{reads} + {writes}")
        report.row(f"{label}: pushdown policies or roles changed", len(plan.ops))
        report.row(f"{label}: pushdown time", wall, "s")
        floor.reset_log()
        if grant is not None:
            _, f_wall = timed(lambda: naive.grant(*grant))  # noqa: B023 - run at once
        elif label.startswith("grant a role"):
            _, f_wall = timed(
                lambda: naive.api.grant_role("hive", {"targetRoles": [role], "users": ["newcomer"]})
            )
        else:
            raise AssertionError(label)
        f_reads, f_writes = calls(floor)
        report.row(f"{label}: per-privilege calls (reads + writes)", f"{f_reads} + {f_writes}")
        report.row(f"{label}: per-privilege time", f_wall, "s")
        total[0] += reads + writes
        total[1] += f_reads + f_writes
    report.floor("per-privilege shape: calls for the changes", total[1], "calls")
    report.ratio("pushdown's calls for the changes over the per-privilege shape's", total[0], total[1])
    report.note(
        "pushdown's calls per change include the version check before and after (2 + 2 GETs): the",
        "read-back that proves the change landed; the per-privilege shape never reads back",
    )


#: changes timed from commit to enforced (the issue-30 goals: p50 <= 50 ms, p99 <= 250 ms)
GRANTS, MEMBERSHIPS = 50, 10


def enforced(
    report: Report, model: Model, backend: RangerBackend, ours: Standin
) -> dict[str, dict[str, float]]:
    """Commit -> enforced: each change applied to the model, synced over its scope, then the
    stand-in's engine asked until it answers as the model now does (the policy it serves);
    at the end Ranger 2.9's own engine (the lab's judge) is asked the same questions."""
    schemas, tables, roles = sizes_of(model)
    # roles held by one user only, with no DENY: r<i> for i % 10 not in (0, 1)
    picks = [i for i in range(roles) if i % 10 not in (0, 1)]
    asked: list[tuple[dict[str, str], str, str]] = []
    grant_times: list[tuple[float, float, float, float]] = []
    # a new (role, table) each time, and a table no grant named before (its policy made, at
    # every scale: the same work at both ends of --growth; with the table fixed per role, at
    # scale 0.01 most grants updated a policy an earlier one made, at 1 each made one)
    named: set[tuple[str, int]] = set()
    for k in range(min(GRANTS, len(picks) * tables)):
        i = picks[k % len(picks)]
        schema = f"s{(i + 1) % schemas}"  # r<i> selects there, modifies only in s<i>
        t = k % tables
        while (schema, t) in named:
            t = (t + 1) % tables
        named.add((schema, t))
        table = ObjectRef(T.TABLE, ("c", schema, f"t{t}"))
        question = ({"database": schema, "table": table.names[2], "column": "*"}, "update", f"u{i}")
        assert not _allowed(ours, question), question
        grant_times.append(
            _commit_to_enforced(
                model,
                backend,
                ours,
                lambda: ch.grant_privileges(model, f"r{i}", table, ["MODIFY_TABLE"]),  # noqa: B023
                question,
            )
        )
        asked.append(question)
    joiners = [f"joiner{k}" for k in range(MEMBERSHIPS)]
    for name in joiners:  # users first, synced apart (not timed)
        events = apply(model, ch.add_user(model, name))
        reconcile(backend, model, Scope.union(scope_of(e) for e in events))
    member_times: list[tuple[float, float, float, float]] = []
    for k, name in enumerate(joiners):
        i = picks[(k * 11 + 3) % len(picks)]
        question = ({"database": f"s{i % schemas}", "table": "t1", "column": "*"}, "select", name)
        assert not _allowed(ours, question), question
        member_times.append(
            _commit_to_enforced(
                model,
                backend,
                ours,
                lambda: ch.grant_role(model, f"r{i}", Principal.user(name)),  # noqa: B023
                question,
            )
        )
        asked.append(question)
    found: dict[str, dict[str, float]] = {}
    for label, times in (
        ("ALLOW MODIFY_TABLE on a table to a role", grant_times),
        ("a role granted to one more user", member_times),
    ):
        whole, sync, bare = [t[0] for t in times], [t[1] for t in times], [t[2] for t in times]
        cpu = [t[3] for t in times]
        numbers = found[label] = {
            "p50": _pct(whole, 50) * 1000,
            "p99": _pct(whole, 99) * 1000,
            "sync p50": _pct(sync, 50) * 1000,
            "sync p99": _pct(sync, 99) * 1000,
            "sync cpu p50": _pct(cpu, 50) * 1000,
            "floor p50": _pct(bare, 50) * 1000,
            "floor p99": _pct(bare, 99) * 1000,
        }
        report.row(f"commit -> enforced, {label}: changes", len(times))
        report.row(f"commit -> enforced, {label}: p50 (goal <= 50 ms)", numbers["p50"], "ms")
        report.row(f"commit -> enforced, {label}: p99 (goal <= 250 ms)", numbers["p99"], "ms")
        report.row(f"commit -> enforced, {label}: of which the sync, p50", numbers["sync p50"], "ms")
        report.row(f"commit -> enforced, {label}: of which the sync, p99", numbers["sync p99"], "ms")
        report.row(
            f"commit -> enforced, {label}: the sync's cpu, p50 (its own thread: the stand-in's aside)",
            numbers["sync cpu p50"],
            "ms",
        )
        report.floor(
            f"commit -> enforced, {label}: floor, the sync's reads made bare, p50", numbers["floor p50"], "ms"
        )
        report.row(f"commit -> enforced, {label}: floor, p99", numbers["floor p99"], "ms")
        report.ratio(
            f"commit -> enforced, {label}: p50 over the floor's p50", numbers["p50"], numbers["floor p50"]
        )
    report.note(
        "floor: the GETs each sync made (its version checks: the services, the role download",
        "answered as the sync was answered, 304 or every role), made again right after the change",
        "over one kept-alive http.client connection, the answer read and parsed, no pushdown code;",
        "the sync's one write is not repeated (it would change the server)",
    )
    report.row(
        "commit -> enforced: the stand-in's engine allows every change", all(_allowed(ours, q) for q in asked)
    )
    report.row(
        "commit -> enforced: Ranger 2.9's engine (the judge) allows every change", _judged(ours, asked)
    )
    return found


def sizes_of(model: Model) -> tuple[int, int, int]:
    schemas = sum(1 for o in model.children(ObjectRef(T.CATALOG, ("c",))) if o.type is T.SCHEMA)
    tables = sum(1 for o in model.children(ObjectRef(T.SCHEMA, ("c", "s0"))) if o.type is T.TABLE)
    return schemas, tables, sum(1 for r in model.roles if r.startswith("r"))


def _commit_to_enforced(
    model: Model,
    backend: RangerBackend,
    ours: Standin,
    change: Callable[[], list[ev.Event]],
    question: tuple[dict[str, str], str, str],
) -> tuple[float, float, float, float]:
    """(commit -> enforced, of which the sync, the floor: the sync's reads made bare, the
    sync's cpu: ``thread_time`` of the syncing thread, the stand-in's serving threads aside), in seconds."""
    before = _role_version(ours)
    ours.reset_log()
    t0 = time.perf_counter()
    events = apply(model, change())
    c0 = time.thread_time()
    reconcile(backend, model, Scope.union(scope_of(e) for e in events))
    cpu = time.thread_time() - c0
    synced = time.perf_counter()
    for _ in range(1000):  # the sync returns once Ranger answered its writes: asked once
        if _allowed(ours, question):
            whole = time.perf_counter() - t0
            return whole, synced - t0, _bare_reads(ours, ours.request_log, before), cpu
    raise AssertionError(f"not enforced: {question}")


def _role_version(ours: Standin, service: str = "hive") -> int:
    with ours.store.lock:
        return int(ours.store.service(service)["roleVersion"])


def _bare_reads(ours: Standin, log: list[tuple[str, str, int]], before: int) -> float:
    """The GETs of ``log`` made again, bare (http.client over one kept-alive connection,
    Basic authentication, each answer read and parsed as JSON), in seconds: a role download
    answered 304 then is asked with the role version now (304 again), one answered 200 with
    the version before the change (every role again, as the sync was answered)."""
    url = urllib.parse.urlsplit(ours.url)
    user, password = ours.auth
    token = base64.b64encode(f"{user}:{password}".encode()).decode()
    headers = {"Authorization": f"Basic {token}", "Accept": "application/json"}
    now = _role_version(ours)
    conn = http.client.HTTPConnection(url.hostname or "127.0.0.1", url.port, timeout=30)
    try:
        conn.connect()
        t0 = time.perf_counter()
        for method, path, status in log:
            if method != "GET":
                continue
            if "/roles/secure/download/" in path:
                path = f"{path}?lastKnownRoleVersion={now if status == 304 else before}"
            conn.request("GET", url.path.rstrip("/") + path, headers=headers)
            answer = conn.getresponse()
            body = answer.read()
            if answer.status not in (200, 304) or (status in (200, 304) and answer.status != status):
                raise AssertionError(f"the floor's GET {path}: {answer.status}, the sync's {status}")
            if body:
                json.loads(body)
        return time.perf_counter() - t0
    finally:
        conn.close()


def _allowed(ours: Standin, question: tuple[dict[str, str], str, str]) -> bool:
    resource, access, user = question
    return bool(ours.evaluate("hive", dict(resource), access, user).allowed)


def _pct(times: list[float], pct: int) -> float:
    ordered = sorted(times)
    return ordered[min(len(ordered) - 1, max(0, math.ceil(pct / 100 * len(ordered)) - 1))]


def _judged(ours: Standin, asked: list[tuple[dict[str, str], str, str]]) -> str:
    from pushdown_lab.ranger_ground_truth import download
    from pushdown_lab.ranger_judge import JudgeUnavailable, RangerJudge, request

    try:
        policies, roles, _ = download(ours, "hive")
        with RangerJudge() as judge:
            judge.load("hive", policies, roles)
            answers = judge.decide("hive", [request(r, a, u) for r, a, u in asked])
    except JudgeUnavailable as exc:
        return f"not run ({exc})"
    return f"{sum(1 for a in answers if a.allowed)} of {len(asked)}"


if __name__ == "__main__":
    sys.exit(main())
