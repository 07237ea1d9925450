"""Ranger's policy resource matcher: a policy's resource set against a requested resource.

Follows RangerDefaultPolicyResourceMatcher: the service definition's resource hierarchies,
the policy's valid hierarchy (no gaps), and the match type of a request (SELF, DESCENDANT when
the request stops above the policy's deepest non-``*`` resource, SELF_AND_ALL_DESCENDANTS when
only ``*`` resources remain below it, ANCESTOR when the request goes deeper than the policy).

:class:`MatcherReuse` follows Ranger's reuse of resource matchers while it builds one engine
(``RangerPluginContext.getResourceMatcher``): a matcher is kept by resource name and policy
resource (values, isExcludes, isRecursive) alone, so an access policy's resource equal to one
an earlier data-masking or row-filter policy holds is matched with the matcher that policy
built, with its definition's matcher options (Hive's masking and row-filter definitions turn
wildcards off: ``*`` then matches only ``*``).
"""

from __future__ import annotations

from collections.abc import Iterable
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
    "MatcherReuse",
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
        self._typed: dict[int, _Typed] = {0: (self.defs, self.chains, self.options)}

    def of_type(self, policy_type: int) -> _Typed:
        """The resource definitions, hierarchies and matcher options a policy of ``policy_type``
        is matched with: the access ones, or for data masking (1) and row filtering (2) the
        definitions of ``dataMaskDef`` / ``rowFilterDef`` laid over the access definitions of
        the same name (Ranger's ServiceDefUtil.normalize; none there: no hierarchy)."""
        kind = {1: "dataMaskDef", 2: "rowFilterDef"}.get(policy_type)
        if kind is None:
            return self._typed[0]
        found = self._typed.get(policy_type)
        if found is None:
            merged = [
                _merged(self.defs.get(str(r.get("name"))), r)
                for r in (self.service_def.get(kind) or {}).get("resources") or []
            ]
            defs = {str(r["name"]): r for r in merged}
            found = (
                defs,
                hierarchies({"resources": merged}),
                {n: MatcherOptions.of(r) for n, r in defs.items()},
            )
            self._typed[policy_type] = found
        return found

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


#: resource definitions by name, their hierarchies, their matcher options by name
_Typed = tuple[dict[str, dict[str, Any]], list[list[str]], dict[str, MatcherOptions]]
#: a resource definition and its matcher options
Matching = tuple[dict[str, Any], MatcherOptions]


def _merged(base: dict[str, Any] | None, delta: dict[str, Any]) -> dict[str, Any]:
    """ServiceDefUtil.mergeResourceDef: a masking / row-filter resource definition over the
    access one (the matcher and each matcher option it names win, and its isValidLeaf)."""
    if base is None:
        return dict(delta)
    merged = dict(base)
    if delta.get("matcher"):
        merged["matcher"] = delta["matcher"]
    if delta.get("matcherOptions"):
        merged["matcherOptions"] = {**(base.get("matcherOptions") or {}), **delta["matcherOptions"]}
    merged["isValidLeaf"] = delta.get("isValidLeaf")
    for key in ("recursiveSupported", "excludesSupported"):
        if delta.get(key) is not None:
            merged[key] = delta[key]
    return merged


def _element_key(name: str, resource: dict[str, Any]) -> tuple[Any, ...]:
    """What RangerPolicyResource.equals compares (a flag left out is false, as Ranger reads it)."""
    values = resource.get("values")
    return (
        name,
        None if values is None else tuple(str(v) for v in values),
        resource.get("isExcludes", False),
        resource.get("isRecursive", False),
    )


