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
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from pushdown.errors import BackendError, PermanentBackendError, TemporaryBackendError
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
)
from pushdown.reconcile.estate import Estate
from pushdown.reconcile.holdback import HoldBack
from pushdown.reconcile.plan import Fact, Op, Plan
from pushdown.reconcile.scope import Resolved, Scope
from pushdown_ranger import surface
from pushdown_ranger.answers import Written
from pushdown_ranger.checked import SERVICE_NAME, RangerSettings  # noqa: F401 - SERVICE_NAME, as before
from pushdown_ranger.client import RangerAPI
from pushdown_ranger.compile import compile_all
from pushdown_ranger.compile.desired import RangerNaming, hive_catalog
from pushdown_ranger.facts import PolicyFact, RoleFact, fact_from_json
from pushdown_ranger.handmade import (
    exception_findings,
    is_voided,
    role_bypasses,
    role_findings,
    role_reach,
    shadow_findings,
    voided_databases,
    voided_findings,
    voiding,
    zone_findings,
)
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
from pushdown_ranger.overrides import override_findings, overriding_policies
from pushdown_ranger.readback import bypasses, policy_fact, resource_key, role_fact, unenforced
from pushdown_ranger.scoping import Focus, covering, focus_of
from pushdown_ranger.serviceconf import service_findings, stray_finding
from pushdown_ranger.withdraw import relying, standing, withdraw
from pushdown_ranger.writer import Writer

Json = dict[str, Any]
Implied = tuple[tuple[str, str, frozenset[str]], ...]
DENY_OPTION = "enableDenyAndExceptionsInPolicies"


@dataclass(frozen=True)
class RangerSnapshot(Snapshot):
    #: every policy read, by (service, resource set): pushdown's or not
    policies: Mapping[tuple[str, Any], Json] = field(default_factory=dict, compare=False)
    roles: Mapping[str, Json] = field(default_factory=dict, compare=False)
    services: frozenset[str] = frozenset()
    deny: Mapping[str, bool] = field(default_factory=dict, compare=False)
    versions: tuple[tuple[str, Any, Any], ...] = ()
    #: security zones, and the policies of pushdown's services inside them (never facts)
    zones: tuple[Json, ...] = field(default=(), compare=False)
    zoned: tuple[Json, ...] = field(default=(), compare=False)
    #: roles pushdown does not manage
    others: tuple[Json, ...] = field(default=(), compare=False)
    #: (service, access type, what else it grants) from the service definitions
    implied: Implied = ()
    #: policies on the resource set of another (another priority, or disabled): never written
    shadowed: tuple[Json, ...] = field(default=(), compare=False)
    #: Hive databases where hand-made policies void deny items: database -> why
    voided: Mapping[str, str] = field(default_factory=dict, compare=False)
    #: policies with pushdown's label in services it is not configured for (written before
    #: a ``*_service`` setting changed): reported
    strays: tuple[Json, ...] = field(default=(), compare=False)
    #: resource sets of other services with a policy voiding deny items
    voiding: frozenset[tuple[str, Any]] = frozenset()
    #: resource sets of override-priority policies in the topic and fileset services
    overriding: frozenset[tuple[str, Any]] = frozenset()

    @property
    def role_version(self) -> int:
        known = [v[2] for v in self.versions if v[0] == "" and isinstance(v[2], int)]
        return known[0] if known else -1


def _deny_enabled(sdef: Json) -> bool:
    """As Ranger reads it (``Boolean.valueOf``): absent or empty is the default (on); any
    other value turns deny items on only when it is ``true`` (any case, not trimmed)."""
    value = (sdef.get("options") or {}).get(DENY_OPTION)
    return value is None or value == "" or str(value).lower() == "true"


