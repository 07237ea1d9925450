"""A policy pushdown writes back, carried in a form Ranger's policy validator accepts, with the
same decisions. Pure.

A policy made by an older Ranger (or written straight into Ranger's database) may hold items
today's Ranger refuses on any write of that policy (RangerPolicyValidator); pushdown's rewrite
of it (taking its roles in or out) would then be refused, and a refused write must never hold
back a narrowing. So, in every item list of the policy:

- an access with ``isAllowed: false`` (error 3023) is dropped: Ranger's engine never matches it,
  in an allow, deny or exception item alike (an implied grant it carries is never allowed
  either);
- an item then left with no access and no delegated admin (error 3002) is dropped: it matches
  no access (nor ``_admin``), so it allows, denies or excepts nothing;
- a blank principal name (error 3053-3055) is dropped: no user, group or role has it; an item
  then naming nobody (error 3020) matches nobody and is dropped.

A principal named ``null`` (any case Ranger lists, error 3053-3055) could be a real user: taking
it out of an allow item or a deny exception only narrows, so it is taken out; out of a deny item
or an allow exception it would widen, so it is kept (the write is refused, reported). Deny items
or deny exceptions in a policy with ``isDenyAllElse`` (error 3049) are kept too: reported.
"""

from __future__ import annotations

from typing import Any

Json = dict[str, Any]

#: every item list of an access policy, and whether taking a principal out of one narrows
NARROWING = {"policyItems": True, "denyPolicyItems": False, "allowExceptions": False, "denyExceptions": True}
#: names Ranger refuses in an item, once trimmed; the blank one names nobody
NULL_NAMES = frozenset({"null", "NULL", "Null"})
PRINCIPALS = ("users", "groups", "roles")


def accepted(policy: Json) -> tuple[Json, list[str]]:
    """``policy`` with what Ranger refuses normalised (as the module says), and what was
    normalised or could not be, in words (empty when nothing was)."""
    out = dict(policy)
    said: list[str] = []
    for field, narrows in NARROWING.items():
        items = policy.get(field)
        if not items:
            continue
        kept = []
        for n, item in enumerate(items):
            fixed = _item(item, narrows, said, f"{field}[{n}]")
            if fixed is not None:
                kept.append(fixed)
        out[field] = kept
    if out.get("isDenyAllElse") is True and (out.get("denyPolicyItems") or out.get("denyExceptions")):
        said.append(
            "deny items under isDenyAllElse are kept (Ranger refuses them, error 3049; without "
            "them the policy would be wider): its writes are refused"
        )
    return out, said


def _item(item: Any, narrows: bool, said: list[str], where: str) -> Json | None:
    if not isinstance(item, dict):
        said.append(f"{where}: an empty item dropped (error 3019)")
        return None
    out = dict(item)
    accesses = item.get("accesses") or []
    allowed = [a for a in accesses if isinstance(a, dict) and a.get("isAllowed", True) is not False]
    if len(allowed) != len(accesses):
        said.append(f"{where}: {len(accesses) - len(allowed)} access(es) not allowed dropped (error 3023)")
        out["accesses"] = allowed
    if not allowed and item.get("delegateAdmin") is not True:
        said.append(f"{where}: an item with no allowed access and no delegated admin dropped (error 3002)")
        return None
    for kind in PRINCIPALS:
        names = item.get(kind) or []
        kept = [name for name in names if isinstance(name, str) and name.strip()]
        if narrows:
            kept = [name for name in kept if name.strip() not in NULL_NAMES]
        elif any(name.strip() in NULL_NAMES for name in kept):
            said.append(
                f"{where}: a {kind[:-1]} named null is kept (Ranger refuses it, error 3053-3055; "
                "taking it out would widen): the policy's writes are refused"
            )
        if len(kept) != len(names):
            said.append(f"{where}: {len(names) - len(kept)} blank or null {kind} dropped (error 3053-3055)")
            out[kind] = kept
    if not any(out.get(kind) for kind in PRINCIPALS):
        said.append(f"{where}: an item naming nobody dropped (error 3020)")
        return None
    return out
