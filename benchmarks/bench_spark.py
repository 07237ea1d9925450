#!/usr/bin/env python3
"""Benchmark the Spark engine: the full compile of the estate, local engine vs Spark.

On the synthetic estate of ``harness.worlds`` (at ``--scale 1``: 10,000 users, 100,000
tables, 1,000 roles, ~10% DENY, every object owned), in the same run:

1. the full compile (users=None, roots=None) of the operations load/alter/drop table,
   then its compact form (every class view and owner view walked over its schemas with
   the coverages of the 3 operations, as ``bench_compile`` does) with
   - the local engine (the floor: the same answers, in this process),
   - the Spark engine on ``local[1]`` and on ``local[2]`` (one JVM; the context is
     restarted with the other master; the JVM's start is reported, not timed in);
2. the crossover: the local engine and Spark ``local[2]`` timed at ``--scale`` / 4,
   / 2 and x 1, each fitted to ``time = fixed + per_table * tables``; where the lines
   cross is the estate size past which Spark wins on this machine (none when Spark's
   per-table cost is not below the local one's here);
3. the 1 -> 2 core scaling of the Spark compile (the evidence that it scales out), and
   memory: the Python driver's peak during the Spark compile (it never collects the
   (user x object) expansion: the rows it collects are printed) and the JVM's peak RSS;
   the same compile handed out one catalog at a time (``compile_catalogs``): the
   driver's peak while it holds one catalog's compact form at a time;
4. the report (``pushdown report``, the default operations, Parquet + CSV): the local
   engine (the floor) against the Spark job (decided, explained, fanned out and written
   on the executors; the driver collects counts), at ``--scale`` / 10 and ``--scale``
   (users x 10, tables x 3.2): the time of each, the crossover fitted through both, the
   Python driver's peak above the model and the JVM's peak RSS at both sizes (their
   growth as the estate grows x 10), the JVM's cpu per report row (what the executors
   spend per (user, object, operation, reason) row, the driver's share included), and
   ``local[1]`` against ``local[2]`` at ``--scale``;
5. the projection, on paper, from the per-row cpu to 10 nodes x 16 cores at 10^5 users
   x 10^6 tables, its assumptions printed with it.

The machine is shared: the load average is in the header; ratios are what compare.

Usage::

    python benchmarks/bench_spark.py --scale 0.05
    python benchmarks/bench_spark.py --scale 0.001        # smoke: local[2] only, seconds
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import sys
import tempfile
import tracemalloc
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from bench_compile import OPERATIONS, compact
from harness import cli
from harness.clock import Clock
from harness.memory import MemoryProbe
from harness.report import Report, fmt_bytes
from harness.worlds import make_world
from pushdown_spark.engine import SparkEngine

from pushdown.decide.compiler import EntitlementCompiler
from pushdown.decide.engine import by_catalog
from pushdown.decide.inventory import Inventory
from pushdown.model.state import Model
from pushdown.report.run import Request, write_report

SMOKE = 0.001


def session(master: str) -> Any:
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    from pyspark.sql import SparkSession

    cores = 1 if master == "local[1]" else 2
    built = (
        SparkSession.builder.master(master)
        .appName(f"pushdown-bench-{master}")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.sql.shuffle.partitions", str(2 * cores))
        .config("spark.default.parallelism", str(2 * cores))
        .getOrCreate()
    )
    built.sparkContext.setLogLevel("ERROR")
    return built


def _jvm_pid(spark: Any) -> int | None:
    try:
        return int(spark.sparkContext._gateway.proc.pid)
    except (AttributeError, TypeError, ValueError):
        return None


def _jvm_status_kib(spark: Any, key: str) -> int | None:
    pid = _jvm_pid(spark)
    try:
        with open(f"/proc/{pid}/status") as fh:
            for line in fh:
                if line.startswith(key + ":"):
                    return int(line.split()[1])
    except (OSError, ValueError):
        return None
    return None


def jvm_peak_mib(spark: Any) -> float | None:
    """The JVM's RSS high-water mark (the Spark driver, and the executors of local mode)."""
    kib = _jvm_status_kib(spark, "VmHWM")
    return None if kib is None else kib / 1024


def jvm_reset_peak(spark: Any) -> None:
    """Reset the JVM's high-water mark to its RSS now (as MemoryProbe does for this process)."""
    try:
        with open(f"/proc/{_jvm_pid(spark)}/clear_refs", "w") as fh:
            fh.write("5")
    except OSError:
        pass


