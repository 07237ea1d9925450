"""A PySpark data pipeline that tells pushdown about every table it creates.

A pipeline creates databases and tables in the Hive Metastore (Spark with Hive support)
and writes rows into them. Right after creating a table it calls pushdown's library
hook, :class:`TableHook`: the table is recorded in the model as a created object (and
its database as a schema, when the model does not hold it yet), and recording it syncs
the backends over that scope. The Hive backend then grants on the new table what the
model decides: a table under a schema-level ALLOW gets the grant, one under a DENY does
not. A table created without the hook is found by the next sync (the backend's
discovery, or a full sync).

    hook = TableHook(access_control, catalog="lake", creator="etl")
    run(spark, [TableJob("sales", "orders", rows, "id INT, total DOUBLE")], on_created=hook)

Names are quoted for Spark SQL (backticks, doubled inside), never spliced raw; a
database or table name Spark cannot hold is refused before anything runs.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from pushdown.app.service import AccessControl, ChangeResult
from pushdown.model.securables import ObjectRef, SecurableType

log = logging.getLogger(__name__)

#: what the metastore stores as a database or table name (it lower-cases them)
HIVE_NAME = re.compile(r"[A-Za-z0-9_]{1,128}")


def quote(name: str) -> str:
    """A Spark SQL identifier: backticks, with any backtick inside doubled."""
    return "`" + name.replace("`", "``") + "`"


def check_name(kind: str, name: str) -> str:
    """The name as the metastore keeps it (lower case); a clear error when it cannot."""
    if not HIVE_NAME.fullmatch(name):
        raise ValueError(
            f"{kind} name {name!r}: the Hive Metastore keeps only letters, digits and _ (1-128 of them)"
        )
    return name.lower()


@dataclass(frozen=True)
class TableJob:
    """One table the pipeline writes: its database, name, rows and Spark schema (DDL)."""

    db: str
    table: str
    rows: Sequence[tuple[Any, ...]]
    schema: str
    #: call the hook for this table (a job that forgets to is what discovery is for)
    hooked: bool = True


@dataclass
class TableHook:
    """pushdown's library hook for a pipeline: ``hook(db, table)`` records the table (and
    its database, if new to the model) as created by ``creator`` in ``catalog``, which
    syncs the backends over that scope. ``results`` keeps every change's result; a
    backend that could not be reached is in ``lagging`` and catches up on the next sync
    (the table stays without grants meanwhile: the narrower side)."""

    control: AccessControl
    catalog: str
    creator: str | None = None
    results: list[ChangeResult] = field(default_factory=list)

    def __call__(self, db: str, table: str) -> ChangeResult:
        schema = ObjectRef(SecurableType.SCHEMA, (self.catalog, db))
        if schema not in self.control.model.objects:
            self.results.append(self.control.create_object(schema, self.creator))
        obj = ObjectRef(SecurableType.TABLE, (self.catalog, db, table))
        if obj in self.control.model.objects:
            result = self._again()
        else:
            result = self.control.create_object(obj, self.creator)
        self.results.append(result)
        for backend, error in result.lagging.items():
            log.warning("table %s.%s: backend %s did not converge yet (%s)", db, table, backend, error)
        return result

    def _again(self) -> ChangeResult:
        """A table the model holds already, written again (a re-run): Spark drops and
        creates it, and the metastore drops its grants with it, while the model does not
        change and the table list neither. A full sync of the catalog's backend grants
        them again (when the access control pushes changes at all)."""
        props = self.control.model.objects.get(ObjectRef(SecurableType.CATALOG, (self.catalog,)), {})
        backend = props.get("backend")
        if not self.control.push or backend not in self.control.backends:
            return ChangeResult((), ())
        return ChangeResult((), (), tuple(self.control.sync([backend], full=True)))

    @property
    def lagging(self) -> dict[str, str]:
        out: dict[str, str] = {}
        for result in self.results:
            out.update(result.lagging)
        return out


def run(
    spark: Any,
    jobs: Iterable[TableJob],
    *,
    on_created: Callable[[str, str], object] | None = None,
    progress: Callable[[str], None] | None = None,
) -> list[str]:
    """Create each job's database (if missing) and table, write its rows, and call
    ``on_created(db, table)`` right after the table exists (for hooked jobs). Returns the
    tables written, as ``db.table``. Existing tables are overwritten (a re-run is safe)."""
    jobs = list(jobs)
    for job in jobs:  # every name is checked before anything runs
        check_name("database", job.db)
        check_name("table", job.table)
    written: list[str] = []
    created_dbs: set[str] = set()
    for job in jobs:
        db, table = check_name("database", job.db), check_name("table", job.table)
        if db not in created_dbs:
            spark.sql(f"CREATE DATABASE IF NOT EXISTS {quote(db)}")
            created_dbs.add(db)
        # the rows are in memory, so they are few: one task writes them, as one file
        frame = spark.createDataFrame(list(job.rows), job.schema).coalesce(1)
        frame.write.mode("overwrite").format("parquet").saveAsTable(f"{quote(db)}.{quote(table)}")
        written.append(f"{db}.{table}")
        if progress is not None:
            progress(f"wrote {len(job.rows)} row(s) to {db}.{table}")
        if job.hooked and on_created is not None:
            on_created(db, table)
    return written
