"""One backend object called from several threads at once: what it keeps between calls
(the last read, the read's index, the kept classes and roles, the kept identity, the last
compile) is moved by one call at a time, so each compile equals a compile from scratch.

Where the product shares a backend object between threads: the daemon's workers each open
their own (one backend each), and applying syncs of one backend take its writer lease
(one at a time, across threads and processes: :meth:`pushdown.app.service.base.Base._lease`);
a dry run takes no lease (``plan``, a preview, the library's ``sync(dry_run=True)``), so it
may run beside a sync another thread of the same library pushes. The backend takes those
calls one at a time (``RangerBackend._serial``).

Random histories (those of ``test_ranger_scoped_histories.py``): one thread syncs each
step over the scope its events name, on the shared backend, and after each sync a fresh
backend's full plan is empty; beside it, threads make dry runs of random model versions of
the history (a step's scope, or everything) on the same backend, each compile equal to a
compile of the same model and read by a fresh backend (nothing wider, nothing narrower).
The interpreter switches threads every few microseconds meanwhile."""

from __future__ import annotations

import copy
import random
import sys
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pushdown_lab.ranger_standin import Standin

from pushdown.model.state import Model
from pushdown.reconcile import planner
from pushdown.reconcile.backend import Desired
from pushdown.reconcile.scope import Scope, scope_of
from pushdown.reconcile.sync import reconcile
from pushdown_ranger import compiling
from pushdown_ranger.backend import RangerBackend
from pushdown_ranger.scoping import covering
from tests.adversary import histories

from .histories import judged, played
from .test_ranger_scoped_histories import USERS, live, start, steps
from .world import backend_for

pytestmark = pytest.mark.ranger

#: threads making dry runs beside the syncing one, and the dry runs each makes
READERS, DRY_RUNS = 2, 4


@contextmanager
def switching(every: float = 1e-5) -> Iterator[None]:
    """Threads switched every ``every`` seconds (not every 5 ms): calls interleave."""
    before = sys.getswitchinterval()
    sys.setswitchinterval(every)
    try:
        yield
    finally:
        sys.setswitchinterval(before)


def versions(model: Model, history: list[tuple[Any, ...]]) -> list[tuple[Model, Scope]]:
    """Each step ``model`` takes, played: (a copy of the members' view synced, its scope)."""
    out = []
    for step in history:
        events = played(model, step)
        if events:
            out.append((copy.deepcopy(live(model)), Scope.union(scope_of(e) for e in events)))
    return out


def dry_run(standin: Standin, backend: RangerBackend, model: Model, scope: Scope, why: object) -> None:
    """``backend``'s dry run of ``model`` over ``scope`` compiles what a fresh backend
    compiles from the same model and read (a compile from scratch) where the fresh one's
    focus reaches; the focus of a change of principals is kept for the model version and
    only ever widened (the read-back after a sync looks where the sync did), so it may
    reach further: Hive policies of more databases (every other fact is covered by any
    focus), nothing there but what a compile of everything from scratch gives."""
    where = planner.resolve(backend, model, scope)
    snapshot = backend.read(model, where)
    got = backend.compile(model, snapshot, where)
    fresh = backend_for(standin, mapping_stable=True)
    want = fresh.compile(model, snapshot, where)
    within = covering(fresh.focus(model, where, snapshot), fresh.naming.hive_service)
    mine = frozenset(f for f in got.facts if within(f))
    assert mine == want.facts, (why, sorted(map(str, mine ^ want.facts))[:6])
    # beyond it, Hive policies only, each as a compile of everything from scratch makes it
    everything = planner.resolve(fresh, model, Scope.everything())
    whole = backend_for(standin, mapping_stable=True).compile(model, snapshot, everything)
    beyond = got.facts - mine
    assert beyond <= whole.facts, (why, sorted(map(str, beyond - whole.facts))[:6])


def test_dry_runs_beside_scoped_syncs_on_one_backend_equal_a_compile_from_scratch() -> None:
    @settings(max_examples=histories(8), deadline=None, suppress_health_check=list(HealthCheck))
    @given(history=st.lists(steps, min_size=2, max_size=8), seed=st.integers(0, 2**16))
    def run(history: list[tuple[Any, ...]], seed: int) -> None:
        with Standin() as standin:
            shared = backend_for(standin, mapping_stable=True)
            model = start().model
            reconcile(shared, model, Scope.everything())
            first = copy.deepcopy(live(model))
            due = versions(model, history)
            pool = [(first, Scope.everything()), *due]
            rng = random.Random(seed)
            asked = [
                [
                    (rng.choice(pool)[0], rng.choice((Scope.everything(), rng.choice(pool)[1])))
                    for _ in range(DRY_RUNS)
                ]
                for _ in range(READERS)
            ]

            def sync() -> None:
                for seen, scope in due:
                    reconcile(shared, seen, scope)
                    plan = planner.plan(backend_for(standin), seen, Scope.everything())
                    assert plan.empty, (history, [str(op) for op in plan.ops][:6])

            def read(calls: list[tuple[Model, Scope]]) -> None:
                for seen, scope in calls:
                    dry_run(standin, shared, seen, scope, history)

            with switching(), ThreadPoolExecutor(1 + READERS) as threads:
                running = [threads.submit(sync), *(threads.submit(read, calls) for calls in asked)]
                for done in running:
                    done.result()
            final = due[-1][0] if due else first
            judged(standin, backend_for(standin), final, USERS, history)

    run()


def test_a_compile_waits_for_the_call_in_flight_on_the_same_backend(monkeypatch: pytest.MonkeyPatch) -> None:
    """A second thread's compile on the backend starts only once the first one returned:
    the first is held inside its compile until the second has had time to enter."""
    inside, release = threading.Event(), threading.Event()
    entered: list[str] = []
    compile_all = compiling.compile_all

    def held(*args: Any, **kwargs: Any) -> Desired:
        entered.append(threading.current_thread().name)
        if len(entered) == 1:
            inside.set()
            release.wait(10)
        return compile_all(*args, **kwargs)

    monkeypatch.setattr(compiling, "compile_all", held)
    with Standin() as standin:
        backend = backend_for(standin)
        model = start().model
        where = planner.resolve(backend, model, Scope.everything())
        snapshot = backend.read(model, where)
        with ThreadPoolExecutor(2) as threads:
            first = threads.submit(backend.compile, model, snapshot, where)
            assert inside.wait(10)
            second = threads.submit(backend.compile, copy.deepcopy(model), snapshot, where)
            time.sleep(0.3)  # time enough to enter, were it let in
            alone = not second.done() and len(entered) == 1
            release.set()
            assert first.result(timeout=30).facts == second.result(timeout=30).facts
            assert alone, "a second compile ran beside the first"