class RangerBackend(Backend):
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
        self._compiled: tuple[object, Desired, Model] | None = None
        self._hive: tuple[object, str | None, Model] | None = None

    # read -------------------------------------------------------------------------------
    def versions(self, known_roles: int | None = None) -> tuple[tuple[str, Any, Any], ...]:
        """The cheap check: pushdown's services with their policy versions (one call), and
        the role version (one more, answered 304 when it is still ``known_roles``)."""
        wanted = set(self.naming.services)
        services = list(self.api.services())
        self.problems["services"] = "\n".join(service_findings(services, wanted))
        found = sorted(
            (str(s.get("name")), s.get("policyVersion"), s.get("roleVersion"))
            for s in services
            if s.get("name") in wanted
        )
        if self.role_service in {name for name, _, _ in found} and any(v[2] is None for v in found):
            if known_roles is None:
                known_roles = self.last.role_version if self.last is not None else -1
            found.append(("", None, self.api.role_version(self.role_service, known_roles)))
        return tuple(found)

    def read(self, model: Model, scope: Resolved) -> RangerSnapshot:
        """The last snapshot while the versions stand; the deny option is read every time
        (one call: Ranger's policy versions need not move when a service definition does)."""
        versions = self.versions()
        deny, implied = self.defs_now()
        last = self.last
        if last is None or last.versions != versions or not _complete(versions):
            last = self.last = replace(self._read(versions, deny), implied=implied)
        elif dict(last.deny) != deny or last.implied != implied:
            digest = _digest(versions, deny, implied)
            last = self.last = replace(last, deny=deny, implied=implied, fingerprint=digest)
        return replace(self.with_findings(last, model), within=self.within(model, scope, last))

    def defs_now(self) -> tuple[dict[str, bool], Implied]:
        """Per service of pushdown's, from its service definition (one call for all): whether
        Ranger honours deny items there, and what each access type implies."""
        self.problems["defs"] = ""
        try:
            defs = {str(d.get("name")): d for d in self.api.service_defs()}
        except PermanentBackendError as exc:  # (a 503 is temporary: the sync is retried)
            self.problems["defs"] = (
                f"the service definitions could not be read ({exc}): pushdown relies on no deny "
                "item (per-table allow items instead; narrower) and cannot check implied grants"
            )
            return dict.fromkeys(self.naming.services, False), ()
        deny: dict[str, bool] = {}
        implied: list[tuple[str, str, frozenset[str]]] = []
        for service in self.naming.services:
            sdef = defs.get(self._type_of(service), {})
            deny[service] = self.deny_items != "off" and _deny_enabled(sdef)
            for access in sdef.get("accessTypes") or ():
                more = frozenset(str(x) for x in access.get("impliedGrants") or ()) - {
                    str(access.get("name"))
                }
                if more:
                    implied.append((service, str(access.get("name")), more))
        return deny, tuple(sorted(implied, key=lambda t: (t[0], t[1])))

    def with_findings(self, snap: RangerSnapshot, model: Model) -> RangerSnapshot:
        """The snapshot with the access paths that bypass the model: allow items somebody
        else made for a model user or group (or ``public``) in pushdown's services."""
        # principals pushdown has seen stay reported after they leave the model: a hand-made
        # allow for a removed user or group still works (the directory keeps them)
        self.seen_users |= {self.naming.user(u) for u in model.users}
        self.seen_users |= {str(m.get("name")) for r in snap.roles.values() for m in r.get("users") or ()}
        self.seen_groups |= {self.naming.group(g) for g in model.groups}
        users, groups = set(self.seen_users), set(self.seen_groups)
        ours = self.naming.ours
        reach = role_reach([*snap.roles.values(), *snap.others], users, groups, ours)
        found = [text for p in snap.policies.values() for text in bypasses(p, users, groups)]
        found += [text for p in snap.policies.values() for text in role_bypasses(p, reach)]
        found += [text for p in snap.policies.values() for text in unenforced(p, ours)]
        found += [text for p in snap.shadowed for text in shadow_findings(p, ours, users, groups)]
        held = [f for f in snap.facts if isinstance(f, PolicyFact)]
        found += exception_findings(snap.policies.values(), ours, held)
        found += voided_findings(snap.voided, not snap.deny.get(self.naming.hive_service, False))
        found += role_findings([*snap.roles.values(), *snap.others], ours)
        found += zone_findings(snap.zones, snap.zoned, held, users, groups, ours)
        every = {**snap.policies, **{(str(p.get("service")), resource_key(p)): p for p in snap.shadowed}}
        found += override_findings(every, snap.overriding, held)
        if not snap.deny.get(self.naming.hive_service, False) and self.deny_items != "off":
            found.append(
                f"service {self.naming.hive_service}: its definition does not enable deny items "
                f"(options.{DENY_OPTION}): Ranger ignores deny items and exceptions there; pushdown "
                "writes none (per-table allow items instead; narrower)"
            )
        found += [stray_finding(p, self.label) for p in snap.strays]
        found += self.fallback_findings(model)
        found += [line for text in self.problems.values() if text for line in text.split("\n")]
        return replace(snap, findings=tuple(sorted(set(found))))

    def fallback_findings(self, model: Model) -> list[str]:
        """Issue 23, N7: a user no HDFS policy decides for is not denied but "not determined",
        and the HDFS plugin then asks HDFS's own permissions (a 644 file is readable)."""
        if self.hdfs_fallback == "off":
            return []
        roots = [ObjectRef(SecurableType.CATALOG, (c,)) for c in self.enforces(model)]
        if not any(
            o.type is SecurableType.FILESET for r in roots if r in model.objects for o in model.within(r)
        ):
            return []
        return [
            f"service {self.naming.hdfs_service}: Ranger's HDFS plugin falls back to HDFS permissions "
            "for whoever no policy decides (xasecure.add-hadoop-authorization, true by default), so a "
            "user the model does not allow a fileset may still read it through its HDFS mode bits; "
            "set xasecure.add-hadoop-authorization=false on every HDFS plugin, then hdfs_fallback: off"
        ]

    def _read(self, versions: tuple[tuple[str, Any, Any], ...], deny: Mapping[str, bool]) -> RangerSnapshot:
        services = frozenset(name for name, _, _ in versions if name)
        ours = self.naming.ours
        policies: dict[tuple[str, Any], Json] = {}
        zoned: list[Json] = []
        shadowed: list[Json] = []
        for service in sorted(services):
            for policy in self.api.policies(service):
                if policy.get("policyType", 0) not in (0, None):
                    continue
                if policy.get("zoneName"):
                    zoned.append(policy)
                    continue
                key = (service, resource_key(policy))
                held = policies.get(key)
                if held is not None:  # same resources, another priority, or one disabled
                    held, policy = sorted((held, policy), key=self._preferred)
                    shadowed.append(policy)
                    policy = held
                policies[key] = policy
        roles: dict[str, Json] = {}
        others: list[Json] = []
        for role in self.api.roles():
            if ours(str(role.get("name", ""))):
                roles[str(role["name"])] = role
            else:
                others.append(role)
        self.problems["zones"] = ""
        try:
            zones = tuple(self.api.zones())
        except PermanentBackendError as exc:
            zones = ()
            self.problems["zones"] = (
                f"the security zones could not be read ({exc}): whether a zone holds a resource "
                "pushdown writes for (its policies then do not apply there) is not checked"
            )
        strays = self._strays(services)
        snap = self._snapshot(versions, policies, roles, deny)
        voided = dict(snap.voided)
        more = set(snap.voiding)
        shadow_keys = {(str(p.get("service")), resource_key(p)): p for p in shadowed}
        overriding = snap.overriding | overriding_policies(shadow_keys, self.naming.hive_service)
        for policy in shadowed:
            key = (str(policy.get("service")), resource_key(policy))
            if key[0] != self.naming.hive_service and voiding(policy):
                more.add(key)
            for database, why in voided_databases({key: policy}, self.naming.hive_service).items():
                voided.setdefault(database, why)
        return replace(
            snap,
            zones=zones,
            zoned=tuple(zoned),
            strays=strays,
            others=tuple(others),
            shadowed=tuple(shadowed),
            voided=voided,
            voiding=frozenset(more),
            overriding=overriding,
        )

    def _strays(self, services: frozenset[str]) -> tuple[Json, ...]:
        """pushdown's labelled policies outside ``services`` (one search over every service)."""
        self.problems["strays"] = ""
        try:
            found = self.api.labelled(self.label)
        except PermanentBackendError as exc:
            self.problems["strays"] = (
                f"the policies labelled {self.label!r} could not be searched ({exc}): policies "
                "pushdown wrote in a service it is no longer configured for are not checked"
            )
            return ()
        return tuple(
            p
            for p in found
            if str(p.get("service")) not in services and self.label in (p.get("policyLabels") or ())
        )

    def _preferred(self, policy: Json) -> tuple[bool, bool, int]:
        """Of two policies on one resource set, the one pushdown writes in: a plain one
        (enabled, normal priority), then one with pushdown's label, then the oldest."""
        plain = policy.get("isEnabled", True) is not False and not int(policy.get("policyPriority") or 0)
        return (not plain, self.label not in (policy.get("policyLabels") or ()), int(policy.get("id") or 0))

    def _snapshot(
        self,
        versions: tuple[tuple[str, Any, Any], ...],
        policies: dict[tuple[str, Any], Json],
        roles: dict[str, Json],
        deny: Mapping[str, bool],
    ) -> RangerSnapshot:
        ours = self.naming.ours
        facts: set[Fact] = {f for p in policies.values() if (f := policy_fact(p, ours)) is not None}
        facts |= {role_fact(r) for r in roles.values()}
        return RangerSnapshot(
            frozenset(facts),
            fingerprint=_digest(versions, deny),
            policies=policies,
            roles=roles,
            services=frozenset(name for name, _, _ in versions if name),
            deny=deny,
            versions=versions,
            voided=voided_databases(policies, self.naming.hive_service),
            voiding=frozenset(
                k for k, p in policies.items() if k[0] != self.naming.hive_service and voiding(p)
            ),
            overriding=overriding_policies(policies, self.naming.hive_service),
        )

    def _type_of(self, service: str) -> str:
        n = self.naming
        return {n.hive_service: "hive", n.hdfs_service: "hdfs", n.kafka_service: "kafka"}[service]

    # compile ----------------------------------------------------------------------------
    def hive(self, model: Model) -> str | None:
        """:func:`~pushdown_ranger.compile.desired.hive_catalog`, once per model version."""
        key = (id(model), model.version)
        if self._hive is None or self._hive[0] != key:
            # the model is kept alive with its answer, so no other model can reuse its id
            self._hive = (key, hive_catalog(model, self.enforces(model)), model)
        return self._hive[1]

    def focus(self, model: Model, scope: Resolved, snapshot: RangerSnapshot | None = None) -> Focus:
        """The scope's focus, with every database where Ranger no longer honours deny items
        pushdown holds there (the deny option turned off, a policy voiding them): a scoped
        sync removes them, never only the full one."""
        hive = self.hive(model)
        focus = focus_of(scope, hive)
        if focus is None or snapshot is None or hive is None:
            return focus
        service = self.naming.hive_service
        off = not snapshot.deny.get(service, False)
        held = {
            d
            for f in snapshot.facts
            if isinstance(f, PolicyFact) and f.service == service and f.deny
            for k, v, _ in f.resources
            if k == "database"
            for d in v
        }
        stale = held if off else {d for d in held if is_voided(d, snapshot.voided)}
        stale |= _implying_more(snapshot, service)
        return focus | {ObjectRef(SecurableType.SCHEMA, (hive, d)) for d in stale}

    def within(
        self, model: Model, scope: Resolved, snapshot: RangerSnapshot | None = None
    ) -> Callable[[Fact], bool]:
        return covering(self.focus(model, scope, snapshot), self.naming.hive_service)

    def estate(self, model: Model) -> Estate:
        """What Ranger holds, as model items (:mod:`pushdown_ranger.estate`)."""
        from pushdown_ranger.estate import read_estate

        return read_estate(self, model)

    def compile(self, model: Model, snapshot: Snapshot, scope: Resolved) -> Desired:
        assert isinstance(snapshot, RangerSnapshot)
        focus = self.focus(model, scope, snapshot)
        covers = covering(focus, self.naming.hive_service)
        elsewhere = frozenset(
            role
            for fact in snapshot.facts
            if isinstance(fact, PolicyFact) and not covers(fact)
            for role, _ in fact.allow | fact.deny
        )
        key = (
            id(model),
            model.version,
            focus,
            elsewhere,
            tuple(sorted(snapshot.deny.items())),
            snapshot.services,
            tuple(sorted(snapshot.voided.items())),
            snapshot.implied,
            snapshot.voiding,
            snapshot.overriding,
        )
        if self._compiled is not None and self._compiled[0] == key:
            return self._compiled[1]
        desired = self._compile(model, snapshot, focus, elsewhere)
        # the model is kept alive with its answer, so no other model can reuse its id
        self._compiled = (key, desired, model)
        return desired

    def _compile(
        self,
        model: Model,
        snapshot: RangerSnapshot,
        focus: frozenset[ObjectRef] | None,
        elsewhere: frozenset[str],
    ) -> Desired:
        return compile_all(
            model,
            self.enforces(model),
            self.naming,
            snapshot.deny,
            focus=focus,
            elsewhere=elsewhere,
            hive=self.hive(model),
            voided=snapshot.voided,
            services=snapshot.services,
            implied=snapshot.implied,
            voiding=snapshot.voiding,
            overriding=snapshot.overriding,
            locations=self.context.locations,
        )

    # apply ------------------------------------------------------------------------------
    def order(self, op: Op) -> tuple[object, ...]:
        """The plan's order: each operation where its first write goes (:func:`schedule`)."""
        return (stage_of(op, split=True)[0], str(op.fact))

    def apply(self, plan: Plan, snapshot: Snapshot, progress: Progress) -> Applied:
        """The writes of :func:`schedule`, in order. Once a write is refused (or unanswered),
        no write that widens follows (it could widen past a narrowing that did not happen);
        every write that narrows still is: an error never holds back a narrowing. The
        operations left are reported as failures; an unanswered write fails the apply as
        temporary once the narrowing writes have all been tried."""
        assert isinstance(snapshot, RangerSnapshot)
        self.last = None  # whatever happens, the next read reads
        writer = Writer(
            self.api, self.naming, self.label, self.role_service, snapshot.policies, snapshot.roles
        )
        failures: list[Failure] = []
        done = 0
        refused: set[Op] = set()
        hold = HoldBack()  # every widening write waits once any write is refused
        unanswered: str | None = None
        for write in schedule(plan.ops, snapshot.facts):
            op = write.op
            if op in refused:
                continue
            if write.widens and hold.blocker(op) is not None:
                refused.add(op)
                failures.append(
                    Failure((op,), f"{self.name}: {op.fact}: not written: an earlier write was refused")
                )
                continue
            try:
                writer.write(write.step)
            except TemporaryBackendError as exc:
                # every narrowing write left is still tried; the sync fails as temporary after them
                unanswered = unanswered or str(exc.args[-1] if exc.args else exc)
                refused.add(op)
                hold.refused(op)
                continue
            except BackendError as exc:
                refused.add(op)
                hold.refused(op)
                failures.append(Failure((op,), str(exc)))
                continue
            if write.last:
                done += 1
                progress(1)
        failures += self._withdraw(writer, plan, refused, snapshot)
        if unanswered is not None:
            raise TemporaryBackendError(
                self.name,
                f"{unanswered}; {done} of {len(plan.ops)} operation(s) done (every narrowing tried)",
            )
        return RangerApplied(done, tuple(failures), written=writer.written)

    def _withdraw(
        self, writer: Writer, plan: Plan, refused: set[Op], snapshot: RangerSnapshot
    ) -> list[Failure]:
        """Refused writes that add deny items, or members to a role deny items name: withdraw
        the allow items those deny items protect against, on their own resource set too
        (:mod:`pushdown_ranger.withdraw`); a failure naming each (the sync is not clean)."""
        policies = {
            **snapshot.policies,
            **{k: v for k, v in writer.written.policies.items() if v is not None},
        }
        ours = self.naming.ours
        denied: dict[PolicyFact, list[Op]] = {}
        for op in refused:
            fact = op.fact
            if isinstance(fact, PolicyFact) and op.action != "remove" and fact.deny:
                if not standing(fact, policies, ours):
                    denied.setdefault(fact, []).append(op)
            elif isinstance(fact, RoleFact) and _joins(op):
                for relied in relying([fact.name], policies, ours):
                    denied.setdefault(relied, []).append(op)
        if not denied:
            return []

        def write(key: tuple[str, Any], fact: PolicyFact) -> None:
            writer.write(Op("change", after=fact, before=fact))

        out: list[Failure] = []
        ops = tuple(sorted({op for found in denied.values() for op in found}, key=str))
        try:
            said = withdraw(sorted(denied, key=str), policies, ours, write)
        except BackendError as exc:
            said = [f"withdrawing the allow items a refused deny protects failed too: {exc}"]
        for text in said:
            out.append(Failure(ops, f"{self.name}: {text}"))
        return out

    def reread(
        self, model: Model, scope: Resolved, plan: Plan, snapshot: Snapshot, applied: Applied | None = None
    ) -> Snapshot:
        """The touched keys as Ranger answered the writes, when the versions show no other
        writer (two cheap calls); otherwise everything, read again."""
        assert isinstance(snapshot, RangerSnapshot)
        # what the writes answered; without it (no apply of this backend's) read everything
        written = applied.written if isinstance(applied, RangerApplied) else None
        expected = written.expected(snapshot.versions) if written is not None else ()
        roles_expected = next((v[2] for v in expected if v[0] == ""), None)
        fresh = self.versions(roles_expected if isinstance(roles_expected, int) else None)
        if written is not None and fresh == expected and _complete(fresh):
            policies = written.patched_policies(dict(snapshot.policies))
            roles = written.patched_roles(dict(snapshot.roles))
            patched = replace(self._snapshot(fresh, policies, roles, snapshot.deny), implied=snapshot.implied)
            self.last = replace(
                patched,
                zones=snapshot.zones,
                zoned=snapshot.zoned,
                others=snapshot.others,
                shadowed=snapshot.shadowed,
                voided={**snapshot.voided, **patched.voided},
                voiding=snapshot.voiding | patched.voiding,
                overriding=snapshot.overriding | patched.overriding,
            )
        else:
            self.last = replace(self._read(fresh, snapshot.deny), implied=snapshot.implied)
        return replace(self.with_findings(self.last, model), within=self.within(model, scope, self.last))

    def discover(self, model: Model, seen: str | None) -> tuple[Scope, str | None]:
        deny, implied = self.defs_now()
        now = json.dumps([self.versions(), sorted(deny.items()), implied], default=sorted)
        return (Scope.nothing() if now == seen else Scope.everything()), now

    def fact_from_json(self, data: Mapping[str, Any]) -> Fact:
        return fact_from_json(data)


