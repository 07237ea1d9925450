"""The daemon in this process, against the recording backend: settings, journal following,
endpoints, status, backoff, the one-active-instance lease. (The real-server proof, with the
daemon as a separate process, is in the MySQL plugin's tests.)"""

from __future__ import annotations

import gc
import json
import logging
import random
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from pushdown.app.cli import main
from pushdown.app.daemon.following import Following, Stopping, backoff
from pushdown.app.daemon.runner import Daemon
from pushdown.app.service import AccessControl
from pushdown.app.service.logs import JsonFormatter
from pushdown.app.service.status import INSTANCE
from pushdown.app.settings import load_config
from pushdown.app.settings.daemon import DaemonSettings, duration, parse
from pushdown.errors import Busy, ConfigError, PermanentBackendError, TemporaryBackendError
from pushdown.journal import lease
from pushdown.journal.store import Store
from pushdown.model.state import Model
from pushdown.reconcile.sync import PERMANENT, TEMPORARY, SyncResult
from tests.histories import commit, random_model

from .conftest import DaemonProcess

CONFIG = """
store = "pd.db"
[backends.demo]
kind = "recording"
state = "demo.json"
[daemon]
interval = "2s"
poll = "50ms"
backoff_min = "100ms"
backoff_max = "1s"
lease_ttl = "3s"
port = 0
"""


def wait_for(check: Callable[[], bool], timeout: float = 15.0) -> float:
    """Poll ``check`` until true; return the seconds it took (fail after ``timeout``)."""
    start = time.monotonic()
    while not check():
        if time.monotonic() - start > timeout:
            raise AssertionError(f"not true within {timeout} s")
        time.sleep(0.01)
    return time.monotonic() - start


def get(url: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=5) as r:
            return int(r.status), r.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()


@pytest.fixture(autouse=True)
def logging_restored() -> Iterator[None]:
    """`pushdown daemon` sets up the root logger; later tests get it back as it was."""
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    yield
    root.handlers[:], root.level = handlers, level


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "pushdown.toml").write_text(CONFIG)
    assert CliRunner().invoke(main, ["init"]).exit_code == 0
    return tmp_path


class Running:
    def __init__(self, d: Daemon) -> None:
        self.daemon = d
        self.host, self.port = d.serve()
        self.code: list[int] = []
        self.thread = threading.Thread(target=lambda: self.code.append(d.run()), daemon=True)
        self.thread.start()

    def url(self, path: str) -> str:
        return f"http://{self.host}:{self.port}{path}"

    def stop(self) -> int:
        self.daemon.stop.set()
        self.thread.join(10)
        assert not self.thread.is_alive()
        return self.code[0]


@pytest.fixture
def start(home: Path) -> Iterator[Callable[[], Running]]:
    started: list[Running] = []

    def go() -> Running:
        r = Running(Daemon(load_config("pushdown.toml")))
        started.append(r)
        return r

    yield go
    for r in started:
        if r.thread.is_alive():
            r.stop()


def library() -> AccessControl:
    return AccessControl.open("pushdown.toml", push=False)


# -- settings ------------------------------------------------------------------------


def test_durations_and_settings_are_checked_with_the_key_and_value_named() -> None:
    assert duration("200ms") == pytest.approx(0.2)
    assert duration("5m") == 300 and duration(2) == 2 and duration("1h") == 3600
    assert duration("0s") is None and duration("soon") is None and duration(True) is None
    assert parse(None, "f") == DaemonSettings()
    s = parse({"interval": "1m", "poll": "100ms", "port": 0, "jitter": 0.2, "gather": "5ms", "nice": 0}, "f")
    assert (s.interval, s.poll, s.port, s.jitter, s.gather, s.nice) == (60, 0.1, 0, 0.2, 0.005, 0)
    for raw, words in [
        ({"interval": "often"}, "daemon.interval = 'often'"),
        ({"port": 70000}, "daemon.port = 70000"),
        ({"jitter": 2}, "daemon.jitter = 2"),
        ({"intervall": "1m"}, "unknown setting(s) intervall"),
        ({"backoff_min": "10m", "backoff_max": "1m"}, "backoff_max is shorter"),
        ({"host": "a b"}, "daemon.host"),
        ({"poll": 1e300}, "daemon.poll = 1e+300: at most 7 days"),
        ({"interval": "200000h"}, "daemon.interval = '200000h': at most 7 days"),
        ({"lease_ttl": "100ms"}, "daemon.lease_ttl = '100ms': at least 1 s"),
        ({"gather": "0ms"}, "daemon.gather = '0ms': a duration"),
        ({"nice": 20}, "daemon.nice = 20: a whole number from 0 to 19"),
        ({"nice": "5"}, "daemon.nice = '5'"),
        ({"nice": True}, "daemon.nice = True"),
        ({"freeze": "yes"}, "daemon.freeze = 'yes': true or false"),
    ]:
        with pytest.raises(ConfigError, match=None) as err:
            parse(raw, "f.toml")
        assert words in str(err.value) and str(err.value).startswith("f.toml: ")


