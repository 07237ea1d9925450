"""A policy pushdown writes back, carried in a form Ranger's policy validator accepts, with the
same decisions. Pure.

A policy made by an older Ranger (or written straight into Ranger's database) may hold items
today's Ranger refuses on any write of that policy (RangerPolicyValidator); pushdown's rewrite
of it (taking its roles in or out) would then be refused, and a refused write must never hold
back a narrowing. So, in every item list of the policy:

- an access with ``isAllowed: false`` (error 3023) is dropped: Ranger's engine never matches it,
  in an allow, deny or exception item alike (an implied grant it carries is never allowed
  either); so is a repeated access (Ranger keeps the first), and a type whose first access is
  not allowed though a later one is (what it implies is never granted: see
  :func:`_first_allowed`; never wider, reported);
- an item then left with no access and no delegated admin (error 3002) is dropped: it matches
  no access (nor ``_admin``), so it allows, denies or excepts nothing;
- a blank principal name (error 3053-3055) is dropped: no user, group or role has it; an item
  then naming nobody (error 3020) matches nobody and is dropped.

A principal named ``null`` (any case Ranger lists, error 3053-3055) could be a real user: taking
it out of an allow item or a deny exception only narrows, so it is taken out; out of a deny item
or an allow exception it would widen, so it is kept (the write is refused, reported). Deny items
in a policy with ``isDenyAllElse`` (error 3049) become allow exceptions: whoever they match is
then not allowed by the policy, which denies whoever it does not allow; with deny exceptions
too (they would except from the deny) they are kept: reported. A write refused for what is kept
so (:func:`refused_writes`) still narrows: the narrowing goes into a deny policy beside it
(:mod:`pushdown_ranger.companion`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

Json = dict[str, Any]
#: whether an access type implies others in the policy's service (None: not known, any may)
Implying = Callable[[str], bool] | None

#: every item list of an access policy, and whether taking a principal out of one narrows
NARROWING = {"policyItems": True, "denyPolicyItems": False, "allowExceptions": False, "denyExceptions": True}
#: names Ranger refuses in an item, once trimmed; the blank one names nobody
NULL_NAMES = frozenset({"null", "NULL", "Null"})
PRINCIPALS = ("users", "groups", "roles")
#: how :func:`accepted` says an item is kept that makes every write of its policy refused
REFUSED = "writes are refused"


def implying(implied: Any, service: str) -> Implying:
    """From a snapshot's implied grants (``(service, access, implied)`` triples, empty when the
    service definitions could not be read): whether an access type of ``service`` implies
    others; a marker access type (``_ALL`` and the like) may. None when nothing is known."""
    if not implied:
        return None
    names = {str(access).lower() for svc, access, _ in implied if svc == service}
    return lambda kind: kind.lower() in names or kind.startswith("_")


def accepted(policy: Json, implies: Implying = None) -> tuple[Json, list[str]]:
    """``policy`` with what Ranger refuses normalised (as the module says), and what was
    normalised or could not be, in words (empty when nothing was). ``implies``: whether an
    access type implies others (None: any may, the narrower reading)."""
    out = dict(policy)
    said: list[str] = []
    for field, narrows in NARROWING.items():
        items = policy.get(field)
        if not items:
            continue
        kept = []
        for n, item in enumerate(items):
            fixed = _item(item, narrows, said, f"{field}[{n}]", implies)
            if fixed is not None:
                kept.append(fixed)
        out[field] = kept
    if out.get("isDenyAllElse") is True and out.get("denyPolicyItems") and not out.get("denyExceptions"):
        # whoever a deny item matches is denied; as an allow exception it is not allowed by the
        # policy, so its isDenyAllElse denies it: the same decision (RangerDefaultPolicyEvaluator)
        out["allowExceptions"] = [*(out.get("allowExceptions") or []), *out["denyPolicyItems"]]
        out["denyPolicyItems"] = []
        said.append(
            "deny items under isDenyAllElse (error 3049) carried as allow exceptions: whoever they "
            "match is not allowed by the policy, so it denies them all the same"
        )
    elif out.get("isDenyAllElse") is True and (out.get("denyPolicyItems") or out.get("denyExceptions")):
        said.append(
            "deny items and deny exceptions under isDenyAllElse are kept (Ranger refuses them, error "
            f"3049; without them the policy could be wider): its {REFUSED}"
        )
    return out, said


def refused_writes(policy: Json) -> list[str]:
    """What in ``policy`` makes Ranger refuse every write of it however pushdown carries it
    (:func:`accepted` keeps it: taking it out would widen), in words; empty when a write of
    it as :func:`accepted` carries it passes Ranger's validator on that account."""
    return [said for said in accepted(policy)[1] if REFUSED in said]


def _first_allowed(accesses: list[Any], implies: Implying) -> tuple[list[Json], list[str]]:
    """The accesses Ranger's engine matches, each type once. Ranger matches a type when any of
    its accesses is allowed, but widens an item's accesses by implied grants from the first
    access of each type (RangerAbstractPolicyItemEvaluator): a type that implies others (or may:
    ``implies`` None) whose first access is not allowed though a later one is grants none of
    what it implies, so it is dropped (never wider; returned as the second list); any other
    type is kept, allowed, when one of its accesses is."""
    first: dict[Any, bool] = {}
    later: list[str] = []
    for access in accesses:
        if not isinstance(access, dict):
            continue
        kind, allowed = access.get("type"), access.get("isAllowed", True) is not False
        if kind not in first:
            first[kind] = allowed
        elif allowed and not first[kind]:
            if implies is None or implies(str(kind)):
                if str(kind) not in later:
                    later.append(str(kind))
            else:
                first[kind] = True
    kept, seen = [], set()
    for access in accesses:
        kind = access.get("type") if isinstance(access, dict) else None
        if isinstance(access, dict) and first.get(kind) and kind not in seen:
            seen.add(kind)
            kept.append({**access, "isAllowed": True} if "isAllowed" in access else access)
    return kept, later


def _item(item: Any, narrows: bool, said: list[str], where: str, implies: Implying) -> Json | None:
    if not isinstance(item, dict):
        said.append(f"{where}: an empty item dropped (error 3019)")
        return None
    out = dict(item)
    accesses = item.get("accesses") or []
    allowed, later = _first_allowed(accesses, implies)
    if len(allowed) != len(accesses):
        said.append(
            f"{where}: {len(accesses) - len(allowed)} access(es) not allowed or repeated dropped (error 3023)"
        )
        out["accesses"] = allowed
    if later:
        said.append(
            f"{where}: {', '.join(later)} dropped: the first of its repeated accesses is not allowed, so "
            "Ranger's engine grants nothing it implies (narrower for itself)"
        )
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
                f"taking it out would widen): the policy's {REFUSED}"
            )
        if len(kept) != len(names):
            said.append(f"{where}: {len(names) - len(kept)} blank or null {kind} dropped (error 3053-3055)")
            out[kind] = kept
    if not any(out.get(kind) for kind in PRINCIPALS):
        said.append(f"{where}: an item naming nobody dropped (error 3020)")
        return None
    return out
