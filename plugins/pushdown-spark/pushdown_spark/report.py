"""The entitlement report as one Spark job: rows decided, explained and fanned out on the
executors, written by Spark's own writers; the driver holds counts, never rows.

The facts go in as Parquet files (:mod:`pushdown_spark.facts`): users, the roles each
holds (directly or through which group), grants, owners, and the held objects with
their paths. Then, as DataFrames:

1. each user's *class* per catalog: the roles they hold that have a grant on the
   metalake or in the catalog (and service-admin status) — users of one class decide
   alike wherever they own nothing on the path;
2. *candidates*: (class, object) pairs below an ALLOW of the class's roles (a row needs a
   reason, and every reason is an ALLOW on the path, an ownership on the path or
   service-admin status), and (owner, object) pairs below what a user owns, decided per
   user;
3. each candidate's path joined with its grants (and the owner's ownerships), aggregated
   per path depth into ALLOWed / DENYed privileges and owned flags; each operation's
   requirement and its *evidence* are column expressions (:func:`pushdown_spark.rules.evidence`);
4. the evidence joined back with the grants on the path (role, privilege, source) and the
   owned ancestors (source); class rows fanned out to the class's members (except where a
   member owns something on the path: that user's own rows stand there), each grant row
   joined with how its user holds the role (``via``, ``group``);
5. the rows range-partitioned by (catalog, user, …) and sorted in each partition, so the
   part files, read in name order, are in the report's row order; written as Parquet
   partitioned by catalog and as CSV (the same quoting and formula escaping as the local
   report's), counted with aggregates (per catalog, per user) that the driver collects.

The rows equal the local report's (:mod:`pushdown.report.local`), which the tests check on
random models.
"""

from __future__ import annotations

import gc
import os
import shutil
import sys
import time
import warnings
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F

from pushdown.decide.inventory import Inventory
from pushdown.decide.requirements import OPERATIONS
from pushdown.model.privileges import Condition
from pushdown.model.securables import LEAF_TYPES, METALAKE, SecurableType
from pushdown.model.state import Model
from pushdown.report.files import CSV_FILE, FORMULA, PARQUET_DIR, PARQUET_FILE
from pushdown.report.schema import COLUMNS, DIRECT, GRANT, GROUP, OWNER, SERVICE_ADMIN
from pushdown.report.tally import CatalogCount, Changes, Tally, UserCount
from pushdown_spark.compiler import _collect, _needs_admin, node_key
from pushdown_spark.facts import BOOL, INT, PATH, STRING, Staging, schema, spark_path
from pushdown_spark.rules import DEPTHS, Rules, allow_col, deny_col, owned_col, target

T = SecurableType
KEY_SEP, NAME_SEP, NOBODY = "\x1d", "\x1f", "\x1c"
#: where Spark writes the CSV parts (the local report writes one file, ``entitlements.csv``)
CSV_DIR = "csv"
_DATA = frozenset({T.CATALOG, T.SCHEMA, *LEAF_TYPES})
Progress = Callable[[str], None]
TIMING = bool(os.environ.get("PUSHDOWN_SPARK_TIMING"))
#: before a batched model's number (no name holds a control character)
BATCH_SEP = "\x1c"


# -- the facts ----------------------------------------------------------------------------
def write_facts(stage: Staging, model: Model, inventory: Inventory, admin_matters: bool) -> dict[str, str]:
    """The model's facts for a report, one Parquet file each, streamed from the model."""
    return write_batch(stage, [(model, inventory)], admin_matters)


