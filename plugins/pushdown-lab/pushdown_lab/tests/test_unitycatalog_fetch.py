"""The Unity Catalog classpath fetch: one cache directory per version, and a clear error
when Maven cannot resolve the server (as on these machines)."""

from __future__ import annotations

from pathlib import Path

import pytest

from pushdown_lab import unitycatalog as uc


def test_a_failed_fetch_says_what_maven_could_not_resolve(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(uc, "cache_dir", lambda version=uc.VERSION: tmp_path / version)
    monkeypatch.setenv("PATH", str(tmp_path / "nothing"))  # no mvn at all: the same error path, at once
    with pytest.raises(uc.UnityCatalogUnavailable, match="Maven"):
        uc.fetch_classpath("0.0.0-none")
    assert not (tmp_path / "0.0.0-none" / "complete").exists()


def test_each_version_has_its_own_cache() -> None:
    assert uc.cache_dir("0.4.1") != uc.cache_dir("0.4.0")
    assert uc.cache_dir().parent.name == "maven"
