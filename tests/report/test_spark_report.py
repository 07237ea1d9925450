"""The report as a Spark job (``--engine spark``) equals the local one, row for row.

The Spark engine decides, explains and fans out the rows on the executors and writes
them with Spark's own writers (Parquet partitioned by catalog, CSV parts); the driver
collects counts only. On the example, on awkward names with every leaf type and on
random models (``tests.builders.models()``), every run: the CSV rows, the Parquet
dataset's rows (both read back), the counts in the manifest and the summary equal the
local report's; ``--since`` computed in Spark counts what the local merge counts."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings

from pushdown.app.spec import load_spec
from pushdown.model.state import Model
from pushdown.report.files import read_manifest, read_rows
from pushdown.report.run import Request, write_report
from pushdown.report.schema import COLUMNS
from tests import builders
from tests.report.test_files import awkward

pytestmark = [
    pytest.mark.spark,
    pytest.mark.filterwarnings("ignore::ResourceWarning"),  # py4j's sockets, closed by the JVM
    pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning"),
]
ROOT = Path(__file__).resolve().parents[2]
#: random models per run: each is one Spark report (a few seconds on a warm session)
RANDOM_MODELS = 4


def _random_models() -> list[Model]:
    drawn: list[Model] = []

    @settings(
        max_examples=RANDOM_MODELS, deadline=None, database=None, suppress_health_check=list(HealthCheck)
    )
    @given(model=builders.models())
    def draw(model: Model) -> None:
        drawn.append(model)

    draw()
    return drawn


def _parquet_rows(root: Path) -> list[tuple[str, ...]]:
    """The Parquet dataset's rows as a reader of partitions sees them (pyarrow, hive style)."""
    import pyarrow.dataset as ds  # type: ignore[import-untyped]

    table = ds.dataset(root / "parquet", format="parquet", partitioning="hive").to_table()
    columns = [table.column(c).to_pylist() for c in COLUMNS]
    return sorted(tuple("" if v is None else str(v) for v in row) for row in zip(*columns, strict=True))


@pytest.fixture(scope="module")
def engine(request: pytest.FixtureRequest) -> Any:
    engine_module = pytest.importorskip("pushdown_spark.engine")
    return engine_module.SparkEngine(session=request.getfixturevalue("spark"))  # the run's one session


def test_the_spark_report_equals_the_local_one(engine: Any, tmp_path: Path) -> None:
    models = [("demo", load_spec(str(ROOT / "examples" / "demo.yaml"))), ("awkward", awkward())]
    models += [(f"random{i}", m) for i, m in enumerate(_random_models())]
    counts = []
    for name, model in models:
        mine, theirs = tmp_path / f"{name}-local", tmp_path / f"{name}-spark"
        local = write_report(model, Request(out=mine))
        remote = write_report(model, Request(out=theirs, engine="spark", compiler=engine))
        rows = list(read_rows(mine))
        spark_rows = list(read_rows(theirs))  # the CSV parts, in name order
        assert spark_rows == sorted(spark_rows), f"{name}: Spark's parts are not in the report's order"
        assert sorted(rows) == spark_rows, name
        assert _parquet_rows(mine) == _parquet_rows(theirs), name
        assert not (theirs / "entitlements.csv").exists() and any((theirs / "csv").iterdir())
        assert not [p for p in theirs.rglob("*") if p.name.endswith(".crc") or p.name == "_SUCCESS"]
        ours, spark_manifest = read_manifest(mine), read_manifest(theirs)
        for key in ("rows", "catalogs", "users", "operations", "metalake"):
            assert ours[key] == spark_manifest[key], (name, key)
        assert spark_manifest["engine"] == "spark"
        assert all((theirs / f).is_file() for f in spark_manifest["files"])
        assert (
            local.summary.replace("local engine", "spark engine").split("\n", 3)[3]
            == remote.summary.split("\n", 3)[3]
        )
        counts.append(f"{name} {len(rows)}")
    print("\nreport, spark vs local (rows equal):", ", ".join(counts))


def test_since_in_spark_counts_what_the_local_merge_counts(engine: Any, tmp_path: Path) -> None:
    demo = ROOT / "examples" / "demo.yaml"
    before = load_spec(str(demo))
    users = "users: [admin, alice, bob, carol, dave]"
    after_text = demo.read_text(encoding="utf-8").replace(users, users.replace("]", ", erin]"))
    after_text = after_text.replace("analysts: [alice, bob]", "analysts: [alice, erin]")
    changed = tmp_path / "changed.yaml"
    changed.write_text(after_text, encoding="utf-8")
    after = load_spec(str(changed))
    old_local = tmp_path / "old-local"
    old_spark = tmp_path / "old-spark"
    write_report(before, Request(out=old_local))
    write_report(before, Request(out=old_spark, engine="spark", compiler=engine, formats=("csv",)))
    local = write_report(after, Request(out=tmp_path / "new-local", since=old_local))
    assert local.changes is not None and local.changes.added and local.changes.removed
    expected = local.changes.to_json()
    for previous in (old_local, old_spark):  # a local report and a Spark one (CSV parts only)
        out = tmp_path / f"new-spark-from-{previous.name}"
        remote = write_report(after, Request(out=out, since=previous, engine="spark", compiler=engine))
        assert remote.changes is not None
        got = remote.changes.to_json()
        same = {k: v for k, v in got.items() if not k.startswith("previous")}
        assert same == {k: v for k, v in expected.items() if not k.startswith("previous")}
        assert json.loads((out / "report.json").read_text())["since"]["added"] == expected["added"]
    print(f"\n--since in Spark: {expected['added']} added, {expected['removed']} removed, as the local merge")