def test_the_daemon_table_is_read_from_the_config_file(tmp_path: Path) -> None:
    (tmp_path / "c.toml").write_text('[daemon]\ninterval = "90s"\n')
    assert load_config(tmp_path / "c.toml").daemon.interval == 90
    (tmp_path / "c.toml").write_text('[daemon]\ninterval = "never"\n')
    code = CliRunner().invoke(main, ["--config", str(tmp_path / "c.toml"), "status"])
    assert code.exit_code == 1 and "daemon.interval = 'never'" in code.stderr


def test_backoff_doubles_to_its_cap_with_jitter_and_honours_retry_after() -> None:
    s = DaemonSettings(backoff_min=5, backoff_max=300)
    rng = random.Random(1)
    waits = [backoff(n, s, rng, None) for n in range(1, 12)]
    assert 4 <= waits[0] <= 6 and 8 <= waits[1] <= 12 and 16 <= waits[2] <= 24
    assert all(w <= 300 for w in waits) and waits[-1] >= 240
    assert backoff(1, s, rng, 30.0) == 30.0


def test_json_logs_are_one_object_per_line_with_the_extra_fields() -> None:
    record = logging.makeLogRecord({"msg": "x %s", "args": ("y",), "levelname": "INFO", "name": "n"})
    record.backend = "demo"
    out = json.loads(JsonFormatter().format(record))
    assert out["msg"] == "x y" and out["backend"] == "demo" and out["level"] == "info"


# -- the daemon at work --------------------------------------------------------------


def test_a_commit_by_another_writer_is_enforced_within_a_second_and_shown_everywhere(
    start: Callable[[], Running],
) -> None:
    r = start()
    ac = library()
    wait_for(lambda: get(r.url("/readyz"))[0] == 200)  # the first full reconcile converged
    assert get(r.url("/livez")) == (200, "ok\n")
    ac.create_object("catalog c", properties={"backend": "demo"})
    ac.add_user("ann")
    ac.create_role("reader")
    ac.grant_role("reader", "user ann")
    seq = ac.grant_privileges("reader", "catalog c", ["USE_CATALOG"]).seqs[-1]
    # ~0.1 s unloaded (the benchmark measures it); a test only waits on the condition
    wait_for(lambda: ac.store.cursor("demo") >= seq, timeout=60.0)
    fresh = library()  # the recording backend reads its state file when it is created
    assert [(r.ok, r.plan is not None and r.plan.empty) for r in fresh.sync(full=True, dry_run=True)] == [
        (True, True)
    ]
    assert ["ann", "load_catalog", "catalog c"] in json.loads(Path("demo.json").read_text())
    fresh.close()
    # the cursor moves inside the reconcile; the lag gauge is set just after it: wait for that
    lag_zero = 'pushdown_journal_lag_events{backend="demo"} 0.0'
    wait_for(lambda: lag_zero in get(r.url("/metrics"))[1])
    code, metrics = get(r.url("/metrics"))
    assert code == 200
    assert 'pushdown_reconciles_total{backend="demo",kind="pending",result="ok"}' in metrics
    assert 'pushdown_operations_applied_total{backend="demo"}' in metrics
    assert lag_zero in metrics
    assert "pushdown_daemon_active 1.0" in metrics
    out = CliRunner().invoke(main, ["status"])
    assert out.exit_code == 0, out.output
    assert f"cursor {seq}, lag 0 event(s)" in out.stdout and "daemon: active, " in out.stdout
    assert r.stop() == 0
    as_json = json.loads(CliRunner().invoke(main, ["status", "--json"]).stdout)
    assert as_json["daemon"] is None and as_json["backends"][0]["cursor"] == seq
    ac.close()


def test_status_shows_lag_and_the_last_error_and_exits_2(home: Path) -> None:
    ac = library()
    ac.add_user("bob")
    ac.store.record_sync("demo", time.time(), error="demo: server gone away", kind=TEMPORARY)
    out = CliRunner().invoke(main, ["status"])
    assert out.exit_code == 2
    assert "lag 1 event(s)" in out.stdout and "[temporary] demo: server gone away" in out.stdout
    assert "last success: never" in out.stdout
    ac.close()


