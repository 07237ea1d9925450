"""Ranger's policy resource matcher: a policy's resource set against a requested resource.

Follows RangerDefaultPolicyResourceMatcher: the service definition's resource hierarchies,
the policy's valid hierarchy (no gaps), and the match type of a request (SELF, DESCENDANT when
the request stops above the policy's deepest non-``*`` resource, SELF_AND_ALL_DESCENDANTS when
only ``*`` resources remain below it, ANCESTOR when the request goes deeper than the policy).
"""

from __future__ import annotations

from typing import Any

from pushdown_lab.ranger_standin.matchers import ElementMatcher
from pushdown_lab.ranger_standin.options import MatcherOptions
from pushdown_lab.ranger_standin.validators import hierarchies

__all__ = [
    "ANCESTOR",
    "DESCENDANT",
    "NONE",
    "SELF",
    "SELF_AND_ALL_DESCENDANTS",
    "PolicyResourceMatcher",
    "ServiceDefHelper",
]

SELF, SELF_AND_ALL_DESCENDANTS, DESCENDANT, ANCESTOR, NONE = (
    "SELF",
    "SELF_AND_ALL_DESCENDANTS",
    "DESCENDANT",
    "ANCESTOR",
    "NONE",
)


def _no_gaps(chain: list[str], present: dict[str, Any]) -> bool:
    skipped = False
    for name in chain:
        if present.get(name) is None:
            skipped = True
        elif skipped:
            return False
    return True


class ServiceDefHelper:
    """What every policy of a service needs from its definition, computed once."""

    def __init__(self, service_def: dict[str, Any]) -> None:
        self.service_def = service_def
        self.defs = {r["name"]: r for r in service_def.get("resources") or []}
        self.chains = hierarchies(service_def)
        self.options = {name: MatcherOptions.of(rdef) for name, rdef in self.defs.items()}
        self._containing: dict[frozenset[str], list[list[str]]] = {}

    def containing(self, keys: frozenset[str]) -> list[list[str]]:
        """The hierarchies that hold every one of ``keys`` (memoised: few distinct key sets)."""
        found = self._containing.get(keys)
        if found is None:
            found = [chain for chain in self.chains if keys <= set(chain)]
            self._containing[keys] = found
        return found

    def shortest(self, keys: frozenset[str]) -> list[str] | None:
        found = self.containing(keys)
        return min(found, key=len) if found else None


class PolicyResourceMatcher:
    """One resource set of a policy (its ``resources`` or one of its ``additionalResources``)."""

    def __init__(self, helper: ServiceDefHelper, resources: dict[str, Any]) -> None:
        defs = helper.defs
        self.helper = helper
        self.resources = resources
        self.keys = frozenset(resources)
        valid = [c for c in helper.containing(self.keys) if _no_gaps(c, resources)]
        self.valid_chain = valid[0] if len(valid) == 1 else None
        self.usable = bool(valid) and all(name in defs for name in self.keys)
        self.matchers = {
            name: ElementMatcher(defs[name], res or {}, helper.options[name])
            for name, res in resources.items()
            if name in defs
        }

    def _chain_for(self, resource: dict[str, Any]) -> list[str] | None:
        keys = frozenset(resource)
        if not keys:
            return self.valid_chain or self.helper.shortest(self.keys)
        chain: list[str] | None = None
        if self.valid_chain is not None:
            chain = self.valid_chain if keys <= set(self.valid_chain) else None
        elif keys <= self.keys:
            chain = self.helper.shortest(self.keys)
        elif self.keys <= keys:
            chain = self.helper.shortest(keys)
        return chain if chain is not None and _no_gaps(chain, resource) else None

    def match_type(self, resource: dict[str, Any], scopes: dict[str, str], tokens: dict[str, str]) -> str:
        """How the requested resource relates to this resource set."""
        if not self.usable:
            return NONE
        if not self.resources and not resource:
            return SELF
        chain = self._chain_for(resource)
        if not chain:
            return NONE
        last_specific, count = -1, 0
        for name in chain:
            matcher = self.matchers.get(name)
            if matcher is None:
                break
            if not matcher.match_any:
                last_specific = count
            count += 1
        found = SELF if not resource else NONE
        for name in chain:
            matcher, value = self.matchers.get(name), resource.get(name)
            if matcher is None:
                if value is not None:
                    found = ANCESTOR
                break
            if value is not None or matcher.match_any:
                if not matcher.is_match(value, scopes.get(name), tokens):
                    return NONE
                found = SELF
        if found == SELF and len(resource) < len(self.resources):
            found = SELF_AND_ALL_DESCENDANTS if len(resource) > last_specific else DESCENDANT
        return found
