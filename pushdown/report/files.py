"""The report's files: Parquet partitioned by catalog, CSV, and the manifest that names them.

Layout of a report directory::

    report.json            the manifest: what was reported, counts, the files
    SUMMARY.md             the human summary
    entitlements.csv       every row, header first (null as an empty field; a value
                           that a spreadsheet would run as a formula, one beginning
                           with = + - @ tab or carriage return, and one beginning with
                           ', is written with a ' before it, read back without)
    parquet/catalog=<name>/part-00000.parquet
                           the rows of one catalog: a Hive-style partition (the name
                           URI-escaped; the ``catalog`` column lives in the directory
                           name, as readers of partitions expect), so ``parquet/`` reads
                           as one dataset (``spark.read.parquet``, ``pyarrow.dataset``)
    parquet/part-00000.parquet
                           only in a report without rows: no rows, every column (the
                           ``catalog`` one too), so ``parquet/`` still reads as a dataset

A report a distributed engine writes (``--engine spark``) has the same columns and rows,
written by that engine's writers: ``csv/part-*.csv`` in place of ``entitlements.csv``
(each part with the header; the parts, in name order, hold the rows in order) and
several ``part-*.parquet`` files in each catalog's partition. The manifest lists the
files either way, and everything here reads both.

Rows are written as they come (one batch at a time) and read back the same way.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote, unquote

from pushdown.errors import PushdownError
from pushdown.report.schema import COLUMNS, REQUIRED, Row

MANIFEST = "report.json"
SUMMARY = "SUMMARY.md"
CSV_FILE = "entitlements.csv"
#: a distributed engine's CSV: part files in this directory, in name order
CSV_DIR = "csv"
PARQUET_FILE = "part-00000.parquet"
PARQUET_DIR = "parquet"
PARTITION = "catalog="
FORMATS = ("parquet", "csv")
KIND = "pushdown entitlement report"
VERSION = 1
#: The first characters that make a spreadsheet read a CSV field as a formula (and ``'``,
#: the escape itself, so that reading back is exact).
FORMULA = ("=", "+", "-", "@", "\t", "\r", "'")


def csv_field(value: str | None) -> str:
    """``value`` as a CSV field a spreadsheet shows as text, never runs as a formula."""
    if value is None:
        return ""
    return "'" + value if value.startswith(FORMULA) else value


def csv_value(field: str) -> str:
    """The value :func:`csv_field` wrote."""
    return field[1:] if field.startswith("'") else field


def _arrow() -> tuple[Any, Any]:
    try:
        import pyarrow as pa  # type: ignore[import-untyped]
        import pyarrow.parquet as pq  # type: ignore[import-untyped]
    except ImportError:  # pragma: no cover - a core dependency; only a broken install lacks it
        raise PushdownError(
            "Parquet output needs pyarrow (a dependency of pushdown: run scripts/setup.sh), "
            "or use --format csv"
        ) from None
    return pa, pq


def partition_dir(catalog: str) -> str:
    return f"{PARQUET_DIR}/{PARTITION}{quote(catalog, safe='')}"


class PartWriter:
    """The rows of the catalog being written, to every chosen format."""

    def __init__(self, root: Path, formats: tuple[str, ...]) -> None:
        self.root = root
        self.formats = formats
        self._csv_file = None
        if "csv" in formats:
            self._csv_file = (root / CSV_FILE).open("w", newline="", encoding="utf-8")
        self._csv = csv.writer(self._csv_file) if self._csv_file is not None else None
        if self._csv is not None:
            self._csv.writerow(COLUMNS)
        self._parquet: Any = None  # a pyarrow.parquet.ParquetWriter (pyarrow ships no types)
        self._schema: Any = None
        self.files: list[str] = [CSV_FILE] if self._csv is not None else []

    def write(self, catalog: str, batch: list[Row]) -> None:
        if self._csv is not None:
            self._csv.writerows([csv_field(v) for v in row] for row in batch)
        if "parquet" in self.formats:
            self._write_parquet(catalog, batch)

    def _write_parquet(self, catalog: str, batch: list[Row]) -> None:
        pa, pq = _arrow()
        if self._schema is None:
            fields = [pa.field(c, pa.string(), nullable=c not in REQUIRED) for c in COLUMNS[1:]]
            self._schema = pa.schema(fields)
        if self._parquet is None:
            folder = partition_dir(catalog)
            (self.root / folder).mkdir(parents=True)
            self._parquet = pq.ParquetWriter(self.root / folder / PARQUET_FILE, self._schema)
            self.files.append(f"{folder}/{PARQUET_FILE}")
        columns = list(zip(*batch, strict=True))[1:]
        self._parquet.write_table(pa.table(columns, schema=self._schema))

    def end_catalog(self) -> None:
        if self._parquet is not None:
            self._parquet.close()
            self._parquet = None

    def close(self) -> None:
        self.end_catalog()
        if "parquet" in self.formats and not any(f.startswith(f"{PARQUET_DIR}/") for f in self.files):
            self._write_empty_parquet()
        if self._csv_file is not None:
            self._csv_file.close()

    def _write_empty_parquet(self) -> None:
        """No rows at all: one file with no rows and every column, so that readers of
        ``parquet/`` find a dataset (an empty one) with the report's columns."""
        pa, pq = _arrow()
        schema = pa.schema([pa.field(c, pa.string(), nullable=c not in REQUIRED) for c in COLUMNS])
        (self.root / PARQUET_DIR).mkdir(parents=True, exist_ok=True)
        pq.write_table(schema.empty_table(), self.root / PARQUET_DIR / PARQUET_FILE)
        self.files.append(f"{PARQUET_DIR}/{PARQUET_FILE}")


