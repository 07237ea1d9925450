"""The backend's read: the cheap version check, the service definitions (deny option,
implied grants) when pushdown's services' policy versions moved since they were last read,
and the bulk read of policies, roles and zones when the versions moved."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Set
from dataclasses import replace
from typing import Any

from pushdown.errors import PermanentBackendError
from pushdown.model.state import Model
from pushdown.reconcile.plan import Fact
from pushdown.reconcile.scope import Resolved
from pushdown_ranger import factsets
from pushdown_ranger.companion import as_written, folded, is_narrowing, narrowed_key
from pushdown_ranger.facts import interned
from pushdown_ranger.handmade import (
    voided_databases,
    voiding,
)
from pushdown_ranger.overrides import overriding_policies
from pushdown_ranger.readback import policy_fact, resource_key, role_fact
from pushdown_ranger.reporting import Reporting
from pushdown_ranger.serviceconf import service_findings
from pushdown_ranger.snapshot import (
    Implied,
    Json,
    RangerSnapshot,
    complete,
    deny_enabled,
    digest,
)


class Reading(Reporting):
    def versions(self, known_roles: int | None = None) -> tuple[tuple[str, Any, Any], ...]:
        """The cheap check: pushdown's services with their policy versions (one call), and
        the role version (one more, answered 304 when it is still ``known_roles``)."""
        wanted = set(self.naming.services)
        services = list(self.api.services())
        self.problems["services"] = "\n".join(service_findings(services, wanted))
        # a service deleted and made again (or another renamed to its name) is another
        # service whose versions may come back to those read: nothing read of the one
        # before stands (the last read, the definitions' answer), whatever the versions say
        ids = tuple(
            sorted((str(s.get("name")), str(s.get("id"))) for s in services if s.get("name") in wanted)
        )
        if self.service_ids is not None and ids != self.service_ids:
            self.last, self._defs, self._ids_moved = None, None, True
        self.service_ids = ids
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

    #: the service definitions' answer kept (:meth:`defs_at`): (pushdown's services' policy
    #: versions read before it, the deny option per service, the implied grants)
    _defs: tuple[tuple[tuple[str, int], ...], dict[str, bool], Implied] | None = None
    #: pushdown's services' ids, as last listed (:meth:`versions`), and whether they moved
    #: since the last bulk read (:meth:`_read`): a read-back then reads everything too
    service_ids: tuple[tuple[str, str], ...] | None = None
    _ids_moved: bool = False

    def read(self, model: Model, scope: Resolved) -> RangerSnapshot:
        """The last snapshot while the versions stand; the deny option and the implied grants
        as the service definitions said while the policy versions stand (:meth:`defs_at`)."""
        versions = self.versions()
        deny, implied = self.defs_at(versions)
        last = self.last
        if last is None or last.versions != versions or not complete(versions):
            last = self.last = replace(self._read(versions, deny), implied=implied)
        elif dict(last.deny) != deny or last.implied != implied:
            moved = digest(versions, deny, implied)
            last = self.last = replace(last, deny=deny, implied=implied, fingerprint=moved)
        return replace(self.with_findings(last, model), within=self.within(model, scope, last))

    def defs_at(self, versions: tuple[tuple[str, Any, Any], ...]) -> tuple[dict[str, bool], Implied]:
        """:meth:`defs_now`, or its last answer while pushdown's services' policy versions are
        those read before it (``versions``, read before this call): Ranger moves the policy
        version of every service of a service definition it updates (``ServiceDBStore``'s
        ``updateServicesForServiceDefUpdate``, since 0.6), so a definition edited since the
        last read shows in the versions, as a policy edited does. A refused read is not kept:
        it is asked again by the next sync."""
        at = _policy_versions(versions)
        kept = self._defs
        if kept is not None and at is not None and kept[0] == at:
            return dict(kept[1]), kept[2]
        self._defs = None
        deny, implied = self.defs_now()
        if at is not None and not self.problems["defs"]:
            self._defs = (at, dict(deny), implied)
        return deny, implied

    def defs_moved(
        self, before: tuple[tuple[str, Any, Any], ...], after: tuple[tuple[str, Any, Any], ...]
    ) -> None:
        """The kept definitions, read at ``before``, stand at ``after``: the versions moved by
        exactly pushdown's own writes (a definition updated meanwhile moves them once more)."""
        at, now = _policy_versions(before), _policy_versions(after)
        if self._defs is not None and at is not None and now is not None and self._defs[0] == at:
            self._defs = (now, self._defs[1], self._defs[2])

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
            deny[service] = self.deny_items != "off" and deny_enabled(sdef)
            for access in sdef.get("accessTypes") or ():
                more = frozenset(str(x) for x in access.get("impliedGrants") or ()) - {
                    str(access.get("name"))
                }
                if more:
                    implied.append((service, str(access.get("name")), more))
        return deny, tuple(sorted(implied, key=lambda t: (t[0], t[1])))

    def _read(self, versions: tuple[tuple[str, Any, Any], ...], deny: Mapping[str, bool]) -> RangerSnapshot:
        self._ids_moved = False
        services = frozenset(name for name, _, _ in versions if name)
        ours = self.naming.ours
        policies: dict[tuple[str, Any], Json] = {}
        narrowings: dict[tuple[str, Any], Json] = {}
        zoned: list[Json] = []
        shadowed: list[Json] = []
        labelled: list[tuple[str, Json]] = []
        for service in sorted(services):
            for policy in self.api.policies(service):
                if policy.get("policyType", 0) not in (0, None):
                    continue
                if policy.get("zoneName"):
                    zoned.append(policy)
                    continue
                key = (service, resource_key(policy))
                if is_narrowing(policy, self.label) and as_written(policy, ours):
                    labelled.append((service, policy))  # never merged into; found its key once all are read
                    continue
                held = policies.get(key)
                if held is not None:  # same resources, another priority, or one disabled
                    held, policy = sorted((held, policy), key=self._preferred)
                    shadowed.append(policy)
                    policy = held
                policies[key] = policy
        for service, policy in labelled:
            # the narrowing of the policy at ``key`` (one per key): the oldest, the rest shadowed
            key = narrowed_key(policy, service, policies)
            held = narrowings.get(key)
            if held is None or int(policy.get("id") or 0) < int(held.get("id") or 0):
                narrowings[key] = policy
            if held is not None:
                shadowed.append(max(held, policy, key=lambda p: int(p.get("id") or 0)))
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
        snap = self._snapshot(versions, policies, roles, deny, narrowings=narrowings)
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
        policies: Mapping[tuple[str, Any], Json],
        roles: Mapping[str, Json],
        deny: Mapping[str, bool],
        since: tuple[RangerSnapshot, Iterable[tuple[str, Any]], Iterable[str]] | None = None,
        narrowings: Mapping[tuple[str, Any], Json] | None = None,
    ) -> RangerSnapshot:
        """``since``: a snapshot these policies and roles differ from only at the keys
        given (a sync's writes, their answers put in place): its facts, with the facts of
        those keys taken out and put in again as now, instead of a pass over every one.
        ``narrowings``: pushdown's narrowing policies, folded into the facts of the keys
        they narrow (:func:`~pushdown_ranger.companion.folded`); ``since``'s when not given
        (a sync that wrote at a key holding one reads everything again)."""
        ours = self.naming.ours
        if narrowings is None:
            narrowings = since[0].narrowings if since is not None else {}
        # the policies narrowing policies fold into, by object (rare: looked up only then)
        folds = {id(policies[k]): k for k in narrowings if k in policies}
        # the fact of each policy and role as read, kept by the object answered: after a
        # sync's writes only the ones they answered are read into facts again
        kept, fresh = self._facts, {}

        def fact_of(raw: Json, read: Callable[[Json], Fact | None]) -> Fact | None:
            hit = kept.get(id(raw))
            fact = hit[1] if hit is not None and hit[0] is raw else read(raw)
            fresh[id(raw)] = (raw, fact)
            return fact

        def of_policy(p: Json) -> Fact | None:
            key = folds.get(id(p)) if folds else None
            if key is None:
                return policy_fact(p, ours)
            on = deny.get(key[0], False)
            return folded(policy_fact(p, ours), key, p, narrowings[key], ours, on)

        def of_role(r: Json) -> Fact | None:
            return interned(role_fact(r))

        moved = None if since is None else self._moved_facts(since, policies, roles, of_policy, of_role)
        if moved is not None:
            facts = moved
        else:
            every = {f for p in policies.values() if (f := fact_of(p, of_policy)) is not None}
            every |= {f for r in roles.values() if (f := fact_of(r, of_role)) is not None}
            for key, narrowing in narrowings.items():  # the policy it narrows is gone
                if key not in policies:
                    alone = folded(None, key, None, narrowing, ours, deny.get(key[0], False))
                    if alone is not None:
                        every.add(alone)
            self._facts = fresh
            facts = frozenset(every)
        hive = self.naming.hive_service
        handmade = None if since is None else _handmade_moved(since[0], policies, since[1], hive)
        if handmade is None:
            handmade = (
                voided_databases(policies, hive),
                frozenset(k for k, p in policies.items() if k[0] != hive and voiding(p)),
                overriding_policies(policies, hive),
            )
        return RangerSnapshot(
            facts,
            fingerprint=digest(versions, deny),
            policies=policies,
            roles=roles,
            services=frozenset(name for name, _, _ in versions if name),
            deny=deny,
            versions=versions,
            voided=handmade[0],
            voiding=handmade[1],
            overriding=handmade[2],
            narrowings=narrowings,
        )

    def _moved_facts(
        self,
        since: tuple[RangerSnapshot, Iterable[tuple[str, Any]], Iterable[str]],
        policies: Mapping[tuple[str, Any], Json],
        roles: Mapping[str, Json],
        of_policy: Callable[[Json], Fact | None],
        of_role: Callable[[Json], Fact | None],
    ) -> Set[Fact] | None:
        """The facts of ``since``'s snapshot, those of its touched keys as now (``None``:
        not found so; the caller makes them from every policy and role). One fact per
        policy key and per role name (the key holds the service and the resource set, a
        role fact its name), so taking a key's old fact out leaves every other key's."""
        base, policy_keys, role_names = since
        kept = self._facts  # moved in place once the facts are found so (no copy of it all)
        gone: set[Fact] = set()
        added: set[Fact] = set()
        out: list[int] = []
        put: list[tuple[Json, Fact | None]] = []
        touched = [(base.policies.get(k), policies.get(k), of_policy) for k in dict.fromkeys(policy_keys)]
        touched += [(base.roles.get(n), roles.get(n), of_role) for n in dict.fromkeys(role_names)]
        for old, new, read in touched:
            if old is new:
                continue
            if old is not None:
                hit = kept.get(id(old))
                fact = hit[1] if hit is not None and hit[0] is old else read(old)
                out.append(id(old))
                if fact is not None:
                    gone.add(fact)
            if new is not None:
                fact = read(new)
                put.append((new, fact))
                if fact is not None:
                    added.add(fact)
        if not all(fact in base.facts for fact in gone):
            return None
        # spread by hash, then moved by the facts that differ: the sets of facts no write
        # touched are shared with ``base``, not copied. A read of everything is spread once
        # a read-back was made from it and is moved again (a sync after it with no other
        # writer): a read of everything each sync copies its facts, as that read does anyway
        if isinstance(base.facts, factsets.Spread) or (
            len(base.facts) >= factsets.SPREAD_FROM and factsets.made_by_moving(base.facts)
        ):
            facts: Set[Fact] = factsets.Spread.of(base.facts).moved(gone, added)
        else:
            facts = (frozenset(base.facts) - gone) | added
        if len(facts) != len(base.facts) - len(gone) + len(added):
            return None  # a fact of another key (not one per key): made from every one
        factsets.moved(facts, base.facts, gone, added)  # what differs, for those kept over reads
        for key in out:  # the objects answered are alive: no id of ``put`` is one of ``out``
            kept.pop(key, None)
        kept.update((id(new), (new, fact)) for new, fact in put)
        return facts

    def _type_of(self, service: str) -> str:
        n = self.naming
        return {n.hive_service: "hive", n.hdfs_service: "hdfs", n.kafka_service: "kafka"}[service]


