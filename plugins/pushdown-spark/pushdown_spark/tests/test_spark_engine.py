"""The Spark engine equals the local compiler and ``authorize``: differential tests.

One Spark run (the test session's one SparkSession) compiles a batch: random models
from the shared builders (and the compiler tests' odd ones: dotted names, backticks,
topics, every privilege at every level) and the benchmark estate at a small scale. For
every user (and a stranger), every compilable operation and every held object of its
type plus a stand-in new child under every held container, the Spark engine's answer
must equal ``authorize``; so must every ``Coverage`` child by child, and every container
below which something is allowed must be listed. The local compiler is compared on the
same questions. The counts are printed; 0 mismatches.
"""

from __future__ import annotations

import copy
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pushdown.decide.compiler import EntitlementCompiler
from pushdown.decide.evaluator import Evaluator
from pushdown.decide.inventory import Inventory
from pushdown.model.securables import METALAKE
from pushdown.model.state import Model
from pushdown_spark.compiler import Job
from pushdown_spark.engine import SparkEngine
from tests import builders
from tests.decide.test_compiler import OPS, compare, inventories, odd_models, questions

sys.path.insert(0, str(Path(__file__).resolve().parents[4] / "benchmarks"))
from harness.worlds import make_world

pytestmark = pytest.mark.spark

#: random models per run: they share one Spark run, so more cost little Spark time
#: (the evaluator's side grows with them); ~20 keeps the whole file near a minute
RANDOM_MODELS = 20
COUNTS = {"models": 0, "decisions": 0, "allowed": 0, "mismatches": 0, "local_mismatches": 0}


def _random_batch() -> list[Job]:
    batch: list[Job] = []

    @settings(
        max_examples=RANDOM_MODELS, deadline=None, database=None, suppress_health_check=list(HealthCheck)
    )
    @given(data=st.data())
    def draw(data: st.DataObject) -> None:
        model = data.draw(st.one_of(builders.models(), odd_models()))
        if len(batch) % 2:  # a copy, as a sync with a directory's members compiles: its
            model = copy.deepcopy(model)  # refs are equal to the originals, never the same
        batch.append(Job(model, data.draw(inventories(model))))

    draw()
    return batch


def _copied_metalake_owner() -> Job:
    """A metalake owner in a copied model (``copy.deepcopy``, as ``sync_model`` makes one
    when a directory adds members): the owned metalake is equal to ``METALAKE``, not it."""
    b = builders.Builder().users("owner", "other").catalog("c").schema("c.s").table("c.s.t")
    model = copy.deepcopy(b.owner(METALAKE, "owner").model)
    assert next(iter(model.owned_by["owner"])) is not METALAKE
    return Job(model, Inventory.of(model.objects))


def _benchmark_world() -> Job:
    world = make_world(0.001)  # 10 catalogs x 3 schemas x 3 tables, 5 roles, 20 users, owners
    return Job(world.model, Inventory.of(world.model.objects))


@pytest.fixture(scope="module")
def compiled(spark: Any) -> tuple[list[Job], list[Any], SparkEngine, float]:
    batch = [*_random_batch(), _copied_metalake_owner(), _benchmark_world()]
    seen: list[tuple[int, int, int, int]] = []
    engine = SparkEngine(session=spark, progress=lambda *a: seen.append(a), poll_seconds=0.05)
    started = time.perf_counter()
    results = engine.compile_many(OPS, batch)
    took = time.perf_counter() - started
    engine.seen = seen  # type: ignore[attr-defined]
    return batch, results, engine, took


def _local_agrees(model: Model, job: Job, spark_ent: Any) -> int:
    local = EntitlementCompiler(model, OPS).compile(job.inventory)
    wrong = 0
    for user in [*sorted(model.users), "stranger"]:
        for op, obj in questions(job.inventory):
            wrong += local.allowed(user, op, obj) != spark_ent.allowed(user, op, obj)
    return wrong


