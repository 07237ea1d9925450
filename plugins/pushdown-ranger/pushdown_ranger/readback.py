"""Ranger's JSON, normalised into facts, and facts back into Ranger's JSON. Pure.

A policy is keyed by its service and resource set (values sorted; an excluded resource
never equals one pushdown writes). pushdown's share of a policy is the ``(role, access)``
pairs of the allow and deny items that name a role with one of pushdown's prefixes:
plain items (no conditions, no delegated admin) as they are, and allow items with
conditions or delegated admin (made or edited by hand) as marked pairs
(:func:`hand_modified`; one with no allowed access, say delegated admin alone, as
``(role, "[delegated admin]")``), which nothing pushdown compiles equals, so the next
sync of the policy writes it and takes pushdown's roles out of them. Taking a role out
of an allow item only narrows; out of a deny item it would widen, so a deny item with
conditions or delegated admin is kept whole: only the delegated admin of one naming
nobody but pushdown's roles is cleared (that item is read as the marked allow pair
``(role, "[delegated admin]")``: the right to edit the policy is held, never compiled).
Once cleared, such a deny item is plain and read as pushdown's own. Everything else in
the policy is somebody else's and is written back untouched.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable
from collections.abc import Set as AbstractSet
from typing import Any

from pushdown_ranger.accepting import Implying, accepted
from pushdown_ranger.facts import Pair, PolicyFact, Resource, RoleFact, describe

Json = dict[str, Any]
ITEM_KINDS = (("policyItems", False), ("denyPolicyItems", True))


def resource_key(policy: Json) -> tuple[Resource, ...]:
    """The resource set, as pushdown keys policies. A policy with ``additionalResources``
    (more resource sets, Ranger 2.5) never has the key of one pushdown writes: its items
    apply to every set, so pushdown's items never go there."""
    out = []
    for name, spec in (policy.get("resources") or {}).items():
        values = tuple(sorted(str(v) for v in spec.get("values") or ()))
        suffix = "!" if spec.get("isExcludes") else ""
        out.append((name + suffix, values, bool(spec.get("isRecursive"))))
    more = policy.get("additionalResources")
    if more:
        out.append(("+additional", (json.dumps(more, sort_keys=True, default=str),), False))
    return tuple(sorted(out))


def _plain(item: Json) -> bool:
    return not item.get("conditions") and not item.get("delegateAdmin")


def _modifiers(item: Json) -> str:
    """What makes an item not plain, in words (empty for a plain item)."""
    found = [("conditions", "conditions"), ("delegateAdmin", "delegated admin")]
    return ", ".join(words for name, words in found if item.get(name))


#: the marked allow pair's access of delegated admin held without an allowed access: an
#: allow item with delegated admin and no allowed access, or a deny item with delegated
#: admin naming nobody but pushdown's roles
ADMIN = "[delegated admin]"


def hand_modified(access: str) -> bool:
    """Whether an allow pair's access was read from an item with conditions or delegated
    admin (``select [delegated admin]``, :data:`ADMIN`): Ranger grants it, pushdown never
    writes it (no access type of a service definition has a ``[``)."""
    return "[" in access


def _others(item: Json, ours: Callable[[str], bool]) -> bool:
    """Whether ``item`` names a principal that is not one of pushdown's roles."""
    return bool(item.get("users") or item.get("groups") or any(not ours(r) for r in item.get("roles") or ()))


def _clears_admin(item: Json, ours: Callable[[str], bool]) -> bool:
    """Whether a sync clears the delegated admin of deny item ``item``: it names nobody but
    pushdown's roles (clearing it narrows; its principals all stay)."""
    return bool(item.get("delegateAdmin")) and not _others(item, ours)


