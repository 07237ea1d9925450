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
import logging
from collections.abc import Callable, Iterable
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import Any

from pushdown.app.config import Config, load_config
from pushdown.app.converge import converge
from pushdown.app.storefile import open_store
from pushdown.decide.evaluator import Decision, Evaluator, Target
from pushdown.errors import ModelError, PushdownError
from pushdown.host.plugins import Hooks
from pushdown.journal.store import Store
from pushdown.model import changes as ch
from pushdown.model.events import Event, ExternalMembersChanged, GroupMemberAdded, UserAdded
from pushdown.model.principals import Principal, PrincipalKind
from pushdown.model.privileges import Condition, Privilege
from pushdown.model.securables import ObjectRef
from pushdown.model.state import Model
from pushdown.model.text import check_name
from pushdown.reconcile.backend import Backend, BackendContext
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


@dataclass
class AccessControl:
    store: Store
    backends: dict[str, Backend] = field(default_factory=dict)
    hooks: Hooks | None = None
    push: bool = True
    #: seconds a sync waits for another writer of the same backend before giving up
    lease_timeout: float = 60.0

    def __post_init__(self) -> None:
        self._model = self.store.load()
        self._seq = self.store.last_seq()
        self.dispatcher = Dispatcher(self.store, self.backends, lease=self._lease)

    def _lease(self, backend: str) -> AbstractContextManager[None]:
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
        return cls(store, backends, hooks, push)

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
            self._model, self._seq = self.store.load(), last

    def change(
        self,
        build: Callable[[Model], list[Event]],
        *,
        metalake: str | None = None,
        push: bool | None = None,
    ) -> ChangeResult:
        """Validate and commit one change (all of its events, or nothing), then push.

        The change is computed before the store's write lock is taken, so the lock is
        held only while the events are written; if another writer committed in between,
        the change is computed again under the lock."""
        self._refresh()
        base = self._version()
        events = build(self._model)
        seqs = self._commit(build, events, base, metalake)
        self._seq = seqs[-1] if seqs else self._seq
        if self.hooks is not None:
            for seq, event in zip(seqs, events, strict=True):
                self.hooks.event_committed(event, seq)
        push = self.push if push is None else push
        synced = tuple(self.sync()) if push and events else ()
        return ChangeResult(tuple(events), tuple(seqs), synced)

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
                seqs = self.store.append(events)
                if metalake is not None and metalake != self._model.metalake:
                    self.store.set_meta("metalake", metalake)
                    self._model.metalake = metalake
        except BaseException:
            if touched:  # the transaction rolled back: so must the model in memory
                self._model, self._seq = self.store.load(), self.store.last_seq()
            raise
        return seqs

    def _one(self, fn: Callable[..., list[Event]], *args: Any) -> ChangeResult:
        return self.change(lambda model: fn(model, *args))

    def add_user(self, user: str) -> ChangeResult:
        return self._one(ch.add_user, user)

    def remove_user(self, user: str) -> ChangeResult:
        return self._one(ch.remove_user, user)

    def add_group(self, group: str, members: Iterable[str] = ()) -> ChangeResult:
        return self._one(ch.add_group, group, list(members))

    def remove_group(self, group: str) -> ChangeResult:
        return self._one(ch.remove_group, group)

    def add_member(self, group: str, user: str) -> ChangeResult:
        return self._one(ch.add_member, group, user)

    def remove_member(self, group: str, user: str) -> ChangeResult:
        return self._one(ch.remove_member, group, user)

    def create_role(self, role: str, owner: str | None = None) -> ChangeResult:
        return self._one(ch.create_role, role, owner)

    def delete_role(self, role: str) -> ChangeResult:
        return self._one(ch.delete_role, role)

    def grant_privileges(
        self,
        role: str,
        obj: ObjectLike,
        privileges: Iterable[Privilege | str],
        condition: Condition | str = Condition.ALLOW,
    ) -> ChangeResult:
        cond = condition if isinstance(condition, Condition) else Condition.parse(condition)
        return self._one(ch.grant_privileges, role, _obj(obj), list(privileges), cond)

    def revoke_privileges(
        self,
        role: str,
        obj: ObjectLike,
        privileges: Iterable[Privilege | str],
        condition: Condition | str = Condition.ALLOW,
    ) -> ChangeResult:
        cond = condition if isinstance(condition, Condition) else Condition.parse(condition)
        return self._one(ch.revoke_privileges, role, _obj(obj), list(privileges), cond)

    def grant_role(self, role: str, to: Principal | str) -> ChangeResult:
        return self._one(ch.grant_role, role, _principal(to))

    def revoke_role(self, role: str, to: Principal | str) -> ChangeResult:
        return self._one(ch.revoke_role, role, _principal(to))

    def set_owner(
        self, obj: ObjectLike, owner: str, kind: PrincipalKind | str = PrincipalKind.USER
    ) -> ChangeResult:
        k = kind if isinstance(kind, PrincipalKind) else PrincipalKind(kind.lower())
        return self._one(ch.set_owner, _obj(obj), owner, k)

    def create_object(
        self, obj: ObjectLike, creator: str | None = None, properties: dict[str, str] | None = None
    ) -> ChangeResult:
        return self._one(ch.create_object, _obj(obj), creator, properties)

    def drop_object(self, obj: ObjectLike) -> ChangeResult:
        return self._one(ch.drop_object, _obj(obj))

    def rename_object(self, obj: ObjectLike, new_name: str) -> ChangeResult:
        return self._one(ch.rename_object, _obj(obj), new_name)

    def set_service_admins(self, users: Iterable[str]) -> ChangeResult:
        return self._one(ch.set_service_admins, list(users))

    def load_model(self, target: Model) -> ChangeResult:
        """Make the stored model equal ``target`` (a loaded spec), as one change."""
        check_name("metalake", target.metalake)
        return self.change(lambda model: _converge_events(model, target), metalake=target.metalake)

    # -- decisions -------------------------------------------------------------------

    def authorize(self, user: str, operation: str, target: Target, other: Target | None = None) -> Decision:
        return Evaluator(self.model).authorize(user, operation, target, other)

    def effective_privileges(self, principal: Principal | str, obj: ObjectLike) -> frozenset[Privilege]:
        return Evaluator(self.model).effective_privileges(principal, _obj(obj))

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
        return list(self.change(changed, push=False).events)

    def sync_model(self, outside: dict[str, set[str]] | None = None) -> Model:
        """The model a sync compiles from, with the directory's members added (for that sync)."""
        model = self.model
        return _with_members(model, model.external_members if outside is None else outside)

    def preview(
        self, target: Model, names: list[str] | None = None
    ) -> tuple[list[Event], list[SyncResult]]:
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
        (asked under a backend's lease: another writer may have committed meanwhile)."""
        model = self.sync_model()
        return model, self._seq


def _backends(cfg: Config, hooks: Hooks) -> dict[str, Backend]:
    backends = {}
    engine = hooks.engine(cfg.engine, cfg.engine_settings)
    for name, bc in cfg.backends.items():
        ctx = BackendContext(
            name=name,
            settings=bc.settings,
            secret=bc.secret,
            map_principal=lambda p, n=name: hooks.map_principal(n, p),  # type: ignore[misc]
            catalogs=bc.catalogs,
            engine=engine,
        )
        backends[name] = hooks.backends.create(bc.kind, ctx)
    return backends


def _converge_events(model: Model, target: Model) -> list[Event]:
    """The events of :func:`converge`, computed on a copy: building a change is pure."""
    return converge(copy.deepcopy(model), target)


def _with_members(model: Model, members: dict[str, set[str]]) -> Model:
    """``model``, or a copy with the directory's members added to their groups."""
    if not members:
        return model
    view = copy.deepcopy(model)
    for group, users in sorted(members.items()):
        for user in sorted(users):
            if user not in view.users:
                view.apply(UserAdded(user))
            if group in view.groups:
                view.apply(GroupMemberAdded(group, user))
    return view


def _principal(value: Principal | str) -> Principal:
    if isinstance(value, Principal):
        return value
    kind, _, name = value.partition(" ")
    if kind not in ("user", "group") or not name:
        raise ModelError(f"{value!r}: write 'user NAME' or 'group NAME'")
    return Principal.parse(value)
