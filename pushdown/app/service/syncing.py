"""Pushing and syncing: decisions on the enforced model, the directory's members, the preview
of a spec, and the sync of the backends (each under its writer lease)."""

from __future__ import annotations

import copy
from collections.abc import Callable
from contextlib import ExitStack

from pushdown.app.service.base import ObjectLike, _obj
from pushdown.app.service.changes import Changes
from pushdown.app.service.changing import _converge_events
from pushdown.app.service.converge import converge
from pushdown.decide.evaluator import Decision, Evaluator, Target
from pushdown.model.actor import Actor
from pushdown.model.directory import with_members
from pushdown.model.events import Event, ExternalMembersChanged
from pushdown.model.principals import Principal
from pushdown.model.privileges import Privilege
from pushdown.model.state import Model
from pushdown.model.text import check_name
from pushdown.reconcile.plan import Plan
from pushdown.reconcile.sync import SyncResult


class Syncing(Changes):
    """Decisions on the model, the directory's members, previews and syncs."""

    def _pushed(self) -> tuple[SyncResult, ...]:
        return tuple(self.sync())

    def decision_model(self) -> Model:
        """The model every decision is made on (``authorize``, ``explain``, the REST
        service's checks and listings, the report): the store's model with the directory's
        members recorded at the last sync, exactly the model a sync hands the backends
        (:func:`pushdown.model.directory.enforced`). Asks no directory plugin; one view per
        model version, copying only what the directory adds (nothing when it adds nobody).
        Read it, never change it."""
        return self._decisions_on(self.model)

    def authorize(self, user: str, operation: str, target: Target, other: Target | None = None) -> Decision:
        return Evaluator(self.decision_model()).authorize(user, operation, target, other)

    def effective_privileges(self, principal: Principal | str, obj: ObjectLike) -> frozenset[Privilege]:
        return Evaluator(self.decision_model()).effective_privileges(principal, _obj(obj))

    # -- backends --------------------------------------------------------------------

    def outside_members(self, model: Model) -> dict[str, set[str]]:
        """Each group's members according to the directory plugins, beyond the model's own."""
        if self.hooks is None:
            return {}
        found = {g: self.hooks.group_members(g) - model.groups[g] for g in sorted(model.groups)}
        return {g: users for g, users in found.items() if users}

    def record_external_members(self) -> list[Event]:
        """Journal how the directory's answer changed since the last sync.

        The entry's scope names every user who joined or left, so a sync scoped by the
        journal also revokes what a departed member still holds.
        """

        def changed(model: Model) -> list[Event]:
            now = self.outside_members(model)
            out: list[Event] = []
            for group in sorted(set(now) | set(model.external_members)):
                after, before = now.get(group, set()), model.external_members.get(group, set())
                if after != before:
                    out.append(
                        ExternalMembersChanged(group, frozenset(after - before), frozenset(before - after))
                    )
            return out

        if self.hooks is None:
            return []
        # what the directory says is observed by pushdown itself, whoever's change led here
        observer = self
        if self.actor is not None and not self.actor.trusted:
            observer = self._as(Actor(self.access.admin, self.actor.via, self.actor.request, trusted=True))
        return list(observer.change(changed, push=False, directory=True).events)

    def sync_model(self, outside: dict[str, set[str]] | None = None) -> Model:
        """The model a sync compiles from, with the directory's members added (for that sync):
        those recorded in the model (as :meth:`decision_model` adds them for every decision),
        or ``outside`` (a dry run's fresh answer, recorded nowhere)."""
        model = self.model
        members = model.external_members if outside is None else outside
        # a copy of its own: a sync may run while another thread changes the live model
        return with_members(copy.deepcopy(model), members) if members else model

    def preview(self, target: Model, names: list[str] | None = None) -> tuple[list[Event], list[SyncResult]]:
        """What :meth:`load_model` of ``target`` and a full sync would do, writing nothing:
        the model changes it would record and each backend's plan against ``target``. The
        changes pass the checks :meth:`load_model` runs (the bindings: a refusal is raised
        as the change would raise it)."""
        check_name("metalake", target.metalake)
        self._guarded(lambda model: _converge_events(model, target), None, None)(self.model)
        working = copy.deepcopy(self.model)
        events = converge(working, target)
        model = with_members(working, self.outside_members(working))
        return events, self.dispatcher.run(model, names=names, full=True, dry_run=True)

    def sync(
        self,
        names: list[str] | None = None,
        *,
        full: bool = False,
        dry_run: bool = False,
        progress: Callable[[str, int], Callable[[int], None]] | None = None,
        expect: Callable[[Plan], None] | None = None,
    ) -> list[SyncResult]:
        """Sync the backends: the journal's pending scope, or everything (``full``).
        ``expect(plan)`` may refuse a plan before it is applied (a saved plan gone stale).

        Every backend compiles from the model held
        (:meth:`~pushdown.app.service.models.Shared.pinned`) at the journal position its
        cursor then records: another thread's change meanwhile goes to another model
        object, so a compile is never torn and never copies the estate."""
        with ExitStack() as held:

            def pin() -> tuple[Model, int]:
                with self.store.reading():  # no commit of this process lands in between
                    self._refresh()
                    return held.enter_context(self._shared.pinned())

            def hold() -> tuple[Model, int]:
                model, seq = pin()
                return self._decisions_on(model), seq  # with the recorded members

            if dry_run:  # a dry run writes nothing: ask the directory, record nothing
                model, _ = pin()
                model = with_members(model, self.outside_members(model))
                load = None
            else:
                self.record_external_members()
                model, _ = hold()
                load = hold
            return self.dispatcher.run(
                model, names=names, full=full, dry_run=dry_run, progress=progress, expect=expect, load=load
            )
