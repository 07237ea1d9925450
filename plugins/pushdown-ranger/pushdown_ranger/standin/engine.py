"""Ranger's access policy engine, in pure Python: one service's policies and roles, one request at a time.

Semantics of RangerPolicyEngineImpl and RangerDefaultPolicyEvaluator:

* Policies are evaluated by priority (override first), then those with deny items (or
  ``isDenyAllElse``) first, then by name. Disabled policies and non-access policies are ignored.
* A policy applies when its resources match the request (SELF or SELF_AND_ALL_DESCENDANTS; for
  an "any access" request, ``accessType`` empty or ``_any``, DESCENDANT too).
* In a policy, deny items (minus deny exceptions) are looked at first, then allow items (minus
  allow exceptions); no item and ``isDenyAllElse``: denied. Deny items and exceptions count only
  when the service definition's ``enableDenyAndExceptionsInPolicies`` option is not "false".
* Across policies: a deny at the same or higher priority wins over an allow; an allow of a higher
  priority wins over a deny. An allow of an "any access" request needs one allowed access type;
  a deny of a descendant is ignored for it.
* Audited: some matching policy has ``isAuditEnabled`` (or the audit mode says all / none).
* Super users and super groups are allowed everything.

Not evaluated (they raise :class:`Unsupported`, whose message names the feature): policy and
item conditions, validity schedules, request expressions in resource values, matchers other
than the default, path and URL ones. Tags, zones, data masking and row filtering are outside.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from pushdown_ranger.standin.matchers import Unsupported
from pushdown_ranger.standin.policyitems import ANY_ACCESS, Item, first_match, implied_grants, roles_of
from pushdown_ranger.standin.resources import (
    DESCENDANT,
    SELF,
    SELF_AND_ALL_DESCENDANTS,
    PolicyResourceMatcher,
    ServiceDefHelper,
)

__all__ = ["AccessRequest", "AccessResult", "PolicyEngine", "Unsupported"]

SUPER_USER_ACCESS = "_super_user"


@dataclass
class AccessRequest:
    """One access to decide. ``resource`` maps resource names to a value or a list of values."""

    resource: dict[str, Any]
    access_type: str
    user: str
    groups: Iterable[str] = ()
    owner: str | None = None
    roles: Iterable[str] = ()
    scopes: dict[str, str] = field(default_factory=dict)
    context: dict[str, Any] = field(default_factory=dict)

    @property
    def any_access(self) -> bool:
        return self.access_type in ("", ANY_ACCESS)


@dataclass
class AccessResult:
    """The engine's answer: ``allowed``; ``determined`` when a policy allowed or denied."""

    allowed: bool = False
    determined: bool = False
    audited: bool = False
    audit_determined: bool = False
    policy_id: int = -1
    priority: int = 0

    def take_access(self, other: AccessResult) -> None:
        self.allowed, self.determined = other.allowed, other.determined
        self.policy_id, self.priority = other.policy_id, other.priority


@dataclass
class _Ask:
    """A request as the evaluators see it: resolved groups, roles, tokens, requested accesses."""

    request: AccessRequest
    who: tuple[str, frozenset[str], frozenset[str], str | None]
    tokens: dict[str, str]
    accesses: list[str]
    any_in_context: bool
    groups: list[list[str]] = field(default_factory=list)
    results: dict[str, AccessResult] = field(default_factory=dict)


def _option_true(service_def: dict[str, Any], key: str, default: bool) -> bool:
    value = (service_def.get("options") or {}).get(key)
    return default if value is None else str(value).strip().lower() == "true"