def our_pairs(policy: Json, ours: Callable[[str], bool]) -> tuple[frozenset[Pair], frozenset[Pair]]:
    """pushdown's ``(role, access)`` pairs in ``policy``'s allow and deny items. An allow item
    with conditions or delegated admin gives its pairs marked (:func:`hand_modified`; with no
    allowed access, one per role: ``[delegated admin]`` say): they are held (its members may
    do that, or administer the policy) but never what pushdown compiles, so a sync of the
    policy always takes them out. A deny item with them is not read as denying (pushdown
    writes its plain deny item again; the other is kept and reported); one whose delegated
    admin a sync clears (:func:`_clears_admin`) gives the marked allow pair :data:`ADMIN`
    per role, so the sync of the policy is never skipped while it holds it."""
    found: dict[bool, set[Pair]] = {False: set(), True: set()}
    for field, deny in ITEM_KINDS:
        for item in policy.get(field) or ():
            roles = [r for r in item.get("roles") or () if ours(r)]
            if not roles:
                continue
            modifiers = _modifiers(item)
            if modifiers and deny:
                if _clears_admin(item, ours):
                    found[False].update((role, ADMIN) for role in roles)
                continue
            accesses = [str(a.get("type")) for a in item.get("accesses") or () if a.get("isAllowed", True)]
            if modifiers:
                accesses = [f"{a} [{modifiers}]" for a in accesses] or [f"[{modifiers}]"]
            found[deny].update((role, a) for role in roles for a in accesses)
    return frozenset(found[False]), frozenset(found[True])


def policy_fact(policy: Json, ours: Callable[[str], bool]) -> PolicyFact | None:
    allow, deny = our_pairs(policy, ours)
    if not (allow or deny):
        return None
    return PolicyFact(str(policy.get("service")), resource_key(policy), allow, deny)


def role_fact(role: Json) -> RoleFact:
    users = frozenset(str(m["name"]) for m in role.get("users") or ())
    groups = frozenset(str(m["name"]) for m in role.get("groups") or ())
    roles = frozenset(str(m["name"]) for m in role.get("roles") or ())
    admins = frozenset(
        str(m["name"])
        for kind in ("users", "groups", "roles")
        for m in role.get(kind) or ()
        if m.get("isAdmin")
    )
    return RoleFact(str(role["name"]), users, groups, roles, admins)


def _strip(
    items: Iterable[Json], ours: Callable[[str], bool], deny: bool, written: frozenset[Pair] = frozenset()
) -> list[Json]:
    """Items without pushdown's roles (an item left with no principal at all is dropped).

    Every allow item loses pushdown's roles, whatever was added to it by hand (conditions,
    delegated admin): an allow the model does not want never keeps reaching pushdown's
    principals, and taking a principal out of an allow only narrows. A deny item with
    conditions or delegated admin is kept whole (taking a principal out of a deny widens);
    when it names nobody but pushdown's roles its delegated admin (the right to edit the
    policy, never granted by pushdown) is cleared, which narrows too; then, left plain
    and denying nothing that pushdown's deny items written with it (``written``) do not,
    it is dropped (a copy of pushdown's own deny item stays one item)."""
    kept = []
    for item in items:
        if deny and not _plain(item):
            if _clears_admin(item, ours):
                item = {**item, "delegateAdmin": False}
                every = {
                    (r, str(a.get("type")))
                    for r in item.get("roles") or ()
                    for a in item.get("accesses") or ()
                }
                if _plain(item) and every <= written:
                    continue
            kept.append(item)
            continue
        roles = [r for r in item.get("roles") or () if not ours(r)]
        if roles or item.get("users") or item.get("groups"):
            kept.append({**item, "roles": roles})
    return kept


def _items(pairs: frozenset[Pair]) -> list[Json]:
    """Pairs as items: roles with the same accesses share one item. A marked pair
    (:func:`hand_modified`) is never written: it is not an access type."""
    by_role: dict[str, list[str]] = {}
    for role, access in sorted(pairs):
        if not hand_modified(access):
            by_role.setdefault(role, []).append(access)
    by_accesses: dict[tuple[str, ...], list[str]] = {}
    for role, accesses in by_role.items():
        by_accesses.setdefault(tuple(accesses), []).append(role)
    return [
        {
            "accesses": [{"type": a, "isAllowed": True} for a in accesses],
            "users": [],
            "groups": [],
            "roles": roles,
            "conditions": [],
            "delegateAdmin": False,
        }
        for accesses, roles in sorted(by_accesses.items())
    ]


