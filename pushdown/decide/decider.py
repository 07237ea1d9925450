"""Decide operations for one *kind* of user, memoised per object: the heart of the compiler.

A :class:`Decider` stands for every user who holds the same roles (restricted to the
roles that have grants where the compile looks) and owns the same objects. It
interprets the same requirement table as :mod:`pushdown.decide.evaluator`, term by
term, but keeps each object's effective privileges (ALLOWs and DENYs accumulated down
the path) in a memo, so deciding a thousand tables of one schema reads the grants of
the catalog and the schema once. The evaluator stays the oracle: the differential
tests hold the two to the same answers.
"""

from __future__ import annotations

from collections.abc import Callable, Collection

from pushdown.decide.requirements import (
    OPERATIONS,
    AllOf,
    AnyOf,
    Can,
    Has,
    InMetalake,
    Operation,
    Owner,
    ServiceAdmin,
    Term,
)
from pushdown.errors import ModelError
from pushdown.model.privileges import Condition, Privilege
from pushdown.model.securables import DATA_TYPES, ObjectRef, SecurableType
from pushdown.model.state import Model

_ALLOW, _DENY = Condition.ALLOW, Condition.DENY
_NONE: frozenset[Privilege] = frozenset()
Effective = tuple[frozenset[Privilege], frozenset[Privilege]]


def compilable(name: str) -> Operation:
    """The operation named ``name``, if the compiler can decide it set-wise; else an error."""
    op = OPERATIONS.get(name)
    if op is None:
        raise ModelError(f"unknown operation {name!r}; `pushdown explain --list` shows them all")
    if not isinstance(op.target, SecurableType) or op.target not in DATA_TYPES:
        raise ModelError(f"operation {name} is not on a catalog, schema or leaf; it cannot be compiled")
    _check_terms(name, op.requires)
    _prepare(name)
    return op


def _check_terms(name: str, term: Term) -> None:
    if isinstance(term, AllOf | AnyOf):
        for sub in term.terms:
            _check_terms(name, sub)
    elif isinstance(term, Can):
        compilable(term.operation)
    elif isinstance(term, Has | Owner):
        if term.on != "target":
            raise ModelError(f"operation {name} checks a second object; it cannot be compiled")
    elif not isinstance(term, InMetalake | ServiceAdmin):
        raise ModelError(f"operation {name} needs {type(term).__name__}; it cannot be compiled")


class Decider:
    """Decisions for users holding ``roles``, owning ``owned``, service admin or not."""

    def __init__(
        self,
        model: Model,
        roles: frozenset[str],
        owned: Collection[ObjectRef] = (),
        admin: bool = False,
        base: Decider | None = None,
    ) -> None:
        self.by_object = model.by_object
        self.roles = roles
        self.owned = owned
        self.admin = admin
        #: the same roles and admin status without the ownerships: it decides, and keeps in
        #: its memo, every object with nothing owned on its path (ownership cannot matter there)
        self.base = base if base is not None and base.roles == roles and base.admin == admin else None
        self._owned = frozenset(owned) if self.base is not None else frozenset()
        self._eff: dict[ObjectRef, Effective] = {}
        self._memo: dict[tuple[str, ObjectRef], bool] = {}

    def effective(self, node: ObjectRef) -> Effective:
        """(privileges ALLOWed, privileges DENYed) anywhere on ``node``'s path, for these roles."""
        hit = self._eff.get(node)
        if hit is not None:
            return hit
        if self.base is not None:  # ownership plays no part here: share the base's memo
            hit = self._eff[node] = self.base.effective(node)
            return hit
        parent = node.parent
        allowed, denied = self.effective(parent) if parent is not None else (_NONE, _NONE)
        by_priv = self.by_object.get(node)
        if by_priv:
            roles = self.roles
            more_a = [p for p, c in by_priv.items() if (h := c.get(_ALLOW)) and not roles.isdisjoint(h)]
            more_d = [p for p, c in by_priv.items() if (h := c.get(_DENY)) and not roles.isdisjoint(h)]
            if more_a:
                allowed = allowed.union(more_a)
            if more_d:
                denied = denied.union(more_d)
        hit = self._eff[node] = (allowed, denied)
        return hit

    def decide(self, operation: str, node: ObjectRef) -> bool:
        key = (operation, node)
        hit = self._memo.get(key)
        if hit is None:
            base = self.base
            if base is not None and self._owned.isdisjoint(node.path):
                hit = self._memo[key] = base.decide(operation, node)
            else:
                hit = self._memo[key] = _RULES[operation](self, node)
        return hit


Rule = Callable[[Decider, ObjectRef], bool]


def _rule(term: Term) -> Rule:
    """Turn one requirement term into a function of (decider, object): interpreted once."""
    if isinstance(term, AllOf | AnyOf):
        return _combined(term)
    if isinstance(term, Has):
        return _has(term.privileges)
    if isinstance(term, Owner):
        return _owner(frozenset(term.levels))
    if isinstance(term, Can):
        return _can(term.operation, term.at.depth)
    if isinstance(term, ServiceAdmin):
        return lambda d, n: d.admin
    return lambda d, n: True  # InMetalake: the compiler only decides for users of the metalake


def _combined(term: AllOf | AnyOf) -> Rule:
    subs = tuple(_rule(t) for t in term.terms)
    if isinstance(term, AllOf):

        def all_of(d: Decider, n: ObjectRef) -> bool:
            return all(f(d, n) for f in subs)

        return all_of

    def any_of(d: Decider, n: ObjectRef) -> bool:
        return any(f(d, n) for f in subs)

    return any_of


def _has(privileges: tuple[Privilege, ...]) -> Rule:
    def has(d: Decider, n: ObjectRef) -> bool:
        allowed, denied = d.effective(n)
        return any(p in allowed and p not in denied for p in privileges)

    return has


def _owner(levels: frozenset[SecurableType]) -> Rule:
    def owner(d: Decider, n: ObjectRef) -> bool:
        owned = d.owned
        if not owned:
            return False
        if not levels:
            return n in owned
        return any(a in owned for a in n.path if a.type in levels)

    return owner


def _can(operation: str, depth: int) -> Rule:
    def can(d: Decider, n: ObjectRef) -> bool:
        return d.decide(operation, n.path[depth])  # data objects: path[i] has depth i

    return can


_RULES: dict[str, Rule] = {}
#: the row each rule of :data:`_RULES` was made of (a row replaced: made again)
_MADE_OF: dict[str, Operation] = {}


def _prepare(name: str) -> None:
    row = OPERATIONS[name]
    if _MADE_OF.get(name) is not row:
        _RULES[name] = _rule(row.requires)
        _MADE_OF[name] = row
