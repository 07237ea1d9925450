"""The ``hive`` backend: one Hive Metastore enforces one catalog.

``read`` lists the grants on the databases and tables the scope reaches, every
principal's in one call per object (:mod:`pushdown_hive.readback`); ``compile`` turns
the core's entitlement compiler's answer into table grants (:mod:`pushdown_hive.compile`);
``apply`` sends many privileges per Thrift call (:mod:`pushdown_hive.batches`), and a
privilege the metastore refuses does not stop the others.

Fence: the backend manages the grants whose grantor is its own (setting ``grantor``,
default the setting ``user``, else ``pushdown``), granted as a USER grantor without
grant option; the option (and a membership's admin option) is part of a fact, so one
held WITH GRANT / ADMIN OPTION is revoked, and granted again without it where the model
wants it. Grants by other hands — the owner grants the metastore adds to tables
Spark creates, grants made by hand — are findings when they reach a user the model
manages, never removed, unless ``manage_foreign_grants = true`` gives the backend the
whole catalog (then they are managed facts like its own, and revoked when the model
does not want them).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from pushdown.errors import ConfigError, TemporaryBackendError
from pushdown.model.securables import ObjectRef, SecurableType
from pushdown.model.state import Model
from pushdown.reconcile.backend import (
    Applied,
    Backend,
    BackendContext,
    Capabilities,
    Desired,
    Failure,
    Progress,
    Snapshot,
    fingerprint,
)
from pushdown.reconcile.estate import Estate
from pushdown.reconcile.plan import Fact, Op, Plan
from pushdown.reconcile.reach import sole_catalog
from pushdown.reconcile.scope import Region, Resolved, Scope
from pushdown.reconcile.settings import Settings
from pushdown_hive.batches import BATCH, Sent, chunks, not_widening, refusal, roles_of, send
from pushdown_hive.compile import RoleSetup, compile_desired, mapped
from pushdown_hive.facts import (
    ROLE,
    USER,
    HiveFact,
    HiveGlobal,
    HiveGrant,
    HiveHeld,
    HiveMember,
    HiveRole,
    fact_from_json,
)
from pushdown_hive.hostile import Fence, Hostile, bare, owners_of
from pushdown_hive.identity import Identity, KeptIdentity, kept_identity
from pushdown_hive.mapping import BUILTIN_ROLES
from pushdown_hive.metastore import Listed, Member, Metastore, Other, Refused, Unreachable
from pushdown_hive.readback import (
    ServerRead,
    ServerScope,
    bare_grant,
    fact_scope,
    folded,
    foreign_findings,
    managed_facts,
    normalised,
    object_of,
    ours,
    read_roles,
    read_server,
    role_facts,
    roles_of_users,
    server_scope,
)
from pushdown_hive.roles import Play, ServerRoles, Triple, allowing, plays
from pushdown_hive.surface import ENTRIES


@dataclass(frozen=True, kw_only=True)
class HiveSnapshot(Snapshot):
    server: ServerRead
    where: ServerScope
    plays: tuple[Play, ...] = ()
    identity: Identity | None = None
    roles: ServerRoles | None = None


def _ops(plan: Plan, action: str, kind: type) -> list[Op]:
    return [
        op for op in plan.ops if (op.action == "remove") == (action == "remove") and isinstance(op.fact, kind)
    ]


class HiveBackend(Backend):
    kind = "hive"
    SURFACE = ENTRIES
    capabilities = Capabilities(
        securable_types=frozenset({SecurableType.CATALOG, SecurableType.SCHEMA, SecurableType.TABLE})
    )

    def __init__(self, context: BackendContext, metastore: Metastore | None = None) -> None:
        super().__init__(context)
        s = Settings.of(context)
        self.host = s.text("host", "127.0.0.1")
        self.port = s.port("port", 9083)  # at most 65535: a socket would wrap a larger one
        self.timeout = s.seconds("timeout", 30.0)
        self.grantor = s.text("grantor", s.text("user", "pushdown"))
        self.batch = s.whole("batch_size", BATCH, low=1)
        self.own_foreign = s.flag("manage_foreign_grants")
        self.roles = s.flag("roles", True)
        self.role_prefix = s.text("role_prefix", "pd_", empty=True)
        if self.roles and not self.role_prefix:
            raise s.bad("role_prefix", "must not be empty (it fences the roles)")
        if self.roles and any(r.startswith(self.role_prefix.lower()) for r in BUILTIN_ROLES):
            raise s.bad(
                "role_prefix",
                f"{self.role_prefix!r} would fence in the metastore's own roles "
                f"({', '.join(sorted(BUILTIN_ROLES))}), which pushdown must never drop",
            )
        #: the roles' fence, read on every sync: with ``roles = false`` the roles it holds
        #: (left by an earlier configuration) are dropped, never left carrying grants
        self.role_fence: str | None = self.role_prefix
        if not self.role_prefix or any(r.startswith(self.role_prefix.lower()) for r in BUILTIN_ROLES):
            self.role_fence = None
        self.naming = mapped(context.map_principal)
        #: every user's metastore name, kept between syncs (a new backend, a new keeper)
        self.kept = KeptIdentity(
            self.naming, caseless=True, version=context.mapping_version, stable=context.mapping_stable
        )
        #: the identity of the last read and the names it mapped the model's users to
        #: (``None``: no read yet)
        self._mapped: tuple[Identity, dict[str, str]] | None = None
        #: the identity last read and its names as the metastore compares them
        self._bare: tuple[Identity, frozenset[str]] | None = None
        self._ms = metastore
        #: the managed roles the metastore holds, as last listed and kept up to date by the
        #: backend's own creates and drops (``None``: list them at the next read); and the
        #: same names without the prefix (the model's)
        self.known_roles: frozenset[str] | None = None
        self._known_model_names: frozenset[str] = frozenset()
        #: the last :meth:`_gone_roles` answer: (model, its roster count, known names, gone)
        self._last_gone: tuple[Model, int, frozenset[str], frozenset[str]] | None = None
        #: Thrift calls made (reads and writes), for the benchmark and the tests
        self.calls = 0
        self.rows = 0

    # -- the connection --------------------------------------------------------------

    @property
    def metastore(self) -> Metastore:
        if self._ms is None:
            from pushdown_hive.calls import connect

            self._ms = connect(self.host, self.port, self.timeout)
        return self._ms

    def _gone(self, exc: Exception, doing: str) -> TemporaryBackendError:
        self._drop()  # the next call connects again
        self._keep_roles(None)  # and lists the roles again
        return TemporaryBackendError(
            self.name,
            f"the metastore at {self.host}:{self.port} did not answer while {doing} ({exc}); "
            "nothing is lost: the next sync reads it back and finishes the work",
        )

    def _refused(self, exc: Exception, doing: str) -> TemporaryBackendError:
        """A read the metastore refused: most often an object or role dropped between two
        calls of the read; said clearly, and the next sync reads again."""
        self._keep_roles(None)
        return TemporaryBackendError(
            self.name,
            f"the metastore at {self.host}:{self.port} refused a read while {doing} ({exc}); "
            "nothing was changed: the next sync reads it again",
        )

    # -- the contract ----------------------------------------------------------------

    def catalog(self, model: Model) -> str | None:
        """The one catalog the metastore enforces; ``None`` when none, or several, name it
        (then nothing is wanted: an error never holds back the revokes, and the plan's
        note says why)."""
        return sole_catalog(self.enforces(model))

    def _several(self, model: Model) -> str | None:
        catalogs = sorted(self.enforces(model))
        if len(catalogs) < 2:
            return None
        return (
            f"catalogs {', '.join(catalogs)} all name backend {self.name}, but one metastore enforces "
            "one catalog: nothing is granted and every managed grant is revoked (narrower) until each "
            "catalog names its own backend"
        )

    def on_server(self, model: Model, obj: ObjectRef) -> bool | None:
        """Whether the metastore holds the database of a schema, or the table (or view) of
        a table; the metastore keeps names in lower case, so they are compared case-folded."""
        if obj.type not in (SecurableType.SCHEMA, SecurableType.TABLE):
            return False  # the server holds no topics, filesets, models: nothing to claim
        db = obj.names[1].casefold()
        try:
            ms = self.metastore
            if db not in {d.casefold() for d in ms.databases()}:
                return False
            if obj.type is SecurableType.SCHEMA:
                return True
            return obj.names[2].casefold() in {t.casefold() for t in ms.tables(db)}
        except Unreachable as exc:
            raise self._gone(exc, f"asking whether it holds {obj}") from exc
        except Refused as exc:
            raise self._refused(exc, f"asking whether it holds {obj}") from exc
        finally:
            self.calls += 1

    def widen(self, obj: ObjectRef) -> ObjectRef:
        """A table stays a table: every grant but a database's ``CREATE`` is on a table,
        and a table's change decides nothing about its database's ``CREATE``."""
        return obj

    def read(self, model: Model, scope: Resolved) -> HiveSnapshot:
        catalog = self.catalog(model)
        scope = folded(scope, catalog)  # the metastore's names: c.s.Secret is its table s.secret
        # no catalog names the backend: nothing is wanted, so everything it manages is
        # read (whatever the scope) and revoked, as the plan's note says
        where = server_scope(scope, catalog) if catalog is not None else ServerScope.everything()
        server = self._read(where)
        # the whole model's names, kept between syncs (never only the scope's users)
        identity = kept_identity(model, self.kept, scope)
        scope = identity.widened(scope)
        remapped = self._remapped(identity)
        in_play: tuple[Play, ...] | None = None
        if not self.roles or catalog is None:  # every managed role unwanted: all of them in play
            in_play = tuple(Play(r, None) for r in scope.regions)
        elif not remapped:
            try:
                in_play = plays(
                    scope,
                    model,
                    self._held_by,
                    identity.names_of,
                    lambda roots: allowing(model, roots, catalog) | self._bearing(server, catalog, roots),
                )
            except _HeldUnknown:
                in_play = None  # the roles a scope user holds on the metastore are not known
        if in_play is None:
            # a user's name changed, the backend's first read, or a user's roles unreadable:
            # every managed role in play, so every user on the scope's objects (a role in
            # play is recomputed with all its holders: with some alone it would carry
            # nothing, and the others' memberships would be revoked)
            in_play = tuple(Play(Region(None, r.roots), None) for r in scope.regions)
        roles = ServerRoles({})
        if self.role_fence is not None:
            roles = self._read_roles(in_play, model=model)
            if roles.read is not None:  # of the others, only those the model no longer has count
                gone = {self.role_fence + r for r in self._gone_roles(model)}
                roles = replace(roles, present=(roles.names() & roles.read) | gone)
        within = fact_scope(in_play, catalog, where, identity, self.role_fence, lambda r: r in model.roles)
        findings: list[str] = []
        globals_: set[HiveFact] = set()
        if catalog is not None and not self.own_foreign:
            findings = foreign_findings(
                (x for x in server.listed if within(x.grant)),
                self.grantor,
                # every user (a removed one, a padded name too) and every group: pushdown
                # cannot resolve the enforcing host's groups, nor tell a removed user apart
                lambda g: g.principal_type != ROLE or self._fenced(g.principal),
                catalog,
            )
        if catalog is not None:
            more, own = self._hostile(model, catalog, server, within, identity)
            findings += more
            globals_ |= own
        findings += [
            f"{what}: the metastore refused to list its grants (dropped meanwhile?); nothing is granted on "
            "it in this sync, and the next sync reads it again"
            for what in server.unread
        ]
        facts = frozenset(f for f in self._managed(server.listed) | role_facts(roles) | globals_ if within(f))
        return HiveSnapshot(
            facts=facts,
            within=within,
            findings=tuple(findings),
            fingerprint=fingerprint(facts, findings),
            server=server,
            where=where,
            plays=in_play,
            identity=identity,
            roles=roles,
        )

    def _fenced(self, role: str) -> bool:
        return self.role_fence is not None and role.startswith(self.role_fence)

    def _hostile(
        self,
        model: Model,
        catalog: str,
        server: ServerRead,
        within: Callable[[object], bool],
        identity: Identity,
    ) -> tuple[list[str], set[HiveFact]]:
        """Hand-made state outside the fence (:mod:`pushdown_hive.hostile`): findings, and
        pushdown's own grantor's server-level grants and user memberships of roles outside
        the fence (facts, never wanted)."""
        users = self._bare_users(identity)
        owners = owners_of(model, catalog, identity)
        fence = Fence(self._fenced, self.grantor)
        h = Hostile(self.metastore, lambda n: bare(n) in users, catalog, fence)
        try:
            if not self.own_foreign:
                h.roles((x for x in server.listed if within(x.grant)), lambda x: ours(x, self.grantor), fence)
            h.admin()
            h.server(self._own_global)
            h.databases(server.databases, lambda db, owner: owners(db, None, owner))
            h.tables(server.tables, lambda db, t, owner: owners(db, t.lower(), owner), server.infos)
        except Unreachable as exc:
            raise self._gone(exc, "reading hand-made state") from exc
        except Refused as exc:
            raise self._refused(exc, "reading hand-made state") from exc
        finally:
            self.calls += h.calls
        return sorted(h.findings), h.own

    def _bare_users(self, identity: Identity) -> frozenset[str]:
        """The metastore names of the model's users as the metastore compares them, kept
        while the kept identity hands the same answer (built again when a user's name
        changes, or one comes or goes: never a pass over every user per sync)."""
        if self._bare is None or self._bare[0] is not identity:
            self._bare = (identity, frozenset(bare(n) for n in identity.users))
        return self._bare[1]

    def _own_global(self, g: Other) -> bool:
        return g.grantor == self.grantor and g.grantor_type == USER

    def _own_member(self, m: Member) -> bool:
        return m.grantor == self.grantor and m.grantor_type == USER

    def _memberships_of(self, role: str) -> list[Member]:
        try:
            return self.metastore.memberships(role)
        except Refused:
            if role in self.metastore.role_names():
                raise  # there, yet unreadable: said as an error
            return []  # dropped meanwhile: nobody holds it

    def _remapped(self, identity: Identity) -> bool:
        """Whether a user still in the model may hold a managed role under a name it no
        longer maps to: at the backend's first read (a new mapping, or settings, may have
        come with it) and whenever a kept user's name changed since the last read. The
        old name is an orphan, held by the roles of any user's grant, so every managed
        role is read (and recomputed) then, whatever the scope: its memberships are revoked."""
        if self._mapped is not None and identity is self._mapped[0]:
            return False  # the kept identity hands out the same object while no name moved
        last = None if self._mapped is None else self._mapped[1]
        self._mapped = (identity, dict(identity.names))
        if last is None:
            return True
        return any(
            identity.name(u) != n for u, n in last.items() if u in identity.names or u in identity.refused
        )

    def _read_roles(
        self,
        in_play: tuple[Play, ...] | None = None,
        only: frozenset[str] | None = None,
        model: Model | None = None,
    ) -> ServerRoles:
        """The managed roles; the members and nesting of those ``in_play`` (or ``only``,
        prefixed names), of every one when a play takes every role. The names are listed
        unless ``model`` is given and the roles the backend knows answer the sync
        (:meth:`_must_list`); a read back (no ``model``) always lists them."""
        prefix = self.role_fence or self.role_prefix
        if in_play is not None and all(p.roles is not None for p in in_play):
            only = frozenset(prefix + r for p in in_play for r in p.roles or ())
        known = None if model is None or self._must_list(only, model) else self.known_roles
        try:
            roles, calls = read_roles(self.metastore, prefix, only, known)
        except Unreachable as exc:
            raise self._gone(exc, "reading its roles") from exc
        except Refused as exc:
            raise self._refused(exc, "reading its roles") from exc
        if roles.names() != self.known_roles:  # (the names without the prefix: made again)
            self._keep_roles(roles.names())
        self.calls += calls
        self.rows += sum(len(m) for m in roles.members.values())
        return roles

    def _must_list(self, only: frozenset[str] | None, model: Model) -> bool:
        """Whether a sync lists the metastore's roles (``get_role_names``: every role of
        the metastore, 10,000 in issue 30's estate) rather than trusting the roles the
        backend knows: when it knows none yet, when every role is in play (a full sync,
        ``roles = false``), when a role in play is not one it knows (made by another hand
        or another process since: it is read, and dropped when the model does not have
        it), and when one it knows is a role the model no longer has (it is dropped by
        this sync, whatever the scope, on the metastore's word). A managed role made by
        another hand, that the model does not have and no sync puts in play, is found
        (and dropped) by the next sync that lists: every full sync."""
        known = self.known_roles
        if known is None or only is None or not only <= known:
            return True
        return bool(self._gone_roles(model))

    def _gone_roles(self, model: Model) -> frozenset[str]:
        """The roles the backend knows on the metastore (model names) that the model no
        longer has: kept with the model object, its count of roles created and deleted
        (:attr:`Model.roster_stamped`) and the known roles, so a sync of the same model with
        no role come or gone passes over no list of every role."""
        last = self._last_gone
        if (
            last is not None
            and last[0] is model
            and last[1] == model.roster_stamped
            and last[2] is self._known_model_names
        ):
            return last[3]
        gone = self._known_model_names.difference(model.roles)
        self._last_gone = (model, model.roster_stamped, self._known_model_names, gone)
        return gone

    def _keep_roles(self, names: frozenset[str] | None) -> None:
        """The managed roles the metastore holds now, as far as the backend knows (``None``:
        not known, the next sync lists them)."""
        self.known_roles = names
        cut = len(self.role_fence or self.role_prefix)
        self._known_model_names = frozenset() if names is None else frozenset(n[cut:] for n in names)

    def _applied_roles(self, plan: Plan, refused: list[tuple[Op, str]]) -> None:
        """The roles known after an apply: those it created added, those it dropped taken
        out; not known at all when the metastore refused anything naming a role (one
        dropped or made by another hand meanwhile: the next sync lists them)."""
        if self.known_roles is None:
            return
        if any(roles_of(op.fact) or isinstance(op.fact, HiveRole) for op, _ in refused):
            self._keep_roles(None)
            return
        created = {op.fact.name for op in _ops(plan, "add", HiveRole) if isinstance(op.fact, HiveRole)}
        dropped = {op.fact.name for op in _ops(plan, "remove", HiveRole) if isinstance(op.fact, HiveRole)}
        if created or dropped:
            self._keep_roles((self.known_roles - dropped) | created)

    def _held_by(self, names: frozenset[str]) -> set[str]:
        """The model roles (without the prefix) the metastore says these users hold."""
        if self.role_fence is None:
            return set()
        try:
            held, calls = roles_of_users(self.metastore, self.role_fence, names)
        except Unreachable as exc:
            raise self._gone(exc, "reading its users' roles") from exc
        except Refused as exc:
            # not "holds nothing": a role the model took from the user would stay out of play
            # and its membership held; the sync puts every role in play instead
            raise _HeldUnknown(str(exc)) from exc
        self.calls += calls
        return {r[len(self.role_fence) :] for rs in held.values() for r in rs}

    def _bearing(self, server: ServerRead, catalog: str, roots: frozenset[ObjectRef]) -> set[str]:
        """The model roles (without the prefix) whose managed role holds a grant, by this
        backend, on an object read below ``roots``."""
        if self.role_fence is None:
            return set()
        region = Region(None, roots)
        return {
            g.principal[len(self.role_fence) :]
            for g in self._managed(server.listed)
            if isinstance(g, HiveGrant)
            and g.principal_type == ROLE
            and g.principal.startswith(self.role_fence)
            and region.covers(None, object_of(catalog, g))
        }

    def _managed(self, listed: tuple[Listed, ...]) -> frozenset[HiveFact]:
        if self.own_foreign:
            return frozenset(x.grant for x in listed)
        return managed_facts(listed, self.grantor)

    def _read(self, where: ServerScope) -> ServerRead:
        try:
            server = read_server(self.metastore, where)
        except Unreachable as exc:
            raise self._gone(exc, "reading its grants") from exc
        except Refused as exc:
            raise self._refused(exc, "reading its grants") from exc
        server = replace(server, listed=tuple(normalised(x) for x in server.listed))
        self.calls += server.calls
        self.rows += len(server.listed)
        return server

    def compile(self, model: Model, snapshot: Snapshot, scope: Resolved) -> Desired:
        assert isinstance(snapshot, HiveSnapshot)
        # what each managed role carries on the objects read, in scope or not: the roles
        # not in play keep it, and their holders' per-user grants are counted without it
        held: dict[str, set[Triple]] = {}
        for fact in self._managed(snapshot.server.listed):
            if isinstance(fact, HiveGrant) and fact.principal_type == ROLE:
                held.setdefault(fact.principal, set()).add((fact.db, fact.table, fact.privilege))
        roles = RoleSetup(self.roles, self.role_prefix, held)
        several = self._several(model)
        if several is not None:
            return Desired(frozenset(), (several,))
        desired = compile_desired(
            model, self.catalog(model), snapshot.server, snapshot.plays, self.naming, roles, snapshot.identity
        )
        # a privilege somebody else granted already satisfies the model: the metastore would
        # refuse a second grant of it (whoever the grantor), so it is not sent
        # (with or without grant option: the option of another grantor's is a finding)
        taken = {bare_grant(x.grant) for x in snapshot.server.listed if x.grant not in snapshot.facts}
        if not taken & desired.facts:
            return desired
        return replace(desired, facts=desired.facts - taken)

    def replaces(self, old: Fact, new: Fact) -> bool:
        """The metastore holds a privilege once, with or without its option (and a role's
        membership once, with or without admin option)."""
        if isinstance(old, HiveGrant) and isinstance(new, HiveGrant):
            return bare_grant(old) == bare_grant(new)
        if isinstance(old, HiveMember) and isinstance(new, HiveMember):
            return (old.role, old.user) == (new.role, new.user)
        return False

    def estate(self, model: Model) -> Estate:
        """What the metastore holds, as model items (:mod:`pushdown_hive.estate`)."""
        from pushdown_hive.estate import read_estate

        return read_estate(self, model)

    def apply(self, plan: Plan, snapshot: Snapshot, progress: Progress) -> Applied:
        """In the metastore's order: privileges and memberships revoked, roles dropped,
        roles created, memberships and privileges granted (privileges many per call)."""
        ms, sent = self.metastore, Sent()
        steps: list[tuple[str, list[Op], int, Callable[[list[Any]], None]]] = [
            ("revoking privileges", _ops(plan, "remove", HiveGrant), self.batch, ms.revoke),
            (
                "revoking server-level privileges",
                _ops(plan, "remove", HiveGlobal),
                1,
                lambda g: ms.revoke_global(g[0].principal_type, g[0].principal, g[0].privilege),
            ),
            (
                "revoking roles nested by hand",
                _ops(plan, "remove", HiveHeld),
                1,
                lambda h: ms.revoke_role_from(h[0].role, h[0].principal_type, h[0].principal),
            ),
            (
                "revoking roles",
                _ops(plan, "remove", HiveMember),
                1,
                lambda m: ms.revoke_role(m[0].role, m[0].user),
            ),
            ("dropping roles", _ops(plan, "remove", HiveRole), 1, lambda r: ms.drop_role(r[0].name)),
            (
                "creating roles",
                _ops(plan, "add", HiveRole),
                1,
                lambda r: ms.create_role(r[0].name, self.grantor),
            ),
            (
                "granting roles",
                _ops(plan, "add", HiveMember),
                1,
                lambda m: ms.grant_role(m[0].role, m[0].user, self.grantor),
            ),
            ("granting privileges", _ops(plan, "add", HiveGrant), self.batch, self._grant_call(ms)),
        ]
        held_back: list[Failure] = []
        for doing, ops, size, call in steps:
            if doing.startswith("granting"):
                ops, kept = not_widening(ops, sent.refused)
                held_back += kept
            for batch in chunks(ops, size):
                try:
                    send(batch, call, sent)
                except Unreachable as exc:
                    self.calls += sent.calls
                    raise self._gone(
                        exc, f"{doing} ({len(batch)} in this call, {sent.done} applied before)"
                    ) from exc
                progress(len(batch))
        self.calls += sent.calls
        self._applied_roles(plan, sent.refused)
        failures = tuple(Failure((op,), refusal(op, words)) for op, words in sent.refused)
        return Applied(sent.done, failures + tuple(held_back))

    def _grant_call(self, ms: Metastore) -> Callable[[list[HiveGrant]], None]:
        return lambda grants: ms.grant(grants, self.grantor)

    def reread(
        self, model: Model, scope: Resolved, plan: Plan, snapshot: Snapshot, applied: Applied | None = None
    ) -> Snapshot:
        """Read back only the objects the plan touched (and the roles, when it touched
        any); keep the rest of the snapshot."""
        assert isinstance(snapshot, HiveSnapshot)
        touched: dict[str, set[str | None]] = {}
        for op in plan.ops:
            if isinstance(op.fact, HiveGrant):
                touched.setdefault(op.fact.db, set()).add(op.fact.table)
        roles = any(
            isinstance(op.fact, HiveRole | HiveHeld)
            or (isinstance(op.fact, HiveMember) and self._fenced(op.fact.role))
            for op in plan.ops
        )
        server = any(isinstance(op.fact, HiveGlobal) for op in plan.ops)
        # pushdown's memberships of roles outside the fence: those roles are read again
        outside = sorted(
            {
                op.fact.role
                for op in plan.ops
                if isinstance(op.fact, HiveMember) and not self._fenced(op.fact.role)
            }
        )
        listed: list[Listed] = []
        fresh: set[HiveFact] = set()
        try:
            for role in outside:
                self.calls += 1
                fresh |= {
                    HiveMember(role, m.principal, m.admin)
                    for m in self._memberships_of(role)
                    if m.principal_type == USER and self._own_member(m)
                }
            for db, tables in sorted(touched.items()):
                for table in sorted(tables, key=lambda t: t or ""):
                    listed += [normalised(x) for x in self.metastore.grants_on(db, table)]
                    self.calls += 1
            if server:
                self.calls += 1
                fresh |= {
                    HiveGlobal(g.principal_type, g.principal, g.privilege)
                    for g in self.metastore.server_grants()
                    if self._own_global(g)
                }
        except Unreachable as exc:
            raise self._gone(exc, "reading back what it applied") from exc
        except Refused as exc:
            raise self._refused(exc, "reading back what it applied") from exc
        self.rows += len(listed)
        fresh |= set(self._managed(tuple(listed)))
        if roles and self.role_fence is not None:  # the managed roles the snapshot read, again
            fresh |= role_facts(self._read_roles(only=snapshot.roles.read if snapshot.roles else None))

        def touches(fact: Fact) -> bool:
            if isinstance(fact, HiveMember) and not self._fenced(fact.role):
                return fact.role in outside
            if isinstance(fact, HiveRole | HiveMember | HiveHeld):
                return roles
            if isinstance(fact, HiveGlobal):
                return server
            return isinstance(fact, HiveGrant) and fact.table in touched.get(fact.db, ())

        kept = {f for f in snapshot.facts if not touches(f)}
        return replace(snapshot, facts=frozenset(kept | {f for f in fresh if snapshot.within(f)}))

    def discover(self, model: Model, seen: str | None) -> tuple[Scope, str | None]:
        """Databases whose table lists changed since the last sync (one call for the
        databases, one per database for its tables)."""
        catalog = self.catalog(model)
        if catalog is None:
            return Scope.nothing(), None
        try:
            ms = self.metastore
            now = {db: _digest(ms.tables(db)) for db in ms.databases()}
        except Unreachable as exc:
            raise self._gone(exc, "listing its databases and tables") from exc
        except Refused as exc:
            raise self._refused(exc, "listing its databases and tables") from exc
        self.calls += 1 + len(now)
        summary = json.dumps({"catalog": catalog, "databases": now}, sort_keys=True)
        if seen is None:
            return Scope.nothing(), summary
        before = json.loads(seen)
        if before.get("catalog") != catalog:
            return Scope.nothing(), summary
        old = before.get("databases", {})
        names = sorted(db for db in set(old) | set(now) if old.get(db) != now.get(db))
        return Scope.of(ObjectRef(SecurableType.SCHEMA, (catalog, db)) for db in names), summary

    def fact_from_json(self, data: Mapping[str, Any]) -> Fact:
        try:
            return fact_from_json(data)
        except ValueError as exc:
            raise ConfigError(f"backend {self.name}: {exc}") from exc

    def _drop(self) -> None:
        if self._ms is not None:
            try:
                self._ms.close()
            except Exception:  # noqa: S110 - closing a dead connection has nothing to report
                pass

    def close(self) -> None:
        if self._ms is not None:
            try:
                self._ms.close()
            except Exception:  # noqa: S110 - closing a dead connection has nothing to report
                pass
            self._ms = None


class _HeldUnknown(Exception):
    """The metastore refused to say which roles a user holds."""


def _digest(tables: list[str]) -> str:
    return hashlib.sha256("\n".join(sorted(tables)).encode("utf-8", "surrogateescape")).hexdigest()[:16]


__all__ = ["HiveBackend", "HiveGrant"]
