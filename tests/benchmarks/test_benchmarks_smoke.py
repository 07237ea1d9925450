"""Every benchmark runs at a tiny scale, so none rots: it exits 0 and prints a floor and a ratio.

Each ``benchmarks/bench_*.py`` is found here by its name and run as a subprocess, exactly
as a person would run it, with ``--scale 0.001`` and ``--json``; the contract it meets is
in ``benchmarks/README.md``.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
#: run in this process on the test run's one SparkSession (see the end of this file)
IN_PROCESS = {"bench_spark.py"}
SCRIPTS = sorted(p for p in (ROOT / "benchmarks").glob("bench_*.py") if p.name not in IN_PROCESS)
SMOKE_SCALE = "0.001"


def test_the_benchmarks_are_found() -> None:
    assert {"bench_compile.py", "bench_evaluator.py", "bench_mysql.py"} <= {p.name for p in SCRIPTS}
    assert "bench_ranger.py" in {p.name for p in SCRIPTS}


def run(script: Path, out: Path, *more: str) -> subprocess.CompletedProcess[str]:
    """The script as a person runs it, with this checkout first on the path."""
    path = [str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])]
    return subprocess.run(
        [sys.executable, "-W", "error", str(script), "--scale", SMOKE_SCALE, "--json", str(out), *more],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=out.parent,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(path)},
        check=False,
    )


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.stem)
def test_benchmark_runs_at_a_tiny_scale_and_prints_a_floor_and_a_ratio(script: Path, tmp_path: Path) -> None:
    out = tmp_path / "numbers.json"
    done = run(script, out)
    assert done.returncode == 0, f"{script.name} failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    rows = [row for section in json.loads(out.read_text())["sections"] for row in section["rows"]]
    floors = [row for row in rows if row["kind"] == "floor"]
    ratios = [row for row in rows if row["kind"] == "ratio"]
    assert floors, f"{script.name} printed no floor"
    assert ratios, f"{script.name} printed no ratio against its floor"
    for row in floors + ratios:
        assert row["label"] in done.stdout
    for row in ratios:
        assert math.isfinite(row["ratio"]) and row["ratio"] > 0, row


def test_the_daemon_benchmark_is_found() -> None:
    assert "bench_daemon.py" in {p.name for p in SCRIPTS}


@pytest.mark.parametrize("backend", ["hive", "unitycatalog"])
def test_the_daemon_benchmark_runs_on_every_backend_at_a_tiny_scale(backend: str, tmp_path: Path) -> None:
    """bench_daemon's default backend (MariaDB) runs above; the others here."""
    out = tmp_path / "numbers.json"
    done = run(ROOT / "benchmarks" / "bench_daemon.py", out, "--backend", backend)
    assert done.returncode == 0, (
        f"bench_daemon --backend {backend} failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    )
    rows = {
        row["label"]: row for section in json.loads(out.read_text())["sections"] for row in section["rows"]
    }
    assert rows["backend"]["value"] == backend
    assert rows["commit-to-enforced p50 / bare statement p50"]["ratio"] > 0


def test_the_hive_benchmark_is_found() -> None:
    assert "bench_hive.py" in {p.name for p in SCRIPTS}


def test_the_authorization_benchmark_is_found() -> None:
    assert "bench_authz.py" in {p.name for p in SCRIPTS}


@pytest.mark.spark
def test_bench_spark_runs_at_a_tiny_scale_on_the_runs_one_session(spark: object, tmp_path: Path) -> None:
    """bench_spark would start a JVM of its own as a subprocess; here it reuses the session."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    import bench_spark

    out = tmp_path / "numbers.json"
    assert bench_spark.main(["--scale", SMOKE_SCALE, "--json", str(out)], spark=spark) == 0
    rows = [row for section in json.loads(out.read_text())["sections"] for row in section["rows"]]
    assert [r for r in rows if r["kind"] == "floor"], "bench_spark printed no floor"
    ratios = [r for r in rows if r["kind"] == "ratio"]
    assert ratios and all(math.isfinite(r["ratio"]) and r["ratio"] > 0 for r in ratios)


def test_the_rest_benchmark_is_found() -> None:
    assert "bench_rest.py" in {p.name for p in SCRIPTS}


def test_the_ranger_benchmark_runs_at_the_issue_estate_sizing_at_a_tiny_scale(tmp_path: Path) -> None:
    """``bench_ranger.py --issue-estate`` (issue 30's estate at scale 1: 10,000 users and roles,
    100,000 tables), as small as the other smoke runs: every change is enforced."""
    out = tmp_path / "numbers.json"
    done = run(ROOT / "benchmarks" / "bench_ranger.py", out, "--issue-estate", "--gc-freeze")
    assert done.returncode == 0, f"failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    rows = {r["label"]: r for section in json.loads(out.read_text())["sections"] for r in section["rows"]}
    assert rows["commit -> enforced: the stand-in's engine allows every change"]["value"] is True
    assert [label for label in rows if label.startswith("commit -> enforced") and "p50" in label]
    assert [r for r in rows.values() if r["kind"] == "ratio"]
