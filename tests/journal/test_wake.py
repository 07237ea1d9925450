"""The store's bell: a commit of journal entries rings it; nothing else does."""

from __future__ import annotations

from pathlib import Path

from pushdown.journal.store import Store
from pushdown.journal.wake import Listener, bell_of, ring
from pushdown.model import events as ev


def test_a_commit_of_events_rings_the_bell_and_a_write_without_events_does_not(tmp_path: Path) -> None:
    path = str(tmp_path / "pd.db")
    listener = Listener(path)
    writer = Store(path)  # another connection, as another process would hold
    try:
        assert not listener.wait(0)
        with writer.write_lock():
            writer.set_meta("k", "v")  # no journal entry: nobody is woken
        assert not listener.wait(0)
        with writer.write_lock():
            writer.append([ev.UserAdded("ann")])
        assert listener.wait(10)  # returns as soon as rung
        assert not listener.wait(0)  # one wake-up takes every ring so far
    finally:
        writer.close()
        listener.close()


def test_ringing_without_a_listener_or_a_bell_costs_nothing(tmp_path: Path) -> None:
    path = str(tmp_path / "pd.db")
    ring(path)  # no bell yet
    Listener(path).close()  # a bell nobody listens to
    ring(path)
    for _ in range(100):  # the pipe fills; a ring never blocks
        ring(path)
    assert bell_of(":memory:") is None
    Listener(":memory:").wait(0)
