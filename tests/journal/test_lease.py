"""Writer leases and a busy store: one writer per backend, a clear Busy error, no raw SQLite error."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from pushdown.app.service import AccessControl
from pushdown.errors import Busy
from pushdown.journal.store import Store

ROOT = Path(__file__).resolve().parents[2]

HOLD = """
import sys, time
from pushdown.journal.store import Store
store = Store(sys.argv[1])
with store.backend_lease("mysql1", ttl=float(sys.argv[2])):
    print("held", flush=True)
    time.sleep(float(sys.argv[3]))
    if len(sys.argv) > 4:  # a mark made while still holding the lease, just before giving it back
        open(sys.argv[4], "w").close()
print("released", flush=True)
"""


def test_a_lease_is_exclusive_and_given_back(tmp_path: Path) -> None:
    a, b = Store(tmp_path / "s.db"), Store(tmp_path / "s.db")
    with a.backend_lease("mysql1"):
        with pytest.raises(Busy) as info:
            with b.backend_lease("mysql1", timeout=0.2):
                pass
        with b.backend_lease("hive1", timeout=0.2):  # another backend is free
            pass
    message = str(info.value)
    assert message.startswith("backend mysql1 is busy: ")
    assert "holds its writer lease" in message and "waited 0.2 s" in message
    with b.backend_lease("mysql1", timeout=0.2):  # given back on exit
        pass
    assert b.db.execute("SELECT COUNT(*) FROM leases").fetchone() == (0,)


def test_a_lease_is_given_back_when_the_block_raises() -> None:
    store = Store()
    with pytest.raises(RuntimeError), store.backend_lease("b"):
        raise RuntimeError("boom")
    with store.backend_lease("b", timeout=0.1):
        pass


def test_two_threads_take_turns(tmp_path: Path) -> None:
    inside: list[int] = []
    overlap: list[bool] = []

    def writer(n: int) -> None:
        store = Store(tmp_path / "s.db")
        for _ in range(5):
            with store.backend_lease("mysql1", timeout=20):
                inside.append(n)
                overlap.append(len(inside) > 1)
                time.sleep(0.01)
                inside.remove(n)
        store.close()

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(overlap) == 15 and not any(overlap)


def test_threads_sharing_one_store_take_turns() -> None:
    store, inside, overlap = Store(), [0], []

    def writer() -> None:
        for _ in range(5):
            with store.backend_lease("b", timeout=20):
                inside[0] += 1
                overlap.append(inside[0] > 1)
                time.sleep(0.005)
                inside[0] -= 1

    threads = [threading.Thread(target=writer) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(overlap) == 15 and not any(overlap)


def _holder(db: Path, ttl: float, hold: float, mark: Path | None = None) -> subprocess.Popen[str]:
    proc = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(db), str(ttl), str(hold), *([str(mark)] if mark else [])],
        stdout=subprocess.PIPE,
        text=True,
        cwd=ROOT,
    )
    assert proc.stdout is not None and proc.stdout.readline() == "held\n"
    return proc


def _end(proc: subprocess.Popen[str], kill: bool = False) -> None:
    if kill:
        proc.kill()
    proc.communicate()


def test_another_process_waits_then_gets_a_clear_busy_error(tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    Store(db).close()
    proc = _holder(db, ttl=60, hold=30)
    try:
        with pytest.raises(Busy) as info, Store(db).backend_lease("mysql1", timeout=0.3):
            pass
        assert f":{proc.pid}:" in str(info.value)  # the holder: host, pid, random part
    finally:
        _end(proc, kill=True)


def test_the_lease_passes_to_the_waiting_process_when_given_back(tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    Store(db).close()
    giving_back = tmp_path / "giving-back"
    proc = _holder(db, ttl=60, hold=0.5, mark=giving_back)
    with Store(db).backend_lease("mysql1", timeout=20):
        # taken only once the holder was done: it marked that before giving the lease back
        assert giving_back.exists()
    _end(proc)


def test_a_crashed_holders_lease_expires_after_its_ttl(tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    Store(db).close()
    proc = _holder(db, ttl=1.0, hold=60)
    _end(proc, kill=True)  # SIGKILL: it never gives the lease back
    store = Store(db)
    assert store.db.execute("SELECT COUNT(*) FROM leases").fetchone() == (1,)
    started = time.monotonic()
    with store.backend_lease("mysql1", timeout=20):
        taken_after = time.monotonic() - started
    assert taken_after < 5


def test_a_busy_store_raises_busy_not_a_raw_sqlite_error(tmp_path: Path) -> None:
    holder = Store(tmp_path / "s.db")
    ac = AccessControl(Store(tmp_path / "s.db", busy_timeout=0.2), push=False)
    with holder.write_lock():
        with pytest.raises(Busy) as info:
            ac.add_user("alice")
    assert "store " in str(info.value) and "is busy" in str(info.value)
    assert "nothing was written" in str(info.value)
    assert "alice" not in ac.model.users
    ac.add_user("alice")  # free again
    assert "alice" in Store(tmp_path / "s.db").load().users


def test_the_write_lock_is_not_held_while_a_change_is_computed(tmp_path: Path) -> None:
    ac = AccessControl(Store(tmp_path / "s.db"), push=False)
    other = Store(tmp_path / "s.db", busy_timeout=0.2)
    seen: list[str] = []

    def build(model):  # type: ignore[no-untyped-def]
        with other.write_lock():  # another writer gets the lock while we compute
            seen.append("other wrote")
        from pushdown.model.changes import add_user

        return add_user(model, "bob")

    ac.change(build)
    assert seen == ["other wrote"] and "bob" in other.load().users


def test_a_change_is_recomputed_when_another_writer_committed_meanwhile(tmp_path: Path) -> None:
    ac = AccessControl(Store(tmp_path / "s.db"), push=False)
    other = AccessControl(Store(tmp_path / "s.db"), push=False)
    calls: list[int] = []

    def build(model):  # type: ignore[no-untyped-def]
        from pushdown.model.changes import add_user

        calls.append(len(model.users))
        if len(calls) == 1:
            other.add_user("first")  # commits between our compute and our write
        return add_user(model, "second")

    ac.change(build)
    assert calls == [0, 1]  # computed again against the model that includes "first"
    assert ac.model.users == {"first", "second"} == Store(tmp_path / "s.db").load().users


@pytest.mark.parametrize(
    ("make", "says"),
    [
        (lambda p: p.mkdir(), "is a directory, not a store file"),
        (lambda p: None, "lies in a directory that does not exist"),
        (lambda p: p.write_bytes(b"not a database at all, just text\n" * 4), "is not an SQLite database"),
    ],
)
def test_a_path_that_cannot_be_a_store_is_a_store_error(tmp_path: Path, make, says: str) -> None:  # type: ignore[no-untyped-def]
    from pushdown.errors import StoreError

    path = tmp_path / "x.db" if "does not exist" not in says else tmp_path / "missing" / "x.db"
    make(path)
    before = sorted(tmp_path.rglob("*"))
    with pytest.raises(StoreError) as info:
        Store(path)
    assert str(info.value) == f"store {path} {says}" or str(info.value).startswith(f"store {path} {says}")
    assert sorted(tmp_path.rglob("*")) == before
