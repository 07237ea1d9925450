"""One access policy under Ranger's semantics (RangerDefaultPolicyEvaluator, RangerOptimizedPolicyEvaluator).

Deny items (minus deny exceptions) first, then allow items (minus allow exceptions), per
requested access type; results are merged across policies by priority; the order among
policies of one priority follows Ranger's evaluation-order score.
"""

from __future__ import annotations

from typing import Any

from pushdown_lab.ranger_standin.access import AccessResult, Ask
from pushdown_lab.ranger_standin.options import Unsupported
from pushdown_lab.ranger_standin.policyitems import Item, first_match
from pushdown_lab.ranger_standin.resources import (
    DESCENDANT,
    SELF,
    SELF_AND_ALL_DESCENDANTS,
    Matching,
    PolicyResourceMatcher,
    ServiceDefHelper,
)
from pushdown_lab.ranger_standin.validators import ITEM_KINDS

__all__ = ["PolicyEvaluator", "eval_order", "option_true"]


def option_true(service_def: dict[str, Any], key: str, default: bool) -> bool:
    value = (service_def.get("options") or {}).get(key)
    # Ranger: Boolean.valueOf of a non-empty value (only "true", any case, untrimmed)
    return default if value is None or value == "" else str(value).lower() == "true"


def _resource_discount(policy: dict[str, Any], helper: ServiceDefHelper) -> int:
    discount = 0
    resources = policy.get("resources") or {}
    for name in sorted(
        (n for n in resources if n in helper.defs and (resources[n] or {}).get("values")),
        key=lambda n: int(helper.defs[n].get("level") or 0),
    ):
        res, values = resources[name], resources[name]["values"]
        if any(v in ("", "*") for v in values):
            discount += 25
            continue
        discount += 10 if any("*" in v for v in values) else 5 if any("?" in v for v in values) else 0
        discount += (5 if res.get("isExcludes") else 0) + (5 if res.get("isRecursive") else 0)
    return min(100, discount)


def eval_order(policy: dict[str, Any], helper: ServiceDefHelper) -> int:
    """Ranger's evaluation-order score (RangerOptimizedPolicyEvaluator): among policies of the same
    priority and deny-ness, the more general a policy, the earlier it is evaluated."""
    items = [item for kind in ITEM_KINDS for item in policy.get(kind) or []]
    users = {u for item in items for u in item.get("users") or []}
    groups = {g for item in items for g in item.get("groups") or []}
    perms = {a.get("type") for item in items for a in item.get("accesses") or [] if a.get("isAllowed", True)}
    conditions = len(policy.get("conditions") or []) + sum(
        len(item.get("conditions") or []) for item in items
    )
    resources = policy.get("resources") or {}
    dynamic = any(
        helper.options[n].has_token(str(v))
        for n, res in resources.items()
        if n in helper.options
        for v in (res or {}).get("values") or []
    )
    order = 10000 + (20 if dynamic else 0) - _resource_discount(policy, helper)
    public = policy.get("isDenyAllElse") or any(g.lower() == "public" for g in groups)
    order -= 25 if public or any(u.lower() == "{user}" for u in users) else min(len(users) + len(groups), 25)
    types = max(1, len(helper.service_def.get("accessTypes") or []))
    order -= int(25 * len(perms) / types + 0.5)
    return order - max(0, 25 - 5 * conditions)


