"""An engine updated by policy and role deltas, as a Ranger 2.x plugin updates its engine.

A plugin that downloads policy deltas (``RangerPolicyDelta``: a policy created, updated or
deleted) applies them to the engine it holds rather than building one from every policy of
the service. :func:`moved` does the same for
:class:`~pushdown_lab.ranger_standin.policy_evaluation.ServicePolicies`: the new engine
shares the evaluators of the policies that did not change and is updated by the changed
policies and roles alone, with the decisions of an engine built afresh from the same
policies and roles (the lab's ``test_ranger_standin_deltas.py`` holds them equal over random
write histories):

* the evaluation order (priority, deny first, Ranger's evaluation-order score, name, then
  download order: the policy id) is kept by inserting each new evaluator at its place;
* the index of literal resource values is moved by the changed evaluators only;
* Ranger's reuse of resource matchers across policy types (the first matcher built for an
  equal policy resource, in download order) is kept per element key with every policy
  that builds one, so a policy whose key's first builder changed gets its evaluator again;
* the role book is moved by the changed roles (``RoleBook.moved``: the entries of their
  members alone, a new version of a lineage the old book keeps reading its own version of).

Only an engine without security zones is moved (a zone's engine reuses the matchers of
policies outside it, and a zone change moves every engine of its services): the stand-in
builds those afresh, as it does after a service definition changes.
"""

from __future__ import annotations

import bisect
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pushdown_lab.ranger_standin.evaluator import PolicyEvaluator
from pushdown_lab.ranger_standin.resources import (
    Matching,
    ServiceDefHelper,
    element_keys,
    overrides_of,
    policy_claims,
)

if TYPE_CHECKING:
    from pushdown_lab.ranger_standin.policy_evaluation import ServicePolicies

__all__ = ["DeltaState", "moved"]

Json = dict[str, Any]
#: an evaluator's place in the evaluation order (its sort key, then the policy id)
Rank = tuple[tuple[int, int, int, str], int]
#: (policy id, resource set index): the order in which Ranger builds a policy's matchers
Claim = tuple[int, int]


def rank_of(evaluator: PolicyEvaluator) -> Rank:
    return (evaluator.sort_key(), evaluator.id)


def is_chosen(policy: Json) -> bool:
    """An access policy that is enabled: one the engine evaluates."""
    return policy.get("isEnabled", True) is not False and int(policy.get("policyType") or 0) == 0


@dataclass
class DeltaState:
    """What moving an engine needs besides the engine (the last engine hands it to the next):
    the policies and roles by id, the matchers each element key's builders hold, the chosen
    policies per element key they look up, and the evaluators by policy id."""

    definition: str
    helper: ServiceDefHelper
    implied: dict[str, list[str]]
    deny: bool
    policies: dict[int, Json]
    roles: dict[int, Json]
    claims: dict[tuple[Any, ...], dict[Claim, Matching]]
    first: dict[tuple[Any, ...], Matching]
    holders: dict[tuple[Any, ...], set[int]]
    evaluators: dict[int, PolicyEvaluator]

    @classmethod
    def of(
        cls,
        engine: ServicePolicies,
        definition: tuple[ServiceDefHelper, dict[str, list[str]], bool],
        policies: list[Json],
    ) -> DeltaState:
        helper, implied, deny = definition
        state = cls(
            json.dumps(engine.service_def, sort_keys=True, default=str),
            helper,
            implied,
            deny,
            {int(p["id"]): p for p in policies},
            {int(r["id"]): r for r in engine.roles},
            {},
            {},
            {},
            {e.id: e for e in engine.evaluators},
        )
        for pid, policy in state.policies.items():
            state.claim(pid, policy)
            if is_chosen(policy):
                state.hold(pid, policy)
        state.first = {key: held[min(held)] for key, held in state.claims.items()}
        return state

    def claim(self, pid: int, policy: Json) -> set[tuple[Any, ...]]:
        keys = set()
        for index, key, matching in policy_claims(self.helper, policy):
            self.claims.setdefault(key, {})[(pid, index)] = matching
            keys.add(key)
        return keys

    def unclaim(self, pid: int, policy: Json) -> set[tuple[Any, ...]]:
        keys = set()
        for index, key, _ in policy_claims(self.helper, policy):
            held = self.claims[key]
            del held[(pid, index)]
            if not held:
                del self.claims[key]
            keys.add(key)
        return keys

    def hold(self, pid: int, policy: Json) -> None:
        for key in element_keys(self.helper, policy):
            self.holders.setdefault(key, set()).add(pid)

    def unhold(self, pid: int, policy: Json) -> None:
        for key in element_keys(self.helper, policy):
            held = self.holders.get(key, set())
            held.discard(pid)
            if not held:
                self.holders.pop(key, None)