@dataclass(frozen=True, kw_only=True)
class RangerApplied(Applied):
    """What an apply did, and what Ranger answered to its writes (the read-back of the
    touched keys, for :meth:`RangerBackend.reread`)."""

    written: Written


def _joins(op: Op) -> bool:
    """Whether ``op`` gives a role that exists members it did not have."""
    before, after = op.before, op.after
    if op.action == "remove" or not isinstance(after, RoleFact):
        return False
    if not isinstance(before, RoleFact):
        return bool(after.users or after.groups or after.roles)
    return bool(after.users - before.users or after.groups - before.groups or after.roles - before.roles)


def _implying_more(snapshot: RangerSnapshot, service: str) -> set[str]:
    """Databases where an allow item pushdown holds grants, by the service definition's
    ``impliedGrants``, an access its role is not allowed there."""
    more = {access: rest for s, access, rest in snapshot.implied if s == service}
    out: set[str] = set()
    if not more:
        return out
    for fact in snapshot.facts:
        if isinstance(fact, PolicyFact) and fact.service == service:
            if any((r, x) not in fact.allow for r, a in fact.allow for x in more.get(a, ())):
                out |= {d for k, v, _ in fact.resources if k == "database" for d in v}
    return out


def _digest(
    versions: tuple[tuple[str, Any, Any], ...], deny: Mapping[str, bool], implied: Implied = ()
) -> str:
    text = json.dumps([versions, sorted(deny.items()), implied], default=sorted)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _complete(versions: tuple[tuple[str, Any, Any], ...]) -> bool:
    """Whether the versions say everything: policy versions, and a role version somewhere."""
    has_roles = any(v[2] is not None for v in versions)
    return has_roles and all(v[1] is not None for v in versions if v[0])


def _overlap(naming: RangerNaming) -> bool:
    a, b = naming.role_prefix, naming.user_role_prefix
    return a.startswith(b) or b.startswith(a)
