"""The library's model shared by threads (:class:`pushdown.app.service.models.Shared`): a
model held by a sync is never changed, a change goes to a free replica brought up from the
journal, and the single-threaded path copies nothing. Pure (an in-memory store)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from pushdown.app.service import AccessControl
from pushdown.errors import PushdownError
from pushdown.journal.store import Store
from pushdown.model.state import Model


def _library() -> AccessControl:
    ac = AccessControl(Store(":memory:"), push=False)
    ac.add_user("alice")
    return ac


def _users(model: Model) -> set[str]:
    return set(model.users)


def test_a_change_without_holders_changes_the_current_model_and_copies_nothing() -> None:
    ac = _library()
    before = ac.model
    ac.add_user("bob")
    assert ac.model is before and "bob" in before.users
    assert ac._shared.copies == 0


def test_a_held_model_never_changes_and_the_change_goes_to_another() -> None:
    ac = _library()
    shared = ac._shared
    with shared.pinned() as (held, seq):
        version = held.version
        ac.add_user("bob")  # one copy: no replica was free
        ac.add_user("carol")  # the new current one is free: changed in place
        assert held.version == version and _users(held) == {"alice"}
        assert seq < shared.seq and _users(ac.model) == {"alice", "bob", "carol"}
        assert shared.copies == 1
    # let go: the old model is the spare, brought up from the journal when next needed
    with shared.pinned() as (second, _):
        ac.add_user("dave")
        assert _users(second) == {"alice", "bob", "carol"}
    assert ac.model is held and _users(held) == {"alice", "bob", "carol", "dave"}
    assert shared.copies == 1  # the spare was reused, not copied
    assert _users(ac.store.load()) == _users(ac.model)


def test_a_refused_commit_leaves_the_models_as_they_were() -> None:
    ac = _library()
    with ac._shared.pinned() as (held, _):
        with pytest.raises(PushdownError):
            ac.add_user("alice")  # exists: refused before anything is written
        assert _users(held) == {"alice"}
    assert _users(ac.model) == {"alice"} and ac._shared.seq == ac.store.last_seq()


def test_replicas_let_go_for_good_are_counted_so_the_copies_are_bounded() -> None:
    """Two models held while changes land: two copies. Let go, the newer one is kept as
    the spare and the older one dropped: 1 + copies - dropped models stay alive (the
    current and the spare), which bounds the copies a run of many threads may make."""
    ac = _library()
    shared = ac._shared
    with shared.pinned() as (first, _):
        ac.add_user("bob")  # copy 1
        with shared.pinned() as (second, _):
            ac.add_user("carol")  # copy 2: both replicas held
            assert shared.copies == 2 and shared.dropped == 0
    assert shared.spare is not None and shared.spare[0] is second  # the newer one kept
    assert shared.dropped == 1 and first is not ac.model
    ac.add_user("dave")  # the current one is free: no copy, nothing dropped
    assert (shared.copies, shared.dropped) == (2, 1)


def test_a_replica_of_a_refused_commit_is_counted_as_let_go(monkeypatch: pytest.MonkeyPatch) -> None:
    """A model is held, so a change gets a copy; the store refuses the commit: the copy is
    never published nor kept, and is counted as let go, and the model held is unchanged."""
    ac = _library()
    shared = ac._shared

    def refuse(*args: object, **kwargs: object) -> list[int]:
        raise OSError("disk full")

    with shared.pinned() as (held, _):
        monkeypatch.setattr(ac.store, "append", refuse)
        with pytest.raises(OSError):
            ac.add_user("bob")
        assert (shared.copies, shared.dropped) == (1, 1)
        assert "bob" not in held.users and "bob" not in ac.model.users


_SETTLED = """
import gc, sys
from pushdown.app.service import AccessControl
from pushdown.journal.store import Store

def frozen(obj):  # the permanent generation is not among the collector's objects
    return not any(o is obj for o in gc.get_objects())

served = AccessControl(Store(sys.argv[1]), push=False)
served.add_user("alice")
assert not frozen(served.model)
served.settle_models()
first = served.model
assert frozen(first) and gc.get_freeze_count() > 0
served.add_user("carol")  # a change made here: in place, nothing read again
assert served.model is first
other = AccessControl(Store(sys.argv[1]), push=False)  # another process's writer
other.add_user("bob")
again = served.reader().model  # read whole from the store
assert again is not first and {"alice", "bob", "carol"} <= set(again.users)
assert frozen(again), "the model read again was left to the collector's walks"
print("settled", gc.get_freeze_count())
"""


def test_a_settled_process_freezes_each_model_it_reads_whole(tmp_path: Path) -> None:
    # ``pushdown serve``'s process: its model, and the one read again after another process
    # committed, leave the cyclic collector's walks (a walk over 100,000 tables held a
    # request for half a second). A process of its own: gc.freeze is process-wide.
    run = subprocess.run(
        [sys.executable, "-c", _SETTLED, str(tmp_path / "pd.db")],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert run.returncode == 0, run.stderr[-2000:]
    assert run.stdout.startswith("settled")
