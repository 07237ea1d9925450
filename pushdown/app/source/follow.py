"""Follow a model source: read it, check the read, converge the store's model to it.

A poll reads the source once. A read equal to the last one used (and a store nobody
else changed since) changes nothing, so it needs no second read. Any other read is used
only when a second read right after it is equal to it: a read that overlapped a change
differs from the next one, and the poll reads again (up to ``attempts`` reads), then
gives up until the next interval. A used read becomes the target model and the store's
model is made equal to it as ONE change, written by the source (via ``source``), after
the mass-removal check: a read that would remove more than ``max_removal_share`` of the
grants, role assignments and owners the model holds is held back until someone says so
(``pushdown pull --allow-mass-removal``).

Every poll is recorded in the store (``pushdown status``): the last good read and its
age, what the last change did, the last error and its kind, and what the source holds
that no configured backend enforces.
"""

from __future__ import annotations

import logging
import time

from pushdown.app.service import AccessControl
from pushdown.app.service.history import describe
from pushdown.app.service.sourcestatus import (
    PollResult,
    SourceStatus,
    describe_change,
    load_status,
    save_status,
)
from pushdown.app.settings import Config
from pushdown.app.settings.source import SourceSettings
from pushdown.app.source.gravitino import CHANGED, GravitinoReader, Snapshot, SourceUnreadable
from pushdown.app.source.target import fingerprint, removal_guard, summary, to_model
from pushdown.errors import PushdownError
from pushdown.journal.store import Store
from pushdown.model.events import Event

log = logging.getLogger("pushdown.source")
EXAMPLES = 5
GUARDED = "guarded"
FAILED = "failed"


class Follower:
    """Polls one source for one store; keeps the last read it used (a poll that reads the
    same again costs one read and changes nothing)."""

    def __init__(self, config: Config, reader: GravitinoReader | None = None) -> None:
        if config.follow is None:
            raise PushdownError(f"{config.source}: no [source] configured; there is nothing to follow")
        self.config = config
        self.settings: SourceSettings = config.follow
        self.reader = reader or GravitinoReader(self.settings)
        self.last: Snapshot | None = None
        self.last_seq: int | None = None

    def close(self) -> None:
        self.reader.close()

    def poll(self, ac: AccessControl, *, allow_mass_removal: bool = False) -> PollResult:
        """Read the source and converge ``ac``'s store to it; record the outcome there."""
        started, calls0 = time.monotonic(), self.reader.calls
        store = ac.store
        status = load_status(store, self.settings.describe())
        status.last_attempt = time.time()
        reads = 0
        try:
            snap = self.reader.read()
            reads += 1
            seq = store.last_seq()
            if self._unchanged(snap, seq, status):
                return self._done(store, status, snap, [], started, calls0, reads, seq, unchanged=True)
            for _ in range(self.settings.attempts - 1):  # a second, equal read confirms it
                again = self.reader.read()
                reads += 1
                if again == snap:
                    break
                snap = again
            else:
                raise SourceUnreadable(
                    CHANGED, f"{reads} reads in a row differed (the source kept changing); trying again later"
                )
            built = to_model(snap, self.settings, self.config.backends, ac.model.service_admins)
            why = None if allow_mass_removal else removal_guard(ac.model, built.model, self.settings)
            if why is not None:
                raise _Held(why)
            result = ac.as_source().load_model(built.model)
            events = list(result.events)
            seq = ac.store.last_seq()
            return self._done(store, status, snap, events, started, calls0, reads, seq, notes=built.notes)
        except _Held as held:
            return self._failed(store, status, GUARDED, str(held), started, calls0, reads)
        except SourceUnreadable as exc:
            return self._failed(store, status, exc.kind, str(exc), started, calls0, reads)
        except PushdownError as exc:  # the store busy, a model the store refused
            return self._failed(store, status, FAILED, str(exc), started, calls0, reads)

    def _unchanged(self, snap: Snapshot, seq: int, status: SourceStatus) -> bool:
        """A read that equals the last one used, over a store nobody changed since: using it
        would change nothing, so it needs no confirmation (whatever changed meanwhile is
        seen by the next poll)."""
        if self.last is not None and self.last_seq == seq:
            return snap == self.last
        return (
            status.seq == seq and status.fingerprint is not None and status.fingerprint == fingerprint(snap)
        )

    def _done(
        self,
        store: Store,
        status: SourceStatus,
        snap: Snapshot,
        events: list[Event],
        started: float,
        calls0: int,
        reads: int,
        seq: int,
        *,
        notes: list[str] | None = None,
        unchanged: bool = False,
    ) -> PollResult:
        took = time.monotonic() - started
        now = time.time()
        if not unchanged or self.last is None:
            status.fingerprint = fingerprint(snap)
        self.last, self.last_seq = snap, seq
        status.last_good, status.seq = now, seq
        status.size = snap.size
        if notes is not None:
            status.notes = notes
            for note in notes:
                log.warning("source: %s", note, extra={"source": status.source, "note": note})
        if events:
            status.last_change, status.changed = now, summary(events)
            status.examples = [describe(e) for e in events[:EXAMPLES]]
            log.info(
                "source: %d model change(s) from %s: %s",
                len(events),
                status.source,
                describe_change(status.changed),
                extra={"source": status.source, "changes": len(events), "seq": seq},
            )
        status.reads, status.calls, status.seconds = reads, self.reader.calls - calls0, took
        save_status(store, status)
        return PollResult(
            True,
            len(events),
            summary(events),
            notes=tuple(status.notes),
            reads=reads,
            calls=status.calls,
            seconds=took,
            unchanged=unchanged,
        )

    def _failed(
        self,
        store: Store,
        status: SourceStatus,
        kind: str,
        error: str,
        started: float,
        calls0: int,
        reads: int,
    ) -> PollResult:
        took = time.monotonic() - started
        status.last_error, status.last_error_at, status.error_kind = error, time.time(), kind
        status.reads, status.calls, status.seconds = reads, self.reader.calls - calls0, took
        log.error(
            "source: %s not used (%s): %s; the model stays as it was, the next poll tries again",
            status.source,
            kind,
            error,
            extra={"source": status.source, "result": kind},
        )
        try:
            save_status(store, status)
        except PushdownError as exc:
            log.warning("source: could not record the error in the store: %s", exc)
        return PollResult(False, error=error, kind=kind, reads=reads, calls=status.calls, seconds=took)


class _Held(Exception):
    """The read would remove most of the model: held back for a person."""
