"""The users a focused compile decides for. Pure.

A user can be allowed a Ranger access on an object of the focus, or barred there by a
DENY, only through something on that object's path or below the focus's schemas: an
ALLOW of a privilege that is more than a gate, any DENY, an owner, the service admins.
Everybody else is allowed nothing there and denied nothing pushdown writes (at the
bench's estate: every role holds USE_CATALOG on the catalog, which alone allows no
Ranger access), so the compile leaves them out and its classes follow the change, not
the estate. The gates are checked against the requirements of the operations Ranger is
asked (:data:`GATES`): should one of those operations ever be satisfiable by gates
alone, every holder of a grant there is decided for, as before.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable

from pushdown.decide.requirements import OPERATIONS as REQUIRES
from pushdown.decide.requirements import AllOf, AnyOf, Can, Has, Owner
from pushdown.model.privileges import Condition, Privilege
from pushdown.model.securables import ObjectRef
from pushdown.model.state import Model
from pushdown_ranger.mapping import OPERATIONS

_CANDIDATES = frozenset({Privilege.USE_CATALOG, Privilege.USE_SCHEMA})


@functools.cache
def _reachable(operation: str, held: frozenset[Privilege]) -> bool:
    """Whether a user holding only ``held`` (anywhere), owning nothing and no admin, could
    be allowed ``operation``: ``True`` for any term this does not know (the safe answer)."""
    return _term(REQUIRES[operation].requires, held)


def _term(term: object, held: frozenset[Privilege]) -> bool:
    if isinstance(term, Has):
        return term.on != "target" or not held.isdisjoint(term.privileges)
    if isinstance(term, Can):
        return _reachable(term.operation, held)  # at a level of the target's path
    if isinstance(term, AllOf):
        return all(_term(t, held) for t in term.terms)
    if isinstance(term, AnyOf):
        return any(_term(t, held) for t in term.terms)
    if isinstance(term, Owner):
        return False  # owners are decided for anyway
    return True


#: privileges that alone allow none of the operations Ranger is asked (empty should one do)
GATES: frozenset[Privilege] = (
    frozenset() if any(_reachable(op, _CANDIDATES) for op in OPERATIONS) else _CANDIDATES
)


def deciding_users(model: Model, starts: Iterable[ObjectRef]) -> frozenset[str]:
    """The users anything on the paths of ``starts`` or below them can decide for."""
    roles, users = _deciding(model, starts)
    for role in roles:
        users |= model.holders_of(role)
    return frozenset(users)


def decides_for(model: Model, starts: Iterable[ObjectRef], users: Iterable[str]) -> frozenset[str]:
    """Those of ``users`` in :func:`deciding_users` (asked of their roles, not of every
    holder of the roles deciding there; none asked, nothing is looked at)."""
    users = list(users)
    if not users:
        return frozenset()
    roles, deciding = _deciding(model, starts)
    return frozenset(u for u in users if u in deciding or not roles.isdisjoint(model.roles_of(u)))


def _deciding(model: Model, starts: Iterable[ObjectRef]) -> tuple[set[str], set[str]]:
    """The roles holding an ALLOW beyond the gates or a DENY on the paths of ``starts`` or
    below them, and the service admins and the owners there."""
    objects: set[ObjectRef] = set()
    for start in starts:
        objects.update(start.path)
        objects.update(model.marked_within(start))
    roles: set[str] = set()
    users: set[str] = set(model.service_admins)
    for obj in objects:
        owner = model.owners.get(obj)
        if owner is not None:
            users.add(owner)
        for privilege, by_condition in model.by_object.get(obj, {}).items():
            for condition, holding in by_condition.items():
                if condition is Condition.DENY or privilege not in GATES:
                    roles |= holding
    return roles, users
