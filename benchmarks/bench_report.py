#!/usr/bin/env python3
"""Benchmark the entitlement report (``pushdown report``) on the synthetic estate.

On the estate of ``harness.worlds`` at ``--scale`` (at scale 1: 100,000 tables, 1,000
roles, 10,000 users, ~10% DENY, every object owned): the local engine's report of
the default operations, written as Parquet and CSV with its summary — time, rows,
rows/s, classes of users, peak memory. The floor is the same number of rows of the
same shape written through the same writer and counters with no decision at all (the
rows of one user's first batch, replayed under other users' names): what the output
alone costs. The ratios say what deciding and giving reasons adds on top of writing,
and how the peak memory compares with holding the full expansion (a lower bound: the
row tuples alone), which the report never does.

Usage::

    python benchmarks/bench_report.py --scale 0.01
    python benchmarks/bench_report.py --scale 0.1 --format csv
"""

from __future__ import annotations

import itertools
import shutil
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

from harness import cli
from harness.clock import Clock
from harness.memory import MemoryProbe
from harness.report import Report
from harness.worlds import make_world

from pushdown.model.state import Model
from pushdown.report.files import PartWriter
from pushdown.report.local import BATCH, local_rows
from pushdown.report.operations import report_operations
from pushdown.report.run import Request, parse_formats, write_report
from pushdown.report.schema import Row
from pushdown.report.tally import Tally


def floor_rows(sample: list[Row], total: int, users: int) -> Iterator[tuple[str, list[Row]]]:
    """``total`` rows shaped like ``sample``, under ``users`` made-up names, no decisions."""
    made = 0
    for n in itertools.count():
        user = f"floor-{n % max(users, 1):06d}"
        batch = [(row[0], user, *row[2:]) for row in sample[: total - made]]
        yield str(batch[0][0]), batch
        made += len(batch)
        if made >= total:
            return


def write_floor(out: Path, formats: tuple[str, ...], sample: list[Row], total: int, users: int) -> int:
    out.mkdir()
    writer, tally = PartWriter(out, formats), Tally()
    for catalog, batch in floor_rows(sample, total, users):
        writer.write(catalog, batch)
        tally.add(batch)
    writer.close()
    return tally.rows


def first_batch(model: Model) -> list[Row]:
    for part in local_rows(model, report_operations()):
        for batch in part.batches:
            return batch[:BATCH]
    return []


def main() -> None:
    parser = cli.parser(__doc__, default_scale=0.01)
    parser.add_argument("--format", default="parquet,csv", help="parquet, csv or both (default both)")
    args = parser.parse_args()
    formats = parse_formats(args.format)
    with Report("report", args) as report:
        world = make_world(args.scale, args.seed)
        model = world.model
        report.section("estate")
        report.row("users", len(model.users))
        report.row("tables", len(world.tables))
        report.row("roles", len(model.roles))
        report.row("operations reported", len(report_operations()))
        import pyarrow.parquet  # noqa: F401 - loaded before measuring, so neither side pays for it

        tmp = Path(tempfile.mkdtemp(prefix="bench-report-"))
        try:
            report.section("the report (local engine)")
            with MemoryProbe() as mem, Clock() as clock:
                result = write_report(model, Request(out=tmp / "report", formats=formats))
            rows = result.tally.rows
            report.row("rows written", rows)
            report.row("users with some access", len(result.tally.users))
            report.row("wall time", clock.wall, "s")
            report.row("cpu time", clock.cpu, "s")
            report.row("rows per second (wall)", rows / max(clock.wall, 1e-9), "rows/s")
            report.row("rows per cpu second", rows / max(clock.cpu, 1e-9), "rows/s")
            report.row("peak memory above the start", mem.peak_mib, "MiB")
            size = sum(f.stat().st_size for f in (tmp / "report").rglob("*") if f.is_file())
            report.row("size on disk", size / 2**20, "MiB")

            report.section("floor: the same rows written with no decisions")
            sample = first_batch(model) or [("c", "u", "o", "table", "load_table", "owner", *[None] * 6)]
            with MemoryProbe() as floor_mem, Clock() as floor_clock:
                written = write_floor(tmp / "floor", formats, sample, max(rows, 1), len(result.tally.users))
            report.row("rows written", written)
            report.floor("wall time", floor_clock.wall)
            report.floor("cpu time", floor_clock.cpu)
            report.row("rows per second (wall)", written / max(floor_clock.wall, 1e-9), "rows/s")
            report.row("rows per cpu second", written / max(floor_clock.cpu, 1e-9), "rows/s")
            report.floor("peak memory above the start", floor_mem.peak_mib, "MiB")
            report.section("ratios (report / floor)")
            report.note("cpu time: these machines are shared, and wall time counts the others' work")
            report.ratio("cpu time: deciding and reasons on top of writing", clock.cpu, floor_clock.cpu)
            report.ratio("wall time", clock.wall, floor_clock.wall)
            held = rows * (sys.getsizeof(sample[0]) + 8) / 2**20  # the tuples and the list's pointers
            report.row("the full expansion held as tuples (lower bound: tuples alone)", held, "MiB")
            report.ratio("peak memory / the full expansion held", max(mem.peak_mib, 0.1), max(held, 0.1))
        finally:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
