"""Fixtures of the lab's tests. The run's servers (``hive_metastore``, ``ranger_standin``, ...)
live in the root ``conftest.py``; MariaDB's in the MySQL plugin's tests."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from typing import Any

import pytest
from pushdown_hive.client import MetastoreClient


@pytest.fixture
def hms(hive_metastore: Any) -> Iterator[MetastoreClient]:
    """A client connected to the run's metastore (closed afterwards)."""
    with MetastoreClient.connect(hive_metastore.uri, timeout=30) as client:
        yield client


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """Print the Ranger test-vector counts when those tests ran."""
    judged = sys.modules.get("pushdown_lab.tests.test_ranger_vectors_judged")
    for engine, tally in (getattr(judged, "COUNTS", None) or {}).items():
        if tally:
            terminalreporter.write_line(
                f"Ranger vectors, {engine}: {tally['files']} files, {tally['vectors']} vectors, "
                f"{tally['pass']} passed, {tally['skip']} skipped, {tally['fail']} failed"
            )
    module = sys.modules.get("pushdown_lab.tests.test_ranger_standin_vectors")
    counts = getattr(module, "COUNTS", None)
    if not counts:
        return
    ids = module.POLICY_IDS  # type: ignore[union-attr]
    terminalreporter.write_line(
        f"Ranger policy-engine vectors: {counts['pass']} passed, {counts['skip']} skipped, "
        f"{counts['fail']} failed; expected policyId reproduced in {ids['same']} of "
        f"{ids['same'] + ids['other']} evaluated cases"
    )
