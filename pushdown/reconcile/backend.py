"""The backend contract every enforcement point implements (MySQL, Hive Metastore, Ranger…).

A backend is level-triggered and does four things, and the core does the rest:

1. ``read(model, scope) -> Snapshot``: read the server once, narrowed to the scope;
   the snapshot holds the managed facts found there (normalised), the inventory (what
   the server holds), findings (access paths that bypass the model) and a predicate
   saying which facts the scope covers;
2. ``compile(model, snapshot, scope) -> Desired``: pure; what the server should hold,
   from the core's entitlement compiler;
3. the core diffs the two into a keyed :class:`~pushdown.reconcile.plan.Plan`;
4. ``apply(plan, snapshot, progress) -> Applied``: execute the plan; one operation the
   server refuses does not stop the others (narrowing goes on), it is reported.

After apply the core reads back (``reread``: only the touched keys where the backend can
narrow that far) and requires an empty second plan.

Backends are fenced: a snapshot reports only facts the backend manages (its marker,
prefix or label), so a diff never removes a grant somebody made by hand unless the
configuration gives the backend the whole scope.
"""

from __future__ import annotations

import abc
import hashlib
from collections.abc import Callable, Iterable, Mapping, Set
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

from pushdown.decide.engine import LOCAL, Engine
from pushdown.errors import ConfigError
from pushdown.model.principals import Principal
from pushdown.model.securables import LEAF_TYPES, METALAKE, ObjectRef, SecurableType
from pushdown.model.state import Model
from pushdown.reconcile.plan import Fact, Op, Plan, narrow_first

if TYPE_CHECKING:
    from pushdown.reconcile.estate import Estate
from pushdown.reconcile.scope import Resolved, Scope
from pushdown.reconcile.surface import SurfaceEntry

Progress = Callable[[int], None]


@dataclass(frozen=True)
class Capabilities:
    """What a backend can express natively; the rest is compiled away (or refused)."""

    roles: bool = False
    groups: bool = False
    deny: bool = False
    wildcards: bool = False
    securable_types: frozenset[SecurableType] = frozenset()

    def describe(self) -> str:
        has = [k for k in ("roles", "groups", "deny", "wildcards") if getattr(self, k)]
        types = ", ".join(sorted(t.value for t in self.securable_types)) or "none"
        return f"{', '.join(has) or 'no roles, groups, deny or wildcards'}; types: {types}"


@dataclass(frozen=True)
class Desired:
    """The facts a backend should hold, and notes on anything it cannot express exactly."""

    facts: Set[Fact]
    notes: tuple[str, ...] = ()


@dataclass(frozen=True)
class Snapshot:
    """One read of a server, narrowed to a scope. Backends subclass it to keep more."""

    facts: Set[Fact]
    within: Callable[[Fact], bool] = field(default=lambda fact: True, compare=False)
    #: access paths that bypass the model, and other drift pushdown will not change
    findings: tuple[str, ...] = ()
    #: a digest of what was read, to tell whether a saved plan went stale
    fingerprint: str = ""


def fingerprint(facts: Iterable[object], findings: Iterable[str] = ()) -> str:
    """A short digest of what a read saw (its facts and findings, in any order): a saved
    plan whose fingerprint no longer matches the server's is stale."""
    digest = hashlib.sha256()
    for line in sorted(str(f) for f in facts) + sorted(findings):
        digest.update(line.encode("utf-8", "surrogateescape") + b"\n")
    return digest.hexdigest()[:16]


@dataclass(frozen=True)
class Failure:
    """Operations the server refused, its words, and what a person must do."""

    ops: tuple[Op, ...]
    message: str

    def __str__(self) -> str:
        return self.message


@dataclass(frozen=True)
class Applied:
    """What ``apply`` did: how many operations went through and which were refused.
    Backends subclass it to hand ``reread`` what the writes answered (as they subclass
    :class:`Snapshot` to hand ``compile`` and ``apply`` what the read saw), so nothing
    passes between the contract's calls through the backend's fields."""

    done: int
    failures: tuple[Failure, ...] = ()


@dataclass
class BackendContext:
    """What the core hands a backend: its name, settings, secrets and the plugin hooks."""

    name: str
    settings: Mapping[str, Any]
    secret: Callable[[str], str | None] = lambda key: None
    map_principal: Callable[[Principal], str] = lambda p: p.name
    #: changes when ``map_principal``'s answers may have changed (the hook's implementations):
    #: what a backend keeps of the mapping between syncs is valid while this is equal
    mapping_version: Callable[[], object] = lambda: None
    #: whether ``map_principal``'s answers can change only with ``mapping_version`` (no
    #: plugin implements ``pushdown_map_principal``): only then may a backend trust the
    #: mapping it kept for users a sync does not grant to (``False``: map everyone again)
    mapping_stable: Callable[[], bool] = lambda: False
    catalogs: frozenset[str] = field(default_factory=frozenset)
    #: catalog (or "*") -> the storage roots its filesets' locations must lie in
    #: (``[backends.X] locations``); a location outside them is pushed for nobody
    locations: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    #: what computes entitlements: the local compiler unless the configuration says
    #: ``engine = "spark"`` (used for full compiles; scoped ones stay local)
    engine: Engine = LOCAL

    def setting(self, key: str, default: Any = None, *, required: bool = False) -> Any:
        if key in self.settings:
            return self.settings[key]
        if required:
            raise ConfigError(f"backend {self.name}: setting {key!r} is required")
        return default


