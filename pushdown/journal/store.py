"""The embedded store: the model's tables and the change journal in one SQLite file.

Every change is written as events: each event's effect on the model tables and the
event itself in the journal commit in the same transaction, so a crash can never
leave a change without its journal entry or the reverse. Each backend keeps a cursor
into the journal; one that is down falls behind and catches up later.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pushdown.journal import lease, wake
from pushdown.journal.connection import connect, prepare
from pushdown.model import events as ev
from pushdown.model.actor import Actor, Audit, mentions, touched
from pushdown.model.principals import Principal, PrincipalKind
from pushdown.model.privileges import Condition, Privilege
from pushdown.model.securables import ObjectRef
from pushdown.model.state import Model

SCHEMA = (
    """
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS users(name TEXT PRIMARY KEY);
CREATE TABLE IF NOT EXISTS groups_(name TEXT PRIMARY KEY);
CREATE TABLE IF NOT EXISTS members(grp TEXT, usr TEXT, PRIMARY KEY (grp, usr));
CREATE TABLE IF NOT EXISTS roles(name TEXT PRIMARY KEY);
CREATE TABLE IF NOT EXISTS grants(
    role TEXT, obj TEXT, privilege TEXT, condition TEXT,
    PRIMARY KEY (role, obj, privilege, condition));
CREATE TABLE IF NOT EXISTS assignments(
    kind TEXT, principal TEXT, role TEXT, PRIMARY KEY (kind, principal, role));
