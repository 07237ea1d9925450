"""A real cluster, not only ``local[*]``: a Spark standalone master and two workers on
127.0.0.1 (pyspark's own daemons, :mod:`pushdown_lab.spark_cluster`), the report and a
full compile of the benchmark estate (scale 0.001) submitted to it by a driver process of
their own (client mode: the test run's one session stays ``local[2]``), compared with the
local engine. The daemons and the executors they start are stopped when the test ends."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from pushdown.decide.compiler import EntitlementCompiler
from pushdown.decide.inventory import Inventory
from pushdown.report.files import read_manifest, read_rows
from pushdown.report.run import Request, write_report
from pushdown_spark.tests.cluster_job import REPORT_OPERATIONS
from tests.decide.test_compiler import OPS, questions

sys.path.insert(0, str(Path(__file__).resolve().parents[4] / "benchmarks"))
from harness.worlds import make_world

pytestmark = pytest.mark.spark
ROOT = Path(__file__).resolve().parents[4]


def test_report_and_full_compile_on_a_standalone_cluster_equal_the_local_engine(tmp_path: Path) -> None:
    from pushdown_lab.spark_cluster import ClusterUnavailable, throwaway_cluster

    with contextlib.ExitStack() as stack:
        try:
            cluster = stack.enter_context(
                throwaway_cluster(workers=2, cores=1, memory="768m", parent=str(tmp_path))
            )
        except ClusterUnavailable as exc:
            if os.environ.get("CI"):
                pytest.fail(f"no Spark standalone cluster in CI: {exc}")
            pytest.skip(f"no Spark standalone cluster here: {exc}")
        assert cluster.status()["aliveworkers"] == 2
        out = tmp_path / "out"
        out.mkdir()
        path = [str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])]
        done = subprocess.run(
            [sys.executable, "-m", "pushdown_spark.tests.cluster_job", cluster.master, str(out)],
            capture_output=True,
            text=True,
            timeout=300,
            env={**os.environ, "PYTHONPATH": os.pathsep.join(path), "SPARK_LOCAL_IP": "127.0.0.1"},
            check=False,
        )
        assert done.returncode == 0, f"{done.stdout[-2000:]}\n{done.stderr[-4000:]}\n{cluster.log_tail()}"
        run = json.loads((out / "run.json").read_text())
        apps = {a["id"]: a for a in cluster.status()["completedapps"]}
        assert run["master"] == cluster.master and run["app"] in apps
        assert apps[run["app"]]["cores"] == 2  # one core on each worker
        # each worker started an executor for the application
        assert all(any((cluster.root / f"worker-{i}" / run["app"]).iterdir()) for i in (0, 1))

    model = make_world(0.001).model
    inventory = Inventory.of(model.objects)
    local = write_report(model, Request(out=tmp_path / "local", operations=REPORT_OPERATIONS))
    rows = sorted(read_rows(tmp_path / "local"))
    assert rows and list(read_rows(out / "report")) == rows
    assert read_manifest(out / "report")["users"] == read_manifest(tmp_path / "local")["users"]
    ent = EntitlementCompiler(model, OPS).compile(inventory)
    allowed = sorted(
        {
            (user, op, str(obj))
            for user in ent.users
            for op, obj in questions(inventory)
            if ent.allowed(user, op, obj)
        }
    )
    assert [tuple(a) for a in json.loads((out / "compile.json").read_text())] == allowed and allowed
    print(
        f"\nstandalone cluster (master + 2 workers): report {len(rows)} rows, full compile "
        f"{len(allowed)} allowed decisions, equal to the local engine; {local.tally.rows} rows locally"
    )
