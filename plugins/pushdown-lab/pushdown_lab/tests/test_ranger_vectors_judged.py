"""Every one of Ranger's policy-engine vector files, put to Ranger's own engine (the judge) and
to the stand-in's engine, one test per file and engine; the counts are printed at the end.

The vectors are read in place (``shared/ranger/policyengine`` beside the checkout, or
``$PUSHDOWN_RANGER_POLICYENGINE``); where that folder is missing, the six files shipped in
``vectors/`` stand in for it. The judge must pass every access case; what it does not decide
says why (files for Ranger's other harnesses, tests with no access result). The stand-in
must pass whatever it decides; the features it leaves to the judge (tags, security zones,
item conditions, HBase-only and GDS files, ...) are skipped with their names.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from pushdown_lab.judge_vectors import (
    ANOTHER_HARNESS,
    NO_ACCESS_RESULT,
    run_file,
    stages,
    vector_files,
    vector_folder,
)
from pushdown_lab.ranger_standin.vectors import load_cases, run_case

FOLDER = vector_folder() or Path(__file__).parent / "vectors"
FILES = vector_files(FOLDER)
#: per engine: files, vectors, passed, skipped, failed
COUNTS: dict[str, Counter[str]] = {"judge": Counter(), "stand-in": Counter()}
#: why the judge leaves a case undecided: only these
JUDGE_SKIPS = (ANOTHER_HARNESS, NO_ACCESS_RESULT)


def _tests_in(path: Path) -> int:
    return sum(len(tests) for tests, _ in stages(json.loads(path.read_text(encoding="utf-8"))))


def _count(engine: str, statuses: list[str]) -> None:
    COUNTS[engine]["files"] += 1
    COUNTS[engine]["vectors"] += len(statuses)
    COUNTS[engine].update(statuses)


@pytest.mark.parametrize("path", FILES, ids=[str(p.relative_to(FOLDER)) for p in FILES])
def test_the_judge_passes_the_vector_file(ranger_judge: Any, path: Path) -> None:
    outcomes = run_file(ranger_judge, path)
    _count("judge", [o.status for o in outcomes])
    failed = [f"{o.name}: {o.detail}" for o in outcomes if o.status == "fail"]
    assert not failed, failed
    unexplained = {o.detail for o in outcomes if o.status == "skip" and not o.detail.startswith(JUDGE_SKIPS)}
    assert not unexplained


@pytest.mark.parametrize("path", FILES, ids=[str(p.relative_to(FOLDER)) for p in FILES])
def test_the_standin_passes_what_it_decides_of_the_vector_file(path: Path) -> None:
    outcomes = [(case, run_case(case)) for case in load_cases(path)]
    statuses = [o.status for _, o in outcomes if o.status != "skip"]
    # a file the stand-in cannot read at all is one skipped case there: count its tests
    _count("stand-in", statuses + ["skip"] * (_tests_in(path) - len(statuses)))
    failed = [f"{case.name}: {o.detail}" for case, o in outcomes if o.status == "fail"]
    assert not failed, failed


def test_the_vector_folder_is_all_there() -> None:
    if FOLDER.name == "vectors":
        pytest.skip("Ranger's whole vector folder is not beside this checkout: the six shipped files ran")
    assert len(FILES) >= 53
