"""Making and checking changes: the one path every model change takes (authorize, bind,
commit, push)."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

from pushdown.app.service.base import Base, ChangeResult
from pushdown.app.service.converge import converge
from pushdown.decide.evaluator import Evaluator, Target
from pushdown.decide.requirements import OPERATIONS
from pushdown.errors import Forbidden
from pushdown.model.actor import Actor
from pushdown.model.events import Event
from pushdown.model.securables import ObjectRef
from pushdown.model.state import Model
from pushdown.reconcile.backend import Backend
from pushdown.reconcile.bindings import Bindings, Server, claimed
from pushdown.reconcile.bindings import check as check_bindings


class Changing(Base):
    """Making and checking one change: authorize the actor, check the bindings, commit the
    events in one transaction (computed again under the lock when another writer moved),
    then push."""

    def change(
        self,
        build: Callable[[Model], list[Event]],
        *,
        metalake: str | None = None,
        push: bool | None = None,
        operation: str | None = None,
        target: Target | None = None,
        directory: bool = False,
        also: tuple[tuple[str, Target], ...] = (),
    ) -> ChangeResult:
        """Validate and commit one change (all of its events, or nothing), then push.

        While the model follows a source only the source's changes are made (``directory``:
        the directory's group members, which any sync records, are not the model's).

        ``operation`` (a row of the requirement table) on ``target``: what the acting user
        must be allowed; ``None`` with an actor: only the trusted administrator may make
        it. The check runs on the model the change is built from. ``also``: more
        (operation, target) pairs the acting user must be allowed, checked the same way
        (one change that acts on several roles: every one of them is checked).

        The change is computed before the store's write lock is taken, so the lock is
        held only while the events are written; if another writer committed in between,
        the change is computed again (and checked again) under the lock."""
        if not directory:
            self._refuse_if_followed()
        build = self._guarded(build, operation, target, also)

        self._refresh()
        # the position the model in hand reflects (a fresh read could already be newer);
        # held while the change is built, so no other thread's commit changes it meanwhile
        with self._shared.pinned() as (model, seq):
            base = (seq, self.store.get_meta("metalake"))
            events = build(model)
        seqs = self._commit(build, events, base, metalake)
        if self.hooks is not None:
            for seq, event in zip(seqs, events, strict=True):
                self.hooks.event_committed(event, seq)
        push = self.push if push is None else push
        synced = self._pushed() if push and events else ()
        return ChangeResult(tuple(events), tuple(seqs), synced)

    def _guarded(
        self,
        build: Callable[[Model], list[Event]],
        operation: str | None,
        target: Target | None,
        also: tuple[tuple[str, Target], ...] = (),
    ) -> Callable[[Model], list[Event]]:
        """``build`` with every check a change passes before it is written: the actor
        authorized (unless trusted), then the bindings (:meth:`_bound`). A preview of a
        change (``plan --spec``) runs the same, so it refuses what the change would."""
        if self.actor is not None and not self.actor.trusted:
            actor, inner = self.actor, build

            def build(model: Model) -> list[Event]:
                decisions = self._decisions_on(model)
                _check(decisions, actor, operation, target)
                for more_operation, more_target in also:
                    _check(decisions, actor, more_operation, more_target)
                return inner(model)

        return self._bound(build)

    def _bound(self, build: Callable[[Model], list[Event]]) -> Callable[[Model], list[Event]]:
        """``build``, its events checked (after the actor was authorized) against what only
        the configuration binds: catalogs to backends, filesets to locations, topics; and
        a checked caller's registrations against what the servers hold already (each
        object asked once, however often the change is computed)."""
        bindings = Bindings.of(
            (name, b.context.catalogs, b.context.locations) for name, b in sorted(self.backends.items())
        )
        administrator = self.actor is None or self.actor.trusted
        user = None if self.actor is None else self.actor.user

        answers: dict[tuple[str, ObjectRef], bool | None] = {}

        def checked(model: Model) -> list[Event]:
            events = build(model)
            check_bindings(model, events, bindings, administrator=administrator, user=user)
            if not administrator:
                claimed(model, events, self._servers(model, answers), user)
            return events

        return checked

    def _servers(self, model: Model, answers: dict[tuple[str, ObjectRef], bool | None]) -> list[Server]:
        """Each backend with the catalogs it enforces and its answer on an object (kept)."""

        def asker(name: str, backend: Backend) -> Callable[[ObjectRef], bool | None]:
            def on_server(obj: ObjectRef) -> bool | None:
                if (name, obj) not in answers:
                    answers[name, obj] = backend.on_server(model, obj)
                return answers[name, obj]

            return on_server

        return [(n, b.enforces(model), asker(n, b)) for n, b in sorted(self.backends.items())]

    def _version(self) -> tuple[int, str | None]:
        return self.store.version()

    def _commit(
        self,
        build: Callable[[Model], list[Event]],
        events: list[Event],
        base: tuple[int, str | None],
        metalake: str | None,
    ) -> list[int]:
        """Write ``events`` (rebuilt when the store moved since ``base``) and apply them in memory.
        Nothing to write on an unmoved store takes no write transaction (a sync records the
        directory's answer before every push: usually nothing)."""
        if not events and metalake is None and self._version() == base:
            return []
        touched = False
        try:
            with self.store.write_lock():
                if self._version() != base:  # another writer committed meanwhile
                    self._refresh()
                    with self._shared.pinned() as (model, _):
                        events[:] = build(model)
                # a model no sync holds (the current one when free): a sync compiling from
                # the current model meanwhile keeps it whole, at the position it recorded
                with self._shared.writing(self.store) as model:
                    seqs = self.store.append(events, self.actor)  # a refusal changes no model
                    touched = True
                    for event in events:
                        model.apply(event)
                    if metalake is not None and metalake != model.metalake:
                        self.store.set_meta("metalake", metalake)
                        model.metalake = metalake
                    self._shared.publish_locked(model, seqs[-1] if seqs else self._shared.seq)
        except BaseException:
            if touched:  # the transaction rolled back: so must the model in memory
                self._shared.publish(*self.store.snapshot(), keep=False)
                self._shared.loaded()
            raise
        return seqs

    def _one(
        self, fn: Callable[..., list[Event]], *args: Any, op: str | None = None, on: Target | None = None
    ) -> ChangeResult:
        return self.change(lambda model: fn(model, *args), operation=op, target=on)

    @property
    def _author(self) -> str | None:
        """The acting user when it may own what it creates (a user of the model)."""
        if self.actor is None:
            return None
        return self.actor.user if self.actor.user in self._model.users else None


def _check(model: Model, actor: Actor, operation: str | None, target: Target | None) -> None:
    """Refuse, before anything is written, what ``actor`` may not do."""
    if operation is None or target is None:
        raise Forbidden(
            actor.user, "change", "the model", "only the administrator identity may make this change"
        )
    evaluator = Evaluator(model)
    if evaluator.authorize(actor.user, operation, target, explain=False).allowed:
        return
    decision = evaluator.authorize(actor.user, operation, target)  # again, with the trace to show
    if not decision.allowed:
        failed = [step.text for step in decision.trace if not step.ok]
        why = failed[-1] if failed else "not allowed"
        kind = OPERATIONS[operation].target
        shown = f"{kind} {decision.target}" if kind in ("user", "group") else decision.target
        raise Forbidden(actor.user, operation, shown, why, decision)


def _converge_events(model: Model, target: Model) -> list[Event]:
    """The events of :func:`converge`, computed on a copy: building a change is pure."""
    return converge(copy.deepcopy(model), target)
