"""The ``unitycatalog`` backend: each model catalog that names it is the server's catalog
of the same (lower-case) name; the server's other catalogs are not pushdown's.

``read`` lists the schemas and tables of the catalog the scope reaches and every
principal's privileges on each (:mod:`pushdown_unitycatalog.readback`; a schema reached
only through some of its tables is read on the schema and those tables, see
:meth:`UnityCatalogBackend.read`); ``compile``
turns the entitlement compiler's answer into privileges by operation
(:mod:`pushdown_unitycatalog.compile`); ``apply`` sends one ``PATCH`` per principal and
securable, revokes first; a change the server refuses does not stop the others.

Fence: pushdown manages the principals named by the setting ``principals`` (a list) or
starting with ``principal_prefix``; every privilege such a principal holds on the
catalog, its schemas and tables is a managed fact (hand-made ones too, revoked when the
model does not want them). Grants to other principals are left alone; one whose name is
a managed principal's but for case, or a group form (``account users``), is a finding.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar, cast

from pushdown.errors import ConfigError, TemporaryBackendError
from pushdown.model.principals import Principal
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
from pushdown.reconcile.identity import Identity, KeptIdentity
from pushdown.reconcile.plan import Fact, Op, Plan
from pushdown.reconcile.scope import Resolved
from pushdown.reconcile.settings import Settings
from pushdown.reconcile.surface import SurfaceEntry
from pushdown_unitycatalog.client import Refused, UnityCatalog, Unreachable
from pushdown_unitycatalog.compile import compile_desired
from pushdown_unitycatalog.facts import UCGrant, fact_from_json
from pushdown_unitycatalog.mapping import MODIFY, SELECT
from pushdown_unitycatalog.readback import ServerRead, reach, read_server, within
from pushdown_unitycatalog.surface import SURFACE

#: principals that stand for many users (Databricks' groups); a grant to one reaches everybody
GROUP_FORMS = frozenset({"account users", "users"})


@dataclass(frozen=True, kw_only=True)
class UCSnapshot(Snapshot):
    #: one read per catalog the backend enforces
    reads: tuple[ServerRead, ...] = ()
    #: the compile ``read`` made to check a narrow read: (model, its version, scope, answer)
    compiled: tuple[Model, int, Resolved, Desired] | None = field(default=None, compare=False, repr=False)


def _server_catalogs(named: frozenset[str]) -> tuple[list[str], list[str]]:
    """The server catalogs of the enforced model catalogs, and notes on those left out."""
    by_folded: dict[str, list[str]] = {}
    for c in named:
        by_folded.setdefault(c.lower(), []).append(c)
    keep, notes = [], []
    for folded, spelt in sorted(by_folded.items()):
        if len(spelt) > 1 or spelt[0] != folded:
            notes.append(
                f"catalog {' and '.join(sorted(spelt))}: Unity Catalog keeps names in lower case, so "
                f"{folded} cannot be matched to the model exactly; nothing is read or granted (narrower)"
            )
            continue
        keep.append(folded)
    return keep, notes


class UnityCatalogBackend(Backend):
    kind = "unitycatalog"
    capabilities = Capabilities(
        securable_types=frozenset({SecurableType.CATALOG, SecurableType.SCHEMA, SecurableType.TABLE})
    )
    SURFACE: ClassVar[tuple[SurfaceEntry, ...]] = SURFACE

    def __init__(self, context: BackendContext, server: UnityCatalog | None = None) -> None:
        super().__init__(context)
        s = Settings.of(context)
        self.url = s.text("url", "http://127.0.0.1:8081")
        self.token = context.secret("token") or s.secret_text("token")
        self.timeout = s.seconds("timeout", 30.0)
        self.prefix = s.text("principal_prefix", "", empty=True)
        listed = context.setting("principals", [])
        if not isinstance(listed, list) or not all(isinstance(p, str) and p for p in listed):
            raise s.bad("principals", f"{listed!r}: a list of principal names")
        self.principals = frozenset(listed)
        if not self.prefix and not self.principals:
            raise ConfigError(
                f"backend {self.name}: set 'principals' or 'principal_prefix': they fence the principals "
                "pushdown manages (it never touches another's grants)"
            )
        self._uc = server
        #: every user's server name, kept between syncs (a new backend, a new keeper)
        self.kept = KeptIdentity(
            lambda user: context.map_principal(Principal.user(user)),
            caseless=True,
            unusable=_any_string,
            version=context.mapping_version,
            stable=context.mapping_stable,
        )
        self._folds: tuple[Identity, dict[str, str]] | None = None
        #: "" once the server was seen to show the token every principal's grants on the
        #: metastore (:meth:`UnityCatalog.sees_all`): the metastore admin stays the admin. A
        #: catalog's sight is asked at every read: a catalog dropped and made again by
        #: somebody else is no longer the token's owned one (kept, it hid every grant there)
        self._sees: set[str] = set()

    @property
    def uc(self) -> UnityCatalog:
        if self._uc is None:
            self._uc = UnityCatalog(self.url, self.token, self.timeout)
        return self._uc

    def managed(self, principal: str) -> bool:
        return principal in self.principals or bool(self.prefix and principal.startswith(self.prefix))

    def _identity(self, model: Model, scope: Resolved | None) -> Identity:
        """Every model user's server name, kept between syncs (:class:`KeptIdentity`): the
        users ``scope`` grants to are mapped again, everyone when a kept answer went stale,
        the mapping hook or its settings changed, or a hook may answer otherwise (a clash
        anywhere in the model is seen before a grant)."""
        fresh = _scope_users(scope)
        if fresh is None and self.kept.stable():
            fresh = frozenset()
        return self.kept.of(model.users, fresh)

    def _name_of(self, model: Model, scope: Resolved | None = None) -> Callable[[str], str | None]:
        """The server principal of each model user, when fenced and not shared with another
        (in any case)."""
        identity = self._identity(model, scope)
        withheld = identity.withheld

        def name_of(user: str) -> str | None:
            n = identity.names.get(user)
            return n if n is not None and self.managed(n) and user not in withheld else None

        return name_of

    def _managed_folds(self, identity: Identity) -> dict[str, str]:
        """Each managed, unshared server name by its case fold (built once per identity)."""
        if self._folds is None or self._folds[0] is not identity:
            withheld = identity.withheld
            folds = {
                n.casefold(): n
                for n, users in identity.users.items()
                if self.managed(n) and not any(u in withheld for u in users)
            }
            self._folds = (identity, folds)
        return self._folds[1]

    def _gone(self, exc: Exception) -> TemporaryBackendError:
        return TemporaryBackendError(
            self.name, f"Unity Catalog at {self.url} did not answer ({exc}); the next sync reads it back"
        )

    # -- the contract ------------------------------------------------------------

    def on_server(self, model: Model, obj: ObjectRef) -> bool | None:
        """Whether the server's catalog of the same (lower-case) name holds the schema, or
        the table; Unity Catalog keeps names in lower case, so they are compared so."""
        if obj.type not in (SecurableType.SCHEMA, SecurableType.TABLE):
            return False  # the server holds no topics, filesets, models: nothing to claim
        catalog, schema = obj.names[0].lower(), obj.names[1].lower()
        try:
            if catalog not in {c.lower() for c in self.uc.catalogs()}:
                return False
            if schema not in {s.lower() for s in self.uc.schemas(catalog)}:
                return False
            return obj.type is SecurableType.SCHEMA or obj.names[2].lower() in {
                t.lower() for t in self.uc.tables(catalog, schema)
            }
        except Unreachable as exc:
            raise self._gone(exc) from exc
        except Refused as exc:
            raise TemporaryBackendError(self.name, f"Unity Catalog refused a read: {exc}") from exc

    def widen(self, obj: ObjectRef) -> ObjectRef:
        """A table stays a table: :meth:`read` reads its schema's own grants and the table's,
        and the whole schema when the schema-level choice moves (not the default's schema)."""
        return obj

    def read(self, model: Model, scope: Resolved) -> UCSnapshot:
        """Each catalog the backend enforces, narrowed to the scope (a catalog the model
        spells with capitals, or two spelt alike but for case, is not read: nothing is
        granted in it, and the plan says so).

        A schema the scope reaches only through some of its tables (a one-table change) is
        read *alone*: its table list, the schema's own grants and the scope's tables'
        grants, not every table's (:mod:`pushdown_unitycatalog.readback`). That is exact
        because the scope names every table whose decisions the change can alter, and the
        grants of a table are decided by its own decisions alone unless the schema-level
        ``SELECT`` / ``MODIFY`` choice (exact only when every table of the schema allows it)
        moves; so the model is compiled on the narrow read, and a schema where a managed
        principal's schema-level ``SELECT`` or ``MODIFY`` would be granted or revoked is
        read whole again (its per-table grants are then all planned: the ones a revoked
        schema grant now needs, the ones a new schema grant makes redundant). Nothing is
        kept between syncs: the grants read are the server's now, the schema's own too, so
        a schema-level grant someone made by hand is seen and revoked at once, and no
        narrowing is held back. What a narrow read does not see: a grant made by hand on
        another table of the schema (to a managed principal: wider than the model) stays
        until a sync that reads that table, the next full reconcile at the latest (as a
        grant made by hand anywhere outside a sync's scope does)."""
        snapshot = self._read(model, scope, set())
        if not any(r.held.alone for r in snapshot.reads):
            return snapshot
        desired = self.compile(model, snapshot, scope)
        moved = _schema_level_moves(snapshot, desired)
        if moved:
            return self._read(model, scope, moved)
        return replace(snapshot, compiled=(model, model.version, scope, desired))

    def _read(self, model: Model, scope: Resolved, entire: set[tuple[str, str]]) -> UCSnapshot:
        """The read of :meth:`read`; the (catalog, schema) pairs of ``entire`` are read whole."""
        catalogs, notes = _server_catalogs(self.enforces(model))
        reads: list[ServerRead] = []
        for catalog in catalogs:
            whole, alone = reach(scope, catalog)
            if whole is not None:
                whole |= {s for c, s in entire if c == catalog}
                alone = {s: t for s, t in alone.items() if s not in whole}
            # a catalog that cannot be read whole is left out (nothing planned in it) and said
            # so; the others are read and narrowed all the same
            try:
                # (a catalog the scope does not reach has no grant read: nothing to ask)
                if (whole is None or whole or alone) and not self._sight(catalog):
                    notes.append(
                        f"catalog {catalog}: the token owns neither it nor the metastore, and Unity Catalog "
                        "shows such a token only its own grants there: what managed principals hold cannot "
                        "be read, so nothing is read or changed in it (use the metastore admin's token or "
                        "the catalog owner's)"
                    )
                    continue
                reads.append(read_server(self.uc, catalog, whole, alone))
            except Unreachable as exc:
                raise self._gone(exc) from exc
            except Refused as exc:
                notes.append(
                    f"catalog {catalog}: Unity Catalog refused a read ({exc}); nothing is read or changed in "
                    "it in this sync"
                )
        parts = [cast(Callable[[Fact], bool], within(r.held)) for r in reads]

        def covers(fact: Fact) -> bool:
            return any(p(fact) for p in parts)

        facts = frozenset(g for r in reads for g in r.grants if self.managed(g.principal) and covers(g))
        findings = notes + [f for r in reads for f in (*self._findings(model, r, scope), *r.unread)]
        if reads:
            findings += self._metastore(catalogs if any(r.held.whole for r in reads) else None)
        return UCSnapshot(
            facts=facts,
            within=covers,
            findings=tuple(findings),
            fingerprint=fingerprint(facts, findings),
            reads=tuple(reads),
        )

    def _sight(self, catalog: str) -> bool:
        """Whether ``catalog`` may be read with this token: not when the server shows it
        only its own grants there (neither the metastore admin's nor the catalog owner's),
        for every managed principal's grant would look absent, and a plan with nothing to
        revoke would say the server is as the model wants. Asked at every read, scoped or
        not: the catalog's owner changes when it is dropped and made again by another."""
        try:
            return self.uc.sees_all("catalog", catalog)
        except Refused as exc:
            if exc.status == 404:
                return True  # not on the server: the read says so
            raise

    def _metastore(self, enforced: list[str] | None) -> list[str]:
        """Privileges of managed principals on the metastore (CREATE CATALOG…), its external
        locations and credentials (READ FILES…): outside what pushdown enforces here (no
        table inherits them), left alone and reported. With ``enforced`` (a full read: the
        server catalogs pushdown enforces), the other catalogs too: a managed principal's
        privileges on one, or its ownership — every call of the open server inside a catalog
        asks for one or the other (or the metastore admin), so they are the gate to all below."""
        try:
            metastore = self.uc.metastore()
            if "" not in self._sees:
                if not self.uc.sees_all("metastore", metastore):
                    return [
                        "the metastore's grants, its external locations' and credentials' and the other "
                        "catalogs' could not be read: the token is not the metastore admin's (Unity Catalog "
                        "shows it only its own grants there); not checked in this sync"
                    ]
                self._sees.add("")
            held = [("metastore", "", self.uc.permissions("metastore", metastore))]
            storage = self.uc.storage()
            if enforced is not None:
                others = {c: o for c, o in self.uc.catalog_owners().items() if c not in enforced}
                storage += [("catalog", c, o) for c, o in sorted(others.items())]
            held += [(kind, name, self.uc.permissions(kind, name)) for kind, name, _ in storage]
        except Unreachable as exc:
            raise self._gone(exc) from exc
        except Refused as exc:
            return [f"the metastore's grants could not be read ({exc}): not checked in this sync"]
        return [
            f"GRANT {p} ON {kind.upper().replace('_', ' ')}{' ' + name if name else ''} TO {who}: held by a "
            "managed principal outside the catalogs pushdown enforces; left alone"
            + (
                " (it opens every schema and table of the catalog its privileges reach)"
                if kind == "catalog"
                else ""
            )
            for kind, name, grants in held
            for who, privileges in sorted(grants.items())
            if self.managed(who)
            for p in sorted(privileges)
        ] + [
            f"{kind} {name} is owned on the server by {owner}, a principal pushdown manages: its owner may "
            "use it as fully as every privilege on it would allow (READ FILES, WRITE FILES…; of a catalog "
            "pushdown does not enforce, everything in it), and the permissions API cannot take ownership "
            "away (transfer it by hand)"
            for kind, name, owner in storage
            if self.managed(owner)
        ]

    def _findings(self, model: Model, server: ServerRead, scope: Resolved | None = None) -> list[str]:
        managed = self._managed_folds(self._identity(model, scope))
        out = []
        for g in sorted(server.grants):
            if self.managed(g.principal):
                continue
            if g.principal.casefold() in GROUP_FORMS:
                out.append(
                    f"{g}: a grant to every user, made outside pushdown; it reaches every managed principal"
                )
            elif g.principal.casefold() in managed:
                out.append(
                    f"{g}: made outside pushdown to a principal spelt like managed "
                    f"{managed[g.principal.casefold()]} but for case; pushdown leaves it"
                )
        return out + self._owned(model, server, scope)

    def _owned(self, model: Model, server: ServerRead, scope: Resolved | None = None) -> list[str]:
        """The catalog, schemas and tables the server says a managed principal owns (they
        created them) that the model does not make theirs: ownership passes every check on
        the object (a catalog's, on everything in it) and the permissions API cannot take it
        away. A function, volume or registered model a managed principal owns is a finding
        whatever the model says (the model has none here)."""
        leaves = [
            f"{kind} {name} is owned on the server by {owner}, a principal pushdown manages: the model has "
            f"no {kind.replace('_', ' ')}s here, the owner may use it fully (EXECUTE, READ VOLUME…) and the "
            "permissions API cannot take ownership away (transfer it by hand)"
            for (kind, name), owner in sorted(server.leaf_owners.items())
            if self.managed(owner)
        ]
        owned = {name: owner for name, owner in server.owners.items() if self.managed(owner)}
        if not owned:  # the model's owners are walked only when a managed principal owns something
            return leaves
        # the model's owner of the same kind of object spelt exactly so (one spelt with
        # capitals gets nothing, so it owns nothing on the server), as its managed, unshared name
        name_of = self._name_of(model, scope)
        wanted = {
            (obj.type.value, ".".join(obj.names)): name_of(owner)
            for obj, owner in model.owners.items()
            if obj.type in (SecurableType.CATALOG, SecurableType.SCHEMA, SecurableType.TABLE)
        }
        kinds = ("catalog", "schema", "table")
        return [
            f"{kinds[name.count('.')]} {name} is owned on the server by {owner}, a "
            "principal pushdown manages, whom the model does not make its owner: ownership passes every "
            "check there and the permissions API cannot take it away (transfer it by hand)"
            for name, owner in sorted(owned.items())
            if wanted.get((kinds[name.count(".")], name)) != owner
        ] + leaves

    def estate(self, model: Model) -> Estate:
        """What the server holds, as model items (:mod:`pushdown_unitycatalog.estate`)."""
        from pushdown_unitycatalog.estate import read_estate

        return read_estate(self, model)

    def compile(self, model: Model, snapshot: Snapshot, scope: Resolved) -> Desired:
        assert isinstance(snapshot, UCSnapshot)
        if snapshot.compiled is not None:
            of, version, where, desired = snapshot.compiled
            if of is model and version == model.version and where is scope:
                return desired
        name_of, facts, notes = self._name_of(model, scope), set(), set()
        for read in snapshot.reads:
            desired = compile_desired(model, read.held, name_of)
            facts |= {f for f in desired.facts if snapshot.within(f)}
            notes |= set(desired.notes)
        return Desired(frozenset(facts), tuple(sorted(notes)))

    def reread(
        self, model: Model, scope: Resolved, plan: Plan, snapshot: Snapshot, applied: Applied | None = None
    ) -> Snapshot:
        """Read back the grants of only the securables the plan touched (one
        ``GET /permissions`` each); keep the rest of the snapshot."""
        assert isinstance(snapshot, UCSnapshot)
        touched = sorted({(f.securable, f.name) for op in plan.ops if isinstance(f := op.fact, UCGrant)})
        fresh: set[UCGrant] = set()
        for securable, name in touched:
            try:
                held = self.uc.permissions(securable, name)
            except Unreachable as exc:
                raise self._gone(exc) from exc
            except Refused as exc:
                raise TemporaryBackendError(self.name, f"Unity Catalog refused a read back: {exc}") from exc
            fresh |= {
                UCGrant(securable, name, who, p) for who, privileges in held.items() for p in privileges
            }
        places = set(touched)
        kept = {
            f for f in snapshot.facts if (cast(UCGrant, f).securable, cast(UCGrant, f).name) not in places
        }
        facts = frozenset(
            f for f in kept | {g for g in fresh if self.managed(g.principal)} if snapshot.within(f)
        )
        return replace(snapshot, facts=facts)

    def apply(self, plan: Plan, snapshot: Snapshot, progress: Progress) -> Applied:
        """Revokes first, then grants; one PATCH per (securable, principal) and kind."""
        done, failures = 0, []
        for action in ("remove", "add"):
            batches: dict[tuple[str, str, str], list[Op]] = {}
            for op in plan.ops:
                if (op.action == "remove") != (action == "remove"):
                    continue
                f = op.fact
                assert isinstance(f, UCGrant)
                batches.setdefault((f.securable, f.name, f.principal), []).append(op)
            for (securable, name, principal), ops in sorted(batches.items()):
                privileges = sorted(cast(UCGrant, op.fact).privilege for op in ops)
                add, remove = ([], privileges) if action == "remove" else (privileges, [])
                try:
                    self.uc.update(securable, name, principal, add, remove)
                except Unreachable as exc:
                    raise self._gone(exc) from exc
                except Refused as exc:
                    failures.append(
                        Failure(tuple(ops), f"{securable} {name} for {principal}: refused ({exc})")
                    )
                    continue
                done += len(ops)
                progress(len(ops))
        return Applied(done, tuple(failures))

    def fact_from_json(self, data: Any) -> Fact:
        return fact_from_json(data)


def _schema_level_moves(snapshot: UCSnapshot, desired: Desired) -> set[tuple[str, str]]:
    """The schemas read alone where ``desired`` grants or revokes a schema-level ``SELECT``
    or ``MODIFY`` (as (catalog, schema)): their other tables' grants change with it."""

    def level(facts: frozenset[Fact]) -> set[UCGrant]:
        return {
            f
            for f in facts
            if isinstance(f, UCGrant) and f.securable == "schema" and f.privilege in (SELECT, MODIFY)
        }

    alone = {(r.held.catalog, s) for r in snapshot.reads for s in r.held.alone}
    out: set[tuple[str, str]] = set()
    for f in level(frozenset(desired.facts)) ^ level(frozenset(snapshot.facts)):
        catalog, _, schema = f.name.partition(".")
        if (catalog, schema) in alone:
            out.add((catalog, schema))
    return out


def _scope_users(scope: Resolved | None) -> frozenset[str] | None:
    """The users ``scope`` names (``None``: every user, or no scope)."""
    if scope is None or any(r.users is None for r in scope.regions):
        return None
    return frozenset().union(*(r.users or () for r in scope.regions))


def _any_string(name: str) -> str | None:
    """Every string is a name the server may hold (the fence decides what is managed)."""
    return None