def write_batch(
    stage: Staging, batch: Sequence[tuple[Model, Inventory]], admin_matters: bool
) -> dict[str, str]:
    """The facts of one report, or of several models' reports at once (what a test of many
    small models wants): with more than one, each model's users, roles, catalogs and
    object keys carry its number before :data:`BATCH_SEP`, so no join meets another
    model's facts, and the rows come out with numbered users, roles and catalogs."""
    many = len(batch) > 1

    def tag(mid: int, name: str) -> str:
        return f"{mid}{BATCH_SEP}{name}" if many else name

    def objects() -> Iterator[tuple[Any, ...]]:
        for mid, (model, inventory) in enumerate(batch):
            top = (tag(mid, "metalake" + "\x1e"), model.metalake, "metalake")
            for obj in inventory.within(METALAKE):
                if obj.type not in _DATA:
                    continue
                path = [top, *((tag(mid, node_key(a)), a.name, a.type.value) for a in obj.path[1:])]
                okey = tag(mid, node_key(obj))
                yield (tag(mid, obj.names[0]), okey, obj.name, obj.type.value, len(obj.names), path)

    def grants() -> Iterator[tuple[Any, ...]]:
        for mid, (model, inventory) in enumerate(batch):
            held = inventory.__contains__
            for obj, by_priv in model.by_object.items():
                if obj != METALAKE and (obj.type not in _DATA or not held(obj)):
                    continue
                gkey = tag(mid, "metalake" + "\x1e") if obj == METALAKE else tag(mid, node_key(obj))
                catalog = tag(mid, obj.names[0]) if obj.names else None
                for priv, conds in by_priv.items():
                    for cond, roles in conds.items():
                        for role in roles:
                            yield (gkey, catalog, priv.value, cond.value, tag(mid, role))

    def holds() -> Iterator[tuple[Any, ...]]:
        for mid, (model, _) in enumerate(batch):
            for user in model.users:
                for role, how in model.roles_of(user).items():
                    if how == "directly":
                        yield (tag(mid, user), tag(mid, role), DIRECT, None)
                    else:
                        yield (tag(mid, user), tag(mid, role), GROUP, how.removeprefix("through group "))

    def owners() -> Iterator[tuple[Any, ...]]:
        for mid, (model, inventory) in enumerate(batch):
            held = inventory.__contains__
            for user, owned in model.owned_by.items():
                if user in model.users:
                    for obj in owned:
                        if obj == METALAKE:
                            yield (tag(mid, user), tag(mid, "metalake" + "\x1e"))
                        elif obj.type in _DATA and held(obj):
                            yield (tag(mid, user), tag(mid, node_key(obj)))

    def users() -> Iterator[tuple[Any, ...]]:
        for mid, (model, _) in enumerate(batch):
            admins = model.service_admins if admin_matters else set()
            for user in sorted(model.users):
                yield (tag(mid, user), user in admins)

    return {
        "objects": stage.write(
            "objects",
            schema(catalog=STRING, okey=STRING, name=STRING, ntype=STRING, depth=INT, path=PATH),
            objects(),
        ),
        "grants": stage.write(
            "grants", schema(gkey=STRING, gcat=STRING, priv=STRING, cond=STRING, role=STRING), grants()
        ),
        "holds": stage.write("holds", schema(user=STRING, role=STRING, via=STRING, grp=STRING), holds()),
        "owners": stage.write("owners", schema(user=STRING, okey=STRING), owners()),
        "users": stage.write("users", schema(user=STRING, admin=BOOL), users()),
    }