def test_temporary_errors_back_off_and_permanent_ones_wait_for_the_interval(home: Path) -> None:
    d = Daemon(load_config("pushdown.toml"))  # not started: nothing else moves the worker's state
    worker = d.workers["demo"]
    before = time.monotonic()
    soon = TemporaryBackendError("demo", "down", delay=0.5)  # the error says when to try again
    worker._failed("pending", SyncResult("demo", None, error="down", failure=soon), before)
    first = worker.not_before - before
    again = TemporaryBackendError("demo", "down")  # 5 s unless it says otherwise: the back-off decides
    worker._failed("pending", SyncResult("demo", None, error="down", failure=again), before)
    assert 0.5 <= first <= 1.0 and worker.failures == 2
    assert worker.not_ready() == "demo: not converged yet (last error: down)"
    refused = PermanentBackendError("demo", "refused")
    worker._failed("full", SyncResult("demo", None, error="refused", failure=refused), before)
    assert worker.failures == 0 and worker.not_before - before >= 2 * 0.9
    assert worker.next_full == worker.not_before  # the next attempt is a full reconcile
    status = Store("pd.db").sync_status()["demo"]
    assert status["error_kind"] == PERMANENT and status["last_error"] == "refused"
    metrics = d.metrics.render().decode()
    assert 'pushdown_reconciles_total{backend="demo",kind="full",result="permanent"} 1.0' in metrics
    assert 'pushdown_reconciles_total{backend="demo",kind="pending",result="temporary"} 2.0' in metrics
    d.close()
    if worker.store is not None:
        worker.store.close()


def test_a_second_daemon_on_the_store_waits_and_takes_over_when_the_first_stops(
    start: Callable[[], Running],
) -> None:
    first = start()
    wait_for(lambda: first.daemon.active)
    second = start()
    wait_for(lambda: second.daemon.waiting_for is not None)
    code, body = get(second.url("/readyz"))
    assert code == 503 and "standby" in body
    holder = Store("pd.db").leases()[INSTANCE][0]
    assert holder == first.daemon.holder
    ac = library()
    ac.add_user("carl")
    wait_for(lambda: ac.store.cursor("demo") == ac.store.last_seq())
    assert not second.daemon.active and not second.daemon.workers["demo"].is_alive()  # never applied
    assert first.stop() == 0
    wait_for(lambda: second.daemon.active)
    assert Store("pd.db").leases()[INSTANCE][0] == second.daemon.holder
    assert second.stop() == 0
    ac.close()


def test_a_store_that_cannot_be_asked_never_makes_a_daemon_active(
    start: Callable[[], Running], monkeypatch: pytest.MonkeyPatch
) -> None:
    asked: list[float] = []

    def busy(*args: object, **kwargs: object) -> None:
        asked.append(time.monotonic())
        raise Busy("the store is busy")

    monkeypatch.setattr(lease, "try_take", busy)
    r = start()
    wait_for(lambda: len(asked) >= 2)  # refused, waited, asked again: still never active
    assert not r.daemon.active and not r.daemon.workers["demo"].is_alive()
    code, body = get(r.url("/readyz"))
    assert code == 503 and "standby" in body
    assert r.stop() == 0


def test_a_lease_that_cannot_be_renewed_stops_the_daemon_before_it_lapses(
    start: Callable[[], Running], monkeypatch: pytest.MonkeyPatch
) -> None:
    r = start()
    wait_for(lambda: r.daemon.active)
    real = lease.try_take
    failed_at: list[float] = []

    def busy(store: object, name: str, *args: object, **kwargs: object) -> object:
        if name != INSTANCE:
            return real(store, name, *args, **kwargs)  # type: ignore[arg-type]
        failed_at.append(time.monotonic())
        raise Busy("the store is busy")

    monkeypatch.setattr(lease, "try_take", busy)
    held_until = r.daemon.held_until
    r.thread.join(10)
    assert not r.thread.is_alive() and r.code == [1]  # stopped by itself, before the lease lapsed
    # it gave up while the lease still held, and stopped promptly (joining the worker and
    # the endpoints takes a moment; a loaded CI machine has slack)
    assert failed_at and failed_at[-1] < held_until
    assert time.monotonic() <= held_until + 2.0
    assert not r.daemon.workers["demo"].is_alive()


