"""The driver a standalone-cluster test submits (client mode): the report and a full compile
of the benchmark estate at scale 0.001, on the master given, written for the test to check.

    python -m pushdown_spark.tests.cluster_job spark://127.0.0.1:PORT OUT

writes ``OUT/report`` (the report, ``--engine spark``), ``OUT/compile.json`` (every allowed
(user, operation, object) of the full compile, handed out one catalog at a time) and
``OUT/run.json`` (the application's id and its executors' hosts).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from pushdown.decide.engine import by_catalog
from pushdown.decide.inventory import Inventory
from pushdown.report.run import Request, write_report
from pushdown_spark.engine import SparkEngine

ROOT = Path(__file__).resolve().parents[4]
sys.path.insert(0, str(ROOT / "benchmarks"))
sys.path.insert(0, str(ROOT))

from harness.worlds import make_world  # noqa: E402

from tests.decide.test_compiler import OPS, questions  # noqa: E402

#: the report's operations here (all of them are compared in process, on the run's session)
REPORT_OPERATIONS = ("load_catalog", "load_schema", "create_table", "load_table", "alter_table", "drop_table")
SETTINGS = {
    "spark.executor.memory": "512m",
    "spark.driver.memory": "512m",
    "spark.driver.host": "127.0.0.1",
    "spark.driver.bindAddress": "127.0.0.1",
    "spark.ui.enabled": "false",
    "spark.ui.showConsoleProgress": "false",
    "spark.sql.shuffle.partitions": "4",
    "spark.default.parallelism": "4",
}


def main(master: str, out: Path) -> None:
    model = make_world(0.001).model
    inventory = Inventory.of(model.objects)
    engine = SparkEngine({"master": master, "app_name": "pushdown-cluster-test", **SETTINGS})
    try:
        report = Request(out=out / "report", engine="spark", compiler=engine, operations=REPORT_OPERATIONS)
        write_report(model, report)
        allowed: set[tuple[str, str, str]] = set()
        for _, ent in by_catalog(engine, model, OPS, inventory):
            for user in ent.users:
                allowed |= {
                    (user, op, str(obj)) for op, obj in questions(ent.inventory) if ent.allowed(user, op, obj)
                }
        (out / "compile.json").write_text(json.dumps(sorted(allowed)), encoding="utf-8")
        context = engine.session.sparkContext
        executors = context._jsc.sc().getExecutorMemoryStatus().keySet().toString()
        run = {"app": context.applicationId, "master": context.master, "executors": executors}
        (out / "run.json").write_text(json.dumps(run), encoding="utf-8")
    finally:
        engine.close()


if __name__ == "__main__":
    main(sys.argv[1], Path(sys.argv[2]))
