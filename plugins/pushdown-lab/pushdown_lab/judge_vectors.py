"""Ranger's policy-engine test vectors put to the Java judge (:mod:`pushdown_lab.ranger_judge`).

Each vector file becomes what Ranger's own ``TestPolicyEngine`` builds from it: a
``ServicePolicies`` (service definition, policies, security zones, service config, audit
mode, tag policies), roles from ``userRoles`` / ``groupRoles`` / ``roleRoles``, and a plugin
configuration of type ``hive`` with the super users and groups, the audit exclusions, and
the forwarded-address and tag-date settings that test sets. Policy deltas are applied to
the engine before the tests that follow them, as a plugin applies a download. A case
compares what Ranger's test compares: ``isAllowed`` and ``isAudited``; the mask type,
condition, masked value and policy id of a data-masking result; the filter expression and
policy id of a row-filter result; the allowed and denied users and groups of resource
access info.

The cases the judge does not decide say why: the files written for other harnesses of
Ranger's (GDS, the base plugin's file-based policy source).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pushdown_lab.ranger_judge import RangerJudge

__all__ = ["ANOTHER_HARNESS", "NO_ACCESS_RESULT", "JudgeOutcome", "run_file", "vector_files", "vector_folder"]

NO_ACCESS_RESULT = "nothing to compare (no result, mask, row filter or resource access info)"
_INFO = ("allowedUsers", "allowedGroups", "deniedUsers", "deniedGroups")
#: the judge's name of a field a vector names otherwise
_ANSWER = {"isAllowed": "allowed", "isAudited": "audited"}
_TOP = {"isAllowed", "isAudited", "policyId", *_INFO}
ANOTHER_HARNESS = "written for another harness of Ranger's"

#: what Ranger's TestPolicyEngine adds to every engine's plugin configuration
_TEST_CONFIG = {
    "ranger.plugin.hive.use.x-forwarded-for.ipaddress": "true",
    "ranger.plugin.hive.trusted.proxy.ipaddresses": "255.255.255.255; 128.101.101.101;128.101.101.99",
    "ranger.plugin.tag.attr.additional.date.formats": "abcd||xyz||yyyy/MM/dd'T'HH:mm:ss.SSS'Z'",
}
_LISTS = {
    "superUsers": "super.users",
    "superGroups": "super.groups",
    "auditExcludedUsers": "audit.exclude.users",
    "auditExcludedGroups": "audit.exclude.groups",
    "auditExcludedRoles": "audit.exclude.roles",
}


@dataclass(frozen=True)
class JudgeOutcome:
    """One test of one file: ``status`` pass, fail or skip; ``detail`` says why."""

    file: str
    name: str
    status: str
    detail: str = ""


def file_skip(data: dict[str, Any], root: Path) -> str | None:
    """Why the judge cannot decide a file's tests (``root``: the folder its file names
    start from), or None."""
    if "serviceDef" in data:
        return None
    named = [str(v) for k, v in data.items() if k.endswith("Filename")]
    missing = [n for n in named if not (root / n.lstrip("/")).is_file()]
    if missing:
        return (
            f"{ANOTHER_HARNESS} (RangerBasePlugin's file sources), and {', '.join(missing)} not in the folder"
        )
    if "gdsInfoFilename" in data:
        return f"{ANOTHER_HARNESS} (governed data sharing: the GDS evaluator over {data['gdsInfoFilename']})"
    return f"{ANOTHER_HARNESS} (no service definition)"


def service_policies(data: dict[str, Any], policies: list[dict[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {
        "serviceName": data.get("serviceName"),
        "policyVersion": 100,
        "serviceDef": data["serviceDef"],
        "policies": policies,
        "securityZones": data.get("securityZones"),
        "serviceConfig": data.get("serviceConfig"),
    }
    if data.get("auditMode"):
        out["auditMode"] = data["auditMode"]
    info = data.get("tagPolicyInfo")
    if info:
        out["tagPolicies"] = {
            "serviceName": info.get("serviceName"),
            "serviceDef": info.get("serviceDef"),
            "policies": info.get("tagPolicies"),
            "serviceConfig": info.get("serviceConfig"),
            **({"auditMode": data["auditMode"]} if data.get("auditMode") else {}),
        }
    return out


def roles(data: dict[str, Any]) -> dict[str, Any]:
    members: dict[str, dict[str, list[dict[str, Any]]]] = {}
    for key, kind in (("userRoles", "users"), ("groupRoles", "groups"), ("roleRoles", "roles")):
        for member, names in (data.get(key) or {}).items():
            for name in names:
                role = members.setdefault(name, {"users": [], "groups": [], "roles": []})
                role[kind].append({"name": member, "isAdmin": True})
    return {
        "serviceName": data.get("serviceName"),
        "roleVersion": -1,
        "rangerRoles": [{"name": name, "description": name, **lists} for name, lists in members.items()],
    }


def config(data: dict[str, Any]) -> dict[str, str]:
    out = dict(_TEST_CONFIG)
    for key, suffix in _LISTS.items():
        out[f"ranger.plugin.hive.{suffix}"] = ",".join(data.get(key) or [])
    return out


def stages(data: dict[str, Any]) -> list[tuple[list[dict[str, Any]], dict[str, Any] | None]]:
    """Each stage's tests and the update (policy deltas, zones) applied before them."""
    if "testsInfo" not in data:
        out: list[tuple[list[dict[str, Any]], dict[str, Any] | None]] = [(data.get("tests") or [], None)]
        if data.get("updatedPolicies") is not None:
            out.append((data.get("updatedTests") or [], data["updatedPolicies"]))
        return out
    out, info, update = [], data.get("testsInfo") or {}, None
    while info:
        out.append((info.get("tests") or [], update))
        update = info.get("updatedPolicies") or {}
        info = info.get("updatedTestsInfo") or {}
    return out


