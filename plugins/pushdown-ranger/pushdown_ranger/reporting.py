"""What the backend reports on every read: the access paths that bypass the model (hand-made
items, zones, overrides, strays, the HDFS fallback) and what could not be read."""

from __future__ import annotations

from dataclasses import replace

from pushdown.model.securables import ObjectRef, SecurableType
from pushdown.model.state import Model
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
from pushdown_ranger.readback import bypasses, resource_key, unenforced
from pushdown_ranger.serviceconf import stray_finding
from pushdown_ranger.snapshot import (
    DENY_OPTION,
    RangerSnapshot,
)


class Reporting(Compiling):
    def with_findings(self, snap: RangerSnapshot, model: Model) -> RangerSnapshot:
        """The snapshot with the access paths that bypass the model: allow items somebody
        else made for a model user or group (or ``public``) in pushdown's services."""
        # principals pushdown has seen stay reported after they leave the model: a hand-made
        # allow for a removed user or group still works (the directory keeps them)
        self._see_users(model)
        self.seen_users |= {str(m.get("name")) for r in snap.roles.values() for m in r.get("users") or ()}
        self.seen_groups |= {self.naming.group(g) for g in model.groups}
        found = list(self._read_findings(snap))
        found += self.fallback_findings(model)
        found += [line for text in self.problems.values() if text for line in text.split("\n")]
        return replace(snap, findings=tuple(sorted(set(found))))

    def _see_users(self, model: Model) -> None:
        """Every model user's Ranger name into ``seen_users``: from the kept identity while
        the mapping is stable (no mapping call; once per identity handed out), else mapped."""
        if not self.kept.stable():
            self.seen_users |= {self.naming.user(u) for u in model.users}
            return
        identity = self.kept.of(model.users, ())
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
        # the snapshot is kept alive with its answer, so no other snapshot can reuse its id
        self._findings = (snap, key, tuple(found))
        return self._findings[2]

    def fallback_findings(self, model: Model) -> list[str]:
        """Issue 23, N7: a user no HDFS policy decides for is not denied but "not determined",
        and the HDFS plugin then asks HDFS's own permissions (a 644 file is readable)."""
        if self.hdfs_fallback == "off":
            return []
        roots = [
            r for c in self.enforces(model) if (r := ObjectRef(SecurableType.CATALOG, (c,))) in model.objects
        ]
        if not any(
            k.type is SecurableType.FILESET for s in leaf_schemas(model, roots) for k in model.children(s)
        ):
            return []
        return [
            f"service {self.naming.hdfs_service}: Ranger's HDFS plugin falls back to HDFS permissions "
            "for whoever no policy decides (xasecure.add-hadoop-authorization, true by default), so a "
            "user the model does not allow a fileset may still read it through its HDFS mode bits; "
            "set xasecure.add-hadoop-authorization=false on every HDFS plugin, then hdfs_fallback: off"
        ]
