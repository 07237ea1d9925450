"""The data pipeline end to end: a PySpark job (the run's one Hive-enabled SparkSession)
creates databases and tables in the run's metastore and calls pushdown's library hook
for each; the Hive backend grants what the model says, checked with the metastore's own
``get_privilege_set``. A table created without the hook is found by the next sync.

The pipeline is an example (``examples/hive_pipeline.py``), not a package: it is loaded
from its file."""

from __future__ import annotations

import importlib.util
import itertools
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pushdown_hive.client import HiveObject, MetastoreClient

from pushdown.app.service import AccessControl
from pushdown.app.settings import BackendConfig, Config
from pushdown.model.principals import Principal


def _example(name: str, path: Path) -> Any:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # its dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


pipeline = _example("hive_pipeline", Path(__file__).resolve().parents[4] / "examples" / "hive_pipeline.py")
TableHook, TableJob, check_name, quote, run = (
    pipeline.TableHook,
    pipeline.TableJob,
    pipeline.check_name,
    pipeline.quote,
    pipeline.run,
)

pytestmark = [pytest.mark.hive, pytest.mark.spark]

CATALOG = "lake"
# its own fence: other tests' grants and roles on this metastore are not its own
GRANTOR, ROLE_PREFIX = "pipeline-test", "plt_"
_runs = itertools.count()


@pytest.fixture
def control(local_hive_metastore: Any, tmp_path: Path) -> Iterator[AccessControl]:
    backend = BackendConfig(
        "hive",
        "hive",
        {
            "host": local_hive_metastore.host,
            "port": local_hive_metastore.port,
            "grantor": GRANTOR,
            "role_prefix": ROLE_PREFIX,
        },
    )
    ac = AccessControl.open(
        Config(store=str(tmp_path / "model.db"), backends={"hive": backend}), create_store=True
    )
    yield ac
    ac.close()


@pytest.fixture
def hms(local_hive_metastore: Any) -> Iterator[MetastoreClient]:
    """A client of the metastore Spark writes to (the local one)."""
    with MetastoreClient.connect(local_hive_metastore.uri, timeout=30) as client:
        yield client


def select(hms: MetastoreClient, user: str, groups: list[str], db: str, table: str) -> bool:
    return "SELECT" in hms.get_privilege_set(HiveObject.of_table(db, table), user, groups).all


def test_pipeline_tables_get_exactly_the_models_grants(
    spark: Any, control: AccessControl, hms: MetastoreClient
) -> None:
    n = next(_runs)
    sales, hr = f"pl_sales_{n}", f"pl_hr_{n}"
    ac = control
    # the administrator's model: analysts read the whole lake except schema hr
    for user in ("alice", "etl"):
        ac.add_user(user)
    ac.add_group("analysts", ["alice"])
    ac.create_object(f"catalog {CATALOG}", properties={"backend": "hive"})
    ac.create_object(f"schema {CATALOG}.{sales}")
    ac.create_object(f"schema {CATALOG}.{hr}")
    ac.create_role("reader")
    ac.grant_privileges("reader", f"catalog {CATALOG}", ["USE_CATALOG", "USE_SCHEMA", "SELECT_TABLE"])
    ac.grant_privileges("reader", f"schema {CATALOG}.{hr}", ["SELECT_TABLE"], "DENY")
    ac.grant_role("reader", Principal.group("analysts"))
    assert all(not r.error for r in ac.sync(full=True))  # records what discovery compares with

    hook = TableHook(ac, CATALOG, creator="etl")
    try:
        written = run(
            spark,
            [
                TableJob(sales, "orders", [(1, 9.5), (2, 20.0)], "id INT, total DOUBLE"),
                TableJob(hr, "pay", [(1, 5000)], "id INT, amount INT"),
            ],
            on_created=hook,
        )
        assert written == [f"{sales}.orders", f"{hr}.pay"]
        assert hook.lagging == {}
        # Spark really wrote the rows, into tables of the metastore
        # (counted in the JVM: collecting rows to Python leaves a socket behind in pyspark 3.5)
        assert spark.table(f"{quote(sales)}.orders").where("total > 9").count() == 2
        assert hms.get_all_tables(sales) == ["orders"]

        # the model's decision, on the metastore: ALLOW under sales, DENY under hr
        assert select(hms, "alice", ["analysts"], sales, "orders")
        assert not select(hms, "alice", ["analysts"], hr, "pay")
        # what makes the grant is the group's membership, not the user's name
        assert not select(hms, "mallory", [], sales, "orders")

        # a job that forgets the hook: its table has no grant until the next sync finds it
        run(spark, [TableJob(sales, "adhoc", [(1,)], "id INT", hooked=False)], on_created=hook)
        assert not select(hms, "alice", ["analysts"], sales, "adhoc")
        results = ac.sync()  # nothing journalled: the backend's discovery scopes the sync
        assert all(not r.error for r in results), results
        assert select(hms, "alice", ["analysts"], sales, "adhoc")

        # a re-run overwrites a table the model holds already (Spark drops and creates it again)
        run(spark, [TableJob(sales, "orders", [(3, 1.0)], "id INT, total DOUBLE")], on_created=hook)
        assert hook.lagging == {}
        assert select(hms, "alice", ["analysts"], sales, "orders")

        run(spark, [TableJob(hr, "bonus", [(1,)], "id INT"), TableJob(sales, "late", [(1,)], "id INT")])
        assert all(not r.error for r in ac.sync(full=True))  # a full sync finds them too
        assert select(hms, "alice", ["analysts"], sales, "late")
        assert not select(hms, "alice", ["analysts"], hr, "bonus")  # still under the DENY
    finally:
        for db in (sales, hr):
            spark.sql(f"DROP DATABASE IF EXISTS {quote(db)} CASCADE")
        # metastore roles are global: nothing of this test is left behind
        for role in hms.get_role_names():
            if role.startswith(ROLE_PREFIX):
                hms.drop_role(role)
        assert not [r for r in hms.get_role_names() if r.startswith(ROLE_PREFIX)]


def test_names_are_checked_before_anything_runs() -> None:
    assert quote("a`b") == "`a``b`"
    assert check_name("table", "Orders_1") == "orders_1"
    with pytest.raises(ValueError, match="only letters, digits and _"):
        run(object(), [TableJob("ok", "x; DROP DATABASE y", [], "id INT")])
