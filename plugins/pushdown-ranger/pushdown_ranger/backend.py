"""The ``ranger`` backend: roles and policies in one Ranger Admin, read back in bulk.

``read`` asks Ranger one cheap question first (the list of services, with their policy
and role versions); when nothing moved since the last read, the last snapshot stands.
Otherwise it reads the policies of pushdown's services and the roles, paged, once.
``compile`` turns the core's entitlement compiler's answer into shapes
(:mod:`pushdown_ranger.shapes`); ``apply`` writes at most one call per changed policy
(and role, but for a role that both gains and loses members: two), in an order Ranger
accepts that is never wider on the way (:meth:`RangerBackend.order`).

Fence: roles whose names start with ``role_prefix`` / ``user_role_prefix``, and in any
policy only the items naming such roles; a policy pushdown created carries the label
``label`` and is deleted when nothing else is left in it.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import urllib.parse
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from pushdown.errors import BackendError, ConfigError, TemporaryBackendError
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
from pushdown.reconcile.plan import Fact, Op, Plan
from pushdown.reconcile.scope import Resolved, Scope
from pushdown_ranger.client import RangerAPI
from pushdown_ranger.facts import PolicyFact, RoleFact, fact_from_json
from pushdown_ranger.readback import bypasses, policy_fact, resource_key, role_fact, unenforced
from pushdown_ranger.scoping import Focus, covering, focus_of
from pushdown_ranger.shapes import Naming, compile_desired, hive_catalog
from pushdown_ranger.writing import Writer
from pushdown_ranger.written import Written

Json = dict[str, Any]
DENY_OPTION = "enableDenyAndExceptionsInPolicies"


@dataclass(frozen=True)
class RangerSnapshot(Snapshot):
    #: every policy read, by (service, resource set): pushdown's or not
    policies: Mapping[tuple[str, Any], Json] = field(default_factory=dict, compare=False)
    roles: Mapping[str, Json] = field(default_factory=dict, compare=False)
    services: frozenset[str] = frozenset()
    deny: Mapping[str, bool] = field(default_factory=dict, compare=False)
    versions: tuple[tuple[str, Any, Any], ...] = ()

    @property
    def role_version(self) -> int:
        known = [v[2] for v in self.versions if v[0] == "" and isinstance(v[2], int)]
        return known[0] if known else -1


def _deny_enabled(sdef: Json) -> bool:
    """Ranger's default is on; only an explicit ``false`` turns deny items off."""
    value = (sdef.get("options") or {}).get(DENY_OPTION, "true")
    return str(value).strip().lower() != "false"


