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

import hashlib
import json
import logging
import re
import time
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, field, replace
from typing import Any

from pushdown.app.config import BackendConfig, Config
from pushdown.app.history import describe
from pushdown.app.service import AccessControl
from pushdown.app.source.gravitino import CHANGED, GravitinoReader, Snapshot, SourceUnreadable
from pushdown.app.source.settings import SourceSettings
from pushdown.app.source.surface import privilege_of
from pushdown.errors import ModelError, PushdownError
from pushdown.journal.store import Store
from pushdown.model import changes as ch
from pushdown.model.events import Event
from pushdown.model.names import parse_name
from pushdown.model.principals import Principal
from pushdown.model.privileges import Condition
from pushdown.model.securables import METALAKE, ObjectRef, SecurableType
from pushdown.model.state import Model

log = logging.getLogger("pushdown.source")
META_KEY = "source_status"
EXAMPLES = 5
GUARDED = "guarded"
NOT_EXACT = "cannot be enforced exactly"
FAILED = "failed"


@dataclass
class SourceStatus:
    """What the store records about the source (``pushdown status``); times are time.time()."""

    source: str
    last_attempt: float | None = None
    last_good: float | None = None
    last_change: float | None = None
    changed: dict[str, int] = field(default_factory=dict)
    #: the first few changes of the last change, in words (``pushdown log`` has them all)
    examples: list[str] = field(default_factory=list)
    last_error: str | None = None
    last_error_at: float | None = None
    error_kind: str | None = None
    notes: list[str] = field(default_factory=list)
    size: dict[str, int] = field(default_factory=dict)
    fingerprint: str | None = None
    seq: int | None = None
    reads: int = 0
    calls: int = 0
    seconds: float = 0.0

    @property
    def failing(self) -> bool:
        return self.last_error_at is not None and (self.last_good or 0.0) < self.last_error_at


def load_status(store: Store, source: str) -> SourceStatus:
    raw = store.get_meta(META_KEY)
    if raw is None:
        return SourceStatus(source)
    try:
        data = json.loads(raw)
        known = {k: v for k, v in data.items() if k in SourceStatus.__dataclass_fields__}
        return replace(SourceStatus(**known), source=source)
    except (ValueError, TypeError):
        return SourceStatus(source)


def save_status(store: Store, status: SourceStatus) -> None:
    with store.write_lock():
        store.set_meta(META_KEY, json.dumps(asdict(status), sort_keys=True))


# -- the target model ---------------------------------------------------------------------


@dataclass
class Built:
    model: Model
    notes: list[str]


def _names(kind: SecurableType, full: str, metalake: str) -> tuple[str, ...]:
    if kind is SecurableType.METALAKE:
        return ()
    plain = tuple(full.split("."))
    if len(plain) == kind.depth:
        return plain
    return parse_name(full)


def backend_of(
    catalog: str, prop: str | None, settings: SourceSettings, backends: Mapping[str, BackendConfig]
) -> tuple[str | None, str | None]:
    """(the backend enforcing ``catalog``, or None with why it is not enforced)."""
    named = settings.catalogs.get(catalog)
    if named is not None:
        return named, None
    if any(catalog in bc.catalogs for bc in backends.values()):
        return None, None  # the backend's own catalogs list takes it
    if prop is not None:
        if prop in backends:
            return prop, None
        return None, (
            f"catalog {catalog}: its property {settings.catalog_property} names backend {prop!r}, "
            "which is not configured; no backend enforces it"
        )
    how = (
        f"set its property {settings.catalog_property}"
        if settings.catalog_property
        else "a backend's catalogs"
    )
    return (
        None,
        f"catalog {catalog}: no configured backend enforces it (name it in [source.catalogs] or {how})",
    )


def to_model(
    snap: Snapshot,
    settings: SourceSettings,
    backends: Mapping[str, BackendConfig],
    service_admins: Iterable[str] = (),
) -> Built:
    """The model a read describes, and what of it pushdown cannot enforce (notes).

    What cannot be expressed is left out only when leaving it out is narrower (an allow,
    an owner); a deny is never left out: it is enforced as it is, or as a deny at least as
    wide (:data:`pushdown.app.source.surface.COVERED_BY`), or it makes the read unusable."""
    model = Model(metalake=snap.metalake)
    notes = list(snap.unlisted)

    def do(change: Any, *args: Any) -> None:
        for event in change(model, *args):
            model.apply(event)

    for user in sorted(snap.users):
        do(ch.add_user, user)
    for group in sorted(snap.groups):
        do(ch.add_group, group, [])
    admins = sorted(set(service_admins) & model.users)
    if admins:
        do(ch.set_service_admins, admins)
    for catalog, (_, prop) in sorted(snap.catalogs.items()):
        backend, why = backend_of(catalog, prop, settings, backends)
        if why is not None:
            notes.append(why)
        props = {} if backend is None else {"backend": backend}
        do(ch.create_object, ObjectRef(SecurableType.CATALOG, (catalog,)), None, props)
    for kind, names in sorted(snap.tree, key=lambda item: (len(item[1]), item)):
        do(ch.create_object, ObjectRef(SecurableType(kind), names))
    for role, rows in sorted(snap.roles.items()):
        do(ch.create_role, role)
        for type_, full, priv, cond in sorted(rows):
            _grant(model, role, type_, full, priv, cond, snap.metalake, notes)
    for user, roles in sorted(snap.users.items()):
        for role in sorted(roles):
            do(ch.grant_role, role, Principal.user(user))
    for group, roles in sorted(snap.groups.items()):
        for role in sorted(roles):
            do(ch.grant_role, role, Principal.group(group))
    for (kind, names), (owner, owner_type) in sorted(snap.owners.items()):
        obj = METALAKE if kind == "metalake" else ObjectRef(SecurableType(kind), names)
        if owner_type != "USER":
            notes.append(
                f"{obj}: owned by {owner_type.lower()} {owner}; pushdown's owners are users, left out"
            )
        elif owner not in model.users:
            notes.append(f"{obj}: owner {owner} is not a user of the metalake; left out")
        else:
            do(ch.set_owner, obj, owner)
    return Built(model, notes)


