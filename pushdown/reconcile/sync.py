"""Reconcile backends with the model: plan, apply, read back, require convergence.

``reconcile`` is the whole level-triggered loop for one backend and one scope. The
:class:`Dispatcher` turns the journal into scopes: each backend's cursor says which
events it has seen; the union of the scopes of the events after it is where the
backend must look again. The cursor moves only after the backend converged, so a
backend that is down catches up later without losing anything.

What changes on a server by other hands (a table created there) is in no journal: on
every sync the dispatcher also asks the backend to ``discover`` it, cheaply, against
the summary the backend gave at its last converged sync (kept in the store's meta),
and widens the pending scope to what changed.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field

from pushdown.errors import (
    BackendError,
    Busy,
    ConfigError,
    Guarded,
    NotConverged,
    PermanentBackendError,
    PushdownError,
    TemporaryBackendError,
)
from pushdown.journal.lease import Held
from pushdown.journal.store import Store
from pushdown.model.securables import METALAKE, SecurableType
from pushdown.model.state import Model
from pushdown.reconcile.backend import Applied, Backend, Progress
from pushdown.reconcile.plan import Plan
from pushdown.reconcile.planner import plan_on, resolve
from pushdown.reconcile.scope import Scope, scope_of

log = logging.getLogger(__name__)

#: How an error is classed in a result: retry later, give up, or fix the configuration.
TEMPORARY, PERMANENT, CONFIG, GUARDED = "temporary", "permanent", "configuration", "guarded"


def error_kind(failure: BaseException | None) -> str:
    """The class of a failure: temporary when it says when to try again (its ``delay``)."""
    if getattr(failure, "delay", None) is not None:
        return TEMPORARY
    if isinstance(failure, ConfigError):
        return CONFIG
    if isinstance(failure, Guarded):
        return GUARDED
    return PERMANENT


@dataclass(frozen=True)
class SyncResult:
    backend: str
    plan: Plan | None
    applied: bool = False
    #: what went wrong, in words, when the sync failed
    error: str | None = None
    seq: int = 0
    #: the error itself: its class decides what to do, its ``delay`` when to try again
    failure: PushdownError | None = field(default=None, compare=False)

    @property
    def ok(self) -> bool:
        return self.error is None

    @property
    def kind(self) -> str | None:
        """TEMPORARY, PERMANENT, CONFIG or GUARDED when ``error`` is set."""
        return None if self.error is None else error_kind(self.failure)

    @property
    def retry_after(self) -> float | None:
        """Seconds after which a temporary error is worth retrying."""
        return None if self.failure is None else self.failure.delay


def _no_progress(n: int) -> None:
    return None


def reconcile(
    backend: Backend,
    model: Model,
    scope: Scope,
    *,
    dry_run: bool = False,
    progress: Progress = _no_progress,
    start: Callable[[Plan], Progress] | None = None,
    retries: int = 2,
    delay: float = 0.5,
    sleep: Callable[[float], None] = time.sleep,
    expect: Callable[[Plan], None] | None = None,
    allow_mass_removal: bool = False,
) -> tuple[Plan, bool]:
    """Plan, and unless ``dry_run``, apply and verify. Returns the first plan and
    whether anything was applied. Raises :class:`BackendError` on failure.

    ``start(plan)``, when given, is called just before the plan is applied and returns
    the progress callback (so a progress bar knows its length). ``expect(plan)``, when
    given, may refuse the plan (a saved plan that went stale) before anything is applied.
    A plan with a guard (it removes most of what the backend holds) is applied only with
    ``allow_mass_removal``; otherwise :class:`~pushdown.errors.Guarded` is raised."""
    attempt = 0
    while True:
        try:
            return _once(backend, model, scope, dry_run, progress, start, expect, allow_mass_removal)
        except TemporaryBackendError as exc:
            if attempt >= retries:
                raise
            attempt += 1
            log.warning("%s; retrying (%d of %d)", exc, attempt, retries)
            sleep(delay * attempt)


def _once(
    backend: Backend,
    model: Model,
    scope: Scope,
    dry_run: bool,
    progress: Progress,
    start: Callable[[Plan], Progress] | None,
    expect: Callable[[Plan], None] | None,
    allow_mass_removal: bool,
) -> tuple[Plan, bool]:
    where = resolve(backend, model, scope)
    snapshot = backend.read(model, where)
    desired = backend.compile(model, snapshot, where)
    plan = plan_on(backend, model, scope, where, snapshot, desired)
    if expect is not None:
        expect(plan)
    if dry_run or plan.empty:
        return plan, False
    if plan.guard and not allow_mass_removal:
        raise Guarded(f"{backend.name}: not applied: {plan.guard}")
    applied = backend.apply(plan, snapshot, start(plan) if start else progress)
    after = backend.reread(model, where, plan, snapshot, applied)
    second = plan_on(backend, model, scope, where, after, desired)  # the model did not move
    if applied.failures:
        raise PermanentBackendError(backend.name, _refused(applied, plan, second))
    if not second.empty:
        raise NotConverged(
            backend.name,
            f"after apply, reading back still shows {len(second.ops)} difference(s):\n" + second.render(),
        )
    return plan, True


def _refused(applied: Applied, plan: Plan, second: Plan) -> str:
    lines = [
        f"{len(applied.failures)} statement(s) refused; the other {applied.done} of {len(plan.ops)} "
        "operation(s) were applied:"
    ]
    lines += [f"  {f}" for f in applied.failures]
    if not second.empty:
        lines.append(f"still to do after a person acts ({len(second.ops)}):")
        lines += [f"  {op}" for op in second.ops[:20]]
    return "\n".join(lines)


Lease = Callable[[str], AbstractContextManager[object]]
#: Loads the model now, with the journal position it reflects (events up to it are in it).
Loader = Callable[[], tuple[Model, int]]

#: store meta key prefix: a backend's summary of its server at its last converged sync
_SEEN = "discovered:"


class Dispatcher:
    """Feeds journalled changes to each backend as a scope, one backend at a time."""

    def __init__(self, store: Store, backends: Mapping[str, Backend], lease: Lease | None = None) -> None:
        self.store = store
        self.backends = backends
        self.lease = lease
        #: apply plans that remove most of what a backend holds (see :func:`reconcile`)
        self.allow_mass_removal = False

    def pending_scope(self, name: str, upto: int | None = None) -> tuple[Scope, int]:
        """The union of the scopes of events the backend has not seen (up to ``upto``, the
        position the model in hand reflects), and the last seq taken."""
        cursor = self.store.cursor(name)
        scopes, last = [], cursor
        for seq, event in self.store.events_since(cursor):
            if upto is not None and seq > upto:
                break  # not in the model in hand: the next sync takes it
            scopes.append(scope_of(event))
            last = seq
        return Scope.union(scopes), last

    def run(
        self,
        model: Model,
        *,
        names: list[str] | None = None,
        full: bool = False,
        dry_run: bool = False,
        progress: Callable[[str, int], Progress] | None = None,
        expect: Callable[[Plan], None] | None = None,
        load: Loader | None = None,
    ) -> list[SyncResult]:
        """``progress(backend, n)`` is called before ``n`` operations are applied to a
        backend and returns that backend's progress callback. ``load``, when given, is
        asked for the current model (and the journal position it reflects) once the
        backend's writer lease is held, so a writer that waited never applies a model
        older than the journal it marks as seen, and never marks later events seen.
        Without ``load`` an applying run reads the store's snapshot itself: the cursor only
        ever moves to the position of the model the plan was compiled from, and only
        while the backend's lease is still held (checked in the cursor's own transaction)."""
        results = unenforced(model, self.backends)
        for name in names or sorted(self.backends):
            results.append(self._one(name, model, full, dry_run, progress, expect, load))
        return results

    def _one(
        self,
        name: str,
        model: Model,
        full: bool,
        dry_run: bool,
        progress: Callable[[str, int], Progress] | None,
        expect: Callable[[Plan], None] | None,
        load: Loader | None,
    ) -> SyncResult:
        held = self.lease(name) if self.lease is not None and not dry_run else nullcontext()
        if load is None and not dry_run:
            load = self._snapshot  # never mark seen a position the model in hand may not hold
        try:
            with held as lease:
                return self._held(name, model, full, dry_run, progress, expect, load, lease)
        except PushdownError as exc:  # the lease itself: Busy
            return _failed(name, exc, self.store.cursor(name))

    def _snapshot(self) -> tuple[Model, int]:
        return self.store.snapshot()

    def _held(
        self,
        name: str,
        model: Model,
        full: bool,
        dry_run: bool,
        progress: Callable[[str, int], Progress] | None,
        expect: Callable[[Plan], None] | None,
        load: Loader | None,
        held: object = None,
    ) -> SyncResult:
        backend = self.backends[name]
        holder = getattr(held, "holder", None)
        upto = None
        if load is not None:
            model, upto = load()
        if full:
            scope, last = Scope.everything(), (self.store.last_seq() if upto is None else upto)
        else:
            scope, last = self.pending_scope(name, upto)
        summary = None
        if not full and scope.empty:
            # Nothing journalled: ask the server what changed by other hands. A sync with
            # a pending scope reads that scope's inventory anyway, and a full one all of it,
            # so neither pays for the question (it reads every database's table list).
            seen = self.store.get_meta(_SEEN + name)
            try:
                scope, summary = backend.discover(model, seen)
            except PushdownError as exc:
                return _failed(name, exc, self.store.cursor(name))
            if summary == seen:
                summary = None  # the baseline stands: no write transaction for it
        if scope.empty:
            if summary is not None and not dry_run:
                # the baseline for the next question (derived from the server: bookkeeping)
                with self.store.write_lock(durable=False):
                    self.store.set_meta(_SEEN + name, summary)
            return SyncResult(name, None, seq=last)
        if full and not dry_run:
            # the server's summary as it stands before the sync reads: what changes by other
            # hands once the read is made (after the read-back too) differs from it, so the
            # next idle sync looks again; one taken after the sync would mark it seen
            summary = self._summary(backend, model, name)
        start = (lambda plan: progress(name, len(plan.ops))) if progress else None
        try:
            plan, applied = reconcile(
                backend,
                model,
                scope,
                dry_run=dry_run,
                start=start,
                expect=expect,
                allow_mass_removal=self.allow_mass_removal,
            )
        except PushdownError as exc:
            return _failed(name, exc, self.store.cursor(name))
        if not dry_run:
            # the position the model compiled from, and only while the lease is still ours:
            # events after it were not in that model and are synced next
            # (a full sync read everything and converged: the server's summary from before
            # its read is recorded with the cursor, and the lease given back in the same
            # write transaction)
            meta = {_SEEN + name: summary} if summary is not None else None
            give_back = held if isinstance(held, Held) else None
            if not self.store.advance_cursor(name, last, holder, meta=meta, give_back=give_back):
                lost = Busy(
                    f"backend {name}: its writer lease was taken over during the sync; "
                    "the cursor stays; the next sync reads the scope again"
                )
                return _failed(name, lost, self.store.cursor(name))
        return SyncResult(name, plan, applied, seq=last)

    @staticmethod
    def _summary(backend: Backend, model: Model, name: str) -> str | None:
        try:
            return backend.discover(model, None)[1]
        except PushdownError as exc:  # the sync itself converged; the next one asks again
            log.warning("%s: could not summarise the server after a full sync: %s", name, exc)
            return None


def unenforced(model: Model, backends: Mapping[str, Backend]) -> list[SyncResult]:
    """A configuration error per backend name that a catalog's ``backend`` property gives
    but no configured backend has: such a catalog would be enforced nowhere while the
    model (and ``explain``) says what it allows, so this is reported, never skipped."""
    named: dict[str, list[str]] = {}
    for obj in model.children(METALAKE):  # the catalogs, without a walk over every object
        wanted = model.objects[obj].get("backend")
        if obj.type is SecurableType.CATALOG and wanted is not None and wanted not in backends:
            named.setdefault(str(wanted), []).append(obj.names[0])
    known = ", ".join(sorted(backends)) or "none"
    failures = {
        name: ConfigError(
            f"catalog(s) {', '.join(sorted(cats))} name backend {name!r}, which is not configured "
            f"(configured: {known}); they are enforced nowhere until it is configured or the "
            "catalogs' backend property is changed"
        )
        for name, cats in named.items()
    }
    return [
        SyncResult(
            name,
            None,
            error=str(failure),
            failure=failure,
        )
        for name, failure in sorted(failures.items())
    ]


def _failed(name: str, exc: PushdownError, cursor: int) -> SyncResult:
    text = str(exc) if isinstance(exc, (BackendError, Busy, Guarded)) else f"{name}: {exc}"
    return SyncResult(name, None, error=text, seq=cursor, failure=exc)
