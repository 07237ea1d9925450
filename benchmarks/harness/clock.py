"""Wall and CPU time of a step; repeated measurements with their best and median."""

from __future__ import annotations

import gc
import statistics
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Generic, TypeVar

T = TypeVar("T")


class Clock:
    """Wall (``perf_counter``) and CPU (``process_time``) seconds of one ``with`` block.

    The garbage collector runs before the block starts, so a step does not pay for the
    previous step's garbage.
    """

    wall: float
    cpu: float

    def __enter__(self) -> Clock:
        gc.collect()
        self._wall0, self._cpu0 = time.perf_counter(), time.process_time()
        return self

    def __exit__(self, *exc: object) -> None:
        self.wall = time.perf_counter() - self._wall0
        self.cpu = time.process_time() - self._cpu0


@dataclass(frozen=True)
class Measurement(Generic[T]):
    """The wall and CPU seconds of each run of one function, and its last result."""

    walls: tuple[float, ...]
    cpus: tuple[float, ...]
    result: T

    @property
    def best(self) -> float:
        return min(self.walls)

    @property
    def median(self) -> float:
        return statistics.median(self.walls)

    @property
    def best_cpu(self) -> float:
        return min(self.cpus)

    def runs(self) -> str:
        """The wall time of every run, for a report row."""
        return ", ".join(f"{w:.3f}" for w in self.walls)


def measure(
    fn: Callable[[], T],
    repeats: int = 1,
    warmup: int = 0,
    between: Callable[[], object] | None = None,
) -> Measurement[T]:
    """Run ``fn`` ``warmup`` times untimed, then ``repeats`` times timed.

    ``between`` runs untimed after every run (to undo what ``fn`` did, say).
    """
    for _ in range(warmup):
        fn()
        if between is not None:
            between()
    walls, cpus = [], []
    result: T
    for _ in range(max(1, repeats)):
        with Clock() as clock:
            result = fn()
        walls.append(clock.wall)
        cpus.append(clock.cpu)
        if between is not None:
            between()
    return Measurement(tuple(walls), tuple(cpus), result)


def alternate(
    fns: Mapping[str, Callable[[], object]],
    rounds: int,
    between: Callable[[], object] | None = None,
) -> dict[str, Measurement[object]]:
    """Run each function once per round, in turn, so drift in the machine hits all alike.

    The usual use: a subject and its floor, ``{"floor": ..., "pushdown": ...}``;
    ``between`` runs untimed after every single run.
    """
    walls: dict[str, list[float]] = {name: [] for name in fns}
    cpus: dict[str, list[float]] = {name: [] for name in fns}
    results: dict[str, object] = {}
    for _ in range(max(1, rounds)):
        for name, fn in fns.items():
            with Clock() as clock:
                results[name] = fn()
            walls[name].append(clock.wall)
            cpus[name].append(clock.cpu)
            if between is not None:
                between()
    return {name: Measurement(tuple(walls[name]), tuple(cpus[name]), results[name]) for name in fns}