class RangerBackend(Backend):
    kind = "ranger"
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
        c = _Checked(context)
        password = context.secret("password")
        self.api = RangerAPI(
            context.name,
            c.url(),
            c.text("user", "admin"),
            password if isinstance(password, str) else "",
            timeout=c.number("timeout", 10.0, low=0.0, strict=True),
            retries=c.whole("retries", 4, 0, 20),
            backoff=c.number("backoff", 0.1, low=0.0),
            page_size=c.whole("page_size", 200, 1, 10_000),
        )
        self.naming = Naming(
            hive_service=c.service("hive_service", "hive"),
            hdfs_service=c.service("hdfs_service", "hdfs"),
            kafka_service=c.service("kafka_service", "kafka"),
            role_prefix=c.text("role_prefix", "pd_"),
            user_role_prefix=c.text("user_role_prefix", "pdu_"),
            map_principal=context.map_principal,
        )
        if not self.naming.role_prefix or not self.naming.user_role_prefix:
            raise ConfigError(f"backend {context.name}: role_prefix and user_role_prefix must not be empty")
        if _overlap(self.naming):
            raise ConfigError(
                f"backend {context.name}: role_prefix and user_role_prefix must not start one another"
            )
        self.label = c.text("label", "pushdown")
        self.role_service = c.service("role_service", self.naming.hive_service)
        self._defs: dict[str, bool] = {}
        self.last: RangerSnapshot | None = None
        self._written = Written()
        self._compiled: tuple[object, Desired] | None = None
        self._hive: tuple[object, str | None] | None = None

    # read -------------------------------------------------------------------------------
    def versions(self, known_roles: int | None = None) -> tuple[tuple[str, Any, Any], ...]:
        """The cheap check: pushdown's services with their policy versions (one call), and
        the role version (one more, answered 304 when it is still ``known_roles``)."""
        wanted = set(self.naming.services)
        found = sorted(
            (str(s.get("name")), s.get("policyVersion"), s.get("roleVersion"))
            for s in self.api.services()
            if s.get("name") in wanted
        )
        if self.role_service in {name for name, _, _ in found} and any(v[2] is None for v in found):
            if known_roles is None:
                known_roles = self.last.role_version if self.last is not None else -1
            found.append(("", None, self.api.role_version(self.role_service, known_roles)))
        return tuple(found)

    def read(self, model: Model, scope: Resolved) -> RangerSnapshot:
        versions = self.versions()
        last = self.last
        if last is None or last.versions != versions or not _complete(versions):
            last = self.last = self._read(versions)
        return replace(self.with_findings(last, model), within=self.within(model, scope))

    def with_findings(self, snap: RangerSnapshot, model: Model) -> RangerSnapshot:
        """The snapshot with the access paths that bypass the model: allow items somebody
        else made for a model user or group (or ``public``) in pushdown's services."""
        users = {self.naming.user(u) for u in model.users}
        groups = {self.naming.group(g) for g in model.groups}
        found = [text for p in snap.policies.values() for text in bypasses(p, users, groups)]
        found += [text for p in snap.policies.values() for text in unenforced(p, self.naming.ours)]
        return replace(snap, findings=tuple(sorted(found)))

    def _read(self, versions: tuple[tuple[str, Any, Any], ...]) -> RangerSnapshot:
        services = frozenset(name for name, _, _ in versions if name)
        deny = {name: self._deny(name) for name in services}
        ours = self.naming.ours
        policies: dict[tuple[str, Any], Json] = {}
        for service in sorted(services):
            for policy in self.api.policies(service):
                if policy.get("policyType", 0) not in (0, None) or policy.get("zoneName"):
                    continue
                policies[(service, resource_key(policy))] = policy
        roles = {str(r["name"]): r for r in self.api.roles() if ours(str(r.get("name", "")))}
        return self._snapshot(versions, policies, roles, deny)

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
        digest = hashlib.sha256(json.dumps(versions, default=str).encode()).hexdigest()[:16]
        return RangerSnapshot(
            frozenset(facts),
            fingerprint=digest,
            policies=policies,
            roles=roles,
            services=frozenset(name for name, _, _ in versions if name),
            deny=deny,
            versions=versions,
        )

    def _deny(self, service: str) -> bool:
        hit = self._defs.get(service)
        if hit is None:
            sdef = self.api.service_def(self._type_of(service))
            hit = self._defs[service] = _deny_enabled(sdef)
        return hit

    def _type_of(self, service: str) -> str:
        n = self.naming
        return {n.hive_service: "hive", n.hdfs_service: "hdfs", n.kafka_service: "kafka"}[service]

    # compile ----------------------------------------------------------------------------
    def hive(self, model: Model) -> str | None:
        """:func:`~pushdown_ranger.shapes.hive_catalog`, once per model version."""
        key = (id(model), model.version)
        if self._hive is None or self._hive[0] != key:
            self._hive = (key, hive_catalog(model, self.enforces(model)))
        return self._hive[1]

    def focus(self, model: Model, scope: Resolved) -> Focus:
        return focus_of(scope, self.hive(model))

    def within(self, model: Model, scope: Resolved) -> Callable[[Fact], bool]:
        return covering(self.focus(model, scope), self.naming.hive_service)

    def compile(self, model: Model, snapshot: Snapshot, scope: Resolved) -> Desired:
        assert isinstance(snapshot, RangerSnapshot)
        focus = self.focus(model, scope)
        covers = self.within(model, scope)
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
        )
        if self._compiled is not None and self._compiled[0] == key:
            return self._compiled[1]
        desired = self._compile(model, snapshot, focus, elsewhere)
        self._compiled = (key, desired)
        return desired

    def _compile(
        self,
        model: Model,
        snapshot: RangerSnapshot,
        focus: frozenset[ObjectRef] | None,
        elsewhere: frozenset[str],
    ) -> Desired:
        catalogs = self.enforces(model)
        desired = compile_desired(
            model,
            catalogs,
            self.naming,
            snapshot.deny,
            focus=focus,
            named_elsewhere=elsewhere,
            hive=self.hive(model),
        )
        missing = sorted(
            {
                f.service
                for f in desired.facts
                if isinstance(f, PolicyFact) and f.service not in snapshot.services
            }
        )
        if not missing:
            return desired
        facts = frozenset(
            f for f in desired.facts if not (isinstance(f, PolicyFact) and f.service in missing)
        )
        notes = [
            f"Ranger has no service {s!r}: its policies are not pushed (narrower); create it" for s in missing
        ]
        return replace(desired, facts=facts, notes=(*desired.notes, *notes))

    # apply ------------------------------------------------------------------------------
    def order(self, op: Op) -> tuple[object, ...]:
        """Never wider on the way: roles created and members removed first (a new role is named
        by nothing yet; fewer members narrow), then policies (removals first), then members
        added (the policies already name the roles as they should), then roles removed
        (Ranger refuses to delete a role a policy still names). A change that both adds and
        removes members is first narrowed (:meth:`apply`)."""
        if isinstance(op.fact, RoleFact):
            if op.action == "remove":
                return (4, str(op.fact))
            return (3 if _added(op) else 0, str(op.fact))
        return (1 if op.action == "remove" else 2, str(op.fact))

    def apply(self, plan: Plan, snapshot: Snapshot, progress: Progress) -> Applied:
        assert isinstance(snapshot, RangerSnapshot)
        self.last = None  # whatever happens, the next read reads
        writer = Writer(
            self.api, self.naming, self.label, self.role_service, snapshot.policies, snapshot.roles
        )
        self._written = writer.written
        failures: list[Failure] = []
        done = 0
        refused: set[Op] = set()
        for op in plan.ops:  # members leave a role before any policy write: never wider meanwhile
            narrowed = _narrowed(op)
            if narrowed is None:
                continue
            try:
                writer.write(narrowed)
            except TemporaryBackendError as exc:
                raise TemporaryBackendError(
                    self.name, f"{exc.args[-1] if exc.args else exc}; 0 of {len(plan.ops)} operation(s) done"
                ) from None
            except BackendError as exc:  # adding the new members later would widen: not done
                failures.append(Failure((op,), str(exc)))
                refused.add(op)
        for op in plan.ops:
            if op in refused:
                continue
            if failures and _added(op):  # a policy write was refused: new members could widen it
                failures.append(
                    Failure((op,), f"{self.name}: {op.fact}: not written: an earlier write was refused")
                )
                continue
            try:
                writer.write(op)
            except TemporaryBackendError as exc:
                raise TemporaryBackendError(
                    self.name,
                    f"{exc.args[-1] if exc.args else exc}; {done} of {len(plan.ops)} operation(s) done",
                ) from None
            except BackendError as exc:
                failures.append(Failure((op,), str(exc)))
                continue
            done += 1
            progress(1)
        return Applied(done, tuple(failures))

    def reread(self, model: Model, scope: Resolved, plan: Plan, snapshot: Snapshot) -> Snapshot:
        """The touched keys as Ranger answered the writes, when the versions show no other
        writer (two cheap calls); otherwise everything, read again."""
        assert isinstance(snapshot, RangerSnapshot)
        written, self._written = self._written, Written()
        expected = written.expected(snapshot.versions)
        roles_expected = next((v[2] for v in expected if v[0] == ""), None)
        fresh = self.versions(roles_expected if isinstance(roles_expected, int) else None)
        if fresh == expected and _complete(fresh):
            policies = written.patched_policies(dict(snapshot.policies))
            roles = written.patched_roles(dict(snapshot.roles))
            self.last = self._snapshot(fresh, policies, roles, snapshot.deny)
        else:
            self.last = self._read(fresh)
        return replace(self.with_findings(self.last, model), within=self.within(model, scope))

    def discover(self, model: Model, seen: str | None) -> tuple[Scope, str | None]:
        now = json.dumps(self.versions(), default=str)
        return (Scope.nothing() if now == seen else Scope.everything()), now

    def fact_from_json(self, data: Mapping[str, Any]) -> Fact:
        return fact_from_json(data)


