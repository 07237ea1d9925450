"""Fixtures of the ranger plugin's tests.

``ranger_standin``: a fresh Ranger Admin stand-in (:class:`pushdown_ranger.standin.Standin`) on a
free 127.0.0.1 port, with the hdfs, hive and kafka service definitions loaded and no services;
stopped when the test ends. Starting one takes milliseconds, so each test gets its own state.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from pushdown_ranger.standin import Standin


@pytest.fixture
def ranger_standin() -> Iterator[Standin]:
    with Standin() as standin:
        yield standin
