"""The requirement table as Spark column expressions: one boolean column per operation.

Each question row carries, for every depth ``d`` of its path (0 metalake, 1 catalog,
2 schema, 3 leaf), the privileges ALLOWed and DENYed anywhere on ``path[:d+1]`` for the
row's roles (``allow_d`` / ``deny_d``, arrays), whether the row's owner owns
``path[d]`` (``owned_d``), and whether the row stands for service admins (``admin``).
A requirement term then becomes a plain expression over those columns — built once
per operation, when the plan is made, never a Python function called per row:

- ``Has(privileges)`` on ``path[d]``: some privilege in ``allow_d`` and not in ``deny_d``
  (DENY anywhere on the path wins, privilege by privilege);
- ``Owner(levels)``: ``owned_i`` for the depths ``i <= d`` whose type is in ``levels``
  (or ``owned_d`` alone when ``levels`` is empty: the object itself);
- ``Can(op, at)``: ``op``'s own requirement on ``path[at.depth]`` (the USE_CATALOG /
  USE_SCHEMA gates);
- ``ServiceAdmin``: ``admin``; ``InMetalake``: true (the compile decides for the
  metalake's users).
"""

from __future__ import annotations

from functools import reduce

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from pushdown.decide.decider import compilable
from pushdown.decide.requirements import (
    OPERATIONS,
    AllOf,
    AnyOf,
    Can,
    Has,
    InMetalake,
    Owner,
    ServiceAdmin,
    Term,
)
from pushdown.errors import ModelError
from pushdown.model.securables import SecurableType

T = SecurableType
#: the type of ``path[d]`` for d < 3; depth 3 is the leaf itself
_TYPE_AT = {0: T.METALAKE, 1: T.CATALOG, 2: T.SCHEMA}
DEPTHS = (0, 1, 2, 3)


def allow_col(depth: int) -> str:
    return f"allow_{depth}"


def deny_col(depth: int) -> str:
    return f"deny_{depth}"


def owned_col(depth: int) -> str:
    return f"owned_{depth}"


def target(operation: str) -> SecurableType:
    kind = OPERATIONS[operation].target
    assert isinstance(kind, SecurableType)
    return kind


def rule(operation: str) -> Column:
    """Whether the row's users may perform ``operation`` on the row's object."""
    compilable(operation)  # refuses what the compiler cannot decide set-wise
    kind = target(operation)
    return _term(OPERATIONS[operation].requires, kind.depth, kind)


def _term(term: Term, depth: int, leaf: SecurableType) -> Column:
    if isinstance(term, AllOf):
        return reduce(lambda a, b: a & b, (_term(t, depth, leaf) for t in term.terms))
    if isinstance(term, AnyOf):
        return reduce(lambda a, b: a | b, (_term(t, depth, leaf) for t in term.terms))
    if isinstance(term, Has):
        return reduce(
            lambda a, b: a | b,
            (
                F.array_contains(F.col(allow_col(depth)), p.value)
                & ~F.array_contains(F.col(deny_col(depth)), p.value)
                for p in term.privileges
            ),
        )
    if isinstance(term, Owner):
        if not term.levels:
            return F.col(owned_col(depth))
        at = [i for i in range(depth + 1) if _type_at(i, leaf) in term.levels]
        if not at:
            return F.lit(False)
        return reduce(lambda a, b: a | b, (F.col(owned_col(i)) for i in at))
    if isinstance(term, Can):
        kind = target(term.operation)
        return _term(OPERATIONS[term.operation].requires, term.at.depth, leaf if kind.depth == 3 else kind)
    if isinstance(term, ServiceAdmin):
        return F.col("admin")
    if isinstance(term, InMetalake):
        return F.lit(True)
    raise ModelError(f"requirement {type(term).__name__} cannot be compiled")


def _type_at(depth: int, leaf: SecurableType) -> SecurableType:
    return _TYPE_AT.get(depth, leaf)


