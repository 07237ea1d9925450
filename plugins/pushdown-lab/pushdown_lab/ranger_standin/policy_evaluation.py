"""Ranger's access policy engine, in pure Python: one service's policies and roles, one request at a time.

Semantics of RangerPolicyEngineImpl and RangerDefaultPolicyEvaluator:

* Policies are evaluated by priority (override first), then those with deny items (or
  ``isDenyAllElse``) first, then by Ranger's evaluation-order score and name. Disabled and
  non-access policies are ignored.
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
than the default, path and URL ones. Tags, zones, data masking and row filtering are outside,
but a masking or row-filter policy still counts where Ranger lets it: Ranger reuses the
resource matcher it built for one policy resource for every equal one of the same engine, of
any policy type (:class:`~pushdown_lab.ranger_standin.resources.MatcherReuse`), so the
policies built before (``built_before``: the unzoned ones for a zone's engine, in download
order) and the zones' resources (``zone_resources``) are given too.
"""

from __future__ import annotations

import copy
import itertools
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pushdown_lab.ranger_standin.access import AccessRequest, AccessResult, Ask
from pushdown_lab.ranger_standin.deltas import DeltaState, moved
from pushdown_lab.ranger_standin.evaluator import PolicyEvaluator, option_true
from pushdown_lab.ranger_standin.options import Unsupported
from pushdown_lab.ranger_standin.policyitems import RoleBook, implied_grants
from pushdown_lab.ranger_standin.resources import MatcherReuse, ServiceDefHelper

__all__ = ["AccessRequest", "AccessResult", "ServicePolicies", "Unsupported"]

SUPER_USER_ACCESS = "_super_user"


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
        narrowed = self._narrowed(request)
        if narrowed is None:
            return evaluators
        return [evaluators[position] for position in sorted(narrowed)]

    def _narrowed(self, request: AccessRequest) -> set[Any] | None:
        """The keys (positions, or ranks) of the evaluators the request's literal resource
        values can match; ``None`` when no value narrows them."""
        narrowed: set[Any] | None = None
        for name, value in request.resource.items():
            if name not in self.exact or not isinstance(value, str) or value in ("", "*"):
                continue
            if request.scopes.get(name) not in (None, "SELF"):
                continue
            key = value.lower() if self.fold[name] else value
            found = self.exact[name].get(key, set()) | self.open[name]
            narrowed = found if narrowed is None else narrowed & found
        return narrowed

    def ranked(self, evaluators: list[PolicyEvaluator]) -> _RankIndex:
        """This index keyed by each evaluator's rank (its sort key, then its policy id)
        rather than its position: ``evaluators`` must be in that order (they are when made
        from policies in id order, as the stand-in lists them)."""
        index = _RankIndex.__new__(_RankIndex)
        index.fold = self.fold
        ranks = [(e.sort_key(), e.id) for e in evaluators]
        index.by_rank = dict(zip(ranks, evaluators, strict=True))
        index.exact = {
            name: {value: {ranks[at] for at in found} for value, found in values.items()}
            for name, values in self.exact.items()
        }
        index.open = {name: {ranks[at] for at in found} for name, found in self.open.items()}
        return index


class _RankIndex(_Index):
    """:class:`_Index` by rank (see :meth:`_Index.ranked`), moved one evaluator at a time;
    a copy shares the sets it has not changed."""

    exact: dict[str, dict[str, set[Any]]]
    open: dict[str, set[Any]]
    by_rank: dict[Any, PolicyEvaluator]

    def ranked(self, evaluators: list[PolicyEvaluator]) -> _RankIndex:
        index = _RankIndex.__new__(_RankIndex)
        index.fold = self.fold
        index.by_rank = dict(self.by_rank)
        index.exact = {name: dict(values) for name, values in self.exact.items()}
        index.open = dict(self.open)
        return index

    def _places(self, evaluator: PolicyEvaluator) -> list[tuple[dict[str, set[Any]], str]]:
        places = []
        for name in self.open:
            values = evaluator.literals(name)
            if values is None:
                places.append((self.open, name))
            else:
                places += [(self.exact[name], value) for value in values]
        return places

    def add(self, evaluator: PolicyEvaluator, rank: Any) -> None:
        self.by_rank[rank] = evaluator
        for where, key in self._places(evaluator):
            where[key] = {*where.get(key, ()), rank}

    def remove(self, evaluator: PolicyEvaluator, rank: Any) -> None:
        del self.by_rank[rank]
        for where, key in self._places(evaluator):
            left = where[key] - {rank}
            if left or where is self.open:
                where[key] = left
            else:
                del where[key]

    def candidates(self, request: AccessRequest, evaluators: list[PolicyEvaluator]) -> list[PolicyEvaluator]:
        narrowed = self._narrowed(request)
        if narrowed is None:
            return evaluators
        return [self.by_rank[rank] for rank in sorted(narrowed)]


