"""A sync compiles from a model of its own, at the position it records: a commit by
another thread while the sync runs changes the live model, never the sync's."""

from __future__ import annotations

import threading

from pushdown.app.service import AccessControl
from pushdown.journal.store import Store


def test_a_commit_by_another_thread_during_a_sync_cannot_change_the_model_it_compiles() -> None:
    ac = AccessControl(Store(":memory:"), push=False)
    ac.add_user("ann")
    model, seq = ac._current()  # what a sync loads under a backend's lease
    assert model is not ac.model  # not the live model other threads' commits change
    assert seq == ac.store.last_seq()  # the position it records is the one it holds

    writer = threading.Thread(target=ac.add_user, args=("bob",))
    writer.start()
    writer.join()
    assert "bob" in ac.model.users and ac.store.last_seq() > seq
    assert model.users == {"ann"}  # the sync's model is still exactly its position

    dry = ac.sync_model()  # a dry run's model, too, is its own
    assert dry is not ac.model and dry.users == {"ann", "bob"}
