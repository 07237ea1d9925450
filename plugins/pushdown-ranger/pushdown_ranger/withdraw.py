"""When a write that adds deny items is refused anyway (a rule of the server, a name taken
three times over), the allow items of pushdown's that the deny items protect against are
withdrawn: an error never leaves an allow standing behind a failed DENY (issue 23). Pure
but for the writes it asks of the writer.

The allow items a deny item of resource set ``R`` protects against are pushdown's allow
items on ``R`` itself (the policy as Ranger holds it: the refused write would have removed
or outweighed them) and on the resource sets whose policies Ranger also matches on ``R``:

- Hive: ``database=d`` tables: the every-table set of ``d`` (``table=?*``); a
  ``database=d`` deny item: ``d`` itself only (the every-table set does not match it);
- HDFS: every enclosing path (fileset policies are recursive);
- Kafka: none of pushdown's on other keys (its topic policies are one topic each).

Each such policy is written with pushdown's allow items removed; its deny items and
everybody else's items stay.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from pushdown_ranger.facts import PolicyFact, Resource
from pushdown_ranger.readback import our_pairs

Json = dict[str, Any]


def enclosing(denied: PolicyFact, policies: Mapping[tuple[str, Any], Json]) -> list[tuple[str, Any]]:
    """The keys of the policies holding allow items Ranger also matches where ``denied``
    denies: its own resource set, and every one enclosing it."""
    mine = dict((k, v) for k, v, _ in denied.resources)
    out = []
    for key in policies:
        service, resources = key
        if service != denied.service:
            continue
        if resources == denied.resources:
            out.append(key)
            continue
        theirs = {k: v for k, v, _ in resources}
        if _encloses(theirs, mine):
            out.append(key)
    return sorted(out, key=str)


def _encloses(outer: Mapping[str, tuple[str, ...]], inner: Mapping[str, tuple[str, ...]]) -> bool:
    if "path" in outer and "path" in inner:
        return any(i == o or i.startswith(o.rstrip("/") + "/") for o in outer["path"] for i in inner["path"])
    if "table" in inner and outer.get("database") == inner.get("database"):
        return outer.get("table") in (("?*",), ("*",))
    return False


def withdraw(
    refused: Iterable[PolicyFact],
    policies: Mapping[tuple[str, Any], Json],
    ours: Callable[[str], bool],
    write: Callable[[tuple[str, tuple[Resource, ...]], PolicyFact], None],
) -> list[str]:
    """Withdraw pushdown's allow items that ``refused`` deny items protect against (each
    policy written with its deny items only); what was withdrawn, in words."""
    done: set[tuple[str, Any]] = set()
    out = []
    for denied in refused:
        for key in enclosing(denied, policies):
            if key in done:
                continue
            allow, deny = our_pairs(policies[key], ours)
            if not allow:
                continue
            done.add(key)
            write(key, PolicyFact(key[0], key[1], frozenset(), deny))
            out.append(
                f"{denied.service}:{denied.describe_resources()}: its deny items were refused, so "
                f"pushdown's allow items on {PolicyFact(key[0], key[1], allow, deny).describe_resources()} "
                "were withdrawn (narrower until the next sync writes both)"
            )
    return out


def standing(
    denied: PolicyFact, policies: Mapping[tuple[str, Any], Json], ours: Callable[[str], bool]
) -> bool:
    """Whether Ranger holds every deny item of ``denied`` already (a refused write that
    would have kept them, or an earlier write of the same change that wrote them): then
    they protect what they protect, and nothing is withdrawn for them."""
    held = policies.get((denied.service, denied.resources))
    return held is not None and denied.deny <= our_pairs(held, ours)[1]


def relying(
    roles: Iterable[str], policies: Mapping[tuple[str, Any], Json], ours: Callable[[str], bool]
) -> list[PolicyFact]:
    """The deny items Ranger holds that name ``roles``, per policy: when a write giving
    such a role a member is refused, they do not reach that member, and the allow items
    they protect against are withdrawn as for a refused deny write."""
    names = set(roles)
    out = []
    for (service, resources), policy in policies.items():
        deny = frozenset(pair for pair in our_pairs(policy, ours)[1] if pair[0] in names)
        if deny:
            out.append(PolicyFact(service, resources, frozenset(), deny))
    return sorted(out, key=str)
