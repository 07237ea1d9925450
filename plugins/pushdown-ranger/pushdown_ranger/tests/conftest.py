"""Fixtures of the ranger plugin's tests.

``ranger_standin``: a fresh Ranger Admin stand-in (:class:`pushdown_ranger.standin.Standin`) on a
free 127.0.0.1 port, with the hdfs, hive and kafka service definitions loaded and no services;
stopped when the test ends. Starting one takes milliseconds, so each test gets its own state.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator

import pytest

from pushdown_ranger.standin import Standin


@pytest.fixture
def ranger_standin() -> Iterator[Standin]:
    with Standin() as standin:
        yield standin


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """Print the Ranger test-vector counts when those tests ran."""
    module = sys.modules.get("pushdown_ranger.tests.test_vectors")
    counts = getattr(module, "COUNTS", None)
    if not counts:
        return
    ids = module.POLICY_IDS  # type: ignore[union-attr]
    terminalreporter.write_line(
        f"Ranger policy-engine vectors: {counts['pass']} passed, {counts['skip']} skipped, "
        f"{counts['fail']} failed; expected policyId reproduced in {ids['same']} of "
        f"{ids['same'] + ids['other']} evaluated cases"
    )