class MatcherReuse:
    """The first matcher built for each (resource name, policy resource) while Ranger builds
    one engine: the security zones' resources (with the access definitions), then the
    policies in download order (every type; disabled ones build nothing), each resource set
    that lies on a hierarchy of its policy type's definitions."""

    def __init__(self, helper: ServiceDefHelper) -> None:
        self.helper = helper
        self.first: dict[tuple[Any, ...], Matching] = {}

    def _claim(self, resources: dict[str, Any], typed: _Typed) -> None:
        for key, matching in claimed(resources, typed):
            self.first.setdefault(key, matching)

    def zone(self, spec: dict[str, Any]) -> None:
        """One resource set of a security zone (RangerSecurityZoneMatcher: not excluded,
        recursive where the definition supports it)."""
        resources = {
            name: {
                "values": list(values or []),
                "isExcludes": False,
                "isRecursive": bool(self.helper.defs.get(name, {}).get("recursiveSupported")),
            }
            for name, values in spec.items()
        }
        for policy_type in (0, 1, 2):
            typed = self.helper.of_type(policy_type)
            if any(frozenset(resources) <= set(chain) for chain in typed[1]):
                self._claim(resources, typed)
                return

    def policies(self, policies: Iterable[dict[str, Any]]) -> None:
        for policy in policies:
            for _, key, matching in policy_claims(self.helper, policy):
                self.first.setdefault(key, matching)

    def overrides(self, policy: dict[str, Any]) -> dict[tuple[int, str], Matching]:
        """Where an access policy's resources are matched otherwise than with the access
        definitions: (resource set index, resource name) -> the definition and options used."""
        return overrides_of(self.helper, self.first, policy)


def resource_sets(policy: dict[str, Any]) -> list[dict[str, Any]]:
    """A policy's resource sets: its ``resources``, then its ``additionalResources``."""
    return [policy.get("resources") or {}, *(policy.get("additionalResources") or [])]


def claimed(resources: dict[str, Any], typed: _Typed) -> list[tuple[tuple[Any, ...], Matching]]:
    """The matchers one resource set builds: (element key, definition and options) per
    resource of it, none when it lies on no hierarchy of its definitions (no gaps)."""
    defs, chains, options = typed
    keys = frozenset(resources)
    if not any(keys <= set(chain) and _no_gaps(chain, resources) for chain in chains):
        return []  # Ranger builds no matcher for it
    return [
        (_element_key(name, res or {}), (defs[name], options[name]))
        for name, res in resources.items()
        if name in defs
    ]


def policy_claims(
    helper: ServiceDefHelper, policy: dict[str, Any]
) -> list[tuple[int, tuple[Any, ...], Matching]]:
    """The matchers one policy builds, in Ranger's order: (resource set index, element key,
    definition and options); a disabled policy builds none."""
    if policy.get("isEnabled", True) is False:
        return []
    typed = helper.of_type(int(policy.get("policyType") or 0))
    return [
        (index, key, matching)
        for index, resources in enumerate(resource_sets(policy))
        for key, matching in claimed(resources, typed)
    ]


def element_keys(helper: ServiceDefHelper, policy: dict[str, Any]) -> set[tuple[Any, ...]]:
    """The element keys :func:`overrides_of` looks up for an access policy."""
    return {
        _element_key(name, res or {})
        for resources in resource_sets(policy)
        for name, res in resources.items()
        if name in helper.defs
    }


def overrides_of(
    helper: ServiceDefHelper, first: dict[tuple[Any, ...], Matching], policy: dict[str, Any]
) -> dict[tuple[int, str], Matching]:
    """:meth:`MatcherReuse.overrides` over ``first`` (element key -> the matcher built first)."""
    found: dict[tuple[int, str], Matching] = {}
    for index, resources in enumerate(resource_sets(policy)):
        for name, res in resources.items():
            held = first.get(_element_key(name, res or {}))
            if held is None or name not in helper.defs:
                continue
            own = helper.defs[name]
            if held[1] != helper.options[name] or held[0].get("matcher") != own.get("matcher"):
                found[(index, name)] = held
    return found


class PolicyResourceMatcher:
    """One resource set of a policy (its ``resources`` or one of its ``additionalResources``);
    ``reused``: resource name -> the definition and options of a matcher Ranger reuses for it."""

    def __init__(
        self, helper: ServiceDefHelper, resources: dict[str, Any], reused: dict[str, Matching] | None = None
    ) -> None:
        reused = reused or {}
        defs = helper.defs
        self.helper = helper
        self.resources = resources
        self.keys = frozenset(resources)
        valid = [c for c in helper.containing(self.keys) if _no_gaps(c, resources)]
        self.valid_chain = valid[0] if len(valid) == 1 else None
        self.usable = bool(valid) and all(name in defs for name in self.keys)
        self.matchers: dict[str, ElementMatcher] = {}
        for name, res in resources.items():
            if name in defs:
                rdef, opts = reused.get(name, (defs[name], helper.options[name]))
                self.matchers[name] = ElementMatcher(rdef, res or {}, opts)

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
