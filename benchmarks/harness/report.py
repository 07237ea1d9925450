"""What a benchmark prints: a machine header, sections of rows, floors and ratios, JSON.

``with Report("evaluator", args) as report:`` prints the machine header, and at the end
of the block the run's totals; with ``--json PATH`` every row is also written to PATH.
A *floor* is the same work done the barest way, measured in the same run; a *ratio* is a
subject's number over its floor, which is what compares across machines.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import os
import platform
import pstats
import sys
import time
from collections.abc import Callable
from pathlib import Path
from types import TracebackType
from typing import Any

import pushdown

from . import memory

LABEL_WIDTH, VALUE_WIDTH = 66, 16


def fmt_value(value: object) -> str:
    if isinstance(value, float):
        return f"{value:,.3f}" if abs(value) < 100 else f"{value:,.1f}"
    if isinstance(value, int) and not isinstance(value, bool):
        return f"{value:,}"
    return str(value)


def fmt_s(seconds: float) -> str:
    if seconds >= 3600:
        return f"{seconds / 3600:,.1f} h"
    if seconds >= 60:
        return f"{seconds / 60:,.1f} min"
    return f"{seconds:,.2f} s"


def fmt_bytes(n: float) -> str:
    for unit, size in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if n >= size:
            return f"{n / size:,.1f} {unit}"
    return f"{n:,.0f} B"


def loadavg() -> str:
    try:
        return " ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        return "n/a"


def _mem_total() -> str:
    try:
        with open("/proc/meminfo") as fh:
            for line in fh:
                if line.startswith("MemTotal:"):
                    return fmt_bytes(int(line.split()[1]) * 1024)
    except OSError:
        pass
    return "n/a"


def machine() -> dict[str, object]:
    """What the numbers ran on."""
    info: dict[str, object] = {
        "python": f"{platform.python_implementation()} {platform.python_version()}",
        "platform": platform.platform(terse=True),
        "cores (os.cpu_count)": os.cpu_count() or 0,
    }
    if hasattr(os, "sched_getaffinity"):
        info["cores usable by this process (sched_getaffinity)"] = len(os.sched_getaffinity(0))
    info["memory (MemTotal)"] = _mem_total()
    info["load average at start (1/5/15 min)"] = loadavg()
    info["pushdown imported from"] = os.path.dirname(pushdown.__file__ or "?")
    return info


class Report:
    """Rows printed as they are measured, grouped in sections, kept for ``--json``."""

    def __init__(self, name: str, args: argparse.Namespace) -> None:
        self.name = name
        self.args = args
        self.sections: list[dict[str, Any]] = []

    # -- the run ---------------------------------------------------------------------

    def __enter__(self) -> Report:
        self._wall0, self._cpu0 = time.perf_counter(), time.process_time()
        self.section("environment")
        self.row("benchmark", self.name)
        for label, value in machine().items():
            self.row(label, value)
        if hasattr(self.args, "scale"):
            self.row("scale", self.args.scale)
        if hasattr(self.args, "seed"):
            self.row("seed", str(self.args.seed))
        self.row("memory measure", memory.KIND)
        self.note(memory.METHOD)
        self.note("times: wall = perf_counter, cpu = process_time of this process; rates use wall")
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if exc is not None:
            return
        self.section("run")
        self.row("total wall time of this run", time.perf_counter() - self._wall0, "s")
        self.row("cpu time of this process (workers excluded)", time.process_time() - self._cpu0, "s")
        self.row("process peak RSS (ru_maxrss)", memory.process_peak_mib(), "MiB")
        self.row("load average at end (1/5/15 min)", loadavg())
        path = getattr(self.args, "json", None)
        if path is not None:
            self.write(Path(path))

    # -- rows ------------------------------------------------------------------------

    def section(self, title: str) -> None:
        self.sections.append({"title": title, "rows": [], "notes": []})
        print(f"\n== {title}", flush=True)

    def note(self, *lines: str) -> None:
        """A remark under the current section, in parentheses, one or more lines."""
        self.sections[-1]["notes"].append(" ".join(lines))
        text = "\n   ".join(lines)
        print(f"  ({text})", flush=True)

    def row(self, label: str, value: object, unit: str = "", **extra: object) -> None:
        """One measured (or counted) value; ``extra`` goes to the JSON only."""
        kind = str(extra.pop("kind", "value"))
        record = {"label": label, "value": value, "unit": unit, "kind": kind, **extra}
        self.sections[-1]["rows"].append(record)
        text = fmt_value(value)
        print(f"  {label:<{LABEL_WIDTH}} {text:>{VALUE_WIDTH}}  {unit}".rstrip(), flush=True)

    def floor(self, label: str, value: float, unit: str = "s") -> None:
        """The barest way to do the same work, measured in this run."""
        self.row(label, value, unit, kind="floor")

    def ratio(self, label: str, subject: float, floor: float, target: float | None = None) -> float:
        """``subject / floor`` printed as ``N.NNx`` (with the target, if there is one)."""
        ratio = subject / floor if floor else float("inf")
        unit = "" if target is None else f"(target <= {target:g}x)"
        self.row(label, f"{ratio:,.2f}x", unit, kind="ratio", ratio=ratio, subject=subject, floor=floor)
        return ratio

    # -- output ----------------------------------------------------------------------

    def to_json(self) -> dict[str, Any]:
        args = {k: str(v) if isinstance(v, Path) else v for k, v in vars(self.args).items()}
        return {"benchmark": self.name, "argv": sys.argv[1:], "args": args, "sections": self.sections}

    def write(self, path: Path) -> None:
        path.write_text(json.dumps(self.to_json(), indent=1, default=str) + "\n")
        print(f"\n(numbers written to {path})", flush=True)

    def profile(self, label: str, fn: Callable[[], object], top: int = 18) -> None:
        """Run ``fn`` under cProfile and print its ``top`` functions by own time."""
        prof = cProfile.Profile()
        prof.enable()
        fn()
        prof.disable()
        buf = io.StringIO()
        pstats.Stats(prof, stream=buf).strip_dirs().sort_stats("tottime").print_stats(top)
        self.section(f"cProfile: {label} (top {top} by own time)")
        lines = buf.getvalue().splitlines()
        start = next((i for i, line in enumerate(lines) if line.lstrip().startswith("ncalls")), 0)
        for line in lines[start:]:
            if line.strip():
                print("  " + line)
