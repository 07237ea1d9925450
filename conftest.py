"""Fixtures shared by the core's tests and every plugin's tests.

``local_hive_metastore``: the test run's one Hive Metastore (2.3, from pyspark's jars,
on 127.0.0.1 and a free port, embedded Derby in a temporary directory), started on
first use (about 5 s) and stopped when the run ends. See ``pushdown_lab.metastore``.
``hive_metastore`` is that one, and again a Hive 4 (``hive4``: 4.0.1 standalone from Maven
Central, ``pushdown_lab.metastore4``, or a container where a Docker engine answers): tests
that take it run against both.

``ranger_standin``: a fresh Ranger Admin stand-in (:class:`pushdown_lab.ranger_standin.Standin`)
on a free 127.0.0.1 port, with the hdfs, hive and kafka service definitions loaded and no
services; stopped when the test ends. Starting one takes milliseconds, so each test gets
its own state.

``ranger_judge``: the run's one Ranger judge, Ranger 2.9's own policy engine in a Java process
(:mod:`pushdown_lab.ranger_judge`, jars from Maven Central): what Ranger enforces is its answer.

``uc_standin``: a fresh Unity Catalog stand-in (:class:`pushdown_lab.uc_standin.Standin`) on a
free 127.0.0.1 port, its metastore admin's token in ``admin_token``; the open server itself
is not served by the Maven registry these machines reach (``pushdown_lab.unitycatalog``).

``spark``: the test run's one SparkSession. Spark starts in seconds, not milliseconds,
so the session is created once, on first use, and stopped when the run ends; tests
that only need pure code never start it. It has Hive support and is pointed at
``local_hive_metastore`` (which therefore starts first): ``CREATE DATABASE`` and
``saveAsTable`` land in that metastore, where the Hive backend reads them.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import pytest


def _unavailable(what: str, exc: Exception) -> None:
    """CI has Java and pyspark: a missing server is a failure there, a skip elsewhere."""
    if os.environ.get("CI"):
        pytest.fail(f"no {what} in CI: {exc}")
    pytest.skip(f"no {what} here: {exc}")


@pytest.fixture(scope="session")
def local_hive_metastore(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """The run's one local metastore (Hive 2.3); the ``spark`` session is pointed at it."""
    from pushdown_lab.metastore import MetastoreUnavailable, throwaway_metastore

    parent = str(tmp_path_factory.mktemp("hive-metastore"))
    try:
        with throwaway_metastore(parent=parent) as server:
            yield server
    except MetastoreUnavailable as exc:
        _unavailable("Hive Metastore", exc)


@pytest.fixture(scope="session")
def hive4_metastore(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """The run's one Hive 4 metastore: the lab's own (Hive 4.0.1 standalone from Maven
    Central, on 127.0.0.1, embedded Derby; about 15 s to start), else a container where a
    Docker engine answers (docker/compose.yaml's service)."""
    from pushdown_lab.metastore import MetastoreUnavailable, container_metastore
    from pushdown_lab.metastore4 import throwaway_metastore4

    local = throwaway_metastore4(parent=str(tmp_path_factory.mktemp("hive4-metastore")))
    try:
        server = local.__enter__()
    except MetastoreUnavailable as exc:
        reason = str(exc)
    else:
        try:
            yield server
        finally:
            local.__exit__(None, None, None)
        return
    try:
        with container_metastore() as server:
            yield server
    except MetastoreUnavailable as exc:
        _unavailable("Hive 4 metastore", RuntimeError(f"{reason}; {exc}"))


@pytest.fixture(scope="session", params=["hive2-local", "hive4"])
def hive_metastore(request: pytest.FixtureRequest) -> Any:
    """The metastore the Hive suite runs against: the local Hive 2.3, and again a Hive 4
    (the lab's own from Maven Central, or a container where a Docker engine answers)."""
    if request.param == "hive2-local":
        return request.getfixturevalue("local_hive_metastore")
    return request.getfixturevalue("hive4_metastore")


@pytest.fixture(scope="session")
def ranger_judge() -> Any:
    """The run's one Ranger judge: Ranger 2.9's own policy engine in a Java process
    (:class:`pushdown_lab.ranger_judge.RangerJudge`, about 2 s to start), the same process
    ``pushdown_lab.ranger_ground_truth`` asks; it ends with the run."""
    from pushdown_lab.ranger_ground_truth import shared_judge
    from pushdown_lab.ranger_judge import JudgeUnavailable

    try:
        return shared_judge()
    except JudgeUnavailable as exc:
        _unavailable("Ranger judge", exc)


@pytest.fixture
def ranger_standin() -> Iterator[Any]:
    from pushdown_lab.ranger_standin import Standin

    with Standin() as standin:
        yield standin


@pytest.fixture
def uc_standin() -> Iterator[Any]:
    from pushdown_lab.uc_standin import Standin

    with Standin() as standin:
        yield standin


@pytest.fixture(scope="session")
def spark(tmp_path_factory: pytest.TempPathFactory, local_hive_metastore: Any) -> Iterator[Any]:
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    from pyspark.sql import SparkSession

    warehouse = tmp_path_factory.mktemp("spark-warehouse")
    session = (
        SparkSession.builder.master("local[2]")
        .appName("pushdown-tests")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", "4")
        .config("spark.default.parallelism", "4")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.sql.warehouse.dir", str(warehouse))
        .config("spark.hadoop.hive.metastore.uris", local_hive_metastore.uri)
        .config("spark.sql.catalogImplementation", "hive")
        .enableHiveSupport()
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    try:
        yield session
    finally:
        session.stop()
