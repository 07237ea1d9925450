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

from pushdown.app.service.spec import load_spec
from pushdown.decide.inventory import Inventory
from pushdown.model.state import Model
from pushdown.report.files import read_manifest, read_rows
from pushdown.report.local import local_rows
from pushdown.report.operations import REPORTED
from pushdown.report.run import Request, write_report
from pushdown.report.schema import COLUMNS, sort_key
from pushdown.report.tally import Changes
from tests import builders
from tests.report.test_files import awkward

pytestmark = [
    pytest.mark.spark,
    pytest.mark.filterwarnings("ignore::ResourceWarning"),  # py4j's sockets, closed by the JVM
    pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning"),
]
ROOT = Path(__file__).resolve().parents[2]
#: random models per run, all in one Spark run (more cost little Spark time)
RANDOM_MODELS = 12


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
    """Through ``write_report``: the files Spark's writers make read back as the local ones."""
    counts = []
    for name, model in (("demo", load_spec(str(ROOT / "examples" / "demo.yaml"))), ("awkward", awkward())):
        mine, theirs = tmp_path / f"{name}-local", tmp_path / f"{name}-spark"
        local = write_report(model, Request(out=mine))
        remote = write_report(model, Request(out=theirs, engine="spark", compiler=engine))
        rows = list(read_rows(mine))
        spark_rows = list(read_rows(theirs))  # the CSV parts, in name order
        assert spark_rows == sorted(spark_rows), f"{name}: Spark's parts are not in the report's order"
        assert sorted(rows) == spark_rows and rows, name
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
    print("\nreport files, spark vs local (rows equal):", ", ".join(counts))


def test_spark_rows_equal_the_local_rows_on_random_models(engine: Any, tmp_path: Path) -> None:
    """Random models in one Spark run (their facts numbered apart): every model's rows equal
    its local report's, reasons, roles, sources, via and group included."""
    from pushdown_spark.facts import staging
    from pushdown_spark.report import BATCH_SEP, report_rows, write_batch

    models = [awkward(), *_random_models()]
    with staging(None) as stage, engine._planned():
        files = write_batch(stage, [(m, Inventory.of(m.objects)) for m in models], admin_matters=False)
        collected = report_rows(engine.session, files, REPORTED).collect()
    got: dict[int, list[tuple[str, ...]]] = {i: [] for i in range(len(models))}
    for row in collected:
        values = ["" if v is None else v for v in row]
        mid = int(values[0].split(BATCH_SEP, 1)[0])
        for i in (0, 1, 6):  # catalog, user, role carry the model's number
            values[i] = values[i].split(BATCH_SEP, 1)[1] if values[i] else ""
        got[mid].append(tuple(values))
    total = 0
    for mid, model in enumerate(models):
        want = sorted(sort_key(r) for part in local_rows(model, REPORTED) for b in part.batches for r in b)
        assert sorted(got[mid]) == want, f"model {mid}: {model!r}"
        total += len(want)
    print(f"\nreport rows, spark vs local: {len(models)} models in one Spark run, {total} rows equal")


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
    expected = {k: v for k, v in local.changes.to_json().items() if not k.startswith("previous")}
    # a Spark report since a Spark one (CSV parts only) ...
    out = tmp_path / "new-spark"
    remote = write_report(after, Request(out=out, since=old_spark, engine="spark", compiler=engine))
    assert remote.changes is not None
    assert {k: v for k, v in remote.changes.to_json().items() if not k.startswith("previous")} == expected
    assert json.loads((out / "report.json").read_text())["since"]["added"] == expected["added"]
    # ... and Spark's comparison of a local report (Parquet) with the Spark one
    theirs = Changes(str(old_local), "?")
    listed = (old_local, read_manifest(old_local)["files"]), (out, read_manifest(out)["files"])
    with engine._planned():
        engine.compare_reports(*listed, theirs)
    assert {k: v for k, v in theirs.to_json().items() if not k.startswith("previous")} == expected
    print(f"\n--since in Spark: {expected['added']} added, {expected['removed']} removed, as the local merge")


def test_a_spark_report_without_rows_reads_as_an_empty_dataset(engine: Any, tmp_path: Path) -> None:
    """No one may do anything: the same files as the local report's (an empty Parquet file
    with every column, a CSV with no rows), the same counts."""
    model = builders.Builder().users("ann").catalog("c").schema("c.s").table("c.s.t").model
    write_report(model, Request(out=tmp_path / "local"))
    write_report(model, Request(out=tmp_path / "spark", engine="spark", compiler=engine))
    assert list(read_rows(tmp_path / "spark")) == list(read_rows(tmp_path / "local")) == []
    assert (
        _parquet_rows(tmp_path / "spark") == [] and (tmp_path / "spark/parquet/part-00000.parquet").is_file()
    )
    ours, theirs = read_manifest(tmp_path / "local"), read_manifest(tmp_path / "spark")
    assert (ours["rows"], ours["catalogs"], ours["users"]) == (
        theirs["rows"],
        theirs["catalogs"],
        theirs["users"],
    )
