"""The model in memory, shared by a library object's views and threads: the current
(model, journal position) pair, the models syncs hold, and a spare replica kept current
from the journal, so that a sync never compiles from a model another thread is changing,
and a change copies the estate only when every replica is held (then that copy is kept:
a process where syncs and changes overlap holds two or three models in memory)."""

from __future__ import annotations

import copy
import gc
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from pushdown.journal.store import Store
from pushdown.model.directory import EnforcedView
from pushdown.model.state import Model


@dataclass
class Shared:
    """The model in memory and the journal position it reflects, shared by every acting view.

    A model handed out by :meth:`pinned` (what a sync compiles from, what a change is built
    from) is never changed while it is held: the pair (model, position) is published whole
    under ``lock``, and a change applies its events to a model nobody holds — the current
    one when it is free (no copy: the single-threaded path costs nothing), else a spare
    replica brought up to the current position from the journal's new entries (cost follows
    the change). Only when every replica is held is one copied (once: it is then kept as the
    spare). Readers that do not pin (``model``, decisions) see the current model as before."""

    model: Model
    seq: int
    #: the model with the directory's recorded members, which every decision uses
    view: EnforcedView = field(default_factory=EnforcedView)
    lock: threading.Lock = field(default_factory=threading.Lock)
    #: id(model) -> [model, holders]: the models held now, never changed while here
    pins: dict[int, list[object]] = field(default_factory=dict)
    #: a replica nobody holds, at the position it was published at (behind ``seq``)
    spare: tuple[Model, int] | None = None
    #: replicas copied because every one was held (what a test may bound)
    copies: int = 0
    #: replicas let go for good (a newer spare kept instead, a failed commit's): with
    #: ``copies`` it bounds what is alive, ``1 + copies - dropped`` models
    dropped: int = 0
    #: called after a model read whole from the store is published (``None``: nothing);
    #: a process of its own sets :func:`settle` (see :meth:`Base.settle_models`)
    settle: Callable[[], None] | None = None

    def publish(self, model: Model, seq: int, *, keep: bool = True) -> None:
        """Make ``model`` at ``seq`` the current pair (one step for every reader);
        ``keep=False``: the model it replaces may be half-changed (a failed commit) and is
        never reused."""
        with self.lock:
            self._publish(model, seq, keep)

    def _publish(self, model: Model, seq: int, keep: bool = True) -> None:
        old, old_seq = self.model, self.seq
        self.model, self.seq = model, seq
        if not keep:
            if self.spare is not None:
                self.dropped += 1
            self.spare = None
            if old is not model and id(old) not in self.pins:
                self.dropped += 1
        elif old is not model and id(old) not in self.pins:
            self._keep(old, old_seq)

    def loaded(self) -> None:
        """A model read whole from the store was just published: settle, if asked to."""
        if self.settle is not None:
            self.settle()

    def _keep(self, model: Model, seq: int) -> None:
        if self.spare is None or self.spare[1] <= seq:
            if self.spare is not None and self.spare[0] is not model:
                self.dropped += 1
            self.spare = (model, seq)
        else:
            self.dropped += 1

    @contextmanager
    def pinned(self) -> Iterator[tuple[Model, int]]:
        """The current model and its position, held for the ``with`` block: no change is
        applied to that model object until every holder let it go."""
        with self.lock:
            model, seq = self.model, self.seq
            entry = self.pins.setdefault(id(model), [model, 0])
            entry[1] = int(entry[1]) + 1  # type: ignore[call-overload]
        try:
            yield model, seq
        finally:
            with self.lock:
                entry[1] = int(entry[1]) - 1  # type: ignore[call-overload]
                if not entry[1]:
                    del self.pins[id(model)]
                    if model is not self.model:
                        self._keep(model, seq)

    @contextmanager
    def writing(self, store: Store) -> Iterator[Model]:
        """A model at the current position that nobody holds, to apply a change to; the
        caller publishes it (:meth:`publish`) once the change is committed. Call under the
        store's write lock (the journal cannot move meanwhile). While the block runs no
        holder may take the current model (it may be the one changing)."""
        with self.lock:
            current = self.model
            if id(current) not in self.pins:
                yield current
                return
            spare, self.spare = self.spare, None
            if spare is not None and (spare[0] is current or id(spare[0]) in self.pins):
                spare = None
            if spare is None:  # every replica is held: one more (estate-sized, rare)
                model = copy.deepcopy(current)
                self.copies += 1
            else:
                model, at = spare
                for seq, event in store.events_since(at):
                    if seq > self.seq:
                        break
                    model.apply(event)
                model.metalake = current.metalake
            try:
                yield model
            except BaseException:
                self.dropped += 1  # a failed commit's replica is never published nor kept
                raise

    def publish_locked(self, model: Model, seq: int) -> None:
        """:meth:`publish` from inside :meth:`writing` (which holds the lock)."""
        self._publish(model, seq)


def settle() -> None:
    """Thaw what an earlier settle froze, collect once, then freeze what is alive (the
    models in memory) so that the cyclic collector no longer walks them on every
    collection of its oldest generation: at 100,000 tables such a walk holds the process
    for about half a second, at a moment no one chooses. Thawing first lets a replaced
    model's cycles be collected, so nothing frozen outlives the next settle. Only for a
    process of its own (``pushdown serve`` for the model it answers from, a daemon's
    workers after each full reconcile has read its model): a library's caller's objects
    are not ours to freeze."""
    gc.unfreeze()
    gc.collect()
    gc.freeze()
