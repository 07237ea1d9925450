"""Clear errors without a Spark run: Java or pyspark missing, a failing start, the plugin."""

from __future__ import annotations

import pytest

from pushdown.decide.inventory import Inventory
from pushdown.errors import ConfigError
from pushdown.host.plugins import Hooks
from pushdown.model.state import Model
from pushdown_spark import engine as spark_engine
from pushdown_spark.engine import SparkEngine, java_problem
from pushdown_spark.plugin import pushdown_make_engine


def test_the_plugin_makes_the_spark_engine_lazily() -> None:
    made = pushdown_make_engine(name="spark", settings={"master": "local[1]", "progress": False})
    assert isinstance(made, SparkEngine)
    assert made._session is None  # nothing started before the first full compile
    assert pushdown_make_engine(name="flink", settings={}) is None
    assert isinstance(Hooks.load().engine("spark", {"master": "local[1]"}), SparkEngine)


def test_missing_java_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", "/nonexistent")
    monkeypatch.delenv("JAVA_HOME", raising=False)
    assert java_problem() is not None
    with pytest.raises(ConfigError, match=r'engine = "spark": Java is not installed'):
        SparkEngine({"master": "local[1]"}).compile(Model(), ["load_table"], Inventory())


def test_missing_pyspark_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(spark_engine, "pyspark_problem", lambda: "pyspark is not installed: pip install")
    with pytest.raises(ConfigError, match=r'engine = "spark": pyspark is not installed'):
        SparkEngine({}).compile(Model(), ["load_table"], Inventory())


def test_a_java_home_without_java_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    """Spark's launcher runs $JAVA_HOME/bin/java when JAVA_HOME is set, even with java on PATH."""
    monkeypatch.setenv("JAVA_HOME", "/nonexistent/jdk")
    problem = java_problem()
    assert problem is not None and problem.startswith("JAVA_HOME=/nonexistent/jdk holds no bin/java")
    with pytest.raises(ConfigError, match=r'engine = "spark": JAVA_HOME=/nonexistent/jdk holds no bin/java'):
        SparkEngine({"master": "local[1]"}).compile(Model(), ["load_table"], Inventory())