# -- the rows -------------------------------------------------------------------------------
def report_rows(spark: SparkSession, files: dict[str, str], operations: Sequence[str]) -> DataFrame:
    """Every row of the report, as a DataFrame of the report's columns (nothing collected)."""
    read = spark.read.parquet
    objects, grants, holds = read(files["objects"]), read(files["grants"]), read(files["holds"])
    owners, users = read(files["owners"]), read(files["users"])
    admin_matters = any(_needs_admin(OPERATIONS[op].requires) for op in operations)

    # every object's path, a row per depth
    steps = objects.select(
        "catalog", "okey", "name", "ntype", "depth", F.posexplode("path").alias("d", "step")
    ).select(
        "catalog",
        "okey",
        "name",
        "ntype",
        "depth",
        "d",
        F.col("step.key").alias("akey"),
        F.col("step.name").alias("aname"),
        F.col("step.type").alias("atype"),
    )
    catalogs = objects.where(F.col("depth") == 1).select("catalog")

    # 1. classes: per (user, catalog), the held roles with a grant in reach, and admin
    in_reach = grants.where(F.col("gcat").isNotNull()).select(F.col("gcat").alias("catalog"), "role")
    in_reach = in_reach.unionByName(
        grants.where(F.col("gcat").isNull()).select("role").crossJoin(catalogs)
    ).distinct()
    roles_in_reach = holds.select("user", "role").join(in_reach, "role")
    sig = (
        users.crossJoin(catalogs)
        .join(roles_in_reach, ["user", "catalog"], "left")
        .groupBy("user", "catalog", "admin")
        .agg(F.array_sort(F.collect_set("role")).alias("roles"))
        .withColumn(
            "cls",
            F.concat_ws(
                KEY_SEP, F.col("catalog"), F.concat_ws(NAME_SEP, "roles"), F.col("admin").cast("string")
            ),
        )
    )
    sig = _kept(sig)
    classes = sig.select("cls", "catalog", "roles", "admin").distinct()
    class_grants = (
        classes.select("cls", "catalog", F.explode("roles").alias("role"))
        .join(grants, "role")
        .where(F.col("gcat").isNull() | (F.col("gcat") == F.col("catalog")))
        .select("cls", "catalog", F.col("gkey").alias("akey"), "priv", "cond", "role")
    )

    # 2. candidates: below an ALLOW of the class's roles; below what an owner owns
    allow_at = class_grants.where(F.col("cond") == Condition.ALLOW.value).select("cls", "catalog", "akey")
    by_class = allow_at.distinct().join(steps.select("catalog", "akey", "okey"), ["catalog", "akey"])
    by_class = by_class.select("cls", "okey")
    if admin_matters:
        by_class = by_class.unionByName(
            classes.where(F.col("admin"))
            .join(objects.select("catalog", "okey"), "catalog")
            .select("cls", "okey")
        )
    by_class = by_class.distinct().withColumn("user", F.lit(None).cast("string"))
    owned_at = (
        owners.withColumnRenamed("okey", "akey")
        .join(steps.select("akey", "catalog", "okey"), "akey")
        .select("user", "catalog", "okey")
        .distinct()
    )
    by_owner = owned_at.join(sig.select("user", "catalog", "cls"), ["user", "catalog"]).select(
        "cls", "okey", "user"
    )
    owner_pairs = owned_at.select("user", "okey")
    # a candidate's principal: its owner, or the class (no user name is this separator)
    candidates = by_class.unionByName(by_owner).withColumn("pid", F.coalesce("user", F.lit(NOBODY)))

    # 3. each candidate's path, its grants and ownerships, per depth
    path = candidates.join(steps, "okey")
    path = path.join(class_grants.drop("catalog"), ["cls", "akey"], "left")
    path = path.join(
        owners.select("user", F.col("okey").alias("akey"), F.lit(True).alias("owns")),
        ["user", "akey"],
        "left",
    )
    path = _kept(path)
    d = F.col("d")
    aggs: list[Column] = []
    for level in DEPTHS:
        upto = d <= level
        allowed, denied = upto & (F.col("cond") == "ALLOW"), upto & (F.col("cond") == "DENY")
        aggs.append(F.collect_set(F.when(allowed, F.col("priv"))).alias(allow_col(level)))
        aggs.append(F.collect_set(F.when(denied, F.col("priv"))).alias(deny_col(level)))
        aggs.append(
            F.coalesce(F.max(F.when((d == level) & F.col("owns"), F.lit(True))), F.lit(False)).alias(
                owned_col(level)
            )
        )
        aggs.append(F.max(F.when(d == level, F.struct("aname", "atype"))).alias(f"at_{level}"))
    decided = path.groupBy("cls", "pid", "user", "okey", "catalog", "name", "ntype").agg(*aggs)
    decided = decided.join(classes.select("cls", "admin"), "cls")
    by_type: dict[str, list[str]] = {}
    for op in dict.fromkeys(operations):
        by_type.setdefault(target(op).value, []).append(op)
    rules = Rules()
    found = F.array(
        *[F.when(F.col("ntype") == kind, rules.evidence(op)) for kind, ops in by_type.items() for op in ops]
    )
    entries = rules.add(decided).select(
        "cls",
        "pid",
        "user",
        "okey",
        "catalog",
        "name",
        "ntype",
        F.array(*[F.col(f"at_{level}") for level in DEPTHS]).alias("at"),
        F.explode(F.filter(found, lambda x: x.isNotNull())).alias("e"),
    )
    entries = _kept(entries)

    # 4. the reasons, then the fan-out to users
    keep: list[Column | str] = ["cls", "pid", "user", "okey", "catalog", "name", "ntype"]
    keep.append(F.col("e.op").alias("operation"))
    granted = entries.select(*keep, F.explode(F.array_distinct("e.privileges")).alias("priv"))
    on_path = path.where(F.col("cond") == "ALLOW").select(
        "cls",
        "pid",
        "okey",
        "priv",
        "role",
        F.col("aname").alias("source"),
        F.col("atype").alias("source_type"),
    )
    grant_rows = granted.join(on_path, ["cls", "pid", "okey", "priv"])
    grant_rows = grant_rows.select(
        "cls",
        "user",
        "okey",
        "catalog",
        "name",
        "ntype",
        "operation",
        F.lit(GRANT).alias("reason"),
        "role",
        F.col("priv").alias("privilege"),
        "source",
        "source_type",
    )
    owned_rows = entries.select(*keep, "at", F.explode(F.array_distinct("e.owned")).alias("od")).select(
        "cls",
        "user",
        "okey",
        "catalog",
        "name",
        "ntype",
        "operation",
        F.lit(OWNER).alias("reason"),
        F.lit(None).cast("string").alias("role"),
        F.lit(None).cast("string").alias("privilege"),
        F.element_at("at", F.col("od") + 1)["aname"].alias("source"),
        F.element_at("at", F.col("od") + 1)["atype"].alias("source_type"),
    )
    admin_rows = (
        entries.where(F.col("e.admin"))
        .select(*keep)
        .select(
            "cls",
            "user",
            "okey",
            "catalog",
            "name",
            "ntype",
            "operation",
            F.lit(SERVICE_ADMIN).alias("reason"),
            *[F.lit(None).cast("string").alias(c) for c in ("role", "privilege", "source", "source_type")],
        )
    )
    # no two of these are alike: one row per (entry, role, source), per owned depth, per admin
    reasons = grant_rows.unionByName(owned_rows).unionByName(admin_rows)
    members = sig.select("cls", F.col("user").alias("member"))
    shared = (
        reasons.where(F.col("user").isNull())
        .drop("user")
        .join(members, "cls")
        .withColumnRenamed("member", "user")
    )
    # where a member owns something on the path, that member's own rows stand
    shared = shared.join(owner_pairs, ["user", "okey"], "left_anti")
    personal = reasons.where(F.col("user").isNotNull())
    rows = shared.unionByName(personal.select(*shared.columns))
    rows = rows.join(holds, ["user", "role"], "left")
    out: DataFrame = rows.select(
        "catalog",
        "user",
        F.col("name").alias("object"),
        F.col("ntype").alias("object_type"),
        "operation",
        "reason",
        "role",
        "privilege",
        "source",
        "source_type",
        "via",
        F.col("grp").alias("group"),
    )
    return out