class Backend(abc.ABC):
    """Base class of backends. Subclasses set ``kind`` and ``capabilities``."""

    kind: str = "abstract"
    capabilities: Capabilities = Capabilities()
    #: every field and principal form of the server's authorization model, with what
    #: pushdown does with it (:mod:`pushdown.reconcile.surface`); a test fails on a gap
    SURFACE: ClassVar[tuple[SurfaceEntry, ...]] = ()

    def __init__(self, context: BackendContext) -> None:
        self.context = context

    @property
    def name(self) -> str:
        return self.context.name

    def enforces(self, model: Model) -> frozenset[str]:
        """Catalogs this backend enforces: exactly those its configuration names
        (``catalogs = [...]``); when it names none, the catalogs whose ``backend`` property
        (set by an administrator, :mod:`pushdown.reconcile.bindings`) names it."""
        if self.context.catalogs:
            return frozenset(self.context.catalogs)
        named = {
            obj.names[0]
            for obj in model.children(METALAKE)  # the catalogs, without a walk over every object
            if obj.type is SecurableType.CATALOG and model.objects[obj].get("backend") == self.name
        }
        return frozenset(named)

    def on_server(self, model: Model, obj: ObjectRef) -> bool | None:
        """Whether the server already holds what ``obj`` stands for (a database, a table),
        asked before a checked caller registers ``obj`` in a catalog this backend enforces
        (:func:`pushdown.reconcile.bindings.claimed`): the creator of a registration owns
        it, and the backend gives an owner rights on the server's object, on data that was
        there before. ``None``: this backend cannot tell (the default: its resources are
        names, or it holds no data). Raise :class:`~pushdown.errors.BackendError` when the
        server does not answer: the registration is then refused, never let through."""
        return None

    def widen(self, obj: ObjectRef) -> ObjectRef:
        """The coarsest object whose facts a change to ``obj`` can alter (default: a leaf's
        container, since container-level grants are decided over all of its children)."""
        if obj.type in LEAF_TYPES and obj.parent is not None:
            return obj.parent
        return obj

    @abc.abstractmethod
    def read(self, model: Model, scope: Resolved) -> Snapshot:
        """Read the server once, narrowed to ``scope``: managed facts, inventory, findings."""

    @abc.abstractmethod
    def compile(self, model: Model, snapshot: Snapshot, scope: Resolved) -> Desired:
        """The facts the server should hold within ``scope``, from the model. Pure."""

    @abc.abstractmethod
    def apply(self, plan: Plan, snapshot: Snapshot, progress: Progress) -> Applied:
        """Execute the plan's operations in order; call ``progress(n)`` after every ``n``.
        Raise :class:`~pushdown.errors.TemporaryBackendError` when the server is gone;
        report operations it refuses in :attr:`Applied.failures` and go on."""

    def discover(self, model: Model, seen: str | None) -> tuple[Scope, str | None]:
        """What changed on the server by other hands since a sync saw ``seen`` (a summary
        this backend made, opaque to the core), as a scope, and the summary now. The
        dispatcher asks it when nothing is journalled for the backend (``apply --pending``,
        an idle sync) and uses the scope it returns, and after a full sync (to keep the
        summary); a sync with a pending scope reads that scope's inventory anyway. It must
        be cheap (one query). Default: nothing to discover (``None``: keep no summary)."""
        return Scope.nothing(), None

    def reread(
        self, model: Model, scope: Resolved, plan: Plan, snapshot: Snapshot, applied: Applied | None = None
    ) -> Snapshot:
        """Read back after apply (``applied``: what it returned); backends narrow this to
        the keys the plan touched."""
        return self.read(model, scope)

    def order(self, op: Op) -> tuple[object, ...]:
        """Sort key for a plan's operations; the default narrows before it widens."""
        return narrow_first(op)

    def apart(
        self, desired: Set[Fact], held: Set[Fact], within: Callable[[Fact], bool] | None = None
    ) -> tuple[Set[Fact], Set[Fact]]:
        """``(desired - held, held - desired)`` for a plan's diff (:func:`~pushdown.reconcile.plan.diff`):
        a backend that knows how its sets were made may answer from that (it must answer
        exactly these, but may leave out facts ``within`` does not cover: the diff narrows
        the answer by ``within`` anyway). Default: the two set differences."""
        return desired - held, held - desired

    def fact_from_json(self, data: Mapping[str, Any]) -> Fact:
        """Rebuild a fact of this backend from ``Fact.to_json`` (for saved plans)."""
        raise ConfigError(f"backend {self.name} ({self.kind}) cannot read saved plans")

    def replaces(self, old: Fact, new: Fact) -> bool:
        """Whether adding ``new`` needs ``old`` gone first (the server holds one of the two
        at a time: a grant with and without its option, say). An additive plan, which
        keeps ``old``, then holds back ``new`` too. Default: never."""
        return False

    def estate(self, model: Model) -> Estate:
        """What the server holds, in the model's terms (:mod:`pushdown.reconcile.estate`),
        read by the same reader a sync uses; ``model`` binds the catalogs (the configured
        store's). Optional: a backend without it cannot be imported from."""
        raise ConfigError(f"backend {self.name} ({self.kind}) cannot import what its server holds")

    def close(self) -> None:  # noqa: B027 - optional: most backends hold nothing to release
        """Release connections. Called once when the core is done with the backend."""
