"""The ``ranger`` backend: roles and policies in one Ranger Admin, read back in bulk.

``read`` asks Ranger one cheap question first (the list of services, with their policy
and role versions); when nothing moved since the last read, the last snapshot stands.
Otherwise it reads the policies of pushdown's services and the roles, paged, once.
``compile`` turns the core's entitlement compiler's answer into shapes
(:mod:`pushdown_ranger.compile.desired`); ``apply`` writes at most one call per changed policy
and role in the common case (two for a role that both gains and loses members, and for
each policy that both narrows and widens when two or more do), narrow-first across
policies, in an order Ranger accepts that is never wider on the way (:func:`schedule`).

Fence: roles whose names start with ``role_prefix`` / ``user_role_prefix``, and in any
policy only the items naming such roles; a policy pushdown created carries the label
``label`` and is deleted when nothing else is left in it.

The backend is split by what it does: :mod:`pushdown_ranger.snapshot` (what a read holds),
:mod:`pushdown_ranger.compiling`, :mod:`pushdown_ranger.reporting` (findings),
:mod:`pushdown_ranger.reading` and :mod:`pushdown_ranger.applying`; this module configures it.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Mapping, Set
from functools import partial
from typing import Any

from pushdown.model.securables import ObjectRef, SecurableType
from pushdown.model.state import Model
from pushdown.reconcile.backend import (
    Applied,
    BackendContext,
    Capabilities,
    Desired,
    Progress,
    Snapshot,
)
from pushdown.reconcile.estate import Estate
from pushdown.reconcile.identity import KeptIdentity
from pushdown.reconcile.plan import Fact, Plan
from pushdown.reconcile.scope import Resolved, Scope
from pushdown_ranger import surface
from pushdown_ranger.applying import Applying
from pushdown_ranger.checked import SERVICE_NAME, RangerSettings  # noqa: F401 - SERVICE_NAME, as before
from pushdown_ranger.client import RangerAPI
from pushdown_ranger.compile.classes import KeptClasses
from pushdown_ranger.compile.desired import RangerNaming
from pushdown_ranger.facts import fact_from_json
from pushdown_ranger.factsets import Apart
from pushdown_ranger.ordering import (  # noqa: F401 - the order's names, as before
    BOTH,
    CREATE_ROLES,
    DROP_ROLES,
    MEMBERS_IN,
    MEMBERS_OUT,
    NARROW,
    WIDEN,
    Write,
    schedule,
    stage_of,
)
from pushdown_ranger.scoping import Covers, covered_database
from pushdown_ranger.snapshot import (
    RangerApplied,
    RangerSnapshot,
    deny_enabled,
)

__all__ = ["RangerApplied", "RangerBackend", "RangerSnapshot"]
#: the earlier private name (tests read it)
_deny_enabled = deny_enabled


class RangerBackend(Applying):
    kind = "ranger"
    SURFACE = surface.ENTRIES
    capabilities = Capabilities(
        roles=True,
        groups=True,
        deny=True,
        wildcards=True,
        securable_types=frozenset(
            {
                SecurableType.CATALOG,
                SecurableType.SCHEMA,
                SecurableType.TABLE,
                SecurableType.TOPIC,
                SecurableType.FILESET,
            }
        ),
    )

    def __init__(self, context: BackendContext) -> None:
        super().__init__(context)
        c = RangerSettings.of(context)
        password = context.secret("password")
        self.api = RangerAPI(
            context.name,
            c.url(),
            c.text("user", "admin"),
            password if isinstance(password, str) else "",
            timeout=c.seconds("timeout", 10.0),
            retries=c.whole("retries", 4, low=0, high=20),
            backoff=c.seconds("backoff", 0.1, strict=False),
            page_size=c.whole("page_size", 200, low=1, high=10_000),
        )
        self.naming = RangerNaming(
            hive_service=c.service("hive_service", "hive"),
            hdfs_service=c.service("hdfs_service", "hdfs"),
            kafka_service=c.service("kafka_service", "kafka"),
            role_prefix=c.text("role_prefix", "pd_"),
            user_role_prefix=c.text("user_role_prefix", "pdu_"),
            map_principal=context.map_principal,
        )
        #: "auto": deny items where the service definition enables them (Ranger's default);
        #: "off": never rely on deny items, for plugins configured to ignore them
        self.deny_items = c.choice("deny_items", "auto", ("auto", "off"))
        #: Ranger's HDFS plugin falls back to HDFS's own permissions where no policy decides
        #: (``xasecure.add-hadoop-authorization``, true by default): "on" (as by default: a
        #: finding while pushdown enforces filesets), "off" (the operator set it to false on
        #: every HDFS plugin, so what pushdown's policies do not allow is denied)
        self.hdfs_fallback = c.choice("hdfs_fallback", "on", ("on", "off"))
        if _overlap(self.naming):
            raise c.bad("role_prefix", "role_prefix and user_role_prefix must not start one another")
        self.label = c.text("label", "pushdown")
        self.role_service = c.service("role_service", self.naming.hive_service)
        self.last: RangerSnapshot | None = None
        #: what could not be read, in words (a finding while it lasts)
        self.problems: dict[str, str] = {}
        #: Ranger names of the users and groups of every model seen (see with_findings)
        self.seen_users: set[str] = set()
        self.seen_groups: set[str] = set()
        #: every model user's Ranger name, kept between syncs: a sync maps only the users it
        #: grants to and those added since, while no plugin implements the mapping hook
        self.kept = KeptIdentity(
            self.naming.user, version=context.mapping_version, stable=context.mapping_stable
        )
        self._compiled: tuple[object, Desired, Model] | None = None
        self._hive: tuple[object, str | None, Model] | None = None
        self._members: tuple[object, frozenset[str], Model] | None = None
        #: an identity's Ranger names folded, with how many users hold each
        self._folds: tuple[object, dict[str, int]] | None = None
        #: the findings of the last snapshot
        self._findings: tuple[RangerSnapshot, tuple[int, int], tuple[str, ...]] | None = None
        #: seen_users and seen_groups as of their counts (Reporting._read_findings)
        self._seen_now: tuple[tuple[int, int], frozenset[str], frozenset[str]] | None = None
        #: id of a role as read -> it, whose member users are in seen_users
        self._members_seen: dict[int, Any] = {}
        #: the roles as read whose member users are in seen_users (Reporting._see_members)
        self._roles_seen: object = None
        #: the kept identity whose names are in seen_users
        self._seen: object = None
        #: the databases where implied grants reach further, for the facts of a read
        self._implied = None
        #: the last read's facts indexed by member and by role (Compiling._read_index)
        self._index = None
        #: the roles the hand-made roles read last hold as members (Applying.writes)
        self._others_nested = None
        #: each class's Hive items per database, taken over where its grants and the
        #: database's tables stand (Compiling._compile)
        self._classes = KeptClasses()
        #: the read findings of each policy and role as read, by kind (Reporting._each)
        self._found_each = {}
        self._patch = None
        #: id of a policy or role as read -> (it, its fact): the objects are kept alive here
        self._facts: dict[int, tuple[dict[str, Any], Any]] = {}
        #: one call at a time reads, compiles, writes or reads back (:meth:`read`)
        self._serial = threading.RLock()
        #: a plan's facts apart, moved from the last pair's answer (factsets.Apart)
        self._apart = Apart(partial(covered_database, hive_service=self.naming.hive_service))

    # Everything above from ``last`` on is kept between calls and moved by each: one call
    # at a time, whichever thread makes it. The core never runs two applying syncs of one
    # backend at once (its writer lease), but a dry run takes no lease (``plan``, a preview,
    # the library's ``sync(dry_run=True)`` beside a change another thread pushes): such a
    # call waits here for the one in flight, then compiles from its own model and read.

    def read(self, model: Model, scope: Resolved) -> RangerSnapshot:
        with self._serial:
            return super().read(model, scope)

    def compile(self, model: Model, snapshot: Snapshot, scope: Resolved) -> Desired:
        with self._serial:
            return super().compile(model, snapshot, scope)

    def apply(self, plan: Plan, snapshot: Snapshot, progress: Progress) -> Applied:
        with self._serial:
            return super().apply(plan, snapshot, progress)

    def reread(
        self, model: Model, scope: Resolved, plan: Plan, snapshot: Snapshot, applied: Applied | None = None
    ) -> Snapshot:
        with self._serial:
            return super().reread(model, scope, plan, snapshot, applied)

    def apart(
        self, desired: Set[Fact], held: Set[Fact], within: Callable[[Fact], bool] | None = None
    ) -> tuple[Set[Fact], Set[Fact]]:
        """``(desired - held, held - desired)``, from the last plan's answer and the facts
        its sets moved by where those are known (a compile joined from the kept roles, a
        read-back moved by the keys written: :mod:`pushdown_ranger.factsets`), else the two
        set differences. The answer is kept apart by the database of each Hive policy shaped
        as pushdown writes them: for a scoped sync's ``within`` (:class:`~pushdown_ranger.scoping.Covers`)
        only its databases' facts and those every focus covers (roles, other services,
        policies made by hand) are looked at and handed; the rest it does not cover."""
        if isinstance(within, Covers) and within.hive_service == self.naming.hive_service:
            return self._apart(desired, held, within.databases)
        return self._apart(desired, held)

    def on_server(self, model: Model, obj: ObjectRef) -> bool | None:
        """Not applicable: Ranger holds policies, and a policy's resources are names, not
        objects (a database named in a policy need not exist, and the data lives in the
        service Ranger guards). Whether a registration claims existing data is the data's
        own server's to say: configure its backend (the Hive metastore's) for the same
        catalog, and it is asked; with Ranger alone, a checked caller's schema or table is
        refused (:func:`pushdown.reconcile.bindings.claimed`)."""
        return None

    def discover(self, model: Model, seen: str | None) -> tuple[Scope, str | None]:
        with self._serial:
            versions = self.versions()
            deny, implied = self.defs_at(versions)  # asked again once the policy versions moved
        now = json.dumps([versions, sorted(deny.items()), implied, self.service_ids], default=sorted)
        return (Scope.nothing() if now == seen else Scope.everything()), now

    def fact_from_json(self, data: Mapping[str, Any]) -> Fact:
        return fact_from_json(data)

    def estate(self, model: Model) -> Estate:
        """What Ranger holds, as model items (:mod:`pushdown_ranger.estate`)."""
        from pushdown_ranger.estate import read_estate

        with self._serial:
            return read_estate(self, model)


def _overlap(naming: RangerNaming) -> bool:
    a, b = naming.role_prefix, naming.user_role_prefix
    return a.startswith(b) or b.startswith(a)