def _kept(df: DataFrame) -> DataFrame:
    """``df`` computed once on the executors and its plan cut there: the steps after it
    neither recompute it nor re-analyse its (long) plan, which costs the driver more than
    the data does at small sizes."""
    if not TIMING:
        return df.localCheckpoint(eager=True)
    started = time.perf_counter()
    kept = df.localCheckpoint(eager=True)
    print(f"  spark report step: {time.perf_counter() - started:.2f} s", file=sys.stderr)
    return kept


def in_order(rows: DataFrame, partitions: int) -> DataFrame:
    """``rows`` range-partitioned and sorted in each partition by every column (null as
    ``""``): the part files, in name order, hold the rows in the report's order."""
    keys = [F.coalesce(F.col(f"`{c}`"), F.lit("")) for c in COLUMNS]
    return rows.repartitionByRange(partitions, *keys).sortWithinPartitions(*keys)


def _csv_escaped(col: str) -> Column:
    """:func:`pushdown.report.files.csv_field` as a column: a formula-looking value gets a '."""
    c = F.col(f"`{col}`")
    starts = F.substring(c, 1, 1).isin(*FORMULA)
    return F.when(starts, F.concat(F.lit("'"), c)).otherwise(c).alias(col)


# -- writing --------------------------------------------------------------------------------
def write_rows(
    spark: SparkSession,
    model: Model,
    operations: Sequence[str],
    inventory: Inventory,
    root: Path,
    formats: tuple[str, ...],
    stage: Staging,
    progress: Progress | None = None,
) -> tuple[Tally, list[str]]:
    """Write the report's rows into ``root`` (Parquet partitioned by catalog, CSV parts) and
    count them; the driver collects the counts only."""
    admin_matters = any(_needs_admin(OPERATIONS[op].requires) for op in operations)
    if progress is not None:
        progress("spark: writing the model's facts")
    files = write_facts(stage, model, inventory, admin_matters)
    if progress is not None:
        progress("spark: deciding, explaining and writing the rows")
    rows = report_rows(spark, files, operations)
    partitions = max(int(spark.conf.get("spark.sql.shuffle.partitions") or 200), 1)
    # the rows computed once (the range partitioning samples them before it shuffles them)
    ordered = _kept(in_order(_kept(rows), partitions))
    if "parquet" in formats:
        ordered.write.partitionBy("catalog").parquet(spark_path(str(root / PARQUET_DIR)))
    if "csv" in formats:
        ordered.select(*[_csv_escaped(c) for c in COLUMNS]).write.csv(
            spark_path(str(root / CSV_DIR)),
            header=True,
            quote='"',
            escape='"',
            nullValue="",
            emptyValue="",
            ignoreLeadingWhiteSpace=False,
            ignoreTrailingWhiteSpace=False,
        )
    tally = _tally(ordered, catalogs=sorted(c.names[0] for c in inventory.children(METALAKE)))
    _tidy(root)
    written = _listed(root)
    if "parquet" in formats and not any(f.split("/")[1].startswith("catalog=") for f in written if "/" in f):
        _empty_parquet(root)
        written = _listed(root)
    return tally, written