def _policy_versions(versions: tuple[tuple[str, Any, Any], ...]) -> tuple[tuple[str, int], ...] | None:
    """The services' policy versions in ``versions`` (not the role version: a definition
    moves only the former); ``None`` when a service's is unknown, or no service is named."""
    out = tuple((name, v) for name, v, _ in versions if name)
    return out if out and all(isinstance(v, int) for _, v in out) else None


def _handmade_moved(
    base: RangerSnapshot,
    policies: Mapping[tuple[str, Any], Json],
    keys: Iterable[tuple[str, Any]],
    hive: str,
) -> tuple[dict[str, str], frozenset[tuple[str, Any]], frozenset[tuple[str, Any]]] | None:
    """The databases hand-made policies void, the policies voiding deny items and those
    overriding them, of ``policies``, which are ``base``'s but at ``keys`` (a sync's writes),
    as the read-back joins them with ``base``'s (:meth:`Applying.reread`): ``base``'s, and
    those of the keys' policies as answered, without a pass over every policy. ``None`` when
    a key's Hive policy voids deny items before or after the writes: the reason given for a
    database is the first policy's in the order of every policy (made from every one then).
    ``base``'s sets hold those of its own policies (each read or read-back joins them), and
    the other policies are ``base``'s objects: what they add is in ``base``'s already."""
    keys = list(dict.fromkeys(keys))
    for key in keys:
        if key[0] == hive and any(
            p is not None and voiding(p) for p in (base.policies.get(key), policies.get(key))
        ):
            return None
    written = {k: policies[k] for k in keys if k in policies}
    more = frozenset(k for k, p in written.items() if k[0] != hive and voiding(p))
    return dict(base.voided), base.voiding | more, base.overriding | overriding_policies(written, hive)
