"""Ranger's own policy-engine test vectors against the stand-in's engine, one test per case.

The vectors shipped here (``vectors/``, Apache Ranger's, Apache-2.0) always run; more vector
files or directories can be added with ``PUSHDOWN_RANGER_VECTORS`` (paths separated by the OS
path separator). Each case passes, or is skipped with the out-of-scope feature's name; the
pass / skip counts are printed at the end of the run.
"""

from __future__ import annotations

import os
from collections import Counter
from pathlib import Path

import pytest

from pushdown_ranger.standin.vectors import VectorCase, load_cases, run_case

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
