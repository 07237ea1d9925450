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

from pyspark.sql import Column
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
