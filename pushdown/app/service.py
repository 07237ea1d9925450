"""The library API: make model changes, journal them, push them to the backends.

    ac = AccessControl.open()                       # ./pushdown.toml or embedded defaults
    ac.add_user("alice")
    ac.create_role("reader", owner="carol")
    result = ac.grant_privileges("reader", "schema sales.crm", ["SELECT_TABLE"])
    result.lagging                                  # backends that could not be reached

Each call validates the change against the current model, commits the model change
and its events in one SQLite transaction (an invalid change writes nothing), then,
when ``push`` is on, syncs every backend over the scope the journal says changed.
A backend that fails keeps its cursor: the change stays committed and the next
sync catches the backend up.
"""

from __future__ import annotations

import copy
import dataclasses
import json
import logging
from collections.abc import Callable, Iterable
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import Any

from pushdown.app.config import AccessSettings, Config, load_config
from pushdown.app.converge import converge
from pushdown.app.storefile import open_store
from pushdown.decide.evaluator import Decision, Evaluator, Target
from pushdown.decide.requirements import OPERATIONS
from pushdown.errors import (
    AlreadyExists,
    Followed,
    Forbidden,
    ModelError,
    NotEmpty,
    PushdownError,
    UnknownObject,
)
from pushdown.host.plugins import Hooks
from pushdown.journal.store import Store, now_iso
from pushdown.model import changes as ch
from pushdown.model.actor import Actor, Audit
from pushdown.model.directory import EnforcedView, with_members
from pushdown.model.events import Event, ExternalMembersChanged, OwnerSet, UserAdded
from pushdown.model.principals import Principal, PrincipalKind
from pushdown.model.privileges import Condition, Privilege
from pushdown.model.securables import METALAKE, ObjectRef, SecurableType
from pushdown.model.state import Model
from pushdown.model.text import check_name
from pushdown.reconcile.backend import Backend, BackendContext
from pushdown.reconcile.bindings import Bindings
from pushdown.reconcile.bindings import check as check_bindings
from pushdown.reconcile.plan import Plan
from pushdown.reconcile.sync import Dispatcher, SyncResult

log = logging.getLogger(__name__)
ObjectLike = ObjectRef | str


@dataclass(frozen=True)
class ChangeResult:
    """What a change did: its events and how each backend fared."""

    events: tuple[Event, ...]
    seqs: tuple[int, ...]
    synced: tuple[SyncResult, ...] = ()

    @property
    def lagging(self) -> dict[str, str]:
        """Backends that did not converge, with the reason; they catch up on the next sync."""
        return {r.backend: r.error for r in self.synced if r.error is not None}

    @property
    def failures(self) -> dict[str, PushdownError]:
        """The errors behind :attr:`lagging`: their class says whether to retry, their
        ``delay`` when (``None``: a person must act first)."""
        return {r.backend: r.failure for r in self.synced if r.failure is not None}


def _obj(value: ObjectLike) -> ObjectRef:
    return value if isinstance(value, ObjectRef) else ObjectRef.parse(value)


#: How long a writer lease outlives a holder on another host that vanished (a crashed
#: holder on this host loses it at once): longer than the longest apply.
LEASE_TTL = 3600.0


@dataclass(frozen=True)
class MetalakeInfo:
    """The metalake this store serves (pushdown serves one): ``exists`` once it was created
    (or named by a spec); a store nobody named holds the unnamed default."""

    name: str
    comment: str | None
    properties: dict[str, str]
    exists: bool


@dataclass
class _Shared:
    """The model in memory and the journal position it reflects, shared by every acting view."""

    model: Model
    seq: int
    #: the model with the directory's recorded members, which every decision uses
    view: EnforcedView = field(default_factory=EnforcedView)


