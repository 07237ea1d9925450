"""What the backend reports on every read: the access paths that bypass the model (hand-made
items, zones, overrides, strays, the HDFS fallback) and what could not be read."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from pushdown.model.securables import ObjectRef, SecurableType
from pushdown.model.state import Model
from pushdown_ranger.companion import narrowing_findings
from pushdown_ranger.compile.objects import leaf_schemas
from pushdown_ranger.compiling import Compiling
from pushdown_ranger.facts import PolicyFact
from pushdown_ranger.handmade import (
    exception_findings,
    role_bypasses,
    role_findings,
    role_reach,
    shadow_findings,
    voided_findings,
    zone_findings,
)
from pushdown_ranger.overrides import override_findings
from pushdown_ranger.readback import (
    audit_finding,
    bypasses,
    policy_fact,
    refusal_finding,
    resource_key,
    unenforced,
)
from pushdown_ranger.serviceconf import stray_finding
from pushdown_ranger.snapshot import (
    DENY_OPTION,
    Json,
    RangerSnapshot,
)


class Reporting(Compiling):
    def with_findings(self, snap: RangerSnapshot, model: Model) -> RangerSnapshot:
        """The snapshot with the access paths that bypass the model: allow items somebody
        else made for a model user or group (or ``public``) in pushdown's services."""
        # principals pushdown has seen stay reported after they leave the model: a hand-made
        # allow for a removed user or group still works (the directory keeps them)
        self._see_users(model)
        self._see_members(snap)
        self.seen_groups |= {self.naming.group(g) for g in model.groups}
        found = list(self._read_findings(snap))
        found += self.fallback_findings(model)
        found += [line for text in self.problems.values() if text for line in text.split("\n")]
        return replace(snap, findings=tuple(sorted(set(found))))

    def _see_members(self, snap: RangerSnapshot) -> None:
        """The member users of pushdown's roles as read into ``seen_users``: only of the
        roles answered anew since the last read (an unchanged role is the object answered
        before, kept alive here with its id); none when the roles are those seen last (the
        read-back after a sync's writes adds the members of the roles they answered)."""
        if snap.roles is self._roles_seen:
            return
        done, fresh = self._members_seen, {}
        for role in snap.roles.values():
            hit = done.get(id(role))
            if hit is None or hit is not role:
                self.seen_users |= {str(m.get("name")) for m in role.get("users") or ()}
            fresh[id(role)] = role
        self._members_seen = fresh
        self._roles_seen = snap.roles

    def _see_answered(
        self, before: Mapping[str, Json], after: Mapping[str, Json], answered: Iterable[str]
    ) -> None:
        """The roles ``after`` holds are those of ``before`` but the ``answered`` ones: when
        ``before``'s members were seen, seeing those of the answered ones sees ``after``'s."""
        if before is not self._roles_seen:
            return
        for name in answered:
            role = after.get(name)
            if role is not None:
                self.seen_users |= {str(m.get("name")) for m in role.get("users") or ()}
        self._roles_seen = after

    def _see_users(self, model: Model) -> None:
        """Every model user's Ranger name into ``seen_users``: from the kept identity while
        the mapping is stable (no mapping call; once per identity handed out), else mapped."""
        if not self.kept.stable():
            self.seen_users |= {self.naming.user(u) for u in model.users}
            return
        identity = self.kept.of(model.users, (), roster=(model, model.roster_stamped))
        if self._seen is identity:
            return
        self.seen_users |= set(identity.names.values())
        self.seen_users |= {self.naming.user(u) for u in identity.refused}
        self._seen = identity

    def _read_findings(self, snap: RangerSnapshot) -> tuple[str, ...]:
        """The findings of what a read holds, kept while the snapshot and the principals seen
        stand (the principals seen only grow: their counts say whether they moved)."""
        key = (len(self.seen_users), len(self.seen_groups))
        kept = self._findings
        if kept is not None and kept[0] is snap and kept[1] == key:
            return kept[2]
        # the principals seen, as of this read: copied once per count (they only grow, so
        # the same counts are the same principals), not at every read
        seen = self._seen_now
        if seen is None or seen[0] != key:
            seen = self._seen_now = (key, frozenset(self.seen_users), frozenset(self.seen_groups))
        users, groups = seen[1], seen[2]
        ours = self.naming.ours
        # the walk starts at hand-made roles and goes only through hand-made ones: pushdown's
        # own roles are not walked (the same answer as over every role)
        reach = role_reach(snap.others, users, groups, ours)

        def of_policy(p: Json) -> list[str]:
            found = [*bypasses(p, users, groups), *role_bypasses(p, reach), *unenforced(p, ours)]
            if p.get("allowExceptions"):  # its fact is the read's of this policy (one per key)
                fact = policy_fact(p, ours)
                found += exception_findings([p], ours, [fact] if fact is not None else [])
            return found + audit_finding(p, ours, self.label) + refusal_finding(p, ours)

        patch = self._patch
        moved = None if patch is None or patch[1] is not snap.policies else (patch[0], patch[2])
        found = self._each("policies", snap.policies, (), (key, reach, self.naming), of_policy, moved)
        found += [text for p in snap.shadowed for text in shadow_findings(p, ours, users, groups)]
        # pushdown's policies as read: only for zones and override-priority policies (rare)
        held = [f for f in snap.facts if isinstance(f, PolicyFact)] if snap.zones or snap.overriding else []
        found += voided_findings(snap.voided, not snap.deny.get(self.naming.hive_service, False))
        moved = None if patch is None or patch[4] is not snap.roles else (patch[3], patch[5])
        found += self._each(
            "roles", snap.roles, snap.others, self.naming, lambda r: role_findings([r], ours), moved
        )
        found += zone_findings(snap.zones, snap.zoned, held, users, groups, ours)
        if snap.overriding:
            every = {**snap.policies, **{(str(p.get("service")), resource_key(p)): p for p in snap.shadowed}}
            found += override_findings(every, snap.overriding, held)
        if not snap.deny.get(self.naming.hive_service, False) and self.deny_items != "off":
            found.append(
                f"service {self.naming.hive_service}: its definition does not enable deny items "
                f"(options.{DENY_OPTION}): Ranger ignores deny items and exceptions there; pushdown "
                "writes none (per-table allow items instead; narrower)"
            )
        found += [stray_finding(p, self.label) for p in snap.strays]
        if snap.narrowings:
            found += narrowing_findings(snap.narrowings, snap.policies, ours)
        # the snapshot is kept alive with its answer, so no other snapshot can reuse its id
        self._findings = (snap, key, tuple(found))
        return self._findings[2]

    def _each(
        self,
        slot: str,
        raws: Mapping[Any, Json],
        extra: Sequence[Json],
        key: object,
        find: Callable[[Json], list[str]],
        moved: tuple[object, Iterable[Any]] | None = None,
    ) -> list[str]:
        """``find`` of each policy or role as read (``raws`` by key, then ``extra``), each
        answer kept with the object answered while ``key`` (what else the answers depend on)
        stands. ``moved``: (the mapping ``raws`` was made from, the keys where they may
        differ: a sync's writes, their answers put in place): when the answers kept are of
        that mapping, only those keys are looked at again, without a pass over the others;
        otherwise every one is passed over, and answered again where its object is new."""
        kept = self._found_each.get(slot)
        if (
            kept is not None
            and moved is not None
            and kept.source is moved[0]
            and kept.extra is extra
            and kept.key == key
        ):
            for k in dict.fromkeys(moved[1]):
                kept.put(k, raws.get(k), find)
            kept.source = raws
            return list(kept.counts)
        fresh = _Found(key, raws, extra)
        same = kept is not None and kept.key == key
        for k, raw in [*raws.items(), *((("\x00extra", i), r) for i, r in enumerate(extra))]:
            hit = kept.per.get(k) if same and kept is not None else None
            if hit is not None and hit[0] is raw:
                fresh.add(k, hit)
            else:
                fresh.put(k, raw, find)
        # the objects are kept alive with their answers, so no other can reuse their id
        self._found_each[slot] = fresh
        return list(fresh.counts)

    def fallback_findings(self, model: Model) -> list[str]:
        """Issue 23, N7: a user no HDFS policy decides for is not denied but "not determined",
        and the HDFS plugin then asks HDFS's own permissions (a 644 file is readable)."""
        if self.hdfs_fallback == "off":
            return []
        roots = [
            r for c in self.enforces(model) if (r := ObjectRef(SecurableType.CATALOG, (c,))) in model.objects
        ]
        if not any(
            k.type is SecurableType.FILESET for s in leaf_schemas(model, roots) for k in model.leaves[s]
        ):
            return []
        return [
            f"service {self.naming.hdfs_service}: Ranger's HDFS plugin falls back to HDFS permissions "
            "for whoever no policy decides (xasecure.add-hadoop-authorization, true by default), so a "
            "user the model does not allow a fileset may still read it through its HDFS mode bits; "
            "set xasecure.add-hadoop-authorization=false on every HDFS plugin, then hdfs_fallback: off"
        ]


class _Found:
    """The findings of each policy or role as read (by its key, with the object answered),
    and how many give each finding; of the mapping ``source`` (and ``extra``), for ``key``."""

    def __init__(self, key: object, source: object, extra: object) -> None:
        self.key, self.source, self.extra = key, source, extra
        self.per: dict[Any, tuple[Json, list[str]]] = {}
        self.counts: dict[str, int] = {}

    def put(self, k: Any, raw: Json | None, find: Callable[[Json], list[str]]) -> None:
        """The answer at ``k`` made again for ``raw`` (``None``: gone)."""
        old = self.per.pop(k, None)
        if old is not None:
            for text in old[1]:
                n = self.counts[text] - 1
                if n:
                    self.counts[text] = n
                else:
                    del self.counts[text]
        if raw is not None:
            self.add(k, (raw, find(raw)))

    def add(self, k: Any, hit: tuple[Json, list[str]]) -> None:
        self.per[k] = hit
        for text in hit[1]:
            self.counts[text] = self.counts.get(text, 0) + 1
