"""The Ranger backend's tests run with every read-back's facts spread by hash
(:class:`~pushdown_ranger.factsets.Spread`), whatever their size: their estates are far
smaller than :data:`~pushdown_ranger.factsets.SPREAD_FROM`, below which a real one copies
them as one frozen set (the older path, which a test of its own sets back)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest


@pytest.fixture(autouse=True)
def _spread_every_read_back(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    from pushdown_ranger import factsets

    monkeypatch.setattr(factsets, "SPREAD_FROM", 0)
    yield