def jvm_cpu_s(spark: Any) -> float:
    """The JVM's cpu seconds so far (user + system): the work of local mode's executors."""
    try:
        with open(f"/proc/{_jvm_pid(spark)}/stat") as fh:
            fields = fh.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return 0.0


def local_run(model: Model, inventory: Inventory) -> float:
    with Clock() as clock:
        compact(EntitlementCompiler(model, OPERATIONS).compile(inventory))
    return clock.wall


def spark_run(spark: Any, model: Model, inventory: Inventory) -> tuple[float, float, Any]:
    engine = SparkEngine(session=spark)
    with MemoryProbe() as mem, Clock() as clock:
        compact(engine.compile(model, OPERATIONS, inventory))
    return clock.wall, mem.peak_mib, engine.last


def fit(points: list[tuple[int, float]]) -> tuple[float, float]:
    """Least squares ``time = fixed + per * size``."""
    n = len(points)
    mx = sum(x for x, _ in points) / n
    my = sum(y for _, y in points) / n
    sxx = sum((x - mx) ** 2 for x, _ in points)
    per = sum((x - mx) * (y - my) for x, y in points) / sxx if sxx else 0.0
    return my - per * mx, per


@contextmanager
def python_heap() -> Iterator[list[float]]:
    """The peak of the Python objects allocated in the block (tracemalloc), in MiB: what the
    driver's Python holds at most, independent of what the allocator kept from before."""
    out = [0.0]
    tracemalloc.start()
    try:
        yield out
    finally:
        out[0] = tracemalloc.get_traced_memory()[1] / 2**20
        tracemalloc.stop()


def by_catalog_run(spark: Any, model: Model, inventory: Inventory) -> tuple[float, float]:
    """The full compile handed out one catalog at a time, each walked and dropped."""
    engine = SparkEngine(session=spark)
    with python_heap() as heap, Clock() as clock:
        for _, ent in by_catalog(engine, model, OPERATIONS, inventory):
            compact(ent)
            del ent
    return clock.wall, heap[0]


def report_run(model: Model, spark: Any = None) -> dict[str, float]:
    """One report (Parquet + CSV) into a temporary directory: wall, rows, Python peak above
    the start, and (Spark) the JVM's cpu and its peak RSS."""
    where = Path(tempfile.mkdtemp(prefix="bench-spark-report-"))
    request = Request(out=where / "report")
    if spark is not None:
        request = Request(out=where / "report", engine="spark", compiler=SparkEngine(session=spark))
        jvm_reset_peak(spark)
        cpu_before = jvm_cpu_s(spark)
    try:
        # the Spark report's driver does little Python work: its heap is traced in the timed run
        heap = python_heap() if spark is not None else contextlib.nullcontext([0.0])
        with heap as traced, MemoryProbe() as mem, Clock() as clock:
            result = write_report(model, request)
    finally:
        shutil.rmtree(where, ignore_errors=True)
    out = {"wall": clock.wall, "cpu": clock.cpu, "rows": float(result.tally.rows), "py_peak": mem.peak_mib}
    out["heap"] = traced[0]
    if spark is not None:
        out["jvm_cpu"] = jvm_cpu_s(spark) - cpu_before
        out["jvm_peak"] = jvm_peak_mib(spark) or 0.0
    return out


