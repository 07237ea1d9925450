"""Plans: the pure difference between what a backend should hold and what it holds.

A backend describes its state as *facts*: frozen values with a ``key`` (the identity
of the thing on the server: a MySQL grant, a Ranger policy's resource set) and a
``phase`` (a role is created before the policy that names it). ``diff`` pairs desired
and held facts by key and yields keyed operations: ``add``, ``change`` (same key, new
value: one edit, not a removal and an addition) and ``remove``. A dry run prints
exactly the plan that ``apply`` executes, and a plan serialises to JSON so a reviewed
plan can be applied later, and refused if the model or the server moved meanwhile.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Set
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, runtime_checkable

from pushdown.reconcile.scope import Scope

Action = Literal["add", "change", "remove"]
_MARK = {"add": "+", "change": "~", "remove": "-"}


@runtime_checkable
class Fact(Protocol):
    """One unit of backend state. Frozen and hashable; ``str()`` is shown in plans."""

    @property
    def key(self) -> object:
        """The identity of the thing this fact describes; two facts with one key are two
        versions of the same thing."""
        ...

    def to_json(self) -> dict[str, Any]:
        """A JSON-able form; the backend's ``fact_from_json`` reads it back."""
        ...


@dataclass(frozen=True)
class Op:
    """One keyed change: add ``after``, replace ``before`` by ``after``, or remove ``before``."""

    action: Action
    before: Fact | None = None
    after: Fact | None = None
    phase: int = 0

    @property
    def fact(self) -> Fact:
        """The fact the operation leaves behind (``before`` for a removal)."""
        fact = self.after if self.after is not None else self.before
        assert fact is not None
        return fact

    @property
    def key(self) -> object:
        return self.fact.key

    def __str__(self) -> str:
        if self.action == "change":
            return f"~ {self.before} => {self.after}"
        return f"{_MARK[self.action]} {self.fact}"

    def to_json(self) -> dict[str, Any]:
        return {
            "action": self.action,
            "phase": self.phase,
            "before": None if self.before is None else self.before.to_json(),
            "after": None if self.after is None else self.after.to_json(),
        }


def add(fact: Fact) -> Op:
    return Op("add", None, fact, _phase(fact))


def remove(fact: Fact) -> Op:
    return Op("remove", fact, None, _phase(fact))


def _phase(fact: Fact) -> int:
    return int(getattr(fact, "phase", 0))


@dataclass(frozen=True)
class Plan:
    backend: str
    scope: Scope
    ops: tuple[Op, ...] = ()
    notes: tuple[str, ...] = ()
    #: access paths that bypass the model (the backend's findings): drift even without operations
    findings: tuple[str, ...] = ()
    #: what the plan was computed against: the journal position and the server's fingerprint
    basis: dict[str, Any] = field(default_factory=dict, compare=False)
    #: why this plan needs an explicit go-ahead (it removes most of what the backend holds)
    guard: str | None = None

    @property
    def empty(self) -> bool:
        """No operations to apply (findings may remain: see :attr:`drift`)."""
        return not self.ops

    @property
    def drift(self) -> bool:
        """Whether the server differs from the model: operations to run, or findings."""
        return bool(self.ops or self.findings)

    def count(self, action: Action) -> int:
        return sum(op.action == action for op in self.ops)

    @property
    def adds(self) -> int:
        return self.count("add")

    @property
    def removes(self) -> int:
        return self.count("remove")

    @property
    def changes(self) -> int:
        return self.count("change")

    def render(self) -> str:
        head = f"backend {self.backend} (scope: {self.scope.describe()}): "
        if self.empty:
            head += "nothing to do"
        else:
            changing = f"{self.changes} to change, " if self.changes else ""
            head += f"{self.adds} to add, {changing}{self.removes} to remove"
        if self.findings:
            head += f"; {len(self.findings)} finding(s) to act on"
        lines = [head]
        if self.guard:
            lines.append(f"  GUARD: {self.guard}")
        lines += [f"  finding: {f}" for f in self.findings]
        lines += [f"  note: {n}" for n in self.notes]
        lines += [f"  {op}" for op in self.ops]
        return "\n".join(lines)

    def to_json(self) -> dict[str, Any]:
        return {
            "backend": self.backend,
            "scope": self.scope.describe(),
            "basis": self.basis,
            "notes": list(self.notes),
            "findings": list(self.findings),
            "guard": self.guard,
            "ops": [op.to_json() for op in self.ops],
        }

    def digest(self) -> str:
        """The operations as canonical JSON: equal for equal plans, whoever computed them."""
        return json.dumps([op.to_json() for op in self.ops], sort_keys=True, ensure_ascii=False)


def narrow_first(op: Op) -> tuple[object, ...]:
    """The default order: removals (latest phase first), then changes and additions
    (earliest phase first); stable by the fact's text."""
    if op.action == "remove":
        return (0, -op.phase, str(op.fact))
    return (1, op.phase, str(op.fact))


#: a backend's ``(desired - held, held - desired)`` of two sets, given the diff's ``within``
#: (:meth:`~pushdown.reconcile.backend.Backend.apart`)
Apart = Callable[[Set[Fact], Set[Fact], Callable[[Fact], bool]], tuple[Set[Fact], Set[Fact]]]


def diff(
    backend: str,
    desired: Iterable[Fact],
    held: Iterable[Fact],
    scope: Scope,
    *,
    within: Callable[[Fact], bool] = lambda f: True,
    order: Callable[[Op], tuple[object, ...]] = narrow_first,
    notes: Iterable[str] = (),
    findings: Iterable[str] = (),
    apart: Apart | None = None,
) -> Plan:
    """The keyed operations that turn ``held`` into ``desired``, both narrowed by ``within``. Pure.

    Each side holds one fact per key. A fact both sides hold (equal) is no operation, so
    when both are sets only the facts in one of them alone are keyed: a sync that changes
    one policy of thousands compares the two sets (by the hashes they hold) and keys a few.
    ``apart``: the backend's answer of ``(desired - held, held - desired)`` for two sets,
    given ``within`` (:meth:`~pushdown.reconcile.backend.Backend.apart`: it may leave out
    facts ``within`` does not cover, which are narrowed away here in any case); else the two
    set differences."""
    if isinstance(desired, Set) and isinstance(held, Set):
        desired, held = (desired - held, held - desired) if apart is None else apart(desired, held, within)
    want = {f.key: f for f in desired if within(f)}
    have = {f.key: f for f in held if within(f)}
    ops = [remove(f) for k, f in have.items() if k not in want]
    for k, f in want.items():
        old = have.get(k)
        if old is None:
            ops.append(add(f))
        elif old != f:
            ops.append(Op("change", old, f, _phase(f)))
    ops.sort(key=order)
    return Plan(backend, scope, tuple(ops), tuple(notes), findings=tuple(findings))