class PolicyEvaluator:
    """One access policy; ``reused``: (resource set index, resource name) -> the definition and
    matcher options of the matcher Ranger reuses for that resource (:class:`MatcherReuse`)."""

    def __init__(
        self,
        policy: dict[str, Any],
        helper: ServiceDefHelper,
        implied: dict[str, list[str]],
        deny_enabled: bool,
        reused: dict[tuple[int, str], Matching] | None = None,
    ) -> None:
        self.reused = reused or {}
        raw_id = policy.get("id")
        self.id = int(raw_id) if raw_id is not None else -1
        self.name = str(policy.get("name") or "")
        self.priority = int(policy.get("policyPriority") or 0)
        self.audit = policy.get("isAuditEnabled", True) is not False
        self.deny_all_else = bool(policy.get("isDenyAllElse"))
        self.has_deny = self.deny_all_else or bool(policy.get("denyPolicyItems"))
        self.conditions = bool(policy.get("conditions"))
        self.schedules = bool(policy.get("validitySchedules"))
        sets = [policy.get("resources") or {}, *(policy.get("additionalResources") or [])]
        self.matchers = [
            PolicyResourceMatcher(helper, res, {n: m for (i, n), m in self.reused.items() if i == index})
            for index, res in enumerate(sets)
        ]
        self.eval_order = eval_order(policy, helper)

        def items(kind: str) -> list[Item]:
            return [Item.of(raw, implied) for raw in policy.get(kind) or []]

        self.allow, self.allow_exceptions = items("policyItems"), items("allowExceptions")
        if deny_enabled:
            self.deny, self.deny_exceptions = items("denyPolicyItems"), items("denyExceptions")
        else:
            self.deny, self.deny_exceptions, self.allow_exceptions = [], [], []

    def literals(self, name: str) -> set[str] | None:
        """The only values of resource ``name`` this policy can match, or None (no such limit)."""
        if len(self.matchers) != 1 or (0, name) in self.reused:
            return None
        matcher = self.matchers[0].matchers.get(name)
        return None if matcher is None else matcher.literals()

    def sort_key(self) -> tuple[int, int, int, str]:
        return (-self.priority, 0 if self.has_deny else 1, self.eval_order, self.name)

    def evaluate(self, ask: Ask, result: AccessResult) -> None:
        request = ask.request
        for matcher in self.matchers:
            if result.determined and result.audit_determined:
                return
            kind = matcher.match_type(request.resource, request.scopes, ask.tokens)
            accepted = (
                (SELF, SELF_AND_ALL_DESCENDANTS, DESCENDANT)
                if request.any_access or request.matching_scope == "SELF_OR_DESCENDANTS"
                else (SELF, SELF_AND_ALL_DESCENDANTS)
            )
            if kind not in accepted:
                continue
            if self.conditions:
                raise Unsupported("policy conditions")
            if self.schedules:
                raise Unsupported("policy validity schedules")
            if not result.audit_determined and self.audit:
                result.audited = result.audit_determined = True
            if not result.determined:
                self._evaluate_items(ask, kind, result)

    def _decide(self, ask: Ask, one: AccessResult, kind: str, allowed: bool) -> None:
        if not allowed:
            if kind != DESCENDANT or not ask.request.ignore_descendant_deny:
                one.allowed, one.determined = False, True
                one.priority, one.policy_id = self.priority, self.id
        elif not one.allowed:
            one.allowed, one.priority, one.policy_id = True, self.priority, self.id

    def _one_access(self, ask: Ask, kind: str, access: str) -> AccessResult:
        one = AccessResult()
        item = first_match(self.deny, self.deny_exceptions, ask.who, access)
        is_deny = item is not None
        if item is None:
            item = first_match(self.allow, self.allow_exceptions, ask.who, access)
        if item is not None:
            self._decide(ask, one, kind, allowed=not is_deny)
        elif self.deny_all_else:
            self._decide(ask, one, kind, allowed=False)
        return one

    def _merge(self, ask: Ask, access: str, one: AccessResult) -> None:
        old = ask.results.get(access)
        if old is None:
            ask.results[access] = one
        elif old.allowed:
            if not one.allowed and self.priority >= old.priority:
                ask.results[access] = one
            elif one.allowed and self.priority > old.priority:
                ask.results[access] = one
        elif one.allowed and self.priority >= old.priority and ask.any_in_context:
            ask.results[access] = one
        elif self.priority > old.priority:
            ask.results[access] = one

    def _evaluate_items(self, ask: Ask, kind: str, result: AccessResult) -> None:
        for access in ask.accesses:
            one = self._one_access(ask, kind, access)
            if not one.allowed and not one.determined:
                continue
            self._merge(ask, access, one)
            if ask.any_in_context and (
                one.allowed if ask.request.ignore_descendant_deny else not one.allowed
            ):
                break
        composite = _composite(ask)
        if composite is not None:
            result.take_access(composite)


def _of_group(ask: Ask, accesses: list[str]) -> AccessResult | None:
    """One access type of the group allowed: allowed; all of them denied: denied; else undecided."""
    found = [ask.results.get(access) for access in accesses]
    allowed = next((r for r in found if r is not None and r.allowed), None)
    if allowed is not None:
        return allowed
    return found[0] if found and all(r is not None for r in found) else None


def _composite(ask: Ask) -> AccessResult | None:
    """The request's result so far: without access groups, as one group; else every group allowed."""
    if not ask.groups:
        return _of_group(ask, ask.accesses)
    first_allow: AccessResult | None = None
    every_group_decided = True
    for group in ask.groups:
        found = _of_group(ask, group)
        if found is None:
            every_group_decided = False
        elif not found.allowed:
            return found
        else:
            first_allow = first_allow or found
    return first_allow if every_group_decided else None