def main(argv: list[str] | None = None, spark: Any = None) -> int:
    """``spark``: a running session to use (the test run's one, for the smoke test): then
    only its own master is measured, and the session is left running."""
    ap = cli.parser(__doc__, default_scale=0.05)
    ap.add_argument("--report-only", action="store_true", help="only the report (sections 3 and 4)")
    args: argparse.Namespace = ap.parse_args(argv)
    given = spark is not None
    smoke = args.scale <= SMOKE or given
    with Report("spark", args) as report:
        report.section(f"1. the full compile at scale {args.scale:g}: local engine vs Spark")
        world = make_world(args.scale, args.seed)
        model = world.model
        inventory = Inventory.of(model.objects)
        cfg = world.config
        tables = len(world.tables)
        report.row("users / tables / roles", f"{cfg.users:,} / {tables:,} / {cfg.roles:,}")
        local = local_run(model, inventory)
        report.floor("local engine: full compile + compact form", local)
        with Clock() as start:
            spark = spark if given else session("local[2]")
        report.row("Spark: JVM + session start (not timed below)", start.wall, "s")
        if not smoke:  # the JVM compiles its hot code on the first jobs: warm it up once
            tiny = make_world(SMOKE, args.seed)
            with Clock() as warm:
                spark_run(spark, tiny.model, Inventory.of(tiny.model.objects))
            report.row("Spark: warm-up compile of the scale-0.001 estate (not timed below)", warm.wall, "s")
        if smoke or not args.report_only:  # section 1 proper: the compile
            masters = (
                [spark.sparkContext.master] if given else ["local[2]"] if smoke else ["local[1]", "local[2]"]
            )
            times: dict[str, float] = {}
            last: Any = None
            driver_peak = 0.0
            for master in masters:
                if spark.sparkContext.master != master:
                    spark.stop()
                    spark = session(master)
                times[master], peak, last = spark_run(spark, model, inventory)
                driver_peak = max(driver_peak, peak)
                report.row(f"Spark {master}: full compile + compact form", times[master], "s")
            report.ratio(f"Spark {masters[-1]} / local engine", times[masters[-1]], local)
            if "local[1]" in times:
                report.row(
                    "scaling local[1] -> local[2] (time 1 core / time 2 cores)",
                    times["local[1]"] / times["local[2]"],
                    "x",
                )
            report.row(
                "rows the driver collected (keys + allowed questions)", last.keys + last.questions_collected
            )
            report.row("  the expansion it never collected: users x tables x 3", cfg.users * tables * 3)
            report.row(
                "classes | owner views | Spark jobs", f"{last.classes:,} | {last.owner_views:,} | {last.jobs}"
            )
            report.row("Python driver peak during the Spark compile", driver_peak, "MiB")
            jvm = jvm_peak_mib(spark)
            shown = fmt_bytes((jvm or 0) * 2**20) if jvm else "n/a"
            report.row("JVM peak RSS (driver + local executors)", shown)
            if spark.sparkContext.master != "local[2]" and not given:
                spark.stop()
                spark = session("local[2]")
            if not smoke:  # (the hand-out by catalog is checked by the tests at this size)
                t_parts, parts_peak = by_catalog_run(spark, model, inventory)
                report.row("Spark local[2]: the same compile handed out one catalog at a time", t_parts, "s")
                with python_heap() as heap:
                    compact(SparkEngine(session=spark).compile(model, OPERATIONS, inventory))
                report.row("Python heap peak (tracemalloc): the compile all at once", heap[0], "MiB")
                report.row("  the same, one catalog's compact form at a time", parts_peak, "MiB")

        if not smoke and not args.report_only:
            report.section("2. the crossover: local engine and Spark local[2] at 3 sizes")
            if spark.sparkContext.master != "local[2]":  # the same JVM, warm already
                spark.stop()
                spark = session("local[2]")
            local_pts: list[tuple[int, float]] = [(tables, local)]
            spark_pts: list[tuple[int, float]] = [(tables, times["local[2]"])]
            for part in (4, 2):
                small = make_world(args.scale / part, args.seed)
                inv = Inventory.of(small.model.objects)
                n = len(small.tables)
                t_local = local_run(small.model, inv)
                t_spark = spark_run(spark, small.model, inv)[0]
                local_pts.append((n, t_local))
                spark_pts.append((n, t_spark))
                report.row(f"{n:,} tables: local | Spark local[2]", f"{t_local:.2f} s | {t_spark:.2f} s")
            fl, pl = fit(local_pts)
            fs, ps = fit(spark_pts)
            report.row("local: fixed + per table", f"{fl:.2f} s + {pl * 1e6:.1f} us")
            report.row("Spark local[2]: fixed + per table", f"{fs:.2f} s + {ps * 1e6:.1f} us")
            if ps < pl:
                cross = (fs - fl) / (pl - ps)
                report.row("crossover: Spark local[2] wins past (tables)", f"{cross:,.0f}")
            else:
                report.row("crossover on this machine", "none: Spark's per-table cost is not lower here")
        spark = report_sections(report, args, world, spark, smoke, given)
        if not given:
            spark.stop()
    return 0


