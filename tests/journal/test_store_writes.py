"""The store's write transactions: a writer that meets the lock retries in short pauses and
gets it once it is free, or a clear Busy; a sync's cursor, summary and lease give-back are
one transaction; bookkeeping commits never carry a journal entry."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from pushdown.errors import Busy
from pushdown.journal.store import Store
from pushdown.model import events as ev


def test_a_writer_waiting_on_the_lock_gets_it_once_it_is_given_back(tmp_path: Path) -> None:
    holder, waiter = Store(tmp_path / "s.db"), Store(tmp_path / "s.db")
    tried, done = threading.Event(), threading.Event()
    failed: list[BaseException] = []

    def write() -> None:
        tried.set()
        try:
            with waiter.write_lock():
                waiter.append([ev.UserAdded("bob")])
        except BaseException as exc:  # reported below
            failed.append(exc)
        done.set()

    with holder.write_lock():
        holder.append([ev.UserAdded("ann")])
        thread = threading.Thread(target=write)
        thread.start()
        assert tried.wait(10)
        assert not done.wait(0.05)  # it waits while the lock is held
    thread.join(15)
    assert done.is_set() and not failed
    assert set(Store(tmp_path / "s.db").load().users) == {"ann", "bob"}


def test_a_writer_held_off_past_its_timeout_gets_busy_and_writes_nothing(tmp_path: Path) -> None:
    holder, waiter = Store(tmp_path / "s.db"), Store(tmp_path / "s.db", busy_timeout=0.1)
    with holder.write_lock():
        with pytest.raises(Busy) as info:
            with waiter.write_lock():
                waiter.append([ev.UserAdded("bob")])
        assert "busy" in str(info.value) and "nothing was written" in str(info.value)
        with pytest.raises(Busy):
            waiter.record_sync("mysql1", 1.0)  # bookkeeping waits the same way
    assert not waiter.load().users
    assert not waiter.db.in_transaction


def test_advancing_the_cursor_gives_the_lease_back_in_the_same_transaction(tmp_path: Path) -> None:
    store = Store(tmp_path / "s.db")
    with store.write_lock():
        store.append([ev.UserAdded("ann")])
    taken: list[int] = []
    real = store.write_lock

    def counted(*, durable: bool = True):  # type: ignore[no-untyped-def]
        taken.append(durable)
        return real(durable=durable)

    with store.backend_lease("mysql1") as held:
        store.write_lock = counted  # type: ignore[method-assign]
        assert store.advance_cursor("mysql1", 1, held.holder, meta={"seen.mysql1": "x"}, give_back=held)
        assert store.leases() == {}  # given back with the cursor
    assert taken == [False]  # one transaction; the block's end wrote nothing more
    assert store.cursor("mysql1") == 1 and store.get_meta("seen.mysql1") == "x"


def test_a_lost_lease_moves_no_cursor_and_gives_nothing_back(tmp_path: Path) -> None:
    store = Store(tmp_path / "s.db")
    with store.write_lock():
        store.append([ev.UserAdded("ann")])
    with store.backend_lease("mysql1") as held:
        with store.write_lock():  # taken over meanwhile
            store.db.execute("UPDATE leases SET holder = 'other:1:x' WHERE backend = 'mysql1'")
        assert not store.advance_cursor("mysql1", 1, held.holder, meta={"seen.mysql1": "x"}, give_back=held)
        assert not held.given_back
        assert store.leases()["mysql1"][0] == "other:1:x"
    assert store.cursor("mysql1") == 0 and store.get_meta("seen.mysql1") is None


def test_bookkeeping_never_carries_a_journal_entry_and_restores_durability(tmp_path: Path) -> None:
    store = Store(tmp_path / "s.db")
    before = store.db.execute("PRAGMA synchronous").fetchone()[0]
    with pytest.raises(RuntimeError):
        with store.write_lock(durable=False):
            store.append([ev.UserAdded("ann")])
    store.record_sync("mysql1", 2.0, findings=3)
    assert store.db.execute("PRAGMA synchronous").fetchone()[0] == before
    assert store.last_seq() == 0 and not store.load().users
    assert store.sync_status()["mysql1"]["findings"] == 3