def test_spark_equals_authorize_and_the_local_compiler(compiled: Any) -> None:
    batch, results, engine, took = compiled
    for index, (job, ent) in enumerate(zip(batch, results, strict=True)):
        users = [*sorted(job.model.users), "stranger"]
        try:
            COUNTS["decisions"] += compare(job.model, ent, users, job.inventory, [METALAKE])
        except AssertionError:
            COUNTS["mismatches"] += 1
            raise AssertionError(f"model {index} of the batch: {job.model!r}") from None
        COUNTS["local_mismatches"] += _local_agrees(job.model, job, ent)
        COUNTS["models"] += 1
    assert COUNTS["local_mismatches"] == 0
    assert engine.last.fallbacks == 0, "every question the views asked was answered by Spark"
    evaluator = Evaluator(batch[-1].model)
    world = batch[-1]
    COUNTS["allowed"] = sum(
        evaluator.authorize(u, op, obj, explain=False).allowed
        for u in sorted(world.model.users)
        for op, obj in questions(world.inventory)
    )
    print(
        f"\nspark vs authorize and the local compiler: {COUNTS['models']} models (one Spark run, "
        f"{took:.1f} s, {engine.last.jobs} jobs), {COUNTS['decisions']} decisions compared "
        f"({COUNTS['allowed']} allowed in the benchmark estate), {COUNTS['mismatches']} mismatches, "
        f"{COUNTS['local_mismatches']} against the local compiler"
    )


def test_the_driver_collects_the_compact_form_not_the_expansion(compiled: Any) -> None:
    batch, _, engine, _ = compiled
    expansion = sum(len(j.model.users) * len(list(questions(j.inventory))) for j in batch)
    collected = engine.last.questions_collected + engine.last.keys
    print(f"\ncollected {collected} rows for an expansion of {expansion} (user, operation, object) triples")
    assert collected < expansion / 5


def test_spark_stage_progress_is_surfaced(compiled: Any) -> None:
    _, _, engine, _ = compiled
    seen = engine.seen
    assert seen, "the status tracker reported no running stage"
    _stage, done, total, running = seen[-1]
    assert 0 <= done <= total and running >= 1


def test_a_scoped_compile_stays_local(spark: Any) -> None:
    job = _benchmark_world()
    engine = SparkEngine(session=spark)
    table = next(o for o in job.inventory.within(METALAKE) if len(o.names) == 3)
    ent = engine.compile(job.model, ["load_table"], job.inventory, roots=[table])
    assert engine.last is None  # no Spark run
    local = EntitlementCompiler(job.model, ["load_table"]).compile(job.inventory, roots=[table])
    assert ent.users == local.users
    for user in ent.users:
        assert ent.allowed(user, "load_table", table) == local.allowed(user, "load_table", table)


def test_the_cli_plans_with_the_spark_engine_as_with_the_local_one(
    spark: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``engine = "spark"`` in pushdown.toml: the full plan of the example runs on Spark (the
    process's running session is used, and left running) and equals the local plan."""
    from click.testing import CliRunner

    from pushdown.app.cli import main

    root = Path(__file__).resolve().parents[4]
    spec = str(root / "examples" / "demo.yaml")
    outputs = []
    for engine in ("local", "spark"):
        here = tmp_path / engine
        here.mkdir()
        (here / "pushdown.toml").write_text(
            f'engine = "{engine}"\n[spark]\nprogress = false\n'
            '[backends.demo]\nkind = "recording"\nstate = "state.json"\n'
        )
        monkeypatch.chdir(here)
        done = CliRunner().invoke(main, ["plan", "--spec", spec])
        assert done.exit_code == 2, done.output  # 2: there is something to apply
        outputs.append(done.output.replace(str(here), "."))
    assert outputs[0] == outputs[1]
    assert "25 to add" in outputs[1]
    assert spark.sparkContext._jsc is not None  # the session is still running


def test_a_full_compile_is_handed_out_one_catalog_at_a_time(spark: Any) -> None:
    """``compile_catalogs``: one Spark run, then each catalog's compact form collected on its
    own, equal to the local compile of that catalog (every user, every question in it)."""
    from pushdown.decide.engine import by_catalog

    job = _benchmark_world()  # 10 catalogs
    engine = SparkEngine(session=spark)
    local = EntitlementCompiler(job.model, OPS).compile(job.inventory)
    seen, checks = [], 0
    for name, ent in by_catalog(engine, job.model, OPS, job.inventory):
        seen.append(name)
        assert {c.names[0] for c in ent.inventory.children(METALAKE)} == {name}
        for user in [*sorted(job.model.users), "stranger"]:
            for op, obj in questions(ent.inventory):
                if obj.names and obj.names[0] == name:
                    checks += 1
                    assert ent.allowed(user, op, obj) == local.allowed(user, op, obj), (name, user, op, obj)
    catalogs = sorted(c.names[0] for c in job.inventory.children(METALAKE))
    assert seen == catalogs and checks
    # one pipeline, then the metalake's level once and one collect per catalog
    assert engine.last.jobs >= len(catalogs) + 1
    print(f"\nby catalog: {len(seen)} catalogs, {checks} decisions equal to the local compiler")