@dataclass
class AccessControl:
    """The library. ``actor``: who makes the changes (None: the plain library, unchecked,
    recorded without an author); :meth:`acting` gives a view whose changes are checked."""

    store: Store
    backends: dict[str, Backend] = field(default_factory=dict)
    hooks: Hooks | None = None
    push: bool = True
    #: seconds a sync waits for another writer of the same backend before giving up
    lease_timeout: float = 60.0
    access: AccessSettings = field(default_factory=AccessSettings)
    actor: Actor | None = None
    #: the source the model follows (``[source]``, e.g. a Gravitino metalake): while set,
    #: only the source's own changes (an actor with via "source") are made; every other is
    #: refused with :class:`Followed`
    follows: str | None = None

    def __post_init__(self) -> None:
        self._shared = _Shared(*self.store.snapshot())
        self.dispatcher = Dispatcher(self.store, self.backends, lease=self._lease)

    @property
    def _model(self) -> Model:
        return self._shared.model

    @_model.setter
    def _model(self, model: Model) -> None:
        self._shared.model = model

    @property
    def _seq(self) -> int:
        return self._shared.seq

    @_seq.setter
    def _seq(self, seq: int) -> None:
        self._shared.seq = seq

    # -- who acts ----------------------------------------------------------------------

    def acting(self, user: str, *, via: str = "library", request: str | None = None) -> AccessControl:
        """A view over the same store, backends and model whose changes ``user`` makes:
        each is checked against the requirement table before anything is written (a
        refusal raises :class:`Forbidden`), and journalled with that author. Close the
        original, not the view."""
        check_name("user", user)
        return self._as(Actor(user, via, request))

    def as_admin(self, via: str = "cli") -> AccessControl:
        """A view acting as the configured administrator identity (``[access] admin``):
        recorded as the author, not checked (the CLI and the spec loader)."""
        return self._as(Actor(self.access.admin, via, None, trusted=True))

    def as_source(self) -> AccessControl:
        """A view acting as the model source (trusted, recorded with via "source"): the only
        writer while ``follows`` is set."""
        return self._as(Actor(self.access.admin, "source", None, trusted=True))

    def _refuse_if_followed(self) -> None:
        if self.follows is not None and (self.actor is None or self.actor.via != "source"):
            raise Followed(self.follows)

    def _as(self, actor: Actor) -> AccessControl:
        view = copy.copy(self)
        view.actor = actor
        return view

    def _lease(self, backend: str) -> AbstractContextManager[object]:
        """One writer per backend, whoever writes (CLI, library, daemon): the store's lease."""
        return self.store.backend_lease(backend, timeout=self.lease_timeout, ttl=LEASE_TTL)

    @classmethod
    def open(
        cls,
        config: Config | str | None = None,
        *,
        push: bool = True,
        hooks: Hooks | None = None,
        create_store: bool | None = None,
    ) -> AccessControl:
        """Open the configured store and backends. A missing store is created only when
        ``create_store`` is True, or when it is None and the store is the default one (not
        named by ``store =`` in a config file); see :mod:`pushdown.app.storefile`."""
        cfg = config if isinstance(config, Config) else load_config(config)
        hooks = hooks or Hooks.load()
        backends = _backends(cfg, hooks)
        try:
            store = open_store(cfg, create_store)
        except BaseException:
            for backend in backends.values():
                backend.close()
            raise
        follows = None if cfg.follow is None else cfg.follow.describe()
        return cls(store, backends, hooks, push, access=cfg.access, follows=follows)

    def close(self) -> None:
        for backend in self.backends.values():
            backend.close()
        self.store.close()

    # -- the model -------------------------------------------------------------------

    @property
    def model(self) -> Model:
        self._refresh()
        return self._model

    def _refresh(self) -> None:
        """Another process may have written: reload when the journal or the name moved."""
        last = self.store.last_seq()
        if last != self._seq or self.store.get_meta("metalake") not in (None, self._model.metalake):
            self._model, self._seq = self.store.snapshot()  # as of one commit, never torn

    def change(
        self,
        build: Callable[[Model], list[Event]],
        *,
        metalake: str | None = None,
        push: bool | None = None,
        operation: str | None = None,
        target: Target | None = None,
        directory: bool = False,
    ) -> ChangeResult:
        """Validate and commit one change (all of its events, or nothing), then push.

        While the model follows a source only the source's changes are made (``directory``:
        the directory's group members, which any sync records, are not the model's).

        ``operation`` (a row of the requirement table) on ``target``: what the acting user
        must be allowed; ``None`` with an actor: only the trusted administrator may make
        it. The check runs on the model the change is built from.

        The change is computed before the store's write lock is taken, so the lock is
        held only while the events are written; if another writer committed in between,
        the change is computed again (and checked again) under the lock."""
        if not directory:
            self._refuse_if_followed()
        if self.actor is not None and not self.actor.trusted:
            actor, inner = self.actor, build

            def build(model: Model) -> list[Event]:
                _check(self._decisions_on(model), actor, operation, target)
                return inner(model)

        build = self._bound(build)

        self._refresh()
        # the position the model in hand reflects (a fresh read could already be newer)
        base = (self._seq, self.store.get_meta("metalake"))
        events = build(self._model)
        seqs = self._commit(build, events, base, metalake)
        self._seq = seqs[-1] if seqs else self._seq
        if self.hooks is not None:
            for seq, event in zip(seqs, events, strict=True):
                self.hooks.event_committed(event, seq)
        push = self.push if push is None else push
        synced = tuple(self.sync()) if push and events else ()
        return ChangeResult(tuple(events), tuple(seqs), synced)

    def _bound(self, build: Callable[[Model], list[Event]]) -> Callable[[Model], list[Event]]:
        """``build``, its events checked (after the actor was authorized) against what only
        the configuration binds: catalogs to backends, filesets to locations, topics."""
        bindings = Bindings.of(
            (name, b.context.catalogs, b.context.locations) for name, b in sorted(self.backends.items())
        )
        administrator = self.actor is None or self.actor.trusted
        user = None if self.actor is None else self.actor.user

        def checked(model: Model) -> list[Event]:
            events = build(model)
            check_bindings(model, events, bindings, administrator=administrator, user=user)
            return events

        return checked

    def _version(self) -> tuple[int, str | None]:
        return self.store.last_seq(), self.store.get_meta("metalake")

    def _commit(
        self,
        build: Callable[[Model], list[Event]],
        events: list[Event],
        base: tuple[int, str | None],
        metalake: str | None,
    ) -> list[int]:
        """Write ``events`` (rebuilt when the store moved since ``base``) and apply them in memory."""
        touched = False
        try:
            with self.store.write_lock():
                if self._version() != base:  # another writer committed meanwhile
                    self._refresh()
                    events[:] = build(self._model)
                touched = True
                for event in events:
                    self._model.apply(event)
                seqs = self.store.append(events, self.actor)
                if metalake is not None and metalake != self._model.metalake:
                    self.store.set_meta("metalake", metalake)
                    self._model.metalake = metalake
        except BaseException:
            if touched:  # the transaction rolled back: so must the model in memory
                self._model, self._seq = self.store.snapshot()
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

    def add_user(self, user: str) -> ChangeResult:
        return self._one(ch.add_user, user, op="add_user", on=user)

    def remove_user(self, user: str) -> ChangeResult:
        return self._one(ch.remove_user, user, op="remove_user", on=user)

    def add_group(self, group: str, members: Iterable[str] = ()) -> ChangeResult:
        return self._one(ch.add_group, group, list(members), op="add_group", on=group)

    def remove_group(self, group: str) -> ChangeResult:
        return self._one(ch.remove_group, group, op="remove_group", on=group)

    def add_member(self, group: str, user: str) -> ChangeResult:
        return self._one(ch.add_member, group, user, op="add_group", on=group)

    def remove_member(self, group: str, user: str) -> ChangeResult:
        return self._one(ch.remove_member, group, user, op="remove_group", on=group)

    def create_role(self, role: str, owner: str | None = None) -> ChangeResult:
        """Create a role; an acting user who is in the model becomes its owner unless
        ``owner`` names another."""
        return self.change(
            lambda model: ch.create_role(model, role, owner if owner is not None else self._author),
            operation="create_role",
            target=role,
        )

    def delete_role(self, role: str) -> ChangeResult:
        return self._one(ch.delete_role, role, op="delete_role", on=role)

    def grant_privileges(
        self,
        role: str,
        obj: ObjectLike,
        privileges: Iterable[Privilege | str],
        condition: Condition | str = Condition.ALLOW,
    ) -> ChangeResult:
        cond = condition if isinstance(condition, Condition) else Condition.parse(condition)
        ref = _obj(obj)
        return self._one(ch.grant_privileges, role, ref, list(privileges), cond, op="grant_privilege", on=ref)

    def revoke_privileges(
        self,
        role: str,
        obj: ObjectLike,
        privileges: Iterable[Privilege | str],
        condition: Condition | str = Condition.ALLOW,
    ) -> ChangeResult:
        cond = condition if isinstance(condition, Condition) else Condition.parse(condition)
        ref = _obj(obj)
        return self._one(
            ch.revoke_privileges, role, ref, list(privileges), cond, op="revoke_privilege", on=ref
        )

    def grant_role(self, role: str, to: Principal | str) -> ChangeResult:
        return self._one(ch.grant_role, role, _principal(to), op="grant_role", on=role)

    def revoke_role(self, role: str, to: Principal | str) -> ChangeResult:
        return self._one(ch.revoke_role, role, _principal(to), op="revoke_role", on=role)

    def set_owner(
        self, obj: ObjectLike, owner: str, kind: PrincipalKind | str = PrincipalKind.USER
    ) -> ChangeResult:
        k = kind if isinstance(kind, PrincipalKind) else PrincipalKind(kind.lower())
        ref = _obj(obj)
        return self._one(ch.set_owner, ref, owner, k, op="set_owner", on=ref)

    def create_object(
        self, obj: ObjectLike, creator: str | None = None, properties: dict[str, str] | None = None
    ) -> ChangeResult:
        """Register an object; its creator becomes its owner (``creator``, else the acting
        user when it is in the model)."""
        ref = _obj(obj)
        return self.change(
            lambda model: ch.create_object(
                model, ref, creator if creator is not None else self._author, properties
            ),
            operation=_object_operation("create", ref),
            target=ref,
        )

    def drop_object(self, obj: ObjectLike) -> ChangeResult:
        ref = _obj(obj)
        return self._one(ch.drop_object, ref, op=_object_operation("drop", ref), on=ref)

    def rename_object(self, obj: ObjectLike, new_name: str) -> ChangeResult:
        ref = _obj(obj)
        return self._one(ch.rename_object, ref, new_name, op=_object_operation("alter", ref), on=ref)

    def set_service_admins(self, users: Iterable[str]) -> ChangeResult:
        return self._one(ch.set_service_admins, list(users))

    def load_model(self, target: Model) -> ChangeResult:
        """Make the stored model equal ``target`` (a loaded spec), as one change."""
        check_name("metalake", target.metalake)
        return self.change(lambda model: _converge_events(model, target), metalake=target.metalake)

    # -- the metalake --------------------------------------------------------------------

    def metalake(self) -> MetalakeInfo:
        """The metalake this store serves."""
        name = self.store.get_meta("metalake")
        props = json.loads(self.store.get_meta("metalake_properties") or "{}")
        return MetalakeInfo(
            name or self.model.metalake, self.store.get_meta("metalake_comment"), props, name is not None
        )

    def create_metalake(
        self, name: str, comment: str | None = None, properties: dict[str, str] | None = None
    ) -> ChangeResult:
        """Create the metalake (service admins only, ``[access] service_admins``): its
        creator is added as a user and becomes its owner. pushdown serves one metalake: a
        store that already has one refuses another."""
        check_name("metalake", name)
        self._refuse_if_followed()
        actor = self.actor
        admins = set(self.access.service_admins) | self.model.service_admins  # config, or a spec's
        if actor is not None and not actor.trusted and actor.user not in admins:
            raise Forbidden(
                actor.user,
                "create_metalake",
                f"metalake {name}",
                "only a service admin ([access] service_admins) may create a metalake",
            )
        current = self.store.get_meta("metalake")
        if current == name:
            raise AlreadyExists(f"metalake {name!r} already exists")
        if current is not None or _holds_anything(self.model):
            raise ModelError(
                f"cannot create metalake {name!r}: this store serves metalake "
                f"{current or self.model.metalake!r} (pushdown serves one metalake per store)"
            )
        creator = None if actor is None or actor.trusted else actor.user

        def build(model: Model) -> list[Event]:
            if creator is None:
                return []
            out: list[Event] = [] if creator in model.users else [UserAdded(creator)]
            return [*out, OwnerSet(METALAKE, creator, None)]

        # checked above (a service admin need not be a user of any metalake yet)
        writer = self if actor is None else self._as(dataclasses.replace(actor, trusted=True))
        result = writer.change(build, metalake=name)
        with self.store.write_lock():
            self.store.set_meta("metalake", name)
            if comment is not None:
                self.store.set_meta("metalake_comment", comment)
            self.store.set_meta("metalake_properties", json.dumps(dict(properties or {}), sort_keys=True))
            self.store.touch_audit("metalake", "", creator, now_iso())
        return result

    def alter_metalake(
        self,
        name: str,
        comment: str | None = None,
        properties: dict[str, str] | None = None,
        new_name: str | None = None,
    ) -> MetalakeInfo:
        """Rename the metalake, set its comment and properties (its owner, as Gravitino's
        ``METALAKE::OWNER``; checked before anything is written). None of them is part of
        what a backend enforces: nothing is pushed."""
        self._refuse_if_followed()
        info = self.metalake()
        if not info.exists or info.name != name:
            raise UnknownObject(f"metalake {name!r} does not exist")
        if new_name is not None:
            check_name("metalake", new_name)
        actor = self.actor
        if actor is not None and not actor.trusted:
            _check(self.model, actor, "alter_metalake", METALAKE)
        if new_name is not None and new_name != name:
            writer = self if actor is None else self._as(dataclasses.replace(actor, trusted=True))
            writer.change(lambda model: [], metalake=new_name)  # checked above
        with self.store.write_lock():
            if comment is None:
                self.store.db.execute("DELETE FROM meta WHERE key = 'metalake_comment'")
            else:
                self.store.set_meta("metalake_comment", comment)
            self.store.set_meta("metalake_properties", json.dumps(dict(properties or {}), sort_keys=True))
            self.store.touch_audit("metalake", "", None if actor is None else actor.user, now_iso())
        return self.metalake()

    def drop_metalake(self, name: str, force: bool = False) -> ChangeResult:
        """Drop the metalake and everything in it (its owner, or the administrator): the
        model becomes empty and every backend revokes what pushdown granted. Without
        ``force`` a metalake that holds anything besides its owner is refused."""
        self._refuse_if_followed()
        info = self.metalake()
        if not info.exists or info.name != name:
            raise UnknownObject(f"metalake {name!r} does not exist")
        model = self.model
        if not force and _holds_anything(model, besides=model.owners.get(METALAKE)):
            raise NotEmpty(f"metalake {name!r} is not empty; drop it with force to remove everything in it")
        result = self.change(
            lambda m: _converge_events(m, Model(metalake=name)), operation="drop_metalake", target=METALAKE
        )
        with self.store.write_lock():
            for key in ("metalake", "metalake_comment", "metalake_properties"):
                self.store.db.execute("DELETE FROM meta WHERE key = ?", (key,))
            self.store.db.execute("DELETE FROM audit WHERE kind = 'metalake'")
        self._refresh()
        return result

    # -- audit ---------------------------------------------------------------------------

    def audit(self, kind: str, name: str) -> Audit | None:
        """Who created an entity and when, who changed it last and when (None: unknown).
        ``kind``: metalake, user, group, role or object (``name``: ``str(ObjectRef)``)."""
        return self.store.audit(kind, "" if kind == "metalake" else name).get(
            "" if kind == "metalake" else name
        )

    def audits(self, kind: str) -> dict[str, Audit]:
        """The audit of every entity of a kind, by name."""
        return self.store.audit(kind)

    # -- decisions -------------------------------------------------------------------

    def decision_model(self) -> Model:
        """The model every decision is made on (``authorize``, ``explain``, the REST
        service's checks and listings, the report): the store's model with the directory's
        members recorded at the last sync, exactly the model a sync hands the backends
        (:func:`pushdown.model.directory.enforced`). Asks no directory plugin; one view per
        model version, copying only what the directory adds (nothing when it adds nobody).
        Read it, never change it."""
        return self._decisions_on(self.model)

    def _decisions_on(self, model: Model) -> Model:
        return self._shared.view.of(model)

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
        the model changes it would record and each backend's plan against ``target``."""
        check_name("metalake", target.metalake)
        working = copy.deepcopy(self.model)
        events = converge(working, target)
        model = _with_members(working, self.outside_members(working))
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
        ``expect(plan)`` may refuse a plan before it is applied (a saved plan gone stale)."""
        if dry_run:  # a dry run writes nothing: ask the directory, record nothing
            model = self.sync_model(self.outside_members(self.model))
            load = None
        else:
            self.record_external_members()
            model = self.sync_model()
            load = self._current
        return self.dispatcher.run(
            model, names=names, full=full, dry_run=dry_run, progress=progress, expect=expect, load=load
        )

    def _current(self) -> tuple[Model, int]:
        """The model as the store holds it now, and the journal position it reflects
        (asked under a backend's lease: another writer may have committed meanwhile). Read
        in one read transaction under the store connection's lock, so no commit of this
        process lands between the model and the position it is said to reflect."""
        with self.store.reading():
            model = self.sync_model()
            return model, self._seq


#: The operation that creates, drops or alters an object of each type.
_OBJECT_OPERATIONS: dict[tuple[str, SecurableType], str] = {
    ("create", SecurableType.MODEL): "register_model",
    ("create", SecurableType.JOB_TEMPLATE): "register_job_template",
    ("drop", SecurableType.TAG): "delete_tag",
    ("drop", SecurableType.POLICY): "delete_policy",
    ("drop", SecurableType.JOB_TEMPLATE): "delete_job_template",
}


def _object_operation(verb: str, obj: ObjectRef) -> str | None:
    """The requirement-table row for ``verb`` on ``obj``'s type (None: no row, so only the
    administrator may)."""
    name = _OBJECT_OPERATIONS.get((verb, obj.type), f"{verb}_{obj.type.value}")
    return name if name in OPERATIONS else None


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


def _holds_anything(model: Model, besides: str | None = None) -> bool:
    """Whether the model holds anything (users other than ``besides``, groups, roles, objects)."""
    return bool(model.users - {besides} or model.groups or model.roles or model.objects)


def _backends(cfg: Config, hooks: Hooks) -> dict[str, Backend]:
    backends = {}
    engine = hooks.engine(cfg.engine, cfg.engine_settings)
    for name, bc in cfg.backends.items():
        ctx = BackendContext(
            name=name,
            settings=bc.settings,
            secret=bc.secret,
            map_principal=lambda p, n=name: hooks.map_principal(n, p),  # type: ignore[misc]
            mapping_version=hooks.mapping_version,
            mapping_stable=hooks.mapping_stable,
            catalogs=bc.catalogs,
            locations=bc.locations,
            engine=engine,
        )
        backends[name] = hooks.backends.create(bc.kind, ctx)
    return backends


def _converge_events(model: Model, target: Model) -> list[Event]:
    """The events of :func:`converge`, computed on a copy: building a change is pure."""
    return converge(copy.deepcopy(model), target)


#: kept for callers of the old name: the one function is pushdown.model.directory.with_members
_with_members = with_members


def _principal(value: Principal | str) -> Principal:
    if isinstance(value, Principal):
        return value
    kind, _, name = value.partition(" ")
    if kind not in ("user", "group") or not name:
        raise ModelError(f"{value!r}: write 'user NAME' or 'group NAME'")
    return Principal.parse(value)