class Rules:
    """The requirements of several operations as columns that share their gates.

    Every ``Can(op, at)`` (loading the catalog, the schema) is a column of its own,
    computed once per row and referenced by every requirement that names it (written
    out in place, as :func:`rule` does, the gates of the gates repeat in every
    expression, and the plan of twenty operations grows past what code generation
    takes). :meth:`add` puts the gate and requirement columns on a DataFrame, in the
    order they depend on each other."""

    def __init__(self) -> None:
        self._names: dict[tuple[str, int, str], str] = {}
        self._order: list[tuple[str, Column]] = []

    def holds(self, operation: str) -> Column:
        """Whether the row's users may perform ``operation`` (a column :meth:`add` adds)."""
        compilable(operation)
        kind = target(operation)
        return F.col(self._column((operation, kind.depth, kind.value), operation, kind.depth, kind))

    def add(self, df: DataFrame) -> DataFrame:
        return df.withColumns(dict(self._order)) if self._order else df

    def _column(self, key: tuple[str, int, str], operation: str, depth: int, leaf: SecurableType) -> str:
        name = self._names.get(key)
        if name is None:
            expr = self.term(OPERATIONS[operation].requires, depth, leaf)
            name = self._names[key] = f"_gate{len(self._order)}"
            self._order.append((name, expr))
        return name

    def term(self, term: Term, depth: int, leaf: SecurableType) -> Column:
        if isinstance(term, AllOf):
            return reduce(lambda a, b: a & b, (self.term(t, depth, leaf) for t in term.terms))
        if isinstance(term, AnyOf):
            return reduce(lambda a, b: a | b, (self.term(t, depth, leaf) for t in term.terms))
        if isinstance(term, Can):
            kind = target(term.operation)
            inner = leaf if kind.depth == 3 else kind
            key = (term.operation, term.at.depth, inner.value)
            return F.col(self._column(key, term.operation, term.at.depth, inner))
        return _term(term, depth, leaf)

    def evidence(self, operation: str) -> Column:
        """Why the row's users may perform ``operation`` (null when they may not): a struct
        of ``op``, ``privileges`` (the ALLOWed privileges the requirement accepts, not
        beaten by a DENY), ``owned`` (the depths of the owned objects it accepts) and
        ``admin``.

        A piece of evidence counts when its term holds inside alternatives that hold:
        every enclosing ``AllOf`` holds as a whole (an ``AnyOf`` keeps each alternative
        that holds); the gates (``Can``) must hold but give none of their own — the
        report's reasons."""
        kind = target(operation)
        holds = self.holds(operation)
        privs: list[Column] = []
        owned: list[Column] = []
        admin: list[Column] = []
        self._evidence(OPERATIONS[operation].requires, kind.depth, kind, holds, privs, owned, admin)
        return F.when(
            holds,
            F.struct(
                F.lit(operation).alias("op"),
                _present(privs, "string").alias("privileges"),
                _present(owned, "int").alias("owned"),
                (reduce(lambda a, b: a | b, admin) if admin else F.lit(False)).alias("admin"),
            ),
        )

    def _evidence(
        self,
        term: Term,
        depth: int,
        leaf: SecurableType,
        active: Column,
        privs: list[Column],
        owned: list[Column],
        admin: list[Column],
    ) -> None:
        if isinstance(term, AllOf):
            whole = active & self.term(term, depth, leaf)
            for sub in term.terms:
                self._evidence(sub, depth, leaf, whole, privs, owned, admin)
        elif isinstance(term, AnyOf):
            for sub in term.terms:
                self._evidence(sub, depth, leaf, active, privs, owned, admin)
        elif isinstance(term, Has):
            for p in term.privileges:
                ok = F.array_contains(F.col(allow_col(depth)), p.value) & ~F.array_contains(
                    F.col(deny_col(depth)), p.value
                )
                privs.append(F.when(active & ok, F.lit(p.value)))
        elif isinstance(term, Owner):
            levels = term.levels
            at = [depth] if not levels else [i for i in range(depth + 1) if _type_at(i, leaf) in levels]
            owned += [F.when(active & F.col(owned_col(i)), F.lit(i)) for i in at]
        elif isinstance(term, ServiceAdmin):
            admin.append(active & F.col("admin"))
        # Can (a gate), InMetalake: no evidence of their own


def _present(values: list[Column], kind: str) -> Column:
    """The non-null ``values`` as an array (an empty one of ``kind`` when there are none)."""
    if not values:
        return F.array().cast(f"array<{kind}>")
    return F.filter(F.array(*values), lambda x: x.isNotNull())