def test_the_daemon_refuses_a_config_without_backends_or_store(tmp_path: Path) -> None:
    (tmp_path / "c.toml").write_text(
        f'store = "{tmp_path / "missing.db"}"\n[backends.demo]\nkind = "recording"\n'
    )
    out = CliRunner().invoke(main, ["--config", str(tmp_path / "c.toml"), "daemon", "--port", "0"])
    assert out.exit_code == 1 and "does not exist" in out.stderr
    (tmp_path / "e.toml").write_text(f'store = "{tmp_path / "e.db"}"\n')
    Store(tmp_path / "e.db").close()
    out = CliRunner().invoke(main, ["--config", str(tmp_path / "e.toml"), "daemon", "--port", "0"])
    assert out.exit_code == 1 and "no backends configured" in out.stderr


def test_a_store_open_in_this_process_is_never_reopened_by_a_plain_file_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Closing a plain descriptor on the file would drop SQLite's POSIX locks of the whole
    process; another process could then delete the WAL under the daemon's connections."""
    path = tmp_path / "s.db"
    first = Store(path)

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("the store file was opened outside SQLite while SQLite held it")

    monkeypatch.setattr(Path, "open", refuse)
    second = Store(path)  # the daemon opens one connection per worker like this
    second.close()
    first.close()
    monkeypatch.undo()
    (tmp_path / "t.db").write_text("not a database at all\n")
    with pytest.raises(Exception, match="not an SQLite database"):
        Store(tmp_path / "t.db")  # a file not open here is still checked


@settings(max_examples=25, deadline=None)
@given(st.data())
def test_the_followed_model_equals_the_store_read_again(data: st.DataObject) -> None:
    """A worker applies the journal's new events to its model instead of reading the whole
    store again; after any history, in any number of steps, that model is the store's."""
    store = Store()
    follower = Following(store, {}, None, push=False)
    _, history = random_model(data, "history", max_steps=25)
    cuts = sorted(data.draw(st.lists(st.integers(0, len(history)), max_size=3), label="cuts"))
    done = 0
    for cut in [*cuts, len(history)]:
        if cut > done:
            commit(store, history[done:cut])
            done = cut
        assert same_model(follower.model, store.load())
    store.close()


def same_model(a: Model, b: Model) -> bool:
    """The facts of two models agree (defaultdict indexes: empty sets do not count)."""
    facts = ("metalake", "users", "groups", "roles", "owners", "objects", "by_object", "service_admins")
    indexes = ("user_roles", "group_roles", "user_groups")

    def nonempty(index: dict[str, set[str]]) -> dict[str, set[str]]:
        return {k: v for k, v in index.items() if v}

    return all(getattr(a, f) == getattr(b, f) for f in facts) and all(
        nonempty(getattr(a, f)) == nonempty(getattr(b, f)) for f in indexes
    )


def test_a_stop_abandons_an_apply_between_statements(home: Path) -> None:
    d = Daemon(load_config("pushdown.toml"))
    step = d.workers["demo"]._progress("demo", 3)
    step(1)  # running: the apply goes on
    d.stop.set()
    with pytest.raises(Stopping):
        step(1)  # stopping: the rest is abandoned; the dispatcher never moves the cursor then
    d.close()


def test_an_apply_abandoned_on_stop_leaves_the_cursor_and_the_next_start_finishes_it(home: Path) -> None:
    ac = library()
    ac.create_object("catalog c", properties={"backend": "demo"})
    ac.add_user("ann")
    ac.create_role("reader")
    ac.grant_role("reader", "user ann")
    last = ac.grant_privileges("reader", "catalog c", ["USE_CATALOG"]).seqs[-1]
    before = ac.store.cursor("demo")
    d = Daemon(load_config("pushdown.toml"))
    worker = d.workers["demo"]
    d.stop.set()  # SIGTERM before the first statement ends: the apply is abandoned after it
    worker.reconcile(full=False)
    assert ac.store.cursor("demo") == before < last
    assert "demo" not in Store("pd.db").sync_status()  # no success recorded
    metrics = d.metrics.render().decode()
    assert 'pushdown_reconciles_total{backend="demo",kind="pending",result="abandoned"} 1.0' in metrics
    d.stop.clear()
    worker.reconcile(full=False)
    assert ac.store.cursor("demo") == last and worker.last_success is not None
    assert worker.ac is not None
    held = {(p.user, p.operation, str(p.object)) for p in worker.ac.backends["demo"].held}  # type: ignore[attr-defined]
    assert ("ann", "load_catalog", "catalog c") in held
    assert worker.ac.sync(["demo"], full=True, dry_run=True)[0].plan.empty  # type: ignore[union-attr]
    worker.ac.close()
    if worker.store is not None:
        worker.store.close()
    d.close()
    ac.close()


