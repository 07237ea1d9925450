"""Ranger's policy-engine test vectors (``test_policyengine_*.json``) as cases for the stand-in's engine.

A vector file holds a service definition, policies, optional roles (``userRoles``,
``groupRoles``, ``roleRoles``), super users / groups, an audit mode, and tests: a request and the
expected result. As Ranger's own TestPolicyEngine does, a case compares ``isAllowed`` and
``isAudited``; the expected ``policyId`` is reported (Ranger's test does not check it).
Policy deltas are applied as a plugin applies them (a policy created, replaced or
deleted by id) before the tests that follow them: ``updatedPolicies`` before
``updatedTests``, and the chained ``testsInfo`` / ``updatedTestsInfo`` form stage by stage.

A case the engine cannot decide is skipped with a reason naming the feature: security zones,
tag-based policies, tags in the request, data masking, row filtering, resource access info,
deltas that are not policy changes, and whatever the engine raises :class:`Unsupported` for
(conditions, ...).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pushdown_lab.ranger_standin.policy_evaluation import (
    AccessRequest,
    AccessResult,
    ServicePolicies,
    Unsupported,
)

__all__ = ["Outcome", "VectorCase", "load_cases", "run_case"]

_ONLY = {
    "dataMaskResult": "data masking",
    "rowFilterResult": "row filtering",
    "resourceAccessInfo": "resource access info",
}


@dataclass(frozen=True)
class VectorCase:
    """One test of one vector file; ``skip`` names the out-of-scope feature, if any."""

    file: str
    name: str
    engine: ServicePolicies | None
    request: AccessRequest | None
    expected: dict[str, Any]
    skip: str | None = None

    @property
    def id(self) -> str:
        return f"{self.file}::{self.name}"


@dataclass(frozen=True)
class Outcome:
    """``status`` is pass, fail or skip; ``detail`` says why."""

    status: str
    detail: str
    result: AccessResult | None = None


def _roles(data: dict[str, Any]) -> list[dict[str, Any]]:
    members: dict[str, dict[str, list[dict[str, Any]]]] = {}
    for key, kind in (("userRoles", "users"), ("groupRoles", "groups"), ("roleRoles", "roles")):
        for member, names in (data.get(key) or {}).items():
            for name in names:
                role = members.setdefault(name, {"users": [], "groups": [], "roles": []})
                role[kind].append({"name": member, "isAdmin": True})
    return [{"name": name, **lists} for name, lists in members.items()]


def _request(raw: dict[str, Any]) -> AccessRequest:
    resource = raw.get("resource") or {}
    elements = {k: v for k, v in (resource.get("elements") or {}).items() if v is not None}
    return AccessRequest(
        resource=elements,
        access_type=str(raw.get("accessType") or ""),
        user=str(raw.get("user") or ""),
        groups=list(raw.get("userGroups") or []),
        owner=resource.get("ownerUser"),
        roles=list(raw.get("userRoles") or []),
        scopes=dict(raw.get("resourceElementMatchingScopes") or {}),
        matching_scope=str(raw.get("resourceMatchingScope") or "SELF"),
        ignore_descendant_deny=raw.get("isDescendantDenyIgnored") is not False,
        context=dict(raw.get("context") or {}),
    )


def _test_skip(test: dict[str, Any]) -> str | None:
    if "result" not in test:
        found = [label for key, label in _ONLY.items() if key in test]
        return ", ".join(found) or "no access result to compare"
    context = (test.get("request") or {}).get("context") or {}
    if "TAGS" in context:
        return "tags in the request (tag-based policies)"
    if "REQUESTED_RESOURCES" in context:
        return "requested resources in the request context"
    return None


def _file_skip(data: dict[str, Any]) -> str | None:
    if data.get("gdsInfoFilename"):
        return "governed data sharing (GDS)"
    elsewhere = [
        key
        for key in ("policiesFilename", "tagsFilename", "rolesFilename", "userStoreFilename")
        if key in data
    ]
    if elsewhere:
        return f"inputs kept in other files ({', '.join(elsewhere)})"
    if data.get("securityZones"):
        return "security zones"
    if data.get("tagPolicyInfo"):
        return "tag-based policies"
    return None


def _listed(data: dict[str, Any], key: str, config_key: str) -> list[str]:
    """A vector's list plus the same setting from its ``serviceConfig`` (comma separated)."""
    configured = str((data.get("serviceConfig") or {}).get(f"ranger.plugin.{config_key}") or "")
    return list(data.get(key) or []) + [v.strip() for v in configured.split(",") if v.strip()]


