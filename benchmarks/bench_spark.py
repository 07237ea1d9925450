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
   (user x object) expansion: the rows it collects are printed) and the JVM's peak RSS.

The machine is shared: the load average is in the header; ratios are what compare.

Usage::

    python benchmarks/bench_spark.py --scale 0.05
    python benchmarks/bench_spark.py --scale 0.001        # smoke: local[2] only, seconds
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

from bench_compile import OPERATIONS, compact
from harness import cli
from harness.clock import Clock
from harness.memory import MemoryProbe
from harness.report import Report, fmt_bytes
from harness.worlds import make_world

from pushdown.decide.compiler import EntitlementCompiler
from pushdown.decide.inventory import Inventory
from pushdown.model.state import Model

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


def jvm_peak_mib(spark: Any) -> float | None:
    """The JVM's RSS high-water mark (the Spark driver, and the executors of local mode)."""
    try:
        pid = spark.sparkContext._gateway.proc.pid
        with open(f"/proc/{pid}/status") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except (AttributeError, OSError, ValueError):
        return None
    return None


def local_run(model: Model, inventory: Inventory) -> float:
    with Clock() as clock:
        compact(EntitlementCompiler(model, OPERATIONS).compile(inventory))
    return clock.wall


def spark_run(spark: Any, model: Model, inventory: Inventory) -> tuple[float, float, Any]:
    from pushdown_spark.engine import SparkEngine

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


def main(argv: list[str] | None = None, spark: Any = None) -> int:
    """``spark``: a running session to use (the test run's one, for the smoke test): then
    only its own master is measured, and the session is left running."""
    ap = cli.parser(__doc__, default_scale=0.05)
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
        report.row("JVM peak RSS (driver + local executors)", fmt_bytes((jvm or 0) * 2**20) if jvm else "n/a")

        if not smoke:
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
        if not given:
            spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