_ITEM_KINDS = (
    "policyItems",
    "denyPolicyItems",
    "allowExceptions",
    "denyExceptions",
    "dataMaskPolicyItems",
    "rowFilterPolicyItems",
)


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
    items = [item for kind in _ITEM_KINDS for item in policy.get(kind) or []]
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
    """One access policy."""

    def __init__(
        self,
        policy: dict[str, Any],
        helper: ServiceDefHelper,
        implied: dict[str, list[str]],
        deny_enabled: bool,
    ) -> None:
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
        self.matchers = [PolicyResourceMatcher(helper, res) for res in sets]
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
        if len(self.matchers) != 1:
            return None
        matcher = self.matchers[0].matchers.get(name)
        return None if matcher is None else matcher.literals()

    def sort_key(self) -> tuple[int, int, int, str]:
        return (-self.priority, 0 if self.has_deny else 1, self.eval_order, self.name)

    def evaluate(self, ask: _Ask, result: AccessResult) -> None:
        request = ask.request
        for matcher in self.matchers:
            if result.determined and result.audit_determined:
                return
            kind = matcher.match_type(request.resource, request.scopes, ask.tokens)
            accepted = (
                (SELF, SELF_AND_ALL_DESCENDANTS, DESCENDANT)
                if request.any_access
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

    def _decide(self, one: AccessResult, kind: str, allowed: bool) -> None:
        if not allowed:
            if kind != DESCENDANT:  # a descendant's deny is ignored (ignoreDescendantDeny)
                one.allowed, one.determined = False, True
                one.priority, one.policy_id = self.priority, self.id
        elif not one.allowed:
            one.allowed, one.priority, one.policy_id = True, self.priority, self.id

    def _one_access(self, ask: _Ask, kind: str, access: str) -> AccessResult:
        one = AccessResult()
        item = first_match(self.deny, self.deny_exceptions, ask.who, access)
        is_deny = item is not None
        if item is None:
            item = first_match(self.allow, self.allow_exceptions, ask.who, access)
        if item is not None:
            self._decide(one, kind, allowed=not is_deny)
        elif self.deny_all_else:
            self._decide(one, kind, allowed=False)
        return one

    def _merge(self, ask: _Ask, access: str, one: AccessResult) -> None:
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

    def _evaluate_items(self, ask: _Ask, kind: str, result: AccessResult) -> None:
        for access in ask.accesses:
            one = self._one_access(ask, kind, access)
            if not one.allowed and not one.determined:
                continue
            self._merge(ask, access, one)
            if ask.any_in_context and one.allowed:
                break
        composite = _composite(ask)
        if composite is not None:
            result.take_access(composite)


def _of_group(ask: _Ask, accesses: list[str]) -> AccessResult | None:
    """One access type of the group allowed: allowed; all of them denied: denied; else undecided."""
    found = [ask.results.get(access) for access in accesses]
    allowed = next((r for r in found if r is not None and r.allowed), None)
    if allowed is not None:
        return allowed
    return found[0] if found and all(r is not None for r in found) else None


def _composite(ask: _Ask) -> AccessResult | None:
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


class _Index:
    """Which policies can match a request: per resource name, the policies limited to fixed
    values (by value) and the others. Skipping a policy whose resources cannot match changes
    nothing: it would neither allow nor deny, and an earlier allow stays final either way."""

    def __init__(self, evaluators: list[PolicyEvaluator], helper: ServiceDefHelper) -> None:
        self.fold = {name: opts.ignore_case for name, opts in helper.options.items()}
        self.exact: dict[str, dict[str, set[int]]] = {name: {} for name in helper.defs}
        self.open: dict[str, set[int]] = {name: set() for name in helper.defs}
        for position, evaluator in enumerate(evaluators):
            for name in helper.defs:
                values = evaluator.literals(name)
                if values is None:
                    self.open[name].add(position)
                    continue
                for value in values:
                    self.exact[name].setdefault(value, set()).add(position)

    def candidates(self, request: AccessRequest, evaluators: list[PolicyEvaluator]) -> list[PolicyEvaluator]:
        narrowed: set[int] | None = None
        for name, value in request.resource.items():
            if name not in self.exact or not isinstance(value, str) or value in ("", "*"):
                continue
            if request.scopes.get(name) not in (None, "SELF"):
                continue
            key = value.lower() if self.fold[name] else value
            found = self.exact[name].get(key, set()) | self.open[name]
            narrowed = found if narrowed is None else narrowed & found
        if narrowed is None:
            return evaluators
        return [evaluators[position] for position in sorted(narrowed)]


class PolicyEngine:
    """The access policies of one service, with its service definition and the roles they use."""

    def __init__(
        self,
        service_def: dict[str, Any],
        policies: Iterable[dict[str, Any]],
        roles: Iterable[dict[str, Any]] = (),
        *,
        super_users: Iterable[str] = (),
        super_groups: Iterable[str] = (),
        audit_mode: str | None = None,
        audit_excluded: tuple[Iterable[str], Iterable[str], Iterable[str]] = ((), (), ()),
    ) -> None:
        self.service_def = service_def
        self.roles = list(roles)
        self.super_users, self.super_groups = frozenset(super_users), frozenset(super_groups)
        self.excluded_users, self.excluded_groups, self.excluded_roles = (
            frozenset(x) for x in audit_excluded
        )
        self.audit_mode = (audit_mode or "audit-default").lower()
        self.all_accesses = [str(a["name"]) for a in service_def.get("accessTypes") or []]
        chosen = [
            p
            for p in policies
            if p.get("isEnabled", True) is not False and int(p.get("policyType") or 0) == 0
        ]
        helper = ServiceDefHelper(service_def)
        implied = implied_grants(service_def)
        deny = _option_true(service_def, "enableDenyAndExceptionsInPolicies", True)
        self.evaluators = sorted(
            (PolicyEvaluator(p, helper, implied, deny) for p in chosen), key=PolicyEvaluator.sort_key
        )
        self.index = _Index(self.evaluators, helper)

    def _ask(self, request: AccessRequest) -> _Ask:
        groups = frozenset(request.groups)
        roles = frozenset(request.roles) | roles_of(self.roles, request.user, groups)
        tokens = {"USER": request.user}
        if request.owner is not None:
            tokens["OWNER"] = request.owner
        listed = request.context.get("ALLACCESSTYPES")
        if request.any_access:
            accesses = list(self.all_accesses)
        elif listed:
            accesses = sorted(str(a) for a in listed)
        else:
            accesses = [request.access_type]
        any_in_context = request.any_access or request.context.get("ISANYACCESS") is True
        access_groups = [sorted(str(a) for a in g) for g in request.context.get("ALLACCESSTYPEGROUPS") or []]
        return _Ask(
            request,
            (request.user, groups, roles, request.owner),
            tokens,
            accesses,
            any_in_context,
            groups=access_groups,
        )

    def evaluate(self, request: AccessRequest) -> AccessResult:
        """Ranger's decision for one request (RangerPolicyEngineImpl.evaluatePolicies)."""
        ask = self._ask(request)
        result = AccessResult()
        is_super = request.user in self.super_users or not self.super_groups.isdisjoint(ask.who[1])
        if is_super or request.access_type == SUPER_USER_ACCESS:
            result.allowed, result.determined, result.priority = is_super, True, 1 << 30
        for evaluator in self.index.candidates(request, self.evaluators):
            if result.allowed and result.priority > evaluator.priority:
                result.determined = True
            evaluator.evaluate(ask, result)
            if result.allowed and not evaluator.has_deny:
                result.determined = True
            if result.determined and result.audit_determined:
                break
        if result.allowed:
            result.determined = True
        if self.audit_mode == "audit-all":
            result.audited = True
        elif self.audit_mode == "audit-none" or self._audit_excluded(ask):
            result.audited = False
        return result

    def _audit_excluded(self, ask: _Ask) -> bool:
        user, groups, roles, _ = ask.who
        return (
            user in self.excluded_users
            or not self.excluded_groups.isdisjoint(groups)
            or not self.excluded_roles.isdisjoint(roles)
        )

    def is_access_allowed(self, request: AccessRequest) -> bool:
        return self.evaluate(request).allowed