def test_an_unexpected_fault_is_reported_backed_off_and_the_next_round_starts_afresh(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    d = Daemon(load_config("pushdown.toml"))
    worker = d.workers["demo"]

    def broken(self: Following, *args: object, **kwargs: object) -> None:
        raise RuntimeError("a bug")

    monkeypatch.setattr(Following, "sync", broken)
    worker.round()
    assert worker.ac is None and worker.failures == 1 and worker.last_success is None
    assert worker.not_before > time.monotonic()  # backed off, not spinning
    assert "unexpected RuntimeError: a bug" in (worker.last_error or "")
    assert Store("pd.db").sync_status()["demo"]["error_kind"] == TEMPORARY
    monkeypatch.undo()
    worker.not_before = 0.0
    worker.round()
    assert worker.ac is not None and worker.last_success is not None and worker.failures == 0
    worker.ac.close()
    if worker.store is not None:
        worker.store.close()
    d.close()


def test_a_commit_wakes_the_daemon_without_waiting_for_its_poll(home: Path) -> None:
    Path("pushdown.toml").write_text(CONFIG.replace('poll = "50ms"', 'poll = "1h"').replace('"2s"', '"1h"'))
    r = Running(Daemon(load_config("pushdown.toml")))
    try:
        ac = library()
        wait_for(lambda: get(r.url("/readyz"))[0] == 200)  # the first full reconcile converged
        seq = ac.add_user("ann").seqs[-1]
        wait_for(lambda: ac.store.cursor("demo") >= seq, timeout=60.0)  # the poll is an hour
        ac.close()
    finally:
        assert r.stop() == 0


def test_commits_in_a_burst_are_gathered_into_rounds_at_most_one_per_gather(home: Path) -> None:
    """A burst of commits, each ringing the store's bell, costs at most one round per
    ``gather`` (300 ms here), however many commits arrive meanwhile: rounds are counted,
    and the bound is the one the design gives, 1 + the burst's duration / ``gather`` (+1
    for the round already under way). A slower machine only makes fewer rounds. Without
    the gather every commit wakes its own round (184 rounds for 200 commits, against a
    bound of 5, when the wait was taken out)."""
    slow = CONFIG.replace('poll = "50ms"', 'poll = "1h"\ngather = "300ms"').replace('"2s"', '"1h"')
    Path("pushdown.toml").write_text(slow)
    r = Running(Daemon(load_config("pushdown.toml")))
    rounds = r.daemon.metrics.polls.labels("demo")
    try:
        ac = library()
        wait_for(lambda: get(r.url("/readyz"))[0] == 200)  # the first full reconcile converged
        before = rounds._value.get()
        started = time.monotonic()
        commits, seq = 0, 0
        while commits < 40 or time.monotonic() - started < 1.0:
            seq = ac.add_user(f"u{commits}").seqs[-1]
            commits += 1
        wait_for(lambda: ac.store.cursor("demo") >= seq, timeout=60.0)  # the poll is an hour
        took = time.monotonic() - started
        made = rounds._value.get() - before
        ac.close()
    finally:
        assert r.stop() == 0
    bound = 2 + took / 0.3
    assert 1 <= made <= bound, (made, bound, commits, took)


def _metric(port: int, name: str) -> float:
    """One sample of the daemon's /metrics (0 when absent)."""
    code, text = get(f"http://127.0.0.1:{port}/metrics")
    found = [line.rsplit(" ", 1)[1] for line in text.splitlines() if line.startswith(name + " ")]
    return float(found[0]) if code == 200 and found else 0.0


FULL_OK = 'pushdown_reconciles_total{backend="demo",kind="full",result="ok"}'
FROZEN = "pushdown_daemon_frozen_objects"


@pytest.mark.parametrize("freeze", [True, False])
def test_a_daemon_process_freezes_its_model_after_a_full_reconcile_unless_told_not_to(
    home: Path, daemons: list[DaemonProcess], freeze: bool
) -> None:
    """``pushdown daemon``, a process of its own: after each full reconcile (every 2 s
    here) the objects alive are frozen (``gc.freeze``, counted on /metrics), thawed,
    collected and frozen again after the next one reads the model; ``freeze = false``
    freezes nothing. A daemon run inside a caller's process never freezes the caller's
    objects."""
    config = home / "pushdown.toml"
    config.write_text(CONFIG + f"freeze = {str(freeze).lower()}\n")
    d = DaemonProcess(config, home / "d.log")
    daemons.append(d)
    port = d.port()
    wait_for(lambda: _metric(port, FULL_OK) >= 2, 60)
    if freeze:
        wait_for(lambda: _metric(port, FROZEN) > 1000, 30)
    else:
        assert _metric(port, FROZEN) == 0
    assert gc.get_freeze_count() == 0  # this process (the caller's) was never frozen
    assert d.term() == 0