#: Ranger service names as they may stand in a URL path (the client puts them there unquoted)
SERVICE_NAME = re.compile(r"[A-Za-z0-9_-][A-Za-z0-9_.-]{0,254}")


class _Checked:
    """The backend's settings, each checked: a :class:`ConfigError` names the key and why
    (never a raw ``ValueError``; never a credential)."""

    def __init__(self, context: BackendContext) -> None:
        self.name = context.name
        self.context = context

    def _bad(self, key: str, why: str) -> ConfigError:
        return ConfigError(f"backend {self.name}: {key}: {why}")

    def url(self) -> str:
        value = self.context.setting("url", required=True)
        if not isinstance(value, str) or not value or any(not c.isprintable() or c.isspace() for c in value):
            raise self._bad("url", 'the address of Ranger Admin, such as "http://ranger:6080"')
        try:
            parts = urllib.parse.urlsplit(value)
            parts.port  # noqa: B018 - raises on a port that is not a number
        except ValueError:
            raise self._bad("url", 'the address of Ranger Admin, such as "http://ranger:6080"') from None
        if parts.username is not None or parts.password is not None:
            raise self._bad(
                "url", "must not carry a user or password (set user, and password as a secret reference)"
            )
        if parts.scheme not in ("http", "https") or not parts.hostname or parts.query or parts.fragment:
            raise self._bad(
                "url", f'{value!r}: the address of Ranger Admin, such as "http://ranger:6080" (http or https)'
            )
        return value

    def text(self, key: str, default: str) -> str:
        value = self.context.setting(key, default)
        if not isinstance(value, str) or not value or any(not c.isprintable() for c in value):
            raise self._bad(key, f"{value!r}: must be a non-empty string without control characters")
        return value

    def service(self, key: str, default: str) -> str:
        value = self.context.setting(key, default)
        if not isinstance(value, str) or not SERVICE_NAME.fullmatch(value):
            raise self._bad(
                key, f"{value!r}: a Ranger service name (letters, digits, _ - and ., not starting with .)"
            )
        return value

    def number(self, key: str, default: float, *, low: float, strict: bool = False) -> float:
        value = self.context.setting(key, default)
        ok = isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)
        if not ok or value < low or (strict and value == low):
            raise self._bad(key, f"{value!r}: a {'positive' if strict else 'non-negative'} number of seconds")
        return float(value)

    def whole(self, key: str, default: int, low: int, high: int) -> int:
        value = self.context.setting(key, default)
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
            raise self._bad(key, f"{value!r}: a whole number from {low} to {high}")
        return value


def _added(op: Op) -> bool:
    """Whether a role change adds members (it widens whatever names the role)."""
    before, after = op.before, op.after
    if not (isinstance(before, RoleFact) and isinstance(after, RoleFact)):
        return False
    return bool(after.users - before.users or after.groups - before.groups)


def _narrowed(op: Op) -> Op | None:
    """For a role change that both removes and adds members: the change to the members it
    keeps (written first; the full change follows the policies). None otherwise."""
    before, after = op.before, op.after
    if op.action != "change" or not (isinstance(before, RoleFact) and isinstance(after, RoleFact)):
        return None
    removes = before.users - after.users or before.groups - after.groups
    if not (removes and _added(op)):
        return None
    kept = RoleFact(after.name, before.users & after.users, before.groups & after.groups)
    return Op("change", before, kept, op.phase)


def _complete(versions: tuple[tuple[str, Any, Any], ...]) -> bool:
    """Whether the versions say everything: policy versions, and a role version somewhere."""
    has_roles = any(v[2] is not None for v in versions)
    return has_roles and all(v[1] is not None for v in versions if v[0])


def _overlap(naming: Naming) -> bool:
    a, b = naming.role_prefix, naming.user_role_prefix
    return a.startswith(b) or b.startswith(a)
