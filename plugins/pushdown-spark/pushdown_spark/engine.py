"""The Spark engine: full compiles as a DataFrame pipeline; scoped ones stay local.

``engine = "spark"`` in the configuration, with a ``[spark]`` table (``master``, default
``local[*]``; any ``spark.*`` setting is passed to the session builder). The session
starts on the first full compile, not before, and a missing Java or pyspark is a
clear error, never a traceback.
"""

from __future__ import annotations

import os
import shutil
import sys
import threading
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pushdown.decide.compiler import Entitlements
from pushdown.decide.engine import LOCAL
from pushdown.decide.inventory import Inventory
from pushdown.errors import ConfigError
from pushdown.model.securables import ObjectRef
from pushdown.model.state import Model
from pushdown.report.tally import Changes, Tally

if TYPE_CHECKING:
    from pushdown_spark.compiler import Job

#: (stage id, tasks done, tasks in the stage, stages running): what a progress callback gets
StageProgress = Callable[[int, int, int, int], None]


def java_problem() -> str | None:
    """Why Spark cannot start a JVM here, in words (``None``: Java is there)."""
    home = os.environ.get("JAVA_HOME")
    if home:  # Spark's launcher runs $JAVA_HOME/bin/java when JAVA_HOME is set, never PATH's
        if os.path.exists(os.path.join(home, "bin", "java")):
            return None
        return f"JAVA_HOME={home} holds no bin/java (Spark runs that one): unset it or point it at a JDK"
    if shutil.which("java"):
        return None
    return "Java is not installed (no java on PATH and no JAVA_HOME): Spark needs Java 8, 11 or 17"


def pyspark_problem() -> str | None:
    try:
        import pyspark  # noqa: F401
    except ImportError:
        return "pyspark is not installed: pip install 'pyspark>=3.5,<4' (the pushdown-spark package needs it)"
    return None


def stderr_progress(stage: int, done: int, total: int, running: int) -> None:
    """The default progress line (``[spark] progress = true``): Spark's stage progress."""
    more = f" (+{running - 1} more stage(s))" if running > 1 else ""
    print(f"\rspark: stage {stage}: {done}/{total} tasks{more}   ", end="", file=sys.stderr, flush=True)


