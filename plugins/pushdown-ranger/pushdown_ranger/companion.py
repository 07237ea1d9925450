"""The narrowing of a policy Ranger refuses to write, written beside it. Pure.

A policy stored by an older Ranger (or straight into its database) may hold what today's
Ranger refuses on any write of it and pushdown must keep (a principal named ``null`` in a
deny item or an allow exception: taking it out would widen; see
:mod:`~pushdown_ranger.accepting`). pushdown's rewrite of it is then refused, and a refused
write must never hold back a narrowing. So the narrowing goes into a *narrowing policy*
beside it: pushdown's label and :func:`narrowing_label`, the same service, the same
resources (``isExcludes``, ``isRecursive`` and any additional resources alike) and override
priority, with deny items only: for each of pushdown's roles, the accesses the narrowing
takes from it there (allow items the model no longer wants) and the deny items the model
adds. Ranger evaluates override-priority policies first and, within a priority, a deny
wins over an allow (RangerPolicyEngineImpl, RangerDefaultPolicyEvaluator), so its deny
items beat the refused policy's allow items on every access that policy matches; its
priority also gives it another resource signature, so Ranger accepts a second policy on
those resources (error 3010 compares signatures, which hold a priority that is not normal).
When the policy it narrows has override priority itself, the same resources would be the same
signature, so it goes on their :func:`spare_form` (one more value: another signature, the same
resources or more, reported). Where another policy holds the signature it would take (Ranger
refuses its create: error 3010; a narrowing policy edited by hand into one read as hand-made,
say, or an override-priority policy somebody made on those resources), it goes on the next
spare form in the same write (:func:`spare_forms`): a clash of signatures never holds back the
narrowing. It may deny more than the model where another policy allows the
same role the same access (reported: narrower, never wider).

Anybody with Ranger admin can put both labels on a policy: only one that is what pushdown
writes as a narrowing policy (:func:`as_written`: plain deny items naming pushdown's roles,
nothing that may allow) is read as one; anything else is read as any hand-made policy.
A read takes a narrowing policy out of the policies keyed by resource set (it is never
where pushdown merges items, nor read as a hand-made override) and folds it into the fact
of the policy it narrows (the one at its resources, else the one its resources are the spare
forms of, else the one at them less one value: :func:`narrowed_key`; where more than one is,
the one whose id it names, :data:`NARROWS`; :func:`folded`):
while that policy stays unwritable, its allow pairs the narrowing
policy denies are not held, the rest of its deny pairs are, and so are those it names as the
model's deny items (:data:`DENIES`: Ranger decides the same for an allow taken away and a
deny the model wants, so the read could not tell them apart otherwise); once
that policy is writable again (fixed by hand) or gone, every deny pair of the narrowing
policy is read as held, so the model (which does not want it) removes it: a widening write,
in the apply's widening stage (:func:`drop_allowed`).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

from pushdown_ranger.accepting import refused_writes
from pushdown_ranger.facts import Pair, PolicyFact, Resource, describe
from pushdown_ranger.readback import Json, _items, our_pairs, policy_name, resource_key

#: Ranger's override priority (RangerPolicy.POLICY_PRIORITY_OVERRIDE)
OVERRIDE = 1


def narrowing_label(label: str) -> str:
    """The second label of a narrowing policy (its first is pushdown's own)."""
    return f"{label}-narrowing"


def is_narrowing(policy: Json, label: str) -> bool:
    """Whether ``policy`` carries both labels of a narrowing policy (anybody with Ranger admin
    may put them on any policy: :func:`as_written` says whether it is read as one)."""
    labels = policy.get("policyLabels") or ()
    return label in labels and narrowing_label(label) in labels


def as_written(policy: Json, ours: Callable[[str], bool]) -> bool:
    """Whether a policy carrying the narrowing labels is what pushdown writes as one, so it is
    read as a narrowing policy: plain deny items naming only pushdown's roles (no user, group,
    item condition, delegated admin or access not allowed), no allow item, no allow exception,
    no ``isDenyAllElse``, an access policy. Anything else with those labels may allow (or was
    shaped by hand some other way) and is read as any hand-made policy is: its allows reported,
    its override priority voiding deny items, its pushdown-role items handled as they are in
    any policy. What only makes a narrowing policy deny less (disabled, a normal priority,
    policy conditions, a validity schedule, deny exceptions) keeps it a narrowing policy that
    is not :func:`in_force`: the next sync puts it back in force (:func:`restored`), which
    only narrows."""
    if policy.get("policyType", 0) not in (0, None) or policy.get("isDenyAllElse") is True:
        return False
    if policy.get("policyItems") or policy.get("allowExceptions"):
        return False
    items = policy.get("denyPolicyItems") or []
    return isinstance(items, list) and all(_plain_deny(item, ours) for item in items)


def _plain_deny(item: Any, ours: Callable[[str], bool]) -> bool:
    if not isinstance(item, dict) or item.get("users") or item.get("groups"):
        return False
    if item.get("conditions") or item.get("delegateAdmin"):
        return False
    roles, accesses = item.get("roles") or [], item.get("accesses") or []
    return (
        bool(roles)
        and all(isinstance(r, str) and ours(r) for r in roles)
        and bool(accesses)
        and all(isinstance(a, dict) and a.get("isAllowed", True) is not False for a in accesses)
    )


def spare_form(resources: Json) -> tuple[Json, bool]:
    """``resources`` with one more value, and whether it matches exactly the same resources:
    the form a narrowing policy takes when the policy it narrows has override priority itself
    (the same resources would be the same resource signature, refused: error 3010; the
    signature holds each resource's values, sorted: RangerPolicyResourceSignature). Ranger
    refuses a repeated value (error 3056), so the value added is another string:

    - one more ``*`` beside a value made only of ``*`` (Ranger's resource matcher reads any
      such value as matching every name: exactly the same resources);
    - else the case-swapped twin of a value with letters (exactly the same resources where the
      resource's matcher ignores case, as Hive's do; elsewhere it also denies that one other
      name: narrower, never wider);
    - else a value with ``*`` appended (its names and those it starts: narrower, never wider);
    - never a value more in an excluded resource (``isExcludes``: it would match fewer names,
      wider): where only those are left, one of them is made to match every name (narrower).

    A deny over more resources only narrows; it is reported (:func:`narrowing_findings`)."""
    out = _copy(resources)
    specs = [
        out[name]
        for name in sorted(out)
        if isinstance(out[name], dict) and isinstance(out[name].get("values"), list) and out[name]["values"]
    ]
    for spec in specs:
        stars = [str(v) for v in spec["values"] if _stars(str(v))]
        if stars:
            spec["values"] = [*spec["values"], "*" * (max(map(len, stars)) + 1)]
            return out, True
    # a value more in an excluded resource matches fewer names: only included ones take one
    included = [spec for spec in specs if not spec.get("isExcludes")]
    for spec in included:
        values = [str(v) for v in spec["values"]]
        for value in values:
            twin = value.swapcase()
            if twin != value and twin not in values:
                spec["values"] = [*spec["values"], twin]
                return out, False
    for spec in included:
        values = [str(v) for v in spec["values"]]
        more = next((v + "*" for v in values if v + "*" not in values), None)
        if more is not None:
            spec["values"] = [*spec["values"], more]
            return out, False
    for spec in specs:  # excluded resources alone: one made to match every name (more)
        spec["values"], spec["isExcludes"] = [*spec["values"], "*"], False
        return out, False
    return out, False


#: the most spare forms a narrowing policy's resources take (:func:`spare_forms`): one for a
#: policy with override priority, and one more per resource signature another policy holds
MOST_SPARES = 3


def spare_forms(resources: Json, n: int) -> tuple[Json, bool]:
    """``resources`` after ``n`` :func:`spare_form` steps (each adds one value: another resource
    signature each time), and whether they match exactly the same resources."""
    out, same = _copy(resources), True
    for _ in range(n):
        out, exact = spare_form(out)
        same = same and exact
    return out, same


def narrowed_key(
    policy: Json, service: str, policies: Mapping[tuple[str, Any], Json]
) -> tuple[str, tuple[Resource, ...]]:
    """The key of the policy a narrowing policy narrows, of ``policies`` (read, keyed by
    service and resource key): its own key; else a policy whose resources, taken
    :func:`spare_forms` as many times as the narrowing policy has values more, are exactly the
    narrowing policy's (one Ranger refuses to write first, then the fewest forms); else its key
    less one value (:func:`narrowed_keys`); else its own key. A policy the narrowing policy's
    resources are not the spare form of is never taken for the one it narrows beyond that.
    Where the narrowing policy names the policy it narrows (:data:`NARROWS`) and that policy is
    one of those candidates, it is that one: the name only settles which of the policies its
    resources already cover it is, it never attaches it to any other."""
    own = resource_key(policy)
    candidates = [(service, own)] if (service, own) in policies else []
    count = _values(own)
    found = []
    for key, original in policies.items():
        n = count - _values(key[1])
        if key[0] != service or not 0 < n <= MOST_SPARES or len(key[1]) != len(own):
            continue
        spare = {
            "resources": spare_forms(original.get("resources") or {}, n)[0],
            "additionalResources": original.get("additionalResources"),
        }
        if resource_key(spare) == own:
            found.append((not refused_writes(original), n, str(key), key))
    candidates += [key for *_, key in sorted(found)]
    candidates += [(service, k) for k in narrowed_keys(policy)[1:] if (service, k) in policies]
    named = narrows(policy)
    if named is not None:
        for key in candidates:
            if _policy_id(policies[key]) == named:
                return key
    return candidates[0] if candidates else (service, own)


#: the option of a narrowing policy naming the id of the policy it narrows (written with it;
#: read only to choose among the policies its resources cover: :func:`narrowed_key`)
NARROWS = "pushdown-narrows"


def narrows(narrowing: Json) -> int | None:
    """The policy id :data:`NARROWS` names in ``narrowing`` (None when it is not a positive
    whole number, or a string of digits: whatever else is there is ignored)."""
    options = narrowing.get("options")
    value = options.get(NARROWS) if isinstance(options, dict) else None
    return _id_value(value)


def with_narrows(policy: Json, narrowed: Json | None) -> Json:
    """``policy`` with :data:`NARROWS` naming the id of ``narrowed`` (taken out when it has
    none; its other options kept)."""
    options = dict(policy.get("options") or {}) if isinstance(policy.get("options"), dict) else {}
    options.pop(NARROWS, None)
    pid = _policy_id(narrowed) if narrowed is not None else None
    if pid is not None:
        options[NARROWS] = pid
    return {**policy, "options": options}


def _policy_id(policy: Json) -> int | None:
    return _id_value(policy.get("id"))


def _id_value(value: Any) -> int | None:
    if isinstance(value, str) and 0 < len(value) <= 19 and value.isascii() and value.isdigit():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        return None
    return value


def _values(key: tuple[Resource, ...]) -> int:
    return sum(len(values) for _, values, _ in key)


def narrowed_keys(policy: Json) -> list[tuple[Resource, ...]]:
    """The resource keys of the policy a narrowing policy may narrow: its own, then each with
    one value taken out (the value :func:`spare_form` added)."""
    own = resource_key(policy)
    out = [own]
    for n, (name, values, recursive) in enumerate(own):
        if len(values) < 2 or name.endswith("!"):
            continue  # a value taken out of excluded ones: a policy matching more, never narrowed
        for value in dict.fromkeys(values):
            fewer = list(values)
            fewer.remove(value)
            out.append((*own[:n], (name, tuple(fewer), recursive), *own[n + 1 :]))
    return out


def base(access: str) -> str:
    """An allow pair's access type without the marks of a hand-made item (``select
    [conditions]`` -> ``select``; delegated admin alone -> empty: no deny item takes it)."""
    return access.split("[", 1)[0].strip()


def in_force(policy: Json) -> bool:
    """Whether a narrowing policy denies always: enabled, override priority, no policy
    conditions, validity schedules or deny exceptions (somebody may have changed them by
    hand; a deny exception lets its principals escape every deny item)."""
    return (
        policy.get("isEnabled", True) is not False
        and int(policy.get("policyPriority") or 0) == OVERRIDE
        and not policy.get("conditions")
        and not policy.get("validitySchedules")
        and not policy.get("denyExceptions")
    )


def denied(policy: Json | None, ours: Callable[[str], bool]) -> frozenset[Pair]:
    """The (role, access) pairs a narrowing policy denies (its plain deny items); none
    while it is not :func:`in_force`."""
    if policy is None or not in_force(policy):
        return frozenset()
    return our_pairs(policy, ours)[1]


def denying_roles(narrowings: Mapping[tuple[str, Any], Json], ours: Callable[[str], bool]) -> set[str]:
    """The roles narrowing policies deny (a member leaving one lifts that deny: it widens)."""
    return {role for policy in narrowings.values() for role, _ in denied(policy, ours)}


def restored(policy: Json) -> Json | None:
    """A narrowing policy made :func:`in_force` again, when that only narrows (it holds no
    allow item somebody put in it; a deny exception is taken out: that only narrows);
    else None."""
    if in_force(policy):
        return policy
    if policy.get("policyItems"):
        return None
    out = {**policy, "isEnabled": True, "policyPriority": OVERRIDE, "denyExceptions": []}
    out.pop("conditions", None)
    out.pop("validitySchedules", None)
    return out


def folded(
    fact: PolicyFact | None,
    key: tuple[str, tuple[Resource, ...]],
    original: Json | None,
    narrowing: Json,
    ours: Callable[[str], bool],
    deny_on: bool,
) -> PolicyFact | None:
    """The fact of ``key`` with its narrowing policy folded in (the module says how).
    ``deny_on``: whether Ranger honours deny items in the service (else the narrowing policy
    denies nothing: it is read as held deny pairs, so the model removes it)."""
    pairs = denied(narrowing, ours)
    allow, deny = (fact.allow, fact.deny) if fact is not None else (frozenset(), frozenset())
    if original is not None and deny_on and refused_writes(original):
        bases = {(role, base(access)) for role, access in allow}
        allow = frozenset(p for p in allow if (p[0], base(p[1])) not in pairs)
        held = pairs & model_denies(narrowing)
        deny = deny | frozenset(p for p in pairs if p not in bases) | held
    else:
        deny = deny | pairs
    return PolicyFact(key[0], key[1], allow, deny) if allow or deny else None


#: the option of a narrowing policy naming the pairs it denies for the model's deny items
#: (not only to take the policy's allow items): Ranger denies them the same either way, so the
#: read cannot tell them apart by what Ranger decides (a list of ``[role, access]``)
DENIES = "pushdown-model-denies"


def model_denies(narrowing: Json) -> frozenset[Pair]:
    """The pairs :data:`DENIES` names in ``narrowing`` (none when it is not a list of pairs of
    strings: whatever else is there is ignored, and the next write of it puts it right)."""
    value = (
        (narrowing.get("options") or {}).get(DENIES) if isinstance(narrowing.get("options"), dict) else None
    )
    if not isinstance(value, list):
        return frozenset()
    return frozenset(
        (p[0], p[1])
        for p in value
        if isinstance(p, list) and len(p) == 2 and all(isinstance(x, str) for x in p)
    )


def with_denies(policy: Json, denies: frozenset[Pair]) -> Json:
    """``policy`` with :data:`DENIES` naming ``denies`` (its other options kept)."""
    options = dict(policy.get("options") or {}) if isinstance(policy.get("options"), dict) else {}
    options.pop(DENIES, None)
    if denies:
        options[DENIES] = [[role, access] for role, access in sorted(denies)]
    return {**policy, "options": options}


def held_denies(original: Json, after: PolicyFact | None, ours: Callable[[str], bool]) -> frozenset[Pair]:
    """The pairs a narrowing policy beside ``original`` denies for the model's deny items
    (:data:`DENIES`): those ``after`` denies that ``original`` does not."""
    deny1 = after.deny if after is not None else frozenset()
    return frozenset(deny1 - our_pairs(original, ours)[1])


def needed(
    original: Json, after: PolicyFact | None, ours: Callable[[str], bool]
) -> tuple[frozenset[Pair], list[str]]:
    """The deny pairs a narrowing policy beside ``original`` (as stored: unwritable) must hold
    so that nothing is allowed there that ``after`` (pushdown's items the model wants there;
    None: none) does not allow, and what of ``after`` it cannot bring (narrower, or a deny
    the model no longer wants kept: the write is then reported as refused)."""
    allow0, deny0 = our_pairs(original, ours)
    allow1, deny1 = (after.allow, after.deny) if after is not None else (frozenset(), frozenset())
    pairs = {(role, base(access)) for role, access in allow0 - allow1 if base(access)}
    pairs = {p for p in pairs if p not in allow1} | set(deny1 - deny0)
    short = []
    if allow1 - allow0:
        short.append(f"allow {_words(allow1 - allow0)} not added")
    if deny0 - deny1:
        short.append(f"deny {_words(deny0 - deny1)} not removed")
    admin = {p for p in allow0 - allow1 if not base(p[1]) or (p[0], base(p[1])) in allow1}
    if admin:
        short.append(f"{_words(frozenset(admin))} kept (no deny item takes it alone)")
    return frozenset(pairs), short


def drop_allowed(
    before: PolicyFact | None, after: PolicyFact | None, narrowing: Json, ours: Callable[[str], bool]
) -> bool:
    """Whether a write of ``before`` -> ``after`` that Ranger accepted at the narrowing
    policy's key may remove it: every pair it denies that ``after`` does not is a deny pair
    this write removes (so it is scheduled as widening, after every narrowing)."""
    deny0 = before.deny if before is not None else frozenset()
    deny1 = after.deny if after is not None else frozenset()
    return denied(narrowing, ours) - deny1 <= deny0 - deny1


def narrowing_policy(
    original: Json,
    pairs: frozenset[Pair],
    label: str,
    salt: str = "",
    spare: int = 0,
    denies: frozenset[Pair] = frozenset(),
) -> Json:
    """A new narrowing policy beside ``original`` denying ``pairs`` (``denies`` of them for the
    model's deny items: :data:`DENIES`), naming ``original``'s id (:data:`NARROWS`); ``spare``:
    on that many :func:`spare_forms` of its resources (another signature each, the same
    resources or more)."""
    key = resource_key(original)
    resources = _copy(original.get("resources") or {})
    name = policy_name(PolicyFact(str(original.get("service")), key), "narrowing" + salt)
    out: Json = {
        "service": original.get("service"),
        "name": name,
        "description": (
            f"managed by pushdown: the narrowing of policy {str(original.get('name'))[:200]!r}, "
            "which Ranger refuses to write"
        ),
        "isEnabled": True,
        "isAuditEnabled": True,
        "policyType": 0,
        "policyPriority": OVERRIDE,
        "policyLabels": [label, narrowing_label(label)],
        "resources": spare_forms(resources, int(spare))[0],
        "policyItems": [],
        "denyPolicyItems": _items(pairs),
        "allowExceptions": [],
        "denyExceptions": [],
    }
    if original.get("additionalResources"):
        out["additionalResources"] = _copy(original["additionalResources"])
    out = with_narrows(out, original)
    return with_denies(out, denies & pairs) if denies & pairs else out


def narrowing_findings(
    narrowings: Mapping[tuple[str, Any], Json],
    policies: Mapping[tuple[str, Any], Json],
    ours: Callable[[str], bool],
) -> list[str]:
    """What each narrowing policy stands for, reported."""
    out = []
    for key, narrowing in sorted(narrowings.items(), key=lambda kv: str(kv[0])):
        original = policies.get(key)
        where = f"({key[0]}:{describe(resource_key(narrowing))})"
        pairs = _words(denied(narrowing, ours)) or "nothing of pushdown's"
        if original is not None and refused_writes(original):
            out.append(
                f"policy {original.get('name')!r} {where} holds items Ranger refuses on any write "
                f"({'; '.join(refused_writes(original))}): pushdown's narrowing of it is written in the "
                f"override-priority deny policy {narrowing.get('name')!r} instead, denying {pairs}; "
                "where another policy allows that role the same access it is now denied too "
                "(narrower than the model, never wider)" + _spare_words(key[1], narrowing)
            )
        else:
            out.append(
                f"policy {narrowing.get('name')!r} {where} (pushdown's narrowing of a policy Ranger "
                f"refused to write, denying {pairs}) is no longer needed: the sync removes it with "
                "its widening writes"
            )
    return out


def _spare_words(key: tuple[Resource, ...], narrowing: Json) -> str:
    """What a narrowing policy on the :func:`spare_form` of the resources at ``key`` denies
    beyond them, in words (empty on those very resources)."""
    own = resource_key(narrowing)
    if own == key:
        return ""
    before = {name: values for name, values, _ in key}
    added = [
        (name, value)
        for name, values, _ in own
        for value in dict.fromkeys(values)
        if values.count(value) > before.get(name, ()).count(value)
    ]
    text = (
        f"; it is on {describe(own)} (another resource signature: that policy has override priority, "
        "or another policy holds the signature of its resources at override priority)"
    )
    for name, value in added:
        if not (_stars(value) and any(_stars(v) for v in before.get(name, ()))):
            text += (
                f", so it also denies what {name} value {value!r} matches beyond them, where Ranger's "
                "matcher tells it from the others (narrower than the model, never wider)"
            )
    return text


def _stars(value: str) -> bool:
    """Whether Ranger's resource matcher reads ``value`` as matching every name (only ``*``)."""
    return bool(value) and set(value) == {"*"}


def _words(pairs: frozenset[Pair]) -> str:
    return ", ".join(f"{access} to role {role}" for role, access in sorted(pairs))


def _copy(value: Any) -> Any:
    """A plain copy of what Ranger answered (its client's objects do not deep-copy)."""
    return json.loads(json.dumps(value, default=str))
