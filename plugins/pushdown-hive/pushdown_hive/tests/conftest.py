"""Fixtures of the Hive plugin's tests. The run's one metastore (``hive_metastore``) and
its one SparkSession (``spark``) live in the root ``conftest.py``."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from pushdown_hive.client import MetastoreClient

_names = itertools.count()


@pytest.fixture
def hms(hive_metastore: Any) -> Iterator[MetastoreClient]:
    """A client connected to the run's metastore (closed afterwards)."""
    with MetastoreClient.connect(hive_metastore.uri, timeout=30) as client:
        yield client


@pytest.fixture
def hive_db(hms: MetastoreClient) -> Iterator[Callable[[str], str]]:
    """``hive_db("sales")`` creates a database with a name unique in the run (returned);
    every database it created is dropped afterwards, with its tables."""
    made: list[str] = []

    def make(prefix: str = "db") -> str:
        name = f"{prefix}_{next(_names)}"
        hms.create_database(name)
        made.append(name)
        return name

    yield make
    for name in made:
        hms.drop_database(name, cascade=True)