def _tally(rows: DataFrame, catalogs: Iterable[str]) -> Tally:
    """The report's counts, aggregated on the executors (one row per catalog and per user)."""
    tally = Tally()
    per_catalog = rows.groupBy("catalog").agg(
        F.count(F.lit(1)).alias("rows"),
        F.countDistinct("user").alias("users"),
        F.countDistinct("object").alias("objects"),
    )
    for row in _collect(per_catalog):
        tally.catalogs[row["catalog"]] = CatalogCount(row["rows"], counted=(row["users"], row["objects"]))
        tally.rows += row["rows"]
    for name in catalogs:  # counted when no one has access
        tally.catalogs.setdefault(name, CatalogCount())
    per_user = rows.groupBy("user").agg(
        F.count(F.lit(1)).alias("rows"),
        F.countDistinct("catalog", "object", "operation").alias("access"),
        F.collect_set("catalog").alias("catalogs"),
    )
    for row in _streamed(per_user):
        tally.users[row["user"]] = UserCount(row["rows"], row["access"], set(row["catalogs"]))
    return tally


def _streamed(df: DataFrame) -> Iterator[Any]:
    """``df``'s rows, a partition at a time (``toLocalIterator``), and the local socket
    pyspark reads them through closed quietly (left to the garbage collector, it would
    warn later, anywhere)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ResourceWarning)
        yield from df.toLocalIterator()
        gc.collect()


def _tidy(root: Path) -> None:
    """Spark's bookkeeping files out of the report: ``_SUCCESS`` and checksums."""
    for folder, _dirs, names in os.walk(root):
        for name in names:
            if name == "_SUCCESS" or (name.startswith(".") and name.endswith(".crc")):
                os.unlink(os.path.join(folder, name))