#: a service definition's helper, implied grants and deny option
_Definition = tuple[ServiceDefHelper, dict[str, list[str]], bool]


@dataclass
class Reuse:
    """What the last engine of one service was built from, for the next one to take what
    did not change: the service definition (its JSON) with its helper, implied grants and
    deny option, each policy's evaluator by the policy object it was made from, and the
    role objects with their book. Only for a caller that never edits a policy or role
    object it handed over (the stand-in's store replaces the object on every change): an
    object given again is then the same policy or role, and its evaluator or book entry
    what building it again would give."""

    definition: str | None = None
    made: _Definition | None = None
    evaluators: dict[int, tuple[dict[str, Any], PolicyEvaluator]] = field(default_factory=dict)
    roles: dict[int, dict[str, Any]] = field(default_factory=dict)
    book: RoleBook | None = None

    def definition_of(self, service_def: dict[str, Any]) -> _Definition:
        text = json.dumps(service_def, sort_keys=True, default=str)
        if self.made is None or text != self.definition:
            self.definition, self.made = text, _definition(service_def)
            self.evaluators = {}  # made with the old definition's helper
        return self.made

    def evaluators_of(self, policies: list[dict[str, Any]], reuse: MatcherReuse) -> list[PolicyEvaluator]:
        helper, implied, deny = self.made or _definition({})
        kept, fresh = self.evaluators, {}
        for policy in policies:
            hit = kept.get(id(policy))
            reused = reuse.overrides(policy)
            if hit is None or hit[0] is not policy or hit[1].reused != reused:
                hit = (policy, PolicyEvaluator(policy, helper, implied, deny, reused))
            fresh[id(policy)] = hit
        self.evaluators = fresh
        return [evaluator for _, evaluator in fresh.values()]

    def book_of(self, roles: list[dict[str, Any]]) -> RoleBook:
        if self.book is not None and self.book.is_head() and self.roles.keys() == set(map(id, roles)):
            return self.book  # the same objects (those kept are alive: an id kept is its object)
        now = {id(r): r for r in roles}
        if self.book is None or not self.book.is_head():
            book = RoleBook(roles)  # none yet, or an engine's move went on from it: built afresh
        else:
            # the objects kept are alive, so an id both here and now is the same object
            gone = [r for k, r in self.roles.items() if k not in now]
            added = [r for k, r in now.items() if k not in self.roles]
            book = self.book.moved(gone, added) if gone or added else self.book
        self.roles, self.book = now, book
        return book


def _definition(service_def: dict[str, Any]) -> _Definition:
    helper = ServiceDefHelper(service_def)
    deny = option_true(service_def, "enableDenyAndExceptionsInPolicies", True)
    return helper, implied_grants(service_def), deny


def _matcher_reuse(
    helper: ServiceDefHelper, zone_resources: Sequence[dict[str, Any]], policies: Sequence[dict[str, Any]]
) -> MatcherReuse:
    matchers = MatcherReuse(helper)
    for spec in zone_resources:
        matchers.zone(spec)
    matchers.policies(policies)
    return matchers