def load_cases(path: Path) -> list[VectorCase]:
    """Every test of one vector file, the tests after its policy deltas too (one skipped
    case if it is not a vector file)."""
    data = json.loads(path.read_text(encoding="utf-8"))
    if not isinstance(data, dict) or "serviceDef" not in data or not ({"tests", "testsInfo"} & set(data)):
        return [VectorCase(path.name, "(file)", None, None, {}, "not a policy-engine test vector file")]
    file_skip = _file_skip(data)
    policies: list[dict[str, Any]] = list(data.get("policies") or [])
    cases: list[VectorCase] = []
    delta_skip: str | None = None
    for stage, (tests, deltas) in enumerate(_stages(data)):
        # after a stage's policy deltas (as a plugin applies a download that carries
        # deltas), the same engine on the policies they leave; then that stage's tests
        if deltas is not None and delta_skip is None:
            policies, delta_skip = _after_deltas(policies, deltas)
        engine = _engine(data, policies) if delta_skip is None else None
        prefix = "" if stage == 0 else "updated: " if stage == 1 else f"updated {stage}: "
        for test in tests:
            cases.append(_case(path, f"{prefix}{test.get('name')}", engine, test, file_skip or delta_skip))
    return cases


def _stages(data: dict[str, Any]) -> list[tuple[list[dict[str, Any]], dict[str, Any] | None]]:
    """The tests of each stage and the policy deltas applied before it: ``tests`` (then
    ``updatedPolicies`` and ``updatedTests``), or the chained ``testsInfo`` form (each
    with its ``updatedPolicies`` before its ``updatedTestsInfo``)."""
    if "testsInfo" not in data:
        stages: list[tuple[list[dict[str, Any]], dict[str, Any] | None]] = [(data.get("tests") or [], None)]
        if data.get("updatedTests"):
            stages.append((data["updatedTests"], data.get("updatedPolicies") or {}))
        return stages
    stages = []
    info, deltas = data.get("testsInfo") or {}, None
    while info:
        stages.append((info.get("tests") or [], deltas))
        deltas = info.get("updatedPolicies") or {}
        info = info.get("updatedTestsInfo") or {}
    return stages


def _engine(data: dict[str, Any], policies: list[dict[str, Any]]) -> ServicePolicies:
    return ServicePolicies(
        data["serviceDef"],
        policies,
        _roles(data),
        super_users=_listed(data, "superUsers", "super.users"),
        super_groups=_listed(data, "superGroups", "super.groups"),
        audit_mode=data.get("auditMode"),
        audit_excluded=(
            _listed(data, "auditExcludedUsers", "audit.exclude.users"),
            _listed(data, "auditExcludedGroups", "audit.exclude.groups"),
            _listed(data, "auditExcludedRoles", "audit.exclude.roles"),
        ),
    )


def _case(
    path: Path, name: str, engine: ServicePolicies | None, test: dict[str, Any], skip: str | None
) -> VectorCase:
    request = _request(test.get("request") or {})
    return VectorCase(path.name, name, engine, request, test.get("result") or {}, skip or _test_skip(test))


#: Ranger's policy delta change types: a policy created, updated (replaced whole) or deleted
_CREATE, _UPDATE, _DELETE = 0, 1, 2


def _after_deltas(
    policies: list[dict[str, Any]], update: dict[str, Any]
) -> tuple[list[dict[str, Any]], str | None]:
    """``policies`` after the deltas of ``update``, or why they cannot be applied."""
    if update.get("securityZones"):
        return [], "security zones (in the policy deltas)"
    by_id: dict[Any, dict[str, Any]] = {p.get("id"): p for p in policies}
    for delta in update.get("policyDeltas") or []:
        kind, policy = delta.get("changeType"), delta.get("policy") or {}
        if kind in (_CREATE, _UPDATE):
            by_id[policy.get("id")] = policy
        elif kind == _DELETE:
            by_id.pop(policy.get("id"), None)
        else:
            return [], f"policy deltas of change type {kind!r} (not a policy change)"
    return list(by_id.values()), None


def run_case(case: VectorCase) -> Outcome:
    """Evaluate one case: pass, fail (with what differs) or skip (with the feature's name)."""
    if case.skip is not None or case.engine is None or case.request is None:
        return Outcome("skip", case.skip or "nothing to evaluate")
    try:
        result = case.engine.evaluate(case.request)
    except Unsupported as feature:
        return Outcome("skip", str(feature))
    wanted = (bool(case.expected.get("isAllowed")), bool(case.expected.get("isAudited")))
    got = (result.allowed, result.audited)
    if got != wanted:
        return Outcome("fail", f"isAllowed/isAudited {got}, expected {wanted}", result)
    return Outcome("pass", "", result)
