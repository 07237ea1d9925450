"""Plans: the pure difference between what a backend should hold and what it holds.

A backend describes its state as a set of *facts* (frozen, hashable values such as
"user u has SELECT on db.t"). ``diff`` compares the desired facts with the facts read
back from the server, within a scope, and yields the operations that close the gap.
A dry run prints exactly the plan that ``apply`` executes.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from pushdown.reconcile.scope import Scope


@runtime_checkable
class Fact(Protocol):
    """One unit of backend state. Frozen and hashable; ``str()`` is shown in plans."""

    def in_scope(self, scope: Scope) -> bool:
        """Whether this fact belongs to ``scope`` (so a scoped sync may touch it)."""
        ...


@dataclass(frozen=True)
class Op:
    """Add a fact to the backend, or remove it."""

    action: str  # "add" or "remove"
    fact: Fact

    def __str__(self) -> str:
        return f"{'+' if self.action == 'add' else '-'} {self.fact}"


@dataclass(frozen=True)
class Plan:
    backend: str
    scope: Scope
    ops: tuple[Op, ...] = ()
    notes: tuple[str, ...] = ()

    @property
    def empty(self) -> bool:
        return not self.ops

    @property
    def adds(self) -> int:
        return sum(op.action == "add" for op in self.ops)

    @property
    def removes(self) -> int:
        return len(self.ops) - self.adds

    def render(self) -> str:
        head = f"backend {self.backend} (scope: {self.scope.describe()}): "
        if self.empty:
            head += "nothing to do"
        else:
            head += f"{self.adds} to add, {self.removes} to remove"
        lines = [head]
        lines += [f"  note: {n}" for n in self.notes]
        lines += [f"  {op}" for op in self.ops]
        return "\n".join(lines)


def fact_key(fact: Fact) -> tuple[str, str]:
    return (type(fact).__name__, str(fact))


def removals_first(op: Op) -> tuple[int, str, str]:
    """The default order: narrow first (removals), then widen; stable by fact."""
    return (0 if op.action == "remove" else 1, *fact_key(op.fact))


def diff(
    backend: str,
    desired: Iterable[Fact],
    actual: Iterable[Fact],
    scope: Scope,
    *,
    order: Callable[[Op], tuple[object, ...]] = removals_first,
    notes: Iterable[str] = (),
) -> Plan:
    """The operations that turn ``actual`` into ``desired`` inside ``scope``. Pure."""
    want = {f for f in desired if f.in_scope(scope)}
    have = {f for f in actual if f.in_scope(scope)}
    ops = [Op("remove", f) for f in have - want] + [Op("add", f) for f in want - have]
    ops.sort(key=order)
    return Plan(backend, scope, tuple(ops), tuple(notes))