def write_manifest(root: Path, manifest: dict[str, Any]) -> None:
    text = json.dumps({"kind": KIND, "version": VERSION, **manifest}, indent=1, sort_keys=True)
    (root / MANIFEST).write_text(text + "\n", encoding="utf-8")


def read_manifest(root: Path) -> dict[str, Any]:
    """The manifest of the report in ``root``; a clear error when ``root`` holds none."""
    path = root / MANIFEST
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise PushdownError(f"{root} is not a pushdown report (no {MANIFEST} in it)") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise PushdownError(f"cannot read the report manifest {path}: {exc}") from None
    if not isinstance(data, dict) or data.get("kind") != KIND:
        raise PushdownError(f"{path} is not the manifest of a pushdown report")
    if data.get("version") != VERSION:
        found = data.get("version")
        raise PushdownError(f"{path}: report format version {found!r}; this pushdown reads {VERSION}")
    return data


def is_report(root: Path) -> bool:
    try:
        read_manifest(root)
    except PushdownError:
        return False
    return True


def read_rows(root: Path) -> Iterator[tuple[str, ...]]:
    """A report's rows in written order (nulls as ``""``), from its CSV, else its Parquet."""
    manifest = read_manifest(root)
    files = manifest.get("files", [])
    try:
        csv_parts = sorted(f for f in files if f.startswith(f"{CSV_DIR}/") and f.endswith(".csv"))
        if CSV_FILE in files:
            yield from _csv_rows(root / CSV_FILE)
        elif csv_parts:
            for part in csv_parts:
                yield from _csv_rows(root / part)
        else:
            yield from _parquet_rows(root, [f for f in files if f.startswith(f"{PARQUET_DIR}/")])
    except (OSError, csv.Error, UnicodeDecodeError, ValueError) as exc:
        raise PushdownError(f"cannot read the report in {root}: {exc}") from None


def _csv_rows(path: Path) -> Iterator[tuple[str, ...]]:
    with path.open(newline="", encoding="utf-8") as handle:
        reader = csv.reader(handle)
        header = next(reader, None)
        if header is None and path.parent.name == CSV_DIR:
            return  # a distributed writer's part with no rows
        if tuple(header or ()) != COLUMNS:
            raise ValueError(f"{path.name} does not start with the report's header")
        for row in reader:
            if len(row) != len(COLUMNS):
                raise ValueError(f"{path.name} line {reader.line_num}: {len(row)} fields, not {len(COLUMNS)}")
            yield tuple(csv_value(v) for v in row)


def _parquet_rows(root: Path, files: list[str]) -> Iterator[tuple[str, ...]]:
    _, pq = _arrow()
    # a catalog's partition only: the file of a report without rows sits beside them
    parts = [f for f in files if f.split("/")[1].startswith(PARTITION) and f.endswith(".parquet")]
    by_catalog = sorted((unquote(f.split("/")[1].removeprefix(PARTITION)), f) for f in parts)
    for catalog, name in by_catalog:
        for batch in pq.ParquetFile(root / name).iter_batches(columns=list(COLUMNS[1:])):
            columns = [batch.column(i).to_pylist() for i in range(batch.num_columns)]
            for values in zip(*columns, strict=True):
                yield (catalog, *("" if v is None else v for v in values))