def report_sections(
    report: Report, args: argparse.Namespace, world: Any, spark: Any, smoke: bool, given: bool
) -> Any:
    """Sections 3 and 4: the report, local engine vs the Spark job; the projection."""
    report.section("3. the report (default operations, Parquet + CSV): local engine vs the Spark job")
    if spark.sparkContext.master != "local[2]" and not given:
        spark.stop()
        spark = session("local[2]")
    sizes = [args.scale] if smoke else [args.scale / 10, args.scale]
    done: list[tuple[float, Any, dict[str, float], dict[str, float]]] = []
    for scale in sizes:
        w = world if scale == args.scale else make_world(scale, args.seed)
        local = report_run(w.model)
        remote = report_run(w.model, spark)
        assert remote["rows"] == local["rows"], (remote["rows"], local["rows"])
        done.append((scale, w, local, remote))
        cfg = w.config
        report.row(
            f"scale {scale:g}: users / tables / rows",
            f"{cfg.users:,} / {len(w.tables):,} / {local['rows']:,.0f}",
        )
        report.floor(f"local engine report at scale {scale:g}", local["wall"], "s")
        report.ratio(
            f"Spark local[2] report / local engine at scale {scale:g}", remote["wall"], local["wall"]
        )
        report.row(
            "  Python driver peak RSS during the Spark report (above the model)", remote["py_peak"], "MiB"
        )
        report.row("  Python heap peak of the Spark report (tracemalloc)", remote["heap"], "MiB")
        report.row(
            "  JVM peak RSS during the Spark report (driver + local executors)", remote["jvm_peak"], "MiB"
        )
        per_row = remote["jvm_cpu"] / max(remote["rows"], 1)
        report.row("  JVM cpu per report row (executors' work, driver included)", per_row * 1e6, "us")
    if smoke:
        return spark
    (_, w0, l0, r0), (s1, w1, l1, r1) = done
    report.row(
        "estate grown (users x, tables x, rows x)",
        f"{w1.config.users / w0.config.users:.1f} x, "
        f"{len(w1.tables) / len(w0.tables):.1f} x, {l1['rows'] / max(l0['rows'], 1):.1f} x",
    )
    report.row("Python heap peak growth (Spark report)", r1["heap"] / max(r0["heap"], 0.01), "x")
    report.row("JVM peak RSS growth (Spark report)", r1["jvm_peak"] / max(r0["jvm_peak"], 0.1), "x")
    fl, pl = fit([(l0["rows"], l0["wall"]), (l1["rows"], l1["wall"])])
    fs, ps = fit([(r0["rows"], r0["wall"]), (r1["rows"], r1["wall"])])
    report.row("local engine: fixed + per row", f"{fl:.2f} s + {pl * 1e6:.2f} us")
    report.row("Spark local[2]: fixed + per row", f"{fs:.2f} s + {ps * 1e6:.2f} us")
    if ps < pl:
        report.row("crossover: the Spark report wins past (rows)", f"{(fs - fl) / (pl - ps):,.0f}")
    else:
        report.row("crossover on this machine", "none: Spark's per-row wall time is not lower here")
    if not given:
        spark.stop()
        spark = session("local[1]")
        one = report_run(w1.model, spark)
        report.row(f"Spark local[1] report at scale {s1:g}", one["wall"], "s")
        report.row("scaling local[1] -> local[2] (report)", one["wall"] / r1["wall"], "x")
    report.section("4. projection, on paper: 10 nodes x 16 cores, 10^5 users x 10^6 tables")
    density = l1["rows"] / (w1.config.users * len(w1.tables))
    rows = density * 1e5 * 1e6
    per_row = r1["jvm_cpu"] / max(r1["rows"], 1)
    cores, efficiency = 160, 0.7
    report.row("report rows per (user x table) at the larger size", f"{density:.2e}")
    report.row("rows at 10^5 users x 10^6 tables (same density)", f"{rows:,.0f}")
    report.row("executor cpu at the measured cpu per row", rows * per_row / 3600, "h")
    report.row(
        f"wall on {cores} cores at {efficiency:.0%} efficiency",
        rows * per_row / cores / efficiency / 60,
        "min",
    )
    report.note(
        "assumptions: the same grant density and class structure as the benchmark estate; the",
        "JVM cpu per row of local mode (driver included) is the executors' per-row cost; shuffles",
        "scale linearly; the driver holds counts per catalog and per user only (10^5 users:",
        "a few MiB), and the facts as Parquet on a shared file system.",
    )
    return spark


if __name__ == "__main__":
    sys.exit(main())