def _request(test: dict[str, Any]) -> dict[str, Any]:
    raw = dict(test.get("request") or {})
    for key in ("userAttributes", "groupAttributes"):
        if test.get(key):
            raw[key] = test[key]
    return raw


def run_file(judge: RangerJudge, path: Path) -> list[JudgeOutcome]:
    """Every test of one vector file, decided by the judge."""
    data = json.loads(path.read_text(encoding="utf-8"))
    root = next((p for p in path.parents if p.name == "policyengine"), path.parent).parent
    file, skip = path.name, file_skip(data, root)
    if skip:
        tests = [t for tests, _ in stages(data) for t in tests]
        return [JudgeOutcome(file, str(t.get("name")), "skip", skip) for t in tests]
    base = f"vectors:{path}"
    loaded = [base]
    judge.load(
        base, service_policies(data, list(data.get("policies") or [])), roles(data), config=config(data)
    )
    outcomes: list[JudgeOutcome] = []
    try:
        for number, (tests, update) in enumerate(stages(data)):
            if update is not None:
                updated = service_policies(data, list(data.get("policies") or []))
                updated["policyDeltas"] = update.get("policyDeltas")
                updated["securityZones"] = update.get("securityZones")
                loaded.append(f"{base}:{number}")
                judge.load(loaded[-1], updated, base=loaded[-2])
            outcomes += _decide(judge, loaded[-1], file, tests)
    finally:
        for engine in loaded:
            judge.drop(engine)
    return outcomes


#: what a test expects -> (the request's extra fields, the answer's fields compared)
_KINDS: dict[str, tuple[dict[str, Any], tuple[str, ...]]] = {
    "result": ({}, ("isAllowed", "isAudited")),
    "dataMaskResult": ({"policyType": 1}, ("maskType", "maskCondition", "maskedValue", "policyId")),
    "rowFilterResult": ({"policyType": 2}, ("filterExpr", "policyId")),
    "resourceAccessInfo": ({"resourceAccessInfo": True}, _INFO),
}


def _decide(judge: RangerJudge, engine: str, file: str, tests: list[dict[str, Any]]) -> list[JudgeOutcome]:
    """Each test's expectations (access, masking, row filter, resource access info) asked in
    one batch; a test passes when every one of them holds."""
    asked = [(t, kind) for t in tests for kind in _KINDS if kind in t]
    answers = judge.decide_raw(engine, [{**_request(t), **_KINDS[kind][0]} for t, kind in asked])
    wrong: dict[int, list[str]] = {}
    for (test, kind), answer in zip(asked, answers, strict=True):
        wrong.setdefault(id(test), []).extend(_differences(kind, test[kind], answer))
    outcomes = []
    for test in tests:
        name = str(test.get("name"))
        if id(test) not in wrong:
            outcomes.append(JudgeOutcome(file, name, "skip", NO_ACCESS_RESULT))
        elif wrong[id(test)]:
            outcomes.append(JudgeOutcome(file, name, "fail", "; ".join(wrong[id(test)])))
        else:
            outcomes.append(JudgeOutcome(file, name, "pass"))
    return outcomes


def _differences(kind: str, expected: dict[str, Any], answer: dict[str, Any]) -> list[str]:
    out = []
    for field in _KINDS[kind][1]:
        got = answer.get(_ANSWER.get(field, field))
        # a result's mask and filter live in its additionalInfo, as RangerAccessResult keeps them
        want = expected.get(field) if field in _TOP else (expected.get("additionalInfo") or {}).get(field)
        if kind == "resourceAccessInfo":
            got, want = set(got or ()), set(want or ())
        elif field in ("isAllowed", "isAudited"):
            got, want = bool(got), bool(want)
        elif field == "policyId":
            want = -1 if want is None else want
        if got != want:
            out.append(f"{kind}.{field} {got!r}, expected {want!r}")
    return out


def vector_folder() -> Path | None:
    """Ranger's policy-engine vectors, read in place: ``$PUSHDOWN_RANGER_POLICYENGINE``, else
    ``shared/ranger/policyengine`` beside the checkout (or beside a folder above it)."""
    given = os.environ.get("PUSHDOWN_RANGER_POLICYENGINE")
    if given:
        return Path(given)
    for parent in Path(__file__).resolve().parents:
        candidate = parent / "shared" / "ranger" / "policyengine"
        if candidate.is_dir():
            return candidate
    return None


def vector_files(folder: Path) -> list[Path]:
    """The policy-engine vector files under ``folder`` (those with a ``tests`` list)."""
    found = []
    for path in sorted(folder.rglob("*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        if isinstance(data, dict) and ({"tests", "testsInfo"} & set(data)):
            found.append(path)
    return found