class SparkEngine:
    """The engine a ``[spark]`` table configures (or one given a running session)."""

    name = "spark"

    def __init__(
        self,
        settings: Mapping[str, Any] | None = None,
        *,
        session: Any = None,
        progress: StageProgress | None = None,
        poll_seconds: float = 0.5,
    ) -> None:
        self.settings = dict(settings or {})
        self._session = session
        self._owns_session = False
        self.progress = progress
        self.poll_seconds = poll_seconds
        self.last: Any = None  # the counters of the last Spark compile

    @property
    def session(self) -> Any:
        if self._session is None:
            self._session, self._owns_session = self._start()
        return self._session

    def _start(self) -> tuple[Any, bool]:
        """The session, and whether this engine started it (and so may stop it): a session
        already running in this process (a notebook's, a test run's) is used, not replaced."""
        for problem in (pyspark_problem(), java_problem()):
            if problem is not None:
                raise ConfigError(f'engine = "spark": {problem}')
        os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
        from pyspark.sql import SparkSession

        active = SparkSession.getActiveSession()
        if active is not None:
            return active, False

        builder = SparkSession.builder.master(str(self.settings.get("master", "local[*]")))
        builder = builder.appName(str(self.settings.get("app_name", "pushdown")))
        builder = builder.config("spark.ui.showConsoleProgress", "false")
        for key, value in sorted(self.settings.items()):
            if key.startswith("spark."):
                builder = builder.config(key, str(value))
        try:
            return builder.getOrCreate(), True
        except Exception as exc:  # the JVM did not come up: say so in one line
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise ConfigError(f'engine = "spark": Spark did not start: {first}') from None

    def compile(
        self,
        model: Model,
        operations: Sequence[str],
        inventory: Inventory,
        users: Collection[str] | None = None,
        roots: Iterable[ObjectRef] | None = None,
    ) -> Entitlements:
        """A full compile (``roots`` None) runs on Spark; a scoped one locally."""
        if roots is not None:
            return LOCAL.compile(model, operations, inventory, users, roots)
        from pushdown_spark.compiler import Job

        return self.compile_many(operations, [Job(model, inventory, users)])[0]

    def compile_catalogs(
        self,
        model: Model,
        operations: Sequence[str],
        inventory: Inventory,
        users: Collection[str] | None = None,
    ) -> Iterator[tuple[str, Entitlements]]:
        """A full compile in one Spark run, handed out one catalog at a time (see
        :meth:`pushdown_spark.compiler.SparkCompile.run_parts`)."""
        from pushdown_spark.compiler import SparkCompile

        run = SparkCompile(self.session, operations, self.staging)
        self.last = run.counters
        parts = run.run_parts(model, inventory, users)
        while True:
            with self._watching():  # Spark's progress while a catalog is collected, not between
                step = next(parts, None)
            if step is None:
                return
            yield step

    def compile_many(self, operations: Sequence[str], jobs: Sequence[Job]) -> list[Entitlements]:
        """Full compiles of several (model, inventory) pairs in one Spark run (one set of
        jobs for all of them: what a test of many small models wants)."""
        from pushdown_spark.compiler import SparkCompile

        run = SparkCompile(self.session, operations, self.staging)
        with self._watching():
            results = run.run_many(jobs)
        self.last = run.counters
        return results

    def write_report_rows(
        self,
        model: Model,
        operations: Sequence[str],
        inventory: Inventory,
        root: Path,
        formats: tuple[str, ...],
        progress: Callable[[str], None] | None,
    ) -> tuple[Tally, list[str]]:
        """The report as one Spark job (:mod:`pushdown_spark.report`): the executors decide,
        explain, fan out and write; the driver writes the facts and collects counts."""
        from pushdown_spark.facts import staging
        from pushdown_spark.report import write_rows

        with staging(self.staging) as stage, self._watching(), self._planned():
            return write_rows(self.session, model, operations, inventory, root, formats, stage, progress)

    def compare_reports(
        self, before: tuple[Path, list[str]], after: tuple[Path, list[str]], changes: Changes
    ) -> Changes:
        """``--since`` on Spark: the rows each report has and the other has not, per user."""
        from pushdown_spark.report import compare

        with self._watching(), self._planned():
            return compare(self.session, before, after, changes)

    @contextmanager
    def _planned(self) -> Iterator[None]:
        """Spark's adaptive execution off while a report runs (unless the ``[spark]`` table
        sets it): it re-plans after every shuffle, one job per stage, which costs more than
        it saves on the report's many small joins of facts; restored afterwards."""
        key = "spark.sql.adaptive.enabled"
        if key in self.settings:
            yield
            return
        conf = self.session.conf
        before = conf.get(key, None)
        conf.set(key, "false")
        try:
            yield
        finally:
            if before is None:
                conf.unset(key)
            else:
                conf.set(key, before)

    @property
    def staging(self) -> str | None:
        """Where the model's fact files go (``[spark] staging``; default: a temporary
        directory, which only executors on this machine can read)."""
        value = self.settings.get("staging")
        return None if value is None else str(value)

    @contextmanager
    def _watching(self) -> Iterator[None]:
        """Surface Spark's stage progress while a compile runs (its status tracker)."""
        report = self.progress
        if report is None:
            yield
            return
        tracker = self.session.sparkContext.statusTracker()
        stop = threading.Event()
        said = [False]

        def poll() -> None:
            while not stop.wait(self.poll_seconds):
                stages = tracker.getActiveStageIds()
                for stage_id in stages[:1]:
                    info = tracker.getStageInfo(stage_id)
                    if info is not None:
                        report(stage_id, info.numCompletedTasks, info.numTasks, len(stages))
                        said[0] = True

        watcher = threading.Thread(target=poll, name="pushdown-spark-progress", daemon=True)
        watcher.start()
        try:
            yield
        finally:
            stop.set()
            watcher.join()
            if said[0] and report is stderr_progress:
                print(file=sys.stderr)  # end the progress line

    def close(self) -> None:
        """Stop the session this engine started (never one it was given)."""
        if self._owns_session and self._session is not None:
            self._session.stop()
        self._session = None
