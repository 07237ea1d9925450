"""Ranger's own policy-engine test vectors against the stand-in's engine, one test per case.

The vectors shipped here (``vectors/``, Apache Ranger's, Apache-2.0) always run; more vector
files or directories can be added with ``PUSHDOWN_RANGER_VECTORS`` (paths separated by the OS
path separator). Each case passes, or is skipped with the out-of-scope feature's name; the
pass / skip counts are printed at the end of the run.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from pushdown_lab.ranger_standin.vectors import VectorCase, load_cases, run_case

HERE = Path(__file__).parent / "vectors"
COUNTS: Counter[str] = Counter()
POLICY_IDS: Counter[str] = Counter()


def _files() -> list[Path]:
    roots = [HERE, *(Path(p) for p in os.environ.get("PUSHDOWN_RANGER_VECTORS", "").split(os.pathsep) if p)]
    found: list[Path] = []
    for root in roots:
        found.extend(sorted(root.glob("*.json")) if root.is_dir() else [root])
    return found


CASES: list[VectorCase] = [case for path in _files() for case in load_cases(path)]


@pytest.mark.parametrize("case", CASES, ids=[case.id for case in CASES])
def test_vector(case: VectorCase) -> None:
    outcome = run_case(case)
    COUNTS[outcome.status] += 1
    if outcome.result is not None and "policyId" in case.expected:
        POLICY_IDS["same" if outcome.result.policy_id == case.expected["policyId"] else "other"] += 1
    if outcome.status == "skip":
        pytest.skip(f"out of scope: {outcome.detail}")
    assert outcome.status == "pass", f"{case.id}: {outcome.detail}"


def test_the_shipped_vectors_are_all_found() -> None:
    names = {case.file for case in CASES}
    assert {
        "test_policyengine_hive.json",
        "test_policyengine_hdfs.json",
        "test_policyengine_kafka.json",
        "test_policyengine_owner.json",
        "test_policyengine_priority.json",
        "test_policyengine_hive_default_policies.json",
    } <= names
    assert len(CASES) >= 92


def _delta_file(chained: bool) -> dict[str, Any]:
    """A vector file of our own in Ranger's format: alice reads /a; a delta deletes that
    policy and creates one for bob on /b; in the chained form a second delta updates bob's
    policy to /c. Each stage's tests must see the policies the deltas left."""
    hdfs = json.loads((HERE / "test_policyengine_hdfs.json").read_text(encoding="utf-8"))["serviceDef"]

    def policy(pid: int, user: str, path: str) -> dict[str, Any]:
        return {
            "id": pid,
            "name": f"{user} {path}",
            "isEnabled": True,
            "isAuditEnabled": True,
            "resources": {"path": {"values": [path], "isRecursive": True}},
            "policyItems": [{"accesses": [{"type": "read", "isAllowed": True}], "users": [user]}],
        }

    def test(user: str, path: str, allowed: bool) -> dict[str, Any]:
        # audited where a policy matched: here, exactly where it is allowed
        request = {"resource": {"elements": {"path": path}}, "accessType": "read", "user": user}
        return {
            "name": f"{user} {path}",
            "request": request,
            "result": {"isAllowed": allowed, "isAudited": allowed},
        }

    first = [test("alice", "/a/x", True), test("bob", "/b/x", False)]
    delta = {
        "policyDeltas": [
            {"changeType": 2, "policy": {"id": 1}},
            {"changeType": 0, "policy": policy(2, "bob", "/b")},
        ]
    }
    second = [test("alice", "/a/x", False), test("bob", "/b/x", True)]
    base = {"serviceName": "hdfsdev", "serviceDef": hdfs, "policies": [policy(1, "alice", "/a")]}
    if not chained:
        return {**base, "tests": first, "updatedPolicies": delta, "updatedTests": second}
    third = [test("bob", "/b/x", False), test("bob", "/c/x", True)]
    update = {"policyDeltas": [{"changeType": 1, "policy": policy(2, "bob", "/c")}]}
    later = {"tests": second, "updatedPolicies": update, "updatedTestsInfo": {"tests": third}}
    return {**base, "testsInfo": {"tests": first, "updatedPolicies": delta, "updatedTestsInfo": later}}


@pytest.mark.parametrize("chained", [False, True])
def test_policy_deltas_are_applied_before_the_updated_tests(tmp_path: Path, chained: bool) -> None:
    path = tmp_path / "deltas.json"
    path.write_text(json.dumps(_delta_file(chained)), encoding="utf-8")
    cases = load_cases(path)
    assert len(cases) == (6 if chained else 4)
    assert [run_case(c).status for c in cases] == ["pass"] * len(cases), [run_case(c).detail for c in cases]
    # a delta of another kind is a named skip, never a silent pass on stale policies
    data = _delta_file(False)
    data["updatedPolicies"]["policyDeltas"].append({"changeType": 7, "policy": {}})
    path.write_text(json.dumps(data), encoding="utf-8")
    later = [run_case(c) for c in load_cases(path)][2:]
    assert {(o.status, o.detail) for o in later} == {
        ("skip", "policy deltas of change type 7 (not a policy change)")
    }