def merged(
    policy: Json, fact: PolicyFact | None, ours: Callable[[str], bool], implies: Implying = None
) -> Json:
    """``policy`` with pushdown's items replaced by ``fact``'s (none when ``None``), as
    Ranger accepts it with the same decisions (:func:`~pushdown_ranger.accepting.accepted`,
    :func:`audible`)."""
    out = dict(policy)
    for field, deny in ITEM_KINDS:
        pairs = (fact.deny if deny else fact.allow) if fact is not None else frozenset()
        out[field] = _strip(policy.get(field) or (), ours, deny, pairs) + _items(pairs)
    return audible(accepted(out, implies)[0])


def audible(policy: Json) -> Json:
    """``policy``, audited when it is left with no allow or deny item: Ranger refuses a policy
    with neither (error 3008), and a refusal would hold back the narrowing that emptied it.
    Audit only logs the accesses it matches; it allows nothing."""
    if policy.get("isAuditEnabled") is False and not (
        policy.get("policyItems") or policy.get("denyPolicyItems")
    ):
        return {**policy, "isAuditEnabled": True}
    return policy


def foreign_items(policy: Json) -> bool:
    return any(policy.get(f) for f in ("policyItems", "denyPolicyItems", "allowExceptions", "denyExceptions"))


def policy_name(fact: PolicyFact, salt: str = "") -> str:
    """The name of a policy pushdown creates: readable, and unique per resource set. The
    readable part (``describe``) is ambiguous (a database named ``d,table=y``), so the name
    ends in a digest of the service and the resource set, encoded unambiguously (JSON).
    ``salt``: another name for the same resource set, when a policy already took this one
    (Ranger refuses a second policy of a name, error 3006)."""
    exact = json.dumps([fact.service, [[k, list(v), r] for k, v, r in fact.resources], salt])
    digest = hashlib.sha256(exact.encode()).hexdigest()[:16]
    return f"pushdown {describe(fact.resources)[:160]} #{digest}"


def new_policy(fact: PolicyFact, label: str, salt: str = "") -> Json:
    resources = {
        name: {"values": list(values), "isExcludes": False, "isRecursive": recursive}
        for name, values, recursive in fact.resources
    }
    return {
        "service": fact.service,
        "name": policy_name(fact, salt),
        "description": "managed by pushdown",
        "isEnabled": True,
        "isAuditEnabled": True,
        "policyType": 0,
        "policyLabels": [label],
        "resources": resources,
        "policyItems": _items(fact.allow),
        "denyPolicyItems": _items(fact.deny),
        "allowExceptions": [],
        "denyExceptions": [],
    }


def role_json(fact: RoleFact, rid: int | None = None) -> Json:
    out: Json = {
        "name": fact.name,
        "description": "managed by pushdown",
        "users": [{"name": u, "isAdmin": False} for u in sorted(fact.users)],
        "groups": [{"name": g, "isAdmin": False} for g in sorted(fact.groups)],
        "roles": [{"name": r, "isAdmin": False} for r in sorted(fact.roles)],
    }
    if rid is not None:
        out["id"] = rid
    return out


def bypasses(policy: Json, users: AbstractSet[str], groups: AbstractSet[str]) -> list[str]:
    """Allow items pushdown did not make that reach a user or group of the model (or
    everybody: the group ``public``): access paths that bypass the model, reported."""
    out = []
    for item in policy.get("policyItems") or ():
        accesses = ",".join(sorted(str(a.get("type")) for a in item.get("accesses") or ()))
        reached = [f"user {u}" for u in item.get("users") or () if u in users or u in ("{USER}", "{OWNER}")]
        reached += [f"group {g}" for g in item.get("groups") or () if g in groups or g == "public"]
        if reached:
            where = describe(resource_key(policy))
            out.append(
                f"policy {policy.get('name')!r} ({policy.get('service')}:{where}) allows {accesses} "
                f"to {', '.join(reached)}, outside pushdown"
            )
    return out