class ServicePolicies:
    """The access policies of one service, with its service definition and the roles they use.
    ``reuse``: what the last engine of the service was built from (see :class:`Reuse`)."""

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
        use_index: bool = True,
        reuse: Reuse | None = None,
        built_before: Sequence[dict[str, Any]] = (),
        zone_resources: Sequence[dict[str, Any]] = (),
    ) -> None:
        policies = list(policies)
        self.service_def = service_def
        self._roles: list[dict[str, Any]] | None = list(roles)
        self.role_book = RoleBook(self._roles) if reuse is None else reuse.book_of(self._roles)
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
        if reuse is None:
            definition = _definition(service_def)
            helper, implied, deny = definition
            matchers = _matcher_reuse(helper, zone_resources, [*built_before, *policies])
            made = [PolicyEvaluator(p, helper, implied, deny, matchers.overrides(p)) for p in chosen]
        else:
            definition = reuse.definition_of(service_def)
            helper = definition[0]
            matchers = _matcher_reuse(helper, zone_resources, [*built_before, *policies])
            made = reuse.evaluators_of(chosen, matchers)
        self.evaluators = sorted(made, key=PolicyEvaluator.sort_key)
        self.index: _Index = _Index(self.evaluators, helper)
        self.use_index = use_index
        # what moving this engine by deltas starts from (an engine without zones only)
        self._delta: DeltaState | None = None
        self._delta_from: tuple[_Definition, list[dict[str, Any]]] | None = None
        if not built_before and not zone_resources:
            self._delta_from = (definition, policies)

    @property
    def roles(self) -> list[dict[str, Any]]:
        """The role objects this engine was built from or moved to (listed when first asked
        for after a move: a move does not list every role)."""
        if self._roles is None:
            self._roles = self.role_book.role_objects()
        return self._roles

    def take_delta_state(self) -> DeltaState | None:
        """What :func:`~pushdown_lab.ranger_standin.deltas.moved` moves this engine from, handed
        over once (None after that, or for a zone's engine)."""
        state, self._delta = self._delta, None
        if state is None and self._delta_from is not None:
            definition, policies = self._delta_from
            ranks = [(e.sort_key(), e.id) for e in self.evaluators]
            if all(a < b for a, b in itertools.pairwise(ranks)):
                state = DeltaState.of(self, definition, policies)
        self._delta_from = None
        return state

    def moved(
        self,
        service_def: dict[str, Any],
        policies: Mapping[int, dict[str, Any] | None],
        roles: Mapping[int, dict[str, Any] | None],
    ) -> ServicePolicies | None:
        """This engine moved by the policies and roles that changed (``service_def``: the
        service definition now, the store's own: it is compared, not kept), or None (see
        :func:`~pushdown_lab.ranger_standin.deltas.moved`)."""
        return moved(self, service_def, policies, roles)

    def moved_to(
        self,
        evaluators: list[PolicyEvaluator],
        index: _Index,
        book: RoleBook,
        state: DeltaState,
    ) -> ServicePolicies:
        """A new engine with this one's settings and the given parts (for ``moved``; its
        role objects are the book's, listed when asked for)."""
        engine = copy.copy(self)
        engine.evaluators, engine.index = evaluators, index
        if book is not self.role_book:
            engine.role_book, engine._roles = book, None
        engine._delta, engine._delta_from = state, None
        return engine

    def _ask(self, request: AccessRequest) -> Ask:
        groups = frozenset(request.groups)
        roles = frozenset(request.roles) | self.role_book.roles_of(request.user, groups)
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
        if request.any_access and not request.ignore_descendant_deny:
            access_groups = [[access] for access in accesses]  # every access type must be allowed
        return Ask(
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
        chosen = self.index.candidates(request, self.evaluators) if self.use_index else self.evaluators
        for evaluator in chosen:
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

    def _audit_excluded(self, ask: Ask) -> bool:
        user, groups, roles, _ = ask.who
        return (
            user in self.excluded_users
            or not self.excluded_groups.isdisjoint(groups)
            or not self.excluded_roles.isdisjoint(roles)
        )

    def is_access_allowed(self, request: AccessRequest) -> bool:
        return self.evaluate(request).allowed
