#!/usr/bin/env python3
"""Benchmark ``pushdown daemon`` on a real throwaway MariaDB: commit-to-enforced latency and
the idle cost.

The daemon runs as a separate process (``pushdown --config FILE daemon``) with its default
poll (200 ms) and a long interval, so no full reconcile falls inside the measurements.

1. commit-to-enforced: a stream of changes (1,000 at ``--scale 1``, one after the other),
   each committed through the library in this process (``AccessControl.grant_privileges``
   or ``revoke_privileges`` of SELECT_TABLE on one table, ``push=False``): the time from
   the commit's return to the grant being present (or gone) in MariaDB's grant tables
   (``mysql.tables_priv``, polled every 2 ms by the root account over the socket); p50,
   p90, p99 and max. Beside it, the floor: the same GRANT or REVOKE sent bare with pymysql
   to another account, in the same run, on the same server. A commit rings the store's
   bell (:mod:`pushdown.journal.wake`), so the latency is the daemon's pending sync (read
   of the scope, compile, plan, apply, read back).
2. the idle cost, with nothing to do, over a window (60 s at ``--scale 1``): the daemon
   process's CPU seconds (from /proc), the statements it sent to MariaDB (the server's
   ``Questions`` counter, less this script's own two), and its looks at the journal (the
   ``pushdown_journal_polls_total`` metric: one query each on the local store file).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

from harness import cli
from harness.report import Report
from pushdown_lab.mariadb import LocalMariaDB, throwaway_mariadb
from pushdown_mysql.account import least_privileges

from pushdown.app.service import AccessControl

ROOT = Path(__file__).resolve().parents[1]
DB = "bench"
PUSHDOWN, PASSWORD = "pushdown", "bench-secret"
USERS = ("ann", "bob", "cid")
JSON_LOGS = ("--log-format", "json")


def q(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(p / 100 * (len(ordered) - 1))))]


def setup(server: LocalMariaDB, home: Path, tables: int) -> Path:
    conn = server.connect()
    with conn.cursor() as cur:
        cur.execute("CREATE USER %s@%s IDENTIFIED BY %s", (PUSHDOWN, "%", PASSWORD))
        cur.execute(f"CREATE DATABASE {q(DB)}")
        for sql, args in least_privileges(PUSHDOWN, "%", [DB]):
            cur.execute(sql, args)
        for i in range(tables):
            cur.execute(f"CREATE TABLE {q(DB)}.{q(f't{i:04}')} (id INT)")
        for u in (*USERS, "floor"):
            cur.execute("CREATE USER %s@%s IDENTIFIED BY %s", ("pd_" + u, "%", "x"))
    conn.close()
    config = home / "pushdown.toml"
    config.write_text(
        f'store = "pd.db"\n[backends.mysql1]\nkind = "mysql"\nhost = "{server.host}"\nport = {server.port}\n'
        f'user = "{PUSHDOWN}"\npassword = {{ env = "PD_BENCH_PASSWORD" }}\n'
        '[daemon]\ninterval = "1h"\nport = 0\n'
    )
    os.environ["PD_BENCH_PASSWORD"] = PASSWORD
    ac = AccessControl.open(str(config), push=False, create_store=True)
    ac.create_object("catalog c", properties={"backend": "mysql1"})
    ac.create_object(f"schema c.{DB}")
    for i in range(tables):
        ac.create_object(f"table c.{DB}.t{i:04}")
    for u in USERS:
        ac.add_user(u)
    ac.create_role("r")
    ac.grant_privileges("r", "catalog c", ["USE_CATALOG", "USE_SCHEMA"])
    ac.grant_role("r", f"user {USERS[0]}")
    ac.close()
    return config


def wait(check: Callable[[], bool], timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise SystemExit(f"bench_daemon: {what}: not within {timeout} s")
        time.sleep(0.002)


class Daemon:
    def __init__(self, config: Path) -> None:
        self.log = config.parent / "daemon.log"
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
        with self.log.open("wb") as out:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "pushdown.app.cli", "--config", str(config), "daemon", *JSON_LOGS],
                stdout=subprocess.DEVNULL,
                stderr=out,
                env=env,
                cwd=config.parent,
            )
        wait(lambda: self._port() is not None, 60, "the daemon listens")
        self.port = self._port()

    def _port(self) -> int | None:
        if self.proc.poll() is not None:
            raise SystemExit(f"bench_daemon: the daemon exited:\n{self.log.read_text()[-3000:]}")
        for line in self.log.read_text(errors="replace").splitlines():
            try:
                port = json.loads(line).get("port")
            except json.JSONDecodeError:
                continue
            if port:
                return int(port)
        return None

    def metric(self, name: str) -> float:
        with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/metrics", timeout=5) as r:
            text = r.read().decode()
        return sum(float(line.split()[-1]) for line in text.splitlines() if line.startswith(name))

    def cpu(self) -> float:
        fields = Path(f"/proc/{self.proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(30)


def granted(cur: Any, user: str, table: str) -> bool:
    cur.execute(
        "SELECT 1 FROM mysql.tables_priv WHERE Db = %s AND Table_name = %s AND User = %s "
        "AND FIND_IN_SET('Select', Table_priv)",
        (DB, table, "pd_" + user),
    )
    return cur.fetchone() is not None


def questions(cur: Any) -> int:
    cur.execute("SHOW GLOBAL STATUS LIKE 'Questions'")
    return int(cur.fetchone()[1])


def run(report: Report, args: argparse.Namespace) -> None:
    changes = max(5, round(1000 * args.scale))
    tables = min(changes, 200)
    idle = max(2.0, 60.0 * args.scale)
    report.row("changes in the stream | tables they touch", f"{changes:,} | {tables}")
    with (
        tempfile.TemporaryDirectory(prefix="bench-daemon-") as tmp,
        throwaway_mariadb("/dev/shm" if os.path.isdir("/dev/shm") else None) as server,
    ):
        home = Path(tmp)
        report.row("server", f"throwaway MariaDB on {server.host}:{server.port}, data in {server.base}")
        config = setup(server, home, tables)
        daemon = Daemon(config)
        ac = AccessControl.open(str(config), push=False, create_store=False)
        wait(lambda: ac.store.cursor("mysql1") == ac.store.last_seq(), 60, "the first reconcile")
        admin = server.connect()
        cur = admin.cursor()
        latencies: list[float] = []
        bare: list[float] = []
        held = [False] * tables
        try:
            report.section("1. commit in the library -> enforced in MariaDB's grant tables")
            for i in range(changes):
                k = i % tables
                table = f"t{k:04}"
                grant = not held[k]
                change = ac.grant_privileges if grant else ac.revoke_privileges
                change("r", f"table c.{DB}.{table}", ["SELECT_TABLE"])
                committed = time.perf_counter()
                wait(lambda t=table, g=grant: granted(cur, USERS[0], t) == g, 30, f"change {i} enforced")
                latencies.append(time.perf_counter() - committed)
                held[k] = grant
                sql = "GRANT SELECT ON {}.{} TO %s@%s" if grant else "REVOKE SELECT ON {}.{} FROM %s@%s"
                started = time.perf_counter()
                cur.execute(sql.format(q(DB), q(table)), ("pd_floor", "%"))
                bare.append(time.perf_counter() - started)
            ms = [x * 1e3 for x in latencies]
            report.row(
                "p50 | p90 | p99 | max",
                " | ".join(f"{percentile(ms, p):.0f}" for p in (50, 90, 99, 100)),
                "ms",
            )
            report.row("mean", statistics.fmean(ms), "ms")
            bare_ms = [x * 1e3 for x in bare]
            report.row(
                "bare statement p50 | p99",
                f"{percentile(bare_ms, 50):.2f} | {percentile(bare_ms, 99):.2f}",
                "ms",
            )
            report.floor("floor: the same GRANT/REVOKE sent bare (p50)", percentile(bare_ms, 50), "ms")
            report.ratio(
                "commit-to-enforced p50 / bare statement p50", percentile(ms, 50), percentile(bare_ms, 50)
            )
            report.note(
                "a commit rings the store's bell and wakes the daemon at once (the 200 ms poll is the",
                "fallback); the rest is the pending sync (read the scope, compile, plan, apply, read back)",
            )

            report.section(f"2. the idle cost ({idle:.0f} s with nothing to do, no full reconcile due)")
            cpu0, polls0, q0 = daemon.cpu(), daemon.metric("pushdown_journal_polls_total"), questions(cur)
            started = time.perf_counter()
            time.sleep(idle)
            cpu1, polls1, q1 = daemon.cpu(), daemon.metric("pushdown_journal_polls_total"), questions(cur)
            minutes = (time.perf_counter() - started) / 60
            report.row("daemon CPU per minute", (cpu1 - cpu0) / minutes, "s")
            report.row("statements to MariaDB per minute", (q1 - q0 - 1) / minutes)
            report.row("journal looks (store queries) per minute", (polls1 - polls0) / minutes)
        finally:
            cur.close()
            admin.close()
            ac.close()
            daemon.stop()


def main(argv: list[str] | None = None) -> int:
    args = cli.parser(__doc__).parse_args(argv)
    with Report("daemon", args) as report:
        run(report, args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