def moved(
    engine: ServicePolicies,
    service_def: Json,
    policies: Mapping[int, Json | None],
    roles: Mapping[int, Json | None],
) -> ServicePolicies | None:
    """``engine`` moved by the policies and roles that changed (id -> the object now, None:
    gone from this engine), or None when it cannot be (its state was handed on already, a
    zone's engine, or the service definition changed: build it afresh then). The new
    engine keeps ``engine``'s copy of the definition (``service_def``, equal, is only
    compared). ``engine`` stays as it was (its lists, index and role book are copied where
    they change) but hands its :class:`DeltaState` on to the new engine."""
    state = engine.take_delta_state()
    if state is None or json.dumps(service_def, sort_keys=True, default=str) != state.definition:
        return None
    if roles and not engine.role_book.is_head():
        return None  # its book was moved from already (only the newest is moved): build afresh
    touched: set[tuple[Any, ...]] = set()
    redo: set[int] = set()
    for pid, now in policies.items():
        old = state.policies.pop(pid, None)
        if old is not None and old is now:
            state.policies[pid] = old
            continue
        if old is not None:
            touched |= state.unclaim(pid, old)
            if is_chosen(old):
                state.unhold(pid, old)
        if now is not None:
            state.policies[pid] = now
            touched |= state.claim(pid, now)
            if is_chosen(now):
                state.hold(pid, now)
        redo.add(pid)
    for key in touched:
        held = state.claims.get(key)
        first = None if not held else held[min(held)]
        if first != state.first.get(key):
            if first is None:
                del state.first[key]
            else:
                state.first[key] = first
            redo |= state.holders.get(key, set())
    index = engine.index.ranked(engine.evaluators)
    evaluators = list(engine.evaluators)
    for pid in sorted(redo):
        old_evaluator = state.evaluators.get(pid)
        policy = state.policies.get(pid)
        reused = None
        if policy is not None and is_chosen(policy):
            reused = overrides_of(state.helper, state.first, policy)
            if old_evaluator is not None and pid not in policies and old_evaluator.reused == reused:
                continue  # its key's first matcher changed, but not how it matches
        if old_evaluator is not None:
            rank = rank_of(old_evaluator)
            at = bisect.bisect_left(evaluators, rank, key=rank_of)
            assert evaluators[at] is old_evaluator
            del evaluators[at]
            index.remove(old_evaluator, rank)
            del state.evaluators[pid]
        if policy is not None and reused is not None:
            made = PolicyEvaluator(policy, state.helper, state.implied, state.deny, reused)
            rank = rank_of(made)
            bisect.insort(evaluators, made, key=rank_of)
            index.add(made, rank)
            state.evaluators[pid] = made
    book = engine.role_book
    gone, added = [], []
    for rid, now in roles.items():
        old = state.roles.get(rid)
        if old is now:
            continue
        if old is not None:
            gone.append(old)
        if now is None:
            state.roles.pop(rid, None)
        else:
            # an id kept keeps its place, a new one is the largest yet: still in id order
            state.roles[rid] = now
            added.append(now)
    if gone or added:
        book = book.moved(gone, added)  # the entries of the changed roles' members alone
    return engine.moved_to(evaluators, index, book, state)
