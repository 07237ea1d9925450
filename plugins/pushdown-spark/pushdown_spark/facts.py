"""The model's facts as Parquet files that Spark reads: written by pyarrow, a batch at a time.

The driver never hands Spark one big Python object (``createDataFrame`` of a list goes
through the driver's JVM and then through Python workers): it streams each fact table
to a Parquet file in a *staging* directory, and the executors read the files. The
staging directory must be readable by every executor: a local temporary directory for
``local[*]`` or a standalone cluster on one machine, a shared file system (``hdfs://``,
``s3a://`` or a mount every node sees) on a cluster — the ``[spark] staging`` setting.

The files hold names (users, roles, objects) and grants, never a credential.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import uuid
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import Any

import pyarrow as pa  # type: ignore[import-untyped]
import pyarrow.parquet as pq  # type: ignore[import-untyped]
from pyarrow import fs as pafs

BATCH = 50_000


def _filesystem(uri: str) -> tuple[Any, str]:
    """pyarrow's file system for ``uri`` (a plain path is a local one) and its path in it."""
    if "://" not in uri:
        return pafs.LocalFileSystem(), os.path.abspath(uri)
    return pafs.FileSystem.from_uri(uri)  # type: ignore[no-any-return]


def spark_path(uri: str) -> str:
    """``uri`` as Spark reads it (a local path as a ``file:`` URI, so that executors never
    look for it on a default file system such as HDFS)."""
    return uri if "://" in uri else "file://" + os.path.abspath(uri)


class Staging:
    """One run's directory of fact files below the ``staging`` root (removed at the end)."""

    def __init__(self, root: str | None) -> None:
        self._made_root = root is None
        self.root = root if root is not None else tempfile.mkdtemp(prefix="pushdown-spark-")
        self.fs, base = _filesystem(self.root)
        run = f"run-{uuid.uuid4().hex}"
        self.base = f"{base.rstrip('/')}/{run}"
        self.fs.create_dir(self.base, recursive=True)
        #: the run's directory as Spark reads it
        self.uri = spark_path(self.base) if "://" not in self.root else f"{self.root.rstrip('/')}/{run}"

    def write(self, name: str, schema: Any, rows: Iterable[tuple[Any, ...]]) -> str:
        """Write ``rows`` (tuples in ``schema``'s column order) as ``name``; its URI for Spark."""
        with self.fs.open_output_stream(f"{self.base}/{name}.parquet") as sink:
            with pq.ParquetWriter(sink, schema) as writer:
                for batch in _batches(rows):
                    writer.write_table(pa.table(list(zip(*batch, strict=True)), schema=schema))
        return f"{self.uri}/{name}.parquet"

    def close(self) -> None:
        try:
            self.fs.delete_dir(self.base)
        except OSError:  # pragma: no cover - already gone
            pass
        if self._made_root:
            shutil.rmtree(self.root, ignore_errors=True)


@contextmanager
def staging(root: str | None) -> Iterator[Staging]:
    stage = Staging(root)
    try:
        yield stage
    finally:
        stage.close()


def _batches(rows: Iterable[tuple[Any, ...]]) -> Iterator[list[tuple[Any, ...]]]:
    batch: list[tuple[Any, ...]] = []
    for row in rows:
        batch.append(row)
        if len(batch) >= BATCH:
            yield batch
            batch = []
    if batch:
        yield batch


def schema(**columns: Any) -> Any:
    return pa.schema([pa.field(name, kind) for name, kind in columns.items()])


STRING = pa.string()
BOOL = pa.bool_()
INT = pa.int32()
NAMES = pa.list_(pa.string())
PATH = pa.list_(pa.struct([("key", pa.string()), ("name", pa.string()), ("type", pa.string())]))

__all__ = ["BOOL", "INT", "NAMES", "PATH", "STRING", "Staging", "schema", "spark_path", "staging"]
