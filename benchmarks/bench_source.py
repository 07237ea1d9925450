#!/usr/bin/env python3
"""Benchmark the model source: reading a Gravitino metalake through the official client.

    python benchmarks/bench_source.py [--scale 1.0]

At ``--scale 1`` the source holds 10,000 users, 1,000 roles with 100 securable objects
each (100,000 in all: SELECT_TABLE on tables, every tenth a DENY, plus USE_CATALOG and
USE_SCHEMA), 100 groups, one catalog of 100 schemas × 100 tables (10,000 tables), and an
owner on every schema, table and role. The Gravitino server is ``pushdown serve`` (the
only server speaking Gravitino's REST API that runs here), a process of its own over a
store written beforehand, so its CPU is not this process's.

1. *the first poll* of a store that follows it (empty): the two reads that must agree,
   the target model, the mass-removal check and the one change (``load_model``): HTTP
   calls, wall and CPU seconds, peak memory above the start, model changes;
2. *a poll that finds nothing changed*: one read (it equals the last one used), no
   change: calls, wall seconds, CPU seconds of this process (goal ≤ 1 s at scale 1),
   model changes (must be 0);
3. the floor: the same HTTP requests of one read sent bare (``urllib`` and
   ``json.loads``, one connection per request as the client makes them), wall and CPU;
   the ratios of the no-change poll to it.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from urllib.parse import quote

from harness import cli
from harness.memory import MemoryProbe
from harness.report import Report

from pushdown.app.service import AccessControl
from pushdown.app.settings import from_mapping
from pushdown.app.source.follow import Follower
from pushdown.app.source.gravitino import Snapshot
from pushdown.journal.store import Store
from pushdown.model import changes as ch
from pushdown.model.events import Event
from pushdown.model.principals import Principal
from pushdown.model.securables import METALAKE, ObjectRef
from pushdown.model.state import Model

ROOT = Path(__file__).resolve().parents[1]
PER_SCHEMA = 100
OBJECTS_PER_ROLE = 100
PUSHDOWN = (sys.executable, "-m", "pushdown.app.cli")
METALAKE_NAME = "bench"


def build(users: int, roles: int, tables: int, rng: random.Random) -> Model:
    """The source's model (the store ``pushdown serve`` answers from)."""
    model = Model(metalake=METALAKE_NAME)

    def do(events: list[Event]) -> None:
        for event in events:
            model.apply(event)

    do(ch.add_user(model, "admin"))
    for u in range(users):
        do(ch.add_user(model, f"u{u}"))
    groups = max(1, users // 100)
    for g in range(groups):
        do(ch.add_group(model, f"g{g}"))
    do(ch.set_owner(model, METALAKE, "admin"))
    catalog = ObjectRef.of("catalog", "c")
    # the catalog's type and provider, kept as pushdown serve keeps them
    shown = {"pushdown.rest.type": "relational", "pushdown.rest.provider": "jdbc-mysql"}
    do(ch.create_object(model, catalog, "admin", {"pushdown.backend": "demo", **shown}))
    names = []
    for t in range(tables):
        schema = ObjectRef.of("schema", ("c", f"s{t // PER_SCHEMA}"))
        if t % PER_SCHEMA == 0:
            do(ch.create_object(model, schema, f"u{rng.randrange(users)}"))
        table = ObjectRef.of("table", (*schema.names, f"t{t}"))
        do(ch.create_object(model, table, f"u{rng.randrange(users)}"))
        names.append(table)
    for r in range(roles):
        role = f"r{r}"
        do(ch.create_role(model, role, f"u{rng.randrange(users)}"))
        do(ch.grant_privileges(model, role, catalog, ["USE_CATALOG", "USE_SCHEMA"]))
        for i, table in enumerate(rng.sample(names, min(OBJECTS_PER_ROLE - 1, len(names)))):
            do(ch.grant_privileges(model, role, table, ["SELECT_TABLE"], "DENY" if i % 10 == 9 else "ALLOW"))
    for u in range(users):
        for r in rng.sample(range(roles), min(2, roles)):
            do(ch.grant_role(model, f"r{r}", Principal.user(f"u{u}")))
    for g in range(groups):
        do(ch.grant_role(model, f"r{rng.randrange(roles)}", Principal.group(f"g{g}")))
    return model


class Serve:
    """``pushdown serve`` as a process over ``store``; the port it chose is in its log."""

    def __init__(self, workdir: Path) -> None:
        config = workdir / "gravitino.toml"
        config.write_text('store = "gravitino.db"\n[access]\nservice_admins = ["admin"]\n')
        self.log = workdir / "serve.log"
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
        with self.log.open("ab") as out:
            self.proc = subprocess.Popen(
                [*PUSHDOWN, "--config", str(config), "serve", "--log-format", "json", "--port", "0"],
                stdout=subprocess.DEVNULL,
                stderr=out,
                env=env,
                cwd=workdir,
            )
        try:
            self.uri = f"http://127.0.0.1:{self._port()}"
        except BaseException:
            self.stop()
            raise

    def _port(self) -> int:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise SystemExit(f"pushdown serve exited: {self.log.read_text()[-2000:]}")
            for raw in self.log.read_text(errors="replace").splitlines():
                try:
                    line = json.loads(raw)
                except json.JSONDecodeError:
                    continue
                if isinstance(line, dict) and "port" in line:
                    return int(line["port"])
            time.sleep(0.05)
        raise SystemExit("pushdown serve did not start listening")

    def stop(self) -> None:
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(10)


def paths(snap: Snapshot) -> list[str]:
    """The GET requests of one read (the client's two bootstrap calls included)."""
    m = f"/api/metalakes/{METALAKE_NAME}"
    out = ["/api/version", m, f"{m}/users?details=true", f"{m}/groups?details=true", f"{m}/roles"]
    out += [f"{m}/roles/{quote(r, safe='')}" for r in sorted(snap.roles)]
    out += [f"{m}/catalogs?details=true"]
    schemas = sorted(names for kind, names in snap.tree if kind == "schema")
    out += [f"{m}/catalogs/c/schemas"] + [f"{m}/catalogs/c/schemas/{s[1]}/tables" for s in schemas]
    out += [f"{m}/owners/metalake/{METALAKE_NAME}"]
    out += [f"{m}/owners/role/{r}" for r in sorted(snap.roles)] + [f"{m}/owners/catalog/c"]
    out += [f"{m}/owners/{kind}/{'.'.join(names)}" for kind, names in sorted(snap.tree)]
    return out


def bare(uri: str, requests: list[str]) -> tuple[float, float]:
    """The same requests sent with urllib and decoded with json.loads: (wall, cpu)."""
    headers = {"Accept": "application/vnd.gravitino.v1+json", "Authorization": "Basic YWRtaW46ZHVtbXk="}
    wall0, cpu0 = time.perf_counter(), time.process_time()
    for path in requests:
        with urllib.request.urlopen(urllib.request.Request(uri + path, headers=headers), timeout=60) as r:
            json.loads(r.read())
    return time.perf_counter() - wall0, time.process_time() - cpu0


def main(argv: list[str] | None = None) -> int:
    ap = cli.parser(__doc__)
    args = ap.parse_args(argv)
    rng = random.Random(args.seed)
    users = max(10, int(10_000 * args.scale))
    roles = max(3, int(1_000 * args.scale))
    tables = max(PER_SCHEMA, int(10_000 * args.scale) // PER_SCHEMA * PER_SCHEMA)
    with Report("source", args) as report, tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        report.section("the source (pushdown serve as the Gravitino server)")
        started = time.perf_counter()
        model = build(users, roles, tables, rng)
        gravitino = AccessControl(Store(work / "gravitino.db"), push=False)
        gravitino.load_model(model)
        gravitino.close()
        report.row("users", len(model.users))
        report.row("roles", len(model.roles))
        report.row("securable objects (role, object, privilege)", sum(len(g) for g in model.roles.values()))
        report.row("schemas and tables", len(model.objects) - 1)
        report.row("owners", len(model.owners))
        report.row("built and stored in", time.perf_counter() - started, "s")
        serve = Serve(work)
        try:
            raw = {
                "store": str(work / "follow.db"),
                "backends": {"demo": {"kind": "recording", "state": "demo.json"}},
                "source": {
                    "kind": "gravitino",
                    "uri": serve.uri,
                    "metalake": METALAKE_NAME,
                    "user": "admin",
                    "timeout": 600,
                },
            }
            config = from_mapping(raw, work, "bench", explicit_store=False)
            follow = AccessControl.open(config, push=False, create_store=True)
            follower = Follower(config)

            report.section("the first poll: two reads that agree, then one change")
            wall0, cpu0 = time.perf_counter(), time.process_time()
            with MemoryProbe() as mem:
                first = follower.poll(follow)
            if not first.ok:
                raise SystemExit(f"the first poll failed: {first.error}")
            report.row("reads", first.reads)
            report.row("HTTP calls", first.calls)
            report.row("wall", time.perf_counter() - wall0, "s")
            report.row("cpu (this process)", time.process_time() - cpu0, "s")
            report.row("peak memory above the start", mem.peak_mib, "MiB")
            report.row("model changes", first.changes)

            report.section("a poll that finds nothing changed")
            wall0, cpu0 = time.perf_counter(), time.process_time()
            again = follower.poll(follow)
            wall, cpu = time.perf_counter() - wall0, time.process_time() - cpu0
            if not again.ok or again.changes:
                raise SystemExit(f"the second poll changed something or failed: {again}")
            report.row("reads", again.reads)
            report.row("HTTP calls", again.calls)
            report.row("wall", wall, "s")
            report.row("cpu (this process)", cpu, "s", target=1.0)
            report.row("model changes", again.changes)
            assert follower.last is not None
            requests = paths(follower.last)
            report.row("requests in the floor's replay", len(requests))
            floor_wall, floor_cpu = bare(serve.uri, requests)
            report.floor("floor: the same requests, urllib + json.loads (wall)", floor_wall)
            report.row("floor cpu", floor_cpu, "s")
            report.ratio("no-change poll / floor (wall)", wall, floor_wall)
            report.ratio("no-change poll / floor (cpu)", cpu, floor_cpu)
            follower.close()
            follow.close()
        finally:
            serve.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