def _listed(root: Path) -> list[str]:
    found = [str(p.relative_to(root)) for p in root.rglob("*") if p.is_file()]
    return sorted(f for f in found if f.startswith((f"{PARQUET_DIR}/", f"{CSV_DIR}/")) or f == CSV_FILE)


def _empty_parquet(root: Path) -> None:
    """No rows: one file with every column and no rows, as the local report writes."""
    import pyarrow as pa  # type: ignore[import-untyped]
    import pyarrow.parquet as pq  # type: ignore[import-untyped]

    folder = root / PARQUET_DIR
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    table = pa.schema([pa.field(c, pa.string()) for c in COLUMNS]).empty_table()
    pq.write_table(table, folder / PARQUET_FILE)


# -- comparing two reports --------------------------------------------------------------------
def read_report(spark: SparkSession, root: Path, files: list[str]) -> DataFrame:
    """A report's rows as a DataFrame of its columns, nulls as ``""`` (as ``read_rows`` gives)."""
    parquet = [f for f in files if f.startswith(f"{PARQUET_DIR}/catalog=")]
    if parquet:
        df = spark.read.option("basePath", spark_path(str(root / PARQUET_DIR))).parquet(
            *[spark_path(str(root / f)) for f in parquet]
        )
    else:
        csvs = [f for f in files if f == CSV_FILE or f.startswith(f"{CSV_DIR}/")]
        if not csvs:  # a report without rows
            return spark.createDataFrame([], ", ".join(f"`{c}` string" for c in COLUMNS))
        df = spark.read.csv(
            [spark_path(str(root / f)) for f in csvs],
            header=True,
            schema=", ".join(f"`{c}` string" for c in COLUMNS),
            quote='"',
            escape='"',
            multiLine=True,
            ignoreLeadingWhiteSpace=False,
            ignoreTrailingWhiteSpace=False,
        )
        df = df.select(*[_csv_read(c) for c in COLUMNS])
    return df.select(*[F.coalesce(F.col(f"`{c}`").cast("string"), F.lit("")).alias(c) for c in COLUMNS])


def _csv_read(col: str) -> Column:
    """:func:`pushdown.report.files.csv_value` as a column: the ' a formula-looking value got."""
    c = F.col(f"`{col}`")
    return F.when(c.startswith("'"), F.expr(f"substring(`{col}`, 2)")).otherwise(c).alias(col)


def compare(
    spark: SparkSession,
    before: tuple[Path, list[str]],
    after: tuple[Path, list[str]],
    changes: Changes,
) -> Changes:
    """Rows one report has and the other has not, counted per user on the executors."""
    old, new = read_report(spark, *before), read_report(spark, *after)
    if changes.only is not None:
        old = old.where(F.col("operation").isin(*changes.only))
        new = new.where(F.col("operation").isin(*changes.only))
    added = new.exceptAll(old).groupBy("user").agg(F.count(F.lit(1)).alias("n")).withColumn("i", F.lit(0))
    removed = old.exceptAll(new).groupBy("user").agg(F.count(F.lit(1)).alias("n")).withColumn("i", F.lit(1))
    for row in _streamed(added.unionByName(removed)):
        counts = changes.by_user.setdefault(row["user"], [0, 0])
        counts[row["i"]] += row["n"]
        if row["i"] == 0:
            changes.added += row["n"]
        else:
            changes.removed += row["n"]
    return changes


__all__ = ["CSV_DIR", "compare", "read_report", "report_rows", "write_facts", "write_rows"]