def _grant(
    model: Model, role: str, type_: str, full: str, priv: str, cond: str, metalake: str, notes: list[str]
) -> None:
    """One securable object's privilege into ``model`` (see :mod:`pushdown.app.source.surface`):
    what pushdown cannot hold is left out only when it is an ALLOW; a DENY is enforced as
    it is or wider, or the read is not used. A DENY is never dropped."""
    what = f"role {role}: {cond.lower()} {priv.lower()} on {type_} {full}"
    try:
        condition = Condition.parse(cond)
    except ModelError:  # it may deny: leaving it out could widen
        raise SourceUnreadable(
            NOT_EXACT, f"{what}: a condition pushdown does not know (only ALLOW and DENY); it may deny"
        ) from None
    privilege, wider = privilege_of(priv, condition)
    if privilege is None:
        if condition is Condition.DENY:  # leaving a deny out would widen: the read is not used
            raise SourceUnreadable(
                NOT_EXACT,
                f"{what}: a DENY of a privilege pushdown does not enforce; leaving it out could widen "
                "what the backends grant, so the read is not used (remove the DENY or the privilege's use)",
            )
        notes.append(f"{what}: a privilege pushdown does not enforce; left out (narrower)")
        return
    try:
        kind = SecurableType.parse(type_)
        obj = ObjectRef(kind, _names(kind, full, metalake))
        events = ch.grant_privileges(model, role, obj, [privilege], condition)
    except ModelError as exc:
        if condition is Condition.DENY:  # leaving a deny out would widen: the read is not used
            raise SourceUnreadable(NOT_EXACT, f"{what}: {exc}") from None
        notes.append(f"{what}: {exc}; left out")
        return
    if wider:
        notes.append(
            f"{what}: enforced as DENY {privilege.value.lower()} on {type_} {full} (wider: pushdown does not "
            f"hold {priv.lower()}, and {privilege.value.lower()} covers it on every backend)"
        )
    for event in events:
        model.apply(event)


# -- the mass-removal check -----------------------------------------------------------------


def _facts(model: Model) -> set[tuple[Any, ...]]:
    grants = {("grant", role, g) for role, grants in model.roles.items() for g in grants}
    held = {("user", r, u) for u, roles in model.user_roles.items() for r in roles}
    held |= {("group", r, g) for g, roles in model.group_roles.items() for r in roles}
    return grants | held | {("owner", o, u) for o, u in model.owners.items()}


def removal_guard(current: Model, target: Model, settings: SourceSettings) -> str | None:
    """Why ``target`` needs a go-ahead: it removes more than ``max_removal_share`` of the
    grants, role assignments and owners ``current`` holds (and at least a few)."""
    held = _facts(current)
    if not held:
        return None
    removes = len(held - _facts(target))
    if removes < settings.min_guarded_removals or removes <= settings.max_removal_share * len(held):
        return None
    share = "all" if removes >= len(held) else f"{removes / len(held):.0%}"
    return (
        f"this read removes {removes} of the {len(held)} grant(s), role assignment(s) and owner(s) the "
        f"model holds ({share}; the limit is {settings.max_removal_share:.0%}, setting "
        "source.max_removal_share); nothing was changed: if the source is right, run "
        "`pushdown pull --allow-mass-removal`"
    )


def fingerprint(snap: Snapshot) -> str:
    def rows(d: Mapping[Any, Any]) -> list[Any]:
        return sorted([k, sorted(v) if isinstance(v, frozenset) else v] for k, v in d.items())

    parts = [
        snap.metalake,
        rows(snap.users),
        rows(snap.groups),
        rows(snap.roles),
        rows(snap.catalogs),
        sorted(snap.tree),
        rows(snap.owners),
        list(snap.unlisted),
    ]
    return hashlib.sha256(json.dumps(parts, separators=(",", ":")).encode()).hexdigest()


def summary(events: Iterable[Event]) -> dict[str, int]:
    """Event counts by kind, in words: {"role granted": 2, ...}."""
    return dict(Counter(re.sub(r"(?<!^)([A-Z])", r" \1", type(e).__name__).lower() for e in events))


# -- one poll ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class PollResult:
    ok: bool
    changes: int = 0
    summary: dict[str, int] = field(default_factory=dict)
    error: str | None = None
    kind: str | None = None
    notes: tuple[str, ...] = ()
    reads: int = 0
    calls: int = 0
    seconds: float = 0.0
    unchanged: bool = False


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
                _words(status.changed),
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


def _words(changed: Mapping[str, int]) -> str:
    return ", ".join(f"{n} × {what}" for what, n in sorted(changed.items())) or "nothing"


def describe_change(changed: Mapping[str, int]) -> str:
    return _words(changed)
