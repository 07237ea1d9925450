"""The service's ground: the library's state (store, backends, the shared model), who acts
(:meth:`Base.acting` and the other views), opening and closing, writer leases, and the
results a change returns."""

from __future__ import annotations

import copy
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import Self

from pushdown.app.service.models import Shared, settle
from pushdown.app.service.storefile import open_store
from pushdown.app.settings import AccessSettings, Config, load_config
from pushdown.errors import Followed, PushdownError
from pushdown.host.plugins import Hooks
from pushdown.journal.store import Store
from pushdown.model.actor import Actor
from pushdown.model.events import Event
from pushdown.model.securables import ObjectRef
from pushdown.model.state import Model
from pushdown.model.text import check_name
from pushdown.reconcile.backend import Backend, BackendContext
from pushdown.reconcile.sync import Dispatcher, SyncResult

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
class Base:
    """The library's state and its views. ``actor``: who makes the changes (None: the plain
    library, unchecked, recorded without an author); :meth:`acting` gives a view whose
    changes are checked."""

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
    #: a :meth:`reader` view's read of the store's (journal position, metalake name); None
    #: on every other view, which reads them again before each use of the model
    _seen: tuple[int, str | None] | None = field(default=None, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        self._shared = Shared(*self.store.snapshot())
        self.dispatcher = Dispatcher(self.store, self.backends, lease=self._lease)

    @property
    def _model(self) -> Model:
        return self._shared.model

    @_model.setter
    def _model(self, model: Model) -> None:
        self._shared.publish(model, self._shared.seq)

    @property
    def _seq(self) -> int:
        return self._shared.seq

    @_seq.setter
    def _seq(self, seq: int) -> None:
        with self._shared.lock:
            self._shared.seq = seq

    # -- who acts ----------------------------------------------------------------------

    def acting(self, user: str, *, via: str = "library", request: str | None = None) -> Self:
        """A view over the same store, backends and model whose changes ``user`` makes:
        each is checked against the requirement table before anything is written (a
        refusal raises :class:`Forbidden`), and journalled with that author. Close the
        original, not the view."""
        check_name("user", user)
        return self._as(Actor(user, via, request))

    def as_admin(self, via: str = "cli") -> Self:
        """A view acting as the configured administrator identity (``[access] admin``):
        recorded as the author, not checked (the CLI and the spec loader)."""
        return self._as(Actor(self.access.admin, via, None, trusted=True))

    def as_source(self) -> Self:
        """A view acting as the model source (trusted, recorded with via "source"): the only
        writer while ``follows`` is set."""
        return self._as(Actor(self.access.admin, "source", None, trusted=True))

    def _refuse_if_followed(self) -> None:
        if self.follows is not None and (self.actor is None or self.actor.via != "source"):
            raise Followed(self.follows)

    def _as(self, actor: Actor) -> Self:
        view = copy.copy(self)
        view.actor = actor
        view._seen = None
        return view

    def reader(self) -> Self:
        """A view for one read (a request of ``pushdown serve``): the store's position and
        the metalake's name are read once, now, and the model reloaded if another process
        moved them; the view's model and decisions then come from memory, asking the store
        nothing more. They are never older than that read: the model in memory is only ever
        replaced by a newer one (this process's own commits publish theirs). Its
        :meth:`acting` views, and every change, read the store as any view does."""
        view = copy.copy(self)
        view._seen = self._refresh()
        return view

    def settle_models(self) -> None:
        """For a process of its own (``pushdown serve``): move the model in memory out of
        the cyclic collector's walks now, and again each time a model is read whole from
        the store (another process committed), thawing the one it replaces first
        (:func:`pushdown.app.service.models.settle`). A change made here updates the model
        in place and settles nothing."""
        self._shared.settle = settle
        settle()

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
    ) -> Self:
        """Open the configured store and backends. A missing store is created only when
        ``create_store`` is True, or when it is None and the store is the default one (not
        named by ``store =`` in a config file); see :mod:`pushdown.app.service.storefile`."""
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
        if self._seen is None:  # a reader view read the store when it was made
            self._refresh()
        return self._model

    def _refresh(self) -> tuple[int, str | None]:
        """Another process may have written: reload when the journal or the name moved.
        The store's (journal position, metalake name) as read."""
        last, name = self.store.version()
        if last != self._seq or name not in (None, self._model.metalake):
            self._shared.publish(*self.store.snapshot())  # as of one commit, never torn
            self._shared.loaded()
        return last, name

    def _decisions_on(self, model: Model) -> Model:
        return self._shared.view.of(model)

    def _pushed(self) -> tuple[SyncResult, ...]:
        """Push a committed change to the backends (the syncing part of the service does)."""
        return ()


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
