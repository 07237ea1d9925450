"""The report's files on awkward names and every leaf type: Parquet and CSV hold the same
rows in the same order, partitions are URI-escaped, and the rows still equal ``authorize``."""

from __future__ import annotations

from pathlib import Path

import pytest

from pushdown.model.privileges import Condition, Privilege
from pushdown.model.securables import METALAKE, ObjectRef
from pushdown.model.state import Model
from pushdown.report.files import read_rows
from pushdown.report.run import Request, write_report
from tests.builders import Builder
from tests.report.test_differential import _compare

P = Privilege
ALLOW, DENY = Condition.ALLOW, Condition.DENY


def awkward() -> Model:
    b = Builder().users("ann", "bob", "c,y").group("g|1", "bob", "c,y")
    for catalog in ("a/b c", "10"):
        b.catalog(catalog, owner="c,y" if catalog == "10" else None)
    b.create(ObjectRef.of("schema", ("a/b c", "s.1")), "ann")
    for kind, leaf in (("table", "t"), ("topic", "k"), ("fileset", "f"), ("model", "m")):
        b.create(ObjectRef.of(kind, ("a/b c", "s.1", leaf)))
    b.create(ObjectRef.of("schema", ("10", "x")))
    b.create(ObjectRef.of("table", ("10", "x", "t")), "bob")
    b.role(
        "r",
        (METALAKE, P.USE_CATALOG, ALLOW),
        (METALAKE, P.USE_SCHEMA, ALLOW),
        (ObjectRef.of("catalog", ("a/b c",)), P.SELECT_TABLE, ALLOW),
        (ObjectRef.of("catalog", ("a/b c",)), P.CONSUME_TOPIC, ALLOW),
        (ObjectRef.of("schema", ("a/b c", "s.1")), P.READ_FILESET, ALLOW),
        (ObjectRef.of("catalog", ("a/b c",)), P.USE_MODEL, ALLOW),
        (ObjectRef.of("table", ("a/b c", "s.1", "t")), P.SELECT_TABLE, DENY),
        groups=["g|1"],
    )
    b.role("w", (ObjectRef.of("catalog", ("10",)), P.MODIFY_TABLE, ALLOW), users=["ann", "bob"])
    return b.model


def test_awkward_names_and_every_leaf_type_equal_authorize() -> None:
    assert _compare(awkward()) == 0


def test_parquet_and_csv_hold_the_same_rows_and_partitions_are_escaped(tmp_path: Path) -> None:
    model = awkward()
    both = write_report(model, Request(out=tmp_path / "both"))
    write_report(model, Request(out=tmp_path / "pq", formats=("parquet",)))
    parts = sorted(p.name for p in (tmp_path / "pq" / "parquet").iterdir())
    assert parts == ["catalog=10", "catalog=a%2Fb%20c"]
    from_csv = list(read_rows(tmp_path / "both"))
    from_parquet = list(read_rows(tmp_path / "pq"))
    assert from_csv == from_parquet == sorted(from_csv) and len(from_csv) == both.tally.rows > 0
    assert {r[0] for r in from_csv} == {"10", "a/b c"}
    kinds = {r[3] for r in from_csv}
    assert kinds == {"catalog", "schema", "table", "topic", "fileset", "model"}
    assert any(r[1] == "c,y" and r[10] == "group" and r[11] == "g|1" for r in from_csv)


def test_rows_stream_in_bounded_batches(monkeypatch: pytest.MonkeyPatch) -> None:
    from pushdown.report import local
    from pushdown.report.operations import report_operations

    monkeypatch.setattr(local, "BATCH", 7)
    sizes = [len(b) for part in local.local_rows(awkward(), report_operations()) for b in part.batches]
    assert max(sizes) == 7 and sum(sizes) > 7 * 3  # a metalake-wide owner's rows are split too


def test_csv_never_holds_a_formula_and_reads_back_exactly(tmp_path: Path) -> None:
    b = Builder().users("=HYPERLINK(\"http://x\")", "+bob", "'q").group("@g", "+bob", "'q")
    b.catalog("-c", owner="=HYPERLINK(\"http://x\")")
    b.create(ObjectRef.of("schema", ("-c", "=s")))
    b.create(ObjectRef.of("table", ("-c", "=s", "@t")))
    b.role("=r", (ObjectRef.of("catalog", ("-c",)), P.USE_CATALOG, ALLOW), groups=["@g"])
    model = b.model
    write_report(model, Request(out=tmp_path / "both"))
    write_report(model, Request(out=tmp_path / "pq", formats=("parquet",)))
    import csv

    with (tmp_path / "both" / "entitlements.csv").open(newline="") as handle:
        fields = [f for row in list(csv.reader(handle))[1:] for f in row]
    assert fields and not [f for f in fields if f[:1] in ("=", "+", "-", "@")]
    assert "'=HYPERLINK(\"http://x\")" in fields and "''q" in fields
    assert list(read_rows(tmp_path / "both")) == list(read_rows(tmp_path / "pq"))


def test_a_report_without_rows_still_has_a_parquet_dataset_with_every_column(tmp_path: Path) -> None:
    import pyarrow.dataset as ds

    from pushdown.report.schema import COLUMNS

    model = Builder().users("ann").catalog("c").model  # nobody may do anything
    report = write_report(model, Request(out=tmp_path / "r"))
    assert report.tally.rows == 0
    table = ds.dataset(tmp_path / "r" / "parquet", format="parquet", partitioning="hive").to_table()
    assert table.num_rows == 0 and table.column_names == list(COLUMNS)
    assert list(read_rows(tmp_path / "r")) == []
    assert list(read_rows(tmp_path / "r")) == list(_parquet_only(tmp_path, model))


def _parquet_only(tmp_path: Path, model: Model) -> list[tuple[str, ...]]:
    write_report(model, Request(out=tmp_path / "pq", formats=("parquet",)))
    return list(read_rows(tmp_path / "pq"))