CREATE TABLE IF NOT EXISTS owners(obj TEXT PRIMARY KEY, owner TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS objects(obj TEXT PRIMARY KEY, properties TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS service_admins(name TEXT PRIMARY KEY);
CREATE TABLE IF NOT EXISTS journal(
    seq INTEGER PRIMARY KEY AUTOINCREMENT, at TEXT NOT NULL, name TEXT NOT NULL,
    payload TEXT NOT NULL, actor TEXT, via TEXT, request TEXT);
CREATE TABLE IF NOT EXISTS external_members(grp TEXT, usr TEXT, PRIMARY KEY (grp, usr));
CREATE TABLE IF NOT EXISTS cursors(backend TEXT PRIMARY KEY, seq INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS members_by_user ON members(usr);
CREATE INDEX IF NOT EXISTS assignments_by_role ON assignments(role);
"""
    + lease.LEASES
    + """
CREATE TABLE IF NOT EXISTS audit(
    kind TEXT, name TEXT, creator TEXT, created TEXT NOT NULL, modifier TEXT, modified TEXT NOT NULL,
    PRIMARY KEY (kind, name));
CREATE TABLE IF NOT EXISTS sync_status(
    backend TEXT PRIMARY KEY, last_attempt REAL, last_success REAL, last_error TEXT,
    last_error_at REAL, error_kind TEXT, findings INTEGER NOT NULL DEFAULT 0);
"""
)  # sync_status, audit: added after the first release; CREATE IF NOT EXISTS upgrades older stores

#: Columns added to the journal after the first release (who made each change): an older
#: store gets them when it is opened; its earlier entries have no author.
AUTHOR_COLUMNS = (("actor", "TEXT"), ("via", "TEXT"), ("request", "TEXT"))


def now_iso() -> str:
    """Now, as the journal and the audit write it: ISO-8601 UTC, milliseconds, ending in Z."""
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


@dataclass(frozen=True)
class JournalEntry:
    """One journalled event and who made it (``actor`` None: before authors were recorded,
    or the plain library)."""

    seq: int
    at: str
    event: ev.Event
    actor: str | None
    via: str | None
    request: str | None


def _names(event: ev.Event, wanted: Sequence[str]) -> bool:
    return not mentions(event).isdisjoint(wanted)


class Store:
    """The model and journal in one SQLite file (created when missing).

    ``busy_timeout`` is how long a write waits for another writer before it raises
    :class:`pushdown.errors.Busy`; a path that cannot be a store raises
    :class:`pushdown.errors.StoreError`.
    """

    def __init__(self, path: str | Path = ":memory:", *, busy_timeout: float = 10.0) -> None:
        self.path = str(path)
        self.db = connect(self.path, busy_timeout)
        prepare(self.db, SCHEMA)
        self._mutex = threading.RLock()  # one transaction at a time on this connection
        self._appended: bool | None = False  # journal entries written in the open transaction
        self._synchronous = int(self.db.execute("PRAGMA synchronous").fetchone()[0])
        self._add_author_columns()

    def close(self) -> None:
        self.db.close()

    def _add_author_columns(self) -> None:
        have = {str(row[1]) for row in self.db.execute("PRAGMA table_info(journal)")}
        missing = [(n, t) for n, t in AUTHOR_COLUMNS if n not in have]
        if missing:
            with self.write_lock():
                have = {str(row[1]) for row in self.db.execute("PRAGMA table_info(journal)")}
                for name, kind in missing:
                    if name not in have:  # another process may have added it meanwhile
                        self.db.execute(f"ALTER TABLE journal ADD COLUMN {name} {kind}")

    # -- transactions ------------------------------------------------------------------

    @contextmanager
    def write_lock(self, *, durable: bool = True) -> Iterator[None]:
        """One writer at a time across threads and processes; rolls back on any exception.

        Waits up to the busy timeout for another writer, then raises ``Busy``.

        ``durable=False`` is for bookkeeping a sync can derive again (a writer lease, a
        backend's cursor and the server summary recorded with it, how a sync ended): its
        commit does not wait for the disk (WAL with ``synchronous=NORMAL``), so it holds
        the write lock for microseconds instead of an fsync. A process crash loses
        nothing; a power loss may lose such a commit unless a later durable one (every
        model change is) made the log durable up to it: a lease then is void anyway (its
        holder died), a cursor only goes back (the next sync applies that scope again,
        which converges to the same grants), a status is rewritten by the next sync.
        Never for a model change or a journal entry."""
        with self._mutex:
            if not durable:
                self.db.execute("PRAGMA synchronous=NORMAL")
            try:
                self.db.execute("BEGIN IMMEDIATE")
                self._appended = False
                if not durable:
                    self._appended = None  # append() refuses: a journal entry is never made here
                try:
                    yield
                except BaseException:
                    self.db.execute("ROLLBACK")
                    raise
                self.db.execute("COMMIT")
            finally:
                if not durable:
                    self.db.execute(f"PRAGMA synchronous={self._synchronous}")
            if self._appended:  # the journal moved: a listening daemon looks now
                wake.ring(self.path)

    @contextmanager
    def reading(self) -> Iterator[None]:
        """One read transaction for the ``with`` block: every read in it sees the store as
        of one commit (in autocommit each statement would see its own, and a model read
        table by table while another process commits would be half one, half the other).
        Inside a write transaction the reads already see one state."""
        with self._mutex:
            if self.db.in_transaction:
                yield
                return
            self.db.execute("BEGIN DEFERRED")
            try:
                yield
            finally:
                self.db.execute("COMMIT")

    def snapshot(self) -> tuple[Model, int]:
        """The whole model and the journal position it reflects, read as of one commit:
        every event up to that position is in the model, none after it."""
        with self.reading():
            return self.load(), self.last_seq()

    def backend_lease(
        self, name: str, *, timeout: float = 30.0, ttl: float = 60.0
    ) -> AbstractContextManager[lease.Held]:
        """Hold backend ``name``'s writer lease for the ``with`` block: one writer per backend.

        A second caller (thread or process) polls until ``timeout`` seconds, then raises
        ``Busy`` naming the holder; a holder that crashed loses the lease after ``ttl``
        seconds. Not reentrant: a holder asking again waits like anyone else."""
        return lease.backend_lease(self, name, timeout=timeout, ttl=ttl)

    def append(self, events: Sequence[ev.Event], actor: Actor | None = None) -> list[int]:
        """Write events' effects, journal entries (with their author) and the audit of each
        entity they touch. Call inside :meth:`write_lock`."""
        now = now_iso()
        who, via, request = (
            (None, "library", None) if actor is None else (actor.user, actor.via, actor.request)
        )
        seqs = []
        if self._appended is None and events:
            raise RuntimeError("journal entries are written only in a durable write transaction")
        self._appended = self._appended or bool(events)
        for event in events:
            _EFFECTS[type(event)](self, event)
            self._audit(event, who, now)
            cur = self.db.execute(
                "INSERT INTO journal(at, name, payload, actor, via, request) VALUES (?, ?, ?, ?, ?, ?)",
                (now, event.name, event.to_json(), who, via, request),
            )
            seqs.append(int(cur.lastrowid or 0))
        return seqs

    def _audit(self, event: ev.Event, who: str | None, now: str) -> None:
        created, changed, removed = touched(event)
        for kind, name in removed:
            self._x("DELETE FROM audit WHERE kind = ? AND name = ?", kind, name)
        for kind, name in created:
            self._x("INSERT OR REPLACE INTO audit VALUES (?, ?, ?, ?, ?, ?)", kind, name, who, now, who, now)
        for kind, name in changed:
            self.touch_audit(kind, name, who, now)
        if isinstance(event, ev.ObjectRenamed):
            for (text,) in self.db.execute("SELECT name FROM audit WHERE kind = 'object'").fetchall():
                new = ObjectRef.parse(text).renamed(event.object, event.new_object)
                if str(new) != text:
                    self._x("UPDATE audit SET name = ? WHERE kind = 'object' AND name = ?", str(new), text)
            self.touch_audit("object", str(event.new_object), who, now)

    def touch_audit(self, kind: str, name: str, who: str | None, now: str) -> None:
        """Record that ``who`` changed an entity now (created now if it has no audit yet)."""
        self._x(
            "INSERT INTO audit VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT(kind, name) DO UPDATE SET "
            "modifier = excluded.modifier, modified = excluded.modified",
            kind,
            name,
            who,
            now,
            who,
            now,
        )

    def audit(self, kind: str, name: str | None = None) -> dict[str, Audit]:
        """The audit of one entity (``name``) or of every entity of a kind."""
        sql = "SELECT name, creator, created, modifier, modified FROM audit WHERE kind = ?"
        rows = self.db.execute(
            sql + (" AND name = ?" if name is not None else ""), (kind,) if name is None else (kind, name)
        )
        return {str(r[0]): Audit(r[1], str(r[2]), r[3], str(r[4])) for r in rows}

    def history(
        self, *, mentions: Sequence[str] = (), limit: int | None = None, before: int | None = None
    ) -> list[JournalEntry]:
        """Journal entries, newest first; ``mentions``: only those whose event names one of
        these strings as a field value (a principal's name, an object's full name)."""
        sql = "SELECT seq, at, payload, actor, via, request FROM journal"
        where: list[str] = []
        args: list[object] = []
        if before is not None:
            where.append("seq < ?")
            args.append(before)
        if mentions:  # a coarse filter in SQL (the name's text in the payload), exact below
            where.append("(" + " OR ".join(["instr(payload, ?) > 0"] * len(mentions)) + ")")
            args += [json.dumps(m.split(" ", 1)[-1], ensure_ascii=False)[1:-1] for m in mentions]
        if where:
            sql += " WHERE " + " AND ".join(where)
        sql += " ORDER BY seq DESC"
        out: list[JournalEntry] = []
        for seq, at, payload, actor, via, request in self.db.execute(sql, args):
            event = ev.event_from_json(payload)
            if mentions and not _names(event, mentions):
                continue
            out.append(JournalEntry(int(seq), str(at), event, actor, via, request))
            if limit is not None and len(out) >= limit:
                break
        return out

    # -- reading -----------------------------------------------------------------------

    def last_seq(self) -> int:
        row = self.db.execute("SELECT COALESCE(MAX(seq), 0) FROM journal").fetchone()
        return int(row[0])

    def version(self) -> tuple[int, str | None]:
        """The journal's last seq and the metalake's name, in one query: what a reader
        compares to know whether another writer moved the store."""
        row = self.db.execute(
            "SELECT (SELECT COALESCE(MAX(seq), 0) FROM journal), "
            "(SELECT value FROM meta WHERE key = 'metalake')"
        ).fetchone()
        return int(row[0]), None if row[1] is None else str(row[1])

    def events_since(self, seq: int, limit: int | None = None) -> list[tuple[int, ev.Event]]:
        sql = "SELECT seq, payload FROM journal WHERE seq > ? ORDER BY seq"
        rows = self.db.execute(sql + (f" LIMIT {int(limit)}" if limit else ""), (seq,))
        return [(int(s), ev.event_from_json(p)) for s, p in rows]

    def cursor(self, backend: str) -> int:
        row = self.db.execute("SELECT seq FROM cursors WHERE backend = ?", (backend,)).fetchone()
        return 0 if row is None else int(row[0])

    def set_cursor(self, backend: str, seq: int) -> None:
        self.db.execute(
            "INSERT INTO cursors(backend, seq) VALUES (?, ?) "
            "ON CONFLICT(backend) DO UPDATE SET seq = MAX(seq, excluded.seq)",  # never backwards
            (backend, seq),
        )

    def advance_cursor(
        self,
        backend: str,
        seq: int,
        holder: str | None = None,
        *,
        meta: dict[str, str] | None = None,
        give_back: lease.Held | None = None,
    ) -> bool:
        """Move ``backend``'s cursor to ``seq`` (never backwards) if ``holder`` (when given)
        still holds the backend's writer lease, checked in the same write transaction;
        False, moving nothing, when the lease was lost (taken over after it expired).

        In the same transaction (one write instead of several, so a writer waits on fewer
        locks): ``meta`` is written with the cursor, and ``give_back``, the lease held by
        ``holder``, is given back (its last write; the ``with`` block's end then writes
        nothing). A lost lease writes neither. Bookkeeping: see ``write_lock(durable=False)``."""
        with self.write_lock(durable=False):
            if holder is not None and not lease.holds(self, backend, holder):
                return False
            if seq > self.last_seq():
                raise ValueError(f"cursor {seq} of {backend} would pass the journal's tip")
            self.set_cursor(backend, seq)
            for key, value in (meta or {}).items():
                self.set_meta(key, value)
            if give_back is not None:
                lease.drop(self, give_back)
            return True

    def position(self, backend: str) -> tuple[int, int]:
        """The journal's last seq and ``backend``'s cursor, in one cheap query."""
        row = self.db.execute(
            "SELECT (SELECT COALESCE(MAX(seq), 0) FROM journal), "
            "(SELECT COALESCE(MAX(seq), 0) FROM cursors WHERE backend = ?)",
            (backend,),
        ).fetchone()
        return int(row[0]), int(row[1])

    def first_unseen_at(self, backend: str) -> datetime | None:
        """When the oldest event ``backend`` has not seen was committed (None: none)."""
        row = self.db.execute(
            "SELECT at FROM journal WHERE seq > (SELECT COALESCE(MAX(seq), 0) FROM cursors "
            "WHERE backend = ?) ORDER BY seq LIMIT 1",
            (backend,),
        ).fetchone()
        return None if row is None else datetime.fromisoformat(str(row[0]))

    def record_sync(
        self, backend: str, at: float, *, error: str | None = None, kind: str | None = None, findings: int = 0
    ) -> None:
        """Record how a sync of ``backend`` ended (time.time() ``at``): for ``pushdown status``.
        Bookkeeping (``write_lock(durable=False)``): the next sync records it again."""
        with self.write_lock(durable=False):
            self._record_sync(backend, at, error, kind, findings)

    def _record_sync(
        self, backend: str, at: float, error: str | None, kind: str | None, findings: int
    ) -> None:
        if error is None:
            self.db.execute(
                "INSERT INTO sync_status(backend, last_attempt, last_success, findings) VALUES (?, ?, ?, ?) "
                "ON CONFLICT(backend) DO UPDATE SET last_attempt = excluded.last_attempt, "
                "last_success = excluded.last_success, findings = excluded.findings",
                (backend, at, at, findings),
            )
        else:
            self.db.execute(
                "INSERT INTO sync_status(backend, last_attempt, last_error, last_error_at, error_kind) "
                "VALUES (?, ?, ?, ?, ?) ON CONFLICT(backend) DO UPDATE SET "
                "last_attempt = excluded.last_attempt, last_error = excluded.last_error, "
                "last_error_at = excluded.last_error_at, error_kind = excluded.error_kind",
                (backend, at, error, at, kind),
            )

    def sync_status(self) -> dict[str, dict[str, Any]]:
        """Each recorded backend's last attempt, success, error (text, time, kind) and findings."""
        rows = self.db.execute(
            "SELECT backend, last_attempt, last_success, last_error, last_error_at, error_kind, findings "
            "FROM sync_status ORDER BY backend"
        )
        keys = ("last_attempt", "last_success", "last_error", "last_error_at", "error_kind", "findings")
        return {str(r[0]): dict(zip(keys, r[1:], strict=True)) for r in rows}

    def leases(self) -> dict[str, tuple[str, float]]:
        """Every lease held now or left behind: name -> (holder, expiry as time.time())."""
        rows = self.db.execute("SELECT backend, holder, expires FROM leases ORDER BY backend")
        return {str(b): (str(h), float(e)) for b, h, e in rows}

    def get_meta(self, key: str) -> str | None:
        row = self.db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return None if row is None else str(row[0])

    def get_metas(self, keys: Sequence[str]) -> dict[str, str]:
        """The values of ``keys`` that are set, in one query."""
        marks = ", ".join("?" * len(keys))
        rows = self.db.execute(f"SELECT key, value FROM meta WHERE key IN ({marks})", tuple(keys))  # noqa: S608 - placeholders only
        return {str(k): str(v) for k, v in rows}

    def set_meta(self, key: str, value: str) -> None:
        self.db.execute("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", (key, value))

    def load(self) -> Model:
        """Read the whole model back into memory, as of one commit."""
        with self.reading():
            return self._load()

    def _load(self) -> Model:
        q = self.db.execute
        model = Model(metalake=self.get_meta("metalake") or "metalake")
        for (name,) in q("SELECT name FROM users"):
            model.apply(ev.UserAdded(name))
        for (name,) in q("SELECT name FROM groups_"):
            model.apply(ev.GroupAdded(name))
        for grp, usr in q("SELECT grp, usr FROM members"):
            model.apply(ev.GroupMemberAdded(grp, usr))
        for (name,) in q("SELECT name FROM roles"):
            model.apply(ev.RoleCreated(name))
        for role, obj, priv, cond in q("SELECT role, obj, privilege, condition FROM grants"):
            model.apply(
                ev.PrivilegesGranted(
                    role, ObjectRef.parse(obj), frozenset({Privilege(priv)}), Condition(cond)
                )
            )
        for kind, principal, role in q("SELECT kind, principal, role FROM assignments"):
            model.apply(ev.RoleGranted(role, Principal(PrincipalKind(kind), principal)))
        for obj, props in q("SELECT obj, properties FROM objects"):
            model.objects[ObjectRef.parse(obj)] = dict(json.loads(props))
        for obj, owner in q("SELECT obj, owner FROM owners"):
            model.owners[ObjectRef.parse(obj)] = owner
        model.service_admins = {name for (name,) in q("SELECT name FROM service_admins")}
        for grp, usr in q("SELECT grp, usr FROM external_members"):
            model.external_members.setdefault(grp, set()).add(usr)
        model.reindex()
        return model

    # -- each event's effect on the tables ---------------------------------------------

    def _x(self, sql: str, *args: object) -> None:
        self.db.execute(sql, args)

    def _on_user_added(self, e: ev.UserAdded) -> None:
        self._x("INSERT INTO users(name) VALUES (?)", e.user)

    def _on_user_removed(self, e: ev.UserRemoved) -> None:
        self._x("DELETE FROM users WHERE name = ?", e.user)
        self._x("DELETE FROM members WHERE usr = ?", e.user)
        self._x("DELETE FROM assignments WHERE kind = 'user' AND principal = ?", e.user)
        self._x("DELETE FROM service_admins WHERE name = ?", e.user)

    def _on_group_added(self, e: ev.GroupAdded) -> None:
        self._x("INSERT INTO groups_(name) VALUES (?)", e.group)

    def _on_group_removed(self, e: ev.GroupRemoved) -> None:
        self._x("DELETE FROM groups_ WHERE name = ?", e.group)
        self._x("DELETE FROM members WHERE grp = ?", e.group)
        self._x("DELETE FROM assignments WHERE kind = 'group' AND principal = ?", e.group)

    def _on_group_member_added(self, e: ev.GroupMemberAdded) -> None:
        self._x("INSERT OR IGNORE INTO members(grp, usr) VALUES (?, ?)", e.group, e.user)

    def _on_group_member_removed(self, e: ev.GroupMemberRemoved) -> None:
        self._x("DELETE FROM members WHERE grp = ? AND usr = ?", e.group, e.user)

    def _on_role_created(self, e: ev.RoleCreated) -> None:
        self._x("INSERT INTO roles(name) VALUES (?)", e.role)

    def _on_role_deleted(self, e: ev.RoleDeleted) -> None:
        self._x("DELETE FROM roles WHERE name = ?", e.role)
        self._x("DELETE FROM grants WHERE role = ?", e.role)
        self._x("DELETE FROM assignments WHERE role = ?", e.role)

    def _on_privileges_granted(self, e: ev.PrivilegesGranted) -> None:
        for p in sorted(e.privileges, key=lambda p: p.value):
            self._x(
                "INSERT OR IGNORE INTO grants VALUES (?, ?, ?, ?)",
                e.role,
                str(e.object),
                p.value,
                e.condition.value,
            )

    def _on_privileges_revoked(self, e: ev.PrivilegesRevoked) -> None:
        for p in e.privileges:
            self._x(
                "DELETE FROM grants WHERE role = ? AND obj = ? AND privilege = ? AND condition = ?",
                e.role,
                str(e.object),
                p.value,
                e.condition.value,
            )

    def _on_role_granted(self, e: ev.RoleGranted) -> None:
        self._x(
            "INSERT OR IGNORE INTO assignments VALUES (?, ?, ?)",
            e.principal.kind.value,
            e.principal.name,
            e.role,
        )

    def _on_role_revoked(self, e: ev.RoleRevoked) -> None:
        self._x(
            "DELETE FROM assignments WHERE kind = ? AND principal = ? AND role = ?",
            e.principal.kind.value,
            e.principal.name,
            e.role,
        )

    def _on_owner_set(self, e: ev.OwnerSet) -> None:
        if e.owner is None:
            self._x("DELETE FROM owners WHERE obj = ?", str(e.object))
        else:
            self._x("INSERT OR REPLACE INTO owners VALUES (?, ?)", str(e.object), e.owner)

    def _on_service_admins_set(self, e: ev.ServiceAdminsSet) -> None:
        self._x("DELETE FROM service_admins")
        for user in sorted(e.users):
            self._x("INSERT INTO service_admins VALUES (?)", user)

    def _on_external_members_changed(self, e: ev.ExternalMembersChanged) -> None:
        for user in sorted(e.removed):
            self._x("DELETE FROM external_members WHERE grp = ? AND usr = ?", e.group, user)
        for user in sorted(e.added):
            self._x("INSERT OR IGNORE INTO external_members VALUES (?, ?)", e.group, user)

    def _on_object_created(self, e: ev.ObjectCreated) -> None:
        self._x("INSERT INTO objects VALUES (?, ?)", str(e.object), json.dumps(e.properties))
        if e.owner is not None:
            self._x("INSERT OR REPLACE INTO owners VALUES (?, ?)", str(e.object), e.owner)

    def _on_object_dropped(self, e: ev.ObjectDropped) -> None:
        self._x("DELETE FROM objects WHERE obj = ?", str(e.object))
        self._x("DELETE FROM owners WHERE obj = ?", str(e.object))

    _RENAMES = (
        ("SELECT obj FROM objects", "UPDATE objects SET obj = ? WHERE obj = ?"),
        ("SELECT obj FROM owners", "UPDATE owners SET obj = ? WHERE obj = ?"),
        ("SELECT DISTINCT obj FROM grants", "UPDATE grants SET obj = ? WHERE obj = ?"),
    )

    def _on_object_renamed(self, e: ev.ObjectRenamed) -> None:
        for select, update in self._RENAMES:
            for (text,) in self.db.execute(select).fetchall():
                old = ObjectRef.parse(text)
                new = old.renamed(e.object, e.new_object)
                if new != old:
                    self._x(update, str(new), text)


#: Each event type's effect on the model tables: one entry per type, checked at import.
_EFFECTS: dict[type[ev.Event], Callable[[Store, Any], None]] = {
    ev.UserAdded: Store._on_user_added,
    ev.UserRemoved: Store._on_user_removed,
    ev.GroupAdded: Store._on_group_added,
    ev.GroupRemoved: Store._on_group_removed,
    ev.GroupMemberAdded: Store._on_group_member_added,
    ev.GroupMemberRemoved: Store._on_group_member_removed,
    ev.RoleCreated: Store._on_role_created,
    ev.RoleDeleted: Store._on_role_deleted,
    ev.PrivilegesGranted: Store._on_privileges_granted,
    ev.PrivilegesRevoked: Store._on_privileges_revoked,
    ev.RoleGranted: Store._on_role_granted,
    ev.RoleRevoked: Store._on_role_revoked,
    ev.OwnerSet: Store._on_owner_set,
    ev.ServiceAdminsSet: Store._on_service_admins_set,
    ev.ExternalMembersChanged: Store._on_external_members_changed,
    ev.ObjectCreated: Store._on_object_created,
    ev.ObjectDropped: Store._on_object_dropped,
    ev.ObjectRenamed: Store._on_object_renamed,
}
if set(_EFFECTS) != set(ev.EVENT_TYPES.values()):  # pragma: no cover - caught at import by every run
    raise TypeError("every event type needs exactly one effect in pushdown.journal.store._EFFECTS")
