"""The engine seam: the local engine is the compiler; the configuration picks an engine,
a plugin provides it, and every mistake is a clear error (no Spark started here)."""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pushdown.app.settings import from_mapping
from pushdown.decide.compiler import EntitlementCompiler
from pushdown.decide.engine import LOCAL, Engine, LocalEngine
from pushdown.decide.inventory import Inventory
from pushdown.decide.requirements import OPERATIONS
from pushdown.errors import ConfigError
from pushdown.host.hookspecs import hookimpl
from pushdown.host.plugins import Hooks
from pushdown.model.securables import METALAKE
from pushdown.reconcile.backend import BackendContext
from tests import builders


def _config(text: str) -> Any:
    return from_mapping(tomllib.loads(text), Path("."), "pushdown.toml")


def test_the_local_engine_is_the_default_everywhere() -> None:
    assert _config("").engine == "local"
    assert BackendContext("b", {}).engine is LOCAL
    assert isinstance(LOCAL, Engine)
    assert Hooks.load(load_entry_points=False).engine("local", {}) is LOCAL


@settings(max_examples=10, deadline=None)
@given(st.data())
def test_the_local_engine_answers_like_the_compiler(data: st.DataObject) -> None:
    model = data.draw(builders.models())
    inventory = Inventory.of(model.objects)
    ops = ["load_table", "alter_table", "load_schema"]
    got = LocalEngine().compile(model, ops, inventory)
    want = EntitlementCompiler(model, ops).compile(inventory)
    assert got.users == want.users
    for user in want.users:
        for obj in inventory.within(METALAKE):
            for op in ops:
                if OPERATIONS[op].target is not obj.type:
                    continue
                assert got.allowed(user, op, obj) == want.allowed(user, op, obj)


def test_spark_settings_are_passed_through_and_checked() -> None:
    cfg = _config(
        'engine = "spark"\n[spark]\nmaster = "yarn"\nspark.executor.memory = "4g"\n'
        '"spark.sql.shuffle.partitions" = 64\nspark.dynamicAllocation.enabled = true\n'
    )
    assert cfg.engine == "spark"
    assert cfg.engine_settings["master"] == "yarn"
    assert cfg.engine_settings["spark.executor.memory"] == "4g"
    assert cfg.engine_settings["spark.sql.shuffle.partitions"] == "64"
    assert cfg.engine_settings["spark.dynamicAllocation.enabled"] == "true"
    assert _config('engine = "spark"').engine_settings["master"] == "local[*]"
    assert "staging" not in _config('engine = "spark"').engine_settings  # a temporary directory
    staged = _config('engine = "spark"\n[spark]\nstaging = "hdfs:///tmp/pushdown"\n')
    assert staged.engine_settings["staging"] == "hdfs:///tmp/pushdown"


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ('engine = "flink"', 'engine = "flink": must be one of "local", "spark"'),
        ("engine = 3", "engine = 3: must be one of"),
        ("spark = 3", "[spark] must be a table"),
        ('engine = "spark"\n[spark]\nmaster = ""', "spark.master"),
        ('engine = "spark"\n[spark]\nmaster = "locl[2]"', "spark.master = \"locl[2]\": Spark takes"),
        ('engine = "spark"\n[spark]\nexecutors = 3', "spark.executors: unknown setting"),
        ('engine = "spark"\n[spark]\nprogress = "yes"', "must be true or false"),
        ('engine = "spark"\n[spark]\nstaging = ""', "spark.staging"),
        ('engine = "spark"\n[spark]\nstaging = 3', "spark.staging = 3: must be a non-empty string"),
        ('engine = "spark"\n[spark]\nspark.ssl.keyPassword = "x"', "secrets do not belong"),
        ('engine = "spark"\n[spark]\nspark.app.x = [1]', "must be a string, number or boolean"),
    ],
)
def test_bad_engine_settings_are_clear_errors(text: str, words: str) -> None:
    with pytest.raises(ConfigError) as caught:
        _config(text)
    assert words in str(caught.value)
    assert "pushdown.toml" in str(caught.value)


class FakeEnginePlugin:
    """A plugin providing an engine named "fake" (the way the spark plugin does)."""

    @hookimpl
    def pushdown_make_engine(self, name: str, settings: Mapping[str, Any]) -> Engine | None:
        if name != "fake":
            return None
        engine = LocalEngine()
        engine.name = f"fake({settings.get('master')})"
        return engine


def test_an_engine_comes_from_the_plugin_that_names_it() -> None:
    hooks = Hooks.load(load_entry_points=False, extra=[FakeEnginePlugin()])
    engine = hooks.engine("fake", {"master": "m"})
    assert engine.name == "fake(m)"


def test_an_engine_no_plugin_provides_is_a_clear_error() -> None:
    hooks = Hooks.load(load_entry_points=False, extra=[FakeEnginePlugin()])
    with pytest.raises(
        ConfigError, match=r"no installed plugin provides it .*pushdown-spark"
    ):
        hooks.engine("spark", {})