#: item lists where an item naming one of pushdown's roles is not pushdown's: it changes what
#: the role's members may do outside the model (an allow or deny exception, or an item with
#: conditions or delegated admin: pushdown takes its roles out of such an allow item, and
#: leaves the others, which taking a role out of could widen)
_OTHER_LISTS = ("policyItems", "denyPolicyItems", "allowExceptions", "denyExceptions")


def unenforced(policy: Json, ours: Callable[[str], bool]) -> list[str]:
    """What makes pushdown's share of ``policy`` differ from what Ranger enforces, reported
    (never silently counted as enforced): the policy disabled by hand while it holds
    pushdown's items; items pushdown did not make that name pushdown's roles."""
    where = f"policy {policy.get('name')!r} ({policy.get('service')}:{describe(resource_key(policy))})"
    out = []
    allow, deny = our_pairs(policy, ours)
    if (allow or deny) and policy.get("isEnabled") is False:
        out.append(
            f"{where} is disabled: pushdown's {len(allow) + len(deny)} item(s) in it are not in effect"
        )
    for field in _OTHER_LISTS:
        for item in policy.get(field) or ():
            if field in ("policyItems", "denyPolicyItems") and _plain(item):
                continue
            roles = sorted(str(r) for r in item.get("roles") or () if ours(str(r)))
            if not roles:
                continue
            if field == "policyItems":
                out.append(
                    f"{where}: an allow item with {_modifiers(item)} names pushdown's role(s) "
                    f"{', '.join(roles)} (made by hand): the sync of this policy takes them out of it"
                )
            elif field == "denyPolicyItems" and _clears_admin(item, ours):
                out.append(
                    f"{where}: a deny item (denyPolicyItems) with {_modifiers(item)} names only pushdown's "
                    f"role(s) {', '.join(roles)} (made by hand): the sync of this policy clears its "
                    "delegated admin and keeps the deny (then read as pushdown's own)"
                )
            else:
                out.append(f"{where}: {field} names pushdown's role(s) {', '.join(roles)}, outside pushdown")
    return out


def audit_finding(policy: Json, ours: Callable[[str], bool], label: str) -> list[str]:
    """A policy with audit turned off whose allow and deny items are all pushdown's: Ranger
    refuses it without them (error 3008), so the sync that takes them out turns its audit on
    (:func:`audible`), unless it deletes the policy (pushdown's own, nothing else in it)."""
    if policy.get("isAuditEnabled") is not False or not any(our_pairs(policy, ours)):
        return []
    rest = merged(policy, None, ours)
    if rest.get("isAuditEnabled") is False:
        return []  # items of somebody else's are left in it
    if label in (policy.get("policyLabels") or ()) and not foreign_items(rest):
        return []  # deleted once pushdown's items leave it
    where = f"policy {policy.get('name')!r} ({policy.get('service')}:{describe(resource_key(policy))})"
    return [
        f"{where} has audit turned off and no allow or deny item but pushdown's: Ranger refuses it "
        "without them (error 3008), so the sync that takes them out turns its audit on (audit only "
        "logs: it allows nothing)"
    ]


def refusal_finding(policy: Json, ours: Callable[[str], bool]) -> list[str]:
    """A policy holding pushdown's items and items Ranger's validator refuses (stored by an
    older Ranger, or straight into its database): the sync that rewrites it carries them as
    Ranger accepts them with the same decisions (:func:`~pushdown_ranger.accepting.accepted`),
    or says why it cannot."""
    if not any(our_pairs(policy, ours)):
        return []
    said = accepted(policy)[1]
    if not said:
        return []
    where = f"policy {policy.get('name')!r} ({policy.get('service')}:{describe(resource_key(policy))})"
    return [
        f"{where} holds items Ranger refuses on a write (stored before): the sync that rewrites it "
        f"carries them with the same decisions: {'; '.join(said)}"
    ]
