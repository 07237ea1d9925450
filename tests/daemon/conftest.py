"""The daemon against a real MariaDB of its own (these tests kill and restart it), run as a
separate process exactly as a person runs it: ``pushdown --config FILE daemon``."""

from __future__ import annotations

import functools
import json
import os
import random
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from pushdown.app.service import AccessControl
from pushdown.journal.store import Store
from tests.processes import no_orphans  # noqa: F401 - the check after every test

ROOT = Path(__file__).resolve().parents[2]
PASSWORD_ENV = "PD_DAEMON_TEST_PASSWORD"
PUSHDOWN = (sys.executable, "-m", "pushdown.app.cli")


def wait_for(check: Callable[[], bool], timeout: float = 10.0, what: str = "condition") -> float:
    """Poll ``check`` until it holds; return the seconds it took (fail after ``timeout``)."""
    start = time.monotonic()
    while not check():
        if time.monotonic() - start > timeout:
            raise AssertionError(f"{what}: not true within {timeout} s")
        time.sleep(0.02)
    return time.monotonic() - start


@dataclass
class DaemonProcess:
    """``pushdown daemon`` as a child process, its JSON log lines in a file."""

    config: Path
    log: Path
    proc: subprocess.Popen[bytes] = field(init=False)

    def __post_init__(self) -> None:
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
        with self.log.open("ab") as out:
            self.proc = subprocess.Popen(
                [*PUSHDOWN, "--config", str(self.config), "daemon", "--log-format", "json", "--port", "0"],
                stdout=subprocess.DEVNULL,
                stderr=out,
                env=env,
                cwd=self.config.parent,
            )

    @property
    def pid(self) -> int:
        return self.proc.pid

    def lines(self) -> list[dict[str, Any]]:
        """This process's log lines (a line cut short by SIGKILL is skipped)."""
        out = []
        for raw in self.log.read_text(errors="replace").splitlines():
            try:
                line = json.loads(raw)
            except json.JSONDecodeError:
                continue
            if isinstance(line, dict) and line.get("pid", self.pid) == self.pid:
                out.append(line)
        return out

    def said(self, words: str) -> bool:
        return any(words in str(line.get("msg", "")) for line in self.lines())

    def port(self) -> int:
        wait_for(lambda: any("port" in line for line in self.lines()), 20, "the daemon listens")
        return int(next(line["port"] for line in self.lines() if "port" in line))

    def kill(self) -> None:
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(10)

    def term(self, timeout: float = 20.0) -> int:
        self.proc.send_signal(signal.SIGTERM)
        return self.proc.wait(timeout)

    def alive(self) -> bool:
        return self.proc.poll() is None

    def stop(self) -> None:
        """SIGTERM, so the statement in flight is finished (a server would otherwise still
        carry out a request whose sender was killed, after the test has cleaned up); SIGKILL
        if it has not exited within 20 s."""
        try:
            self.term()
        except subprocess.TimeoutExpired:
            self.kill()


def write_config(path: Path, server: Any, backend: str = "", **daemon: Any) -> Path:
    settings = {
        "interval": '"3s"',
        "poll": '"100ms"',
        "backoff_min": '"200ms"',
        "backoff_max": '"2s"',
        "lease_ttl": '"5s"',
        **{k: json.dumps(v) for k, v in daemon.items()},
    }
    path.write_text(
        f'store = "pd.db"\n[backends.mysql1]\nkind = "mysql"\nhost = "{server.host}"\nport = {server.port}\n'
        f'user = "pushdown"\npassword = {{ env = "{PASSWORD_ENV}" }}\n{backend}'
        "[daemon]\n" + "".join(f"{k} = {v}\n" for k, v in settings.items())
    )
    return path


@pytest.fixture
def daemons(tmp_path: Path) -> Iterator[list[DaemonProcess]]:
    """Every daemon a test started; any still running is stopped afterwards."""
    started: list[DaemonProcess] = []
    yield started
    for d in started:
        if d.alive():
            d.stop()


def caught_up(config: Path, backend: str) -> bool:
    """The store's journal is all seen by ``backend`` (its cursor at the last event)."""
    store = Store(config.parent / "pd.db")
    try:
        return store.cursor(backend) >= store.last_seq()
    finally:
        store.close()


def kill_at_random_points(
    config: Path,
    backend: str,
    change: Callable[[Path, int], None],
    daemons: list[DaemonProcess],
    *,
    rounds: int,
    term_every: int,
    seed: int,
    apply_pause: float,
    idle_pause: float,
) -> tuple[int, int]:
    """``rounds`` times: make a change (``change(config, i)``), start a daemon, and stop it
    at a random point. Every ``term_every``-th round with SIGTERM once it runs (it must
    exit 0 and, having abandoned an apply, leave its cursor where it was); in the other
    rounds SIGKILL, half of them during an apply (after it says it applies, within
    ``apply_pause`` s) and half anywhere (after 0.05 to ``idle_pause`` s: starting,
    reading, planning, applying or idle). Returns (rounds killed in the middle of an
    apply, SIGTERMs)."""
    rng = random.Random(seed)
    log = config.parent / "d.log"
    mid_apply = terms = 0
    for i in range(rounds):
        change(config, i)
        store = Store(config.parent / "pd.db")
        before = store.cursor(backend)
        store.close()
        d = DaemonProcess(config, log)
        daemons.append(d)
        if i % term_every == term_every - 1:
            wait_for(functools.partial(d.said, "active: holding"), 30, "the daemon runs")
            time.sleep(rng.uniform(0.0, 0.3))
            assert d.term() == 0
            terms += 1
            if d.said("apply abandoned"):  # the cursor never moves past what was read back clean
                store = Store(config.parent / "pd.db")
                assert store.cursor(backend) == before
                store.close()
        else:
            if i % 2 == 0:  # during an apply (unless the server holds this state already:
                # the daemons before were killed before they read, one earlier had applied it)
                def applying(d: DaemonProcess = d) -> bool:
                    return d.said("applying") or caught_up(config, backend)

                wait_for(applying, 30, "an apply")
                time.sleep(rng.uniform(0.0, apply_pause))
            else:
                time.sleep(rng.uniform(0.05, idle_pause))
            d.kill()
        lines = d.lines()
        started = any("applying" in str(line.get("msg")) for line in lines)
        finished = any("read back clean" in str(line.get("msg")) for line in lines)
        mid_apply += started and not finished
    return mid_apply, terms


def converged(config: Path, backend: str = "mysql1") -> bool:
    """The store's journal is all seen by the backend and a fresh full read shows nothing to do."""
    ac = AccessControl.open(str(config), push=False, create_store=False)
    try:
        if ac.store.cursor(backend) != ac.store.last_seq():
            return False
        results = ac.sync(full=True, dry_run=True)
        return all(r.ok and r.plan is not None and not r.plan.ops for r in results)
    finally:
        ac.close()


def integrity(store_path: Path) -> str:
    store = Store(store_path)
    try:
        return str(store.db.execute("PRAGMA integrity_check").fetchone()[0])
    finally:
        store.close()
