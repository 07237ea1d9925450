"""The report with the Spark engine's compile (the ``spark`` plugin) equals the local one,
row for row, on the example and on awkward names with every leaf type.

The Spark engine computes the compact form (classes of users and their views) as a
DataFrame pipeline; the reasons and the fan-out to rows are the same code, and the
reasons check every decision they explain against the engine's (a mismatch raises)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from pushdown.app.spec import load_spec
from pushdown.report.files import read_rows
from pushdown.report.run import Request, write_report
from tests.report.test_files import awkward

pytestmark = [
    pytest.mark.spark,
    pytest.mark.filterwarnings("ignore::ResourceWarning"),  # py4j's sockets, closed by the JVM
    pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning"),
]
ROOT = Path(__file__).resolve().parents[2]


def test_spark_compiled_report_equals_the_local_one(request: pytest.FixtureRequest, tmp_path: Path) -> None:
    engine_module = pytest.importorskip("pushdown_spark.engine")
    spark: Any = request.getfixturevalue("spark")  # started only when the test runs
    engine = engine_module.SparkEngine(session=spark)  # the run's one session, never stopped here
    counts = []
    for name, model in (("demo", load_spec(str(ROOT / "examples" / "demo.yaml"))), ("awkward", awkward())):
        local = write_report(model, Request(out=tmp_path / f"{name}-local", formats=("csv",)))
        remote = write_report(
            model, Request(out=tmp_path / f"{name}-spark", formats=("csv",), engine="spark", compiler=engine)
        )
        rows = list(read_rows(tmp_path / f"{name}-local"))
        assert rows == list(read_rows(tmp_path / f"{name}-spark")) and rows
        assert (
            local.summary.replace("local engine", "spark engine").split("\n", 3)[3]
            == remote.summary.split("\n", 3)[3]
        )
        counts.append(f"{name}: {len(rows)} rows equal")
    print("\nreport, spark vs local:", "; ".join(counts))
