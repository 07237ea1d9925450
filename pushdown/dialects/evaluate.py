"""One evaluator for every dialect, driven by its data (:class:`~pushdown.dialects.data.Dialect`).

A dialect's state is a set of :class:`DGrant` and a map of owners; a decision asks whether
a user (with the groups it belongs to) may perform one of the dialect's operations on one
object. ``OWN`` in a requirement is ownership (the object's owner, or the owner of an
ancestor whose type manages grants below it); ``GRANT OPTION`` is holding some privilege on
the object ``WITH GRANT OPTION``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from pushdown.dialects.data import ALL, Dialect, Need
from pushdown.errors import ModelError

Obj = tuple[str, tuple[str, ...]]
_SPECIAL = frozenset({"OWN", "GRANT OPTION"})


@dataclass(frozen=True, order=True)
class DGrant:
    """One dialect grant (or DENY): a privilege on an object, or on ``ALL <scope> IN`` it."""

    principal: str
    privilege: str
    type: str
    names: tuple[str, ...]
    deny: bool = False
    grant_option: bool = False
    scope: str = ""

    @property
    def object(self) -> Obj:
        return (self.type, self.names)


def path(dialect: Dialect, obj: Obj) -> list[Obj]:
    """The object, then its ancestors, nearest first."""
    out = [obj]
    type_, names = obj
    while (parent := dialect.securables.get(type_)) is not None:
        type_, names = parent, names[:-1]
        out.append((type_, names))
    return out


class State:
    """Grants and owners of one dialect, indexed for decisions."""

    def __init__(self, dialect: Dialect, grants: Iterable[DGrant], owners: Mapping[Obj, str] | None = None):
        self.dialect = dialect
        self.grants = frozenset(grants)
        self.owners = dict(owners or {})

    def allowed(self, user: str, groups: Iterable[str], operation: str, obj: Obj) -> bool:
        try:
            needs = self.dialect.operations[operation]
        except KeyError:
            raise ModelError(f"{self.dialect.name} has no operation {operation!r}") from None
        principals = frozenset({user, *groups})
        return all(self._need(principals, need, obj) for need in needs)

    def _need(self, principals: frozenset[str], need: Need, obj: Obj) -> bool:
        nodes = path(self.dialect, obj)
        at = nodes[0] if need.at == "target" else next((n for n in nodes if n[0] == need.at), None)
        if at is None:
            return False
        return any(self.holds(principals, p, at) for p in need.privileges)

    def holds(self, principals: frozenset[str], privilege: str, obj: Obj) -> bool:
        if privilege == "OWN":
            return self._owns(principals, obj)
        if privilege == "GRANT OPTION":
            return any(
                g.grant_option and not g.deny and g.principal in principals and g.object == obj
                for g in self.grants
            )
        reach = self._reach(obj)
        mine = [g for g in self.grants if g.principal in principals and self._covers(g, obj, reach)]
        if self.dialect.has_deny and any(g.deny and _gives(g, privilege) for g in mine):
            return False
        if self.dialect.owner_has_all and self.owners.get(obj) in principals:
            return True
        return any(not g.deny and _gives(g, privilege) for g in mine)

    def _reach(self, obj: Obj) -> list[Obj]:
        nodes = path(self.dialect, obj)
        return [obj] + [n for n in nodes[1:] if n[0] in self.dialect.inherits_from]

    def _covers(self, grant: DGrant, obj: Obj, reach: list[Obj]) -> bool:
        if not grant.scope:
            return grant.object in reach
        kinds = self.dialect.all_objects.get(grant.scope, frozenset())
        return obj[0] in kinds and grant.object in path(self.dialect, obj)[1:]

    def _owns(self, principals: frozenset[str], obj: Obj) -> bool:
        if self.owners.get(obj) in principals:
            return True
        below = self.dialect.owner_manages_below
        return any(n[0] in below and self.owners.get(n) in principals for n in path(self.dialect, obj)[1:])


def _gives(grant: DGrant, privilege: str) -> bool:
    return grant.privilege == privilege or (grant.privilege == ALL and privilege not in _SPECIAL)


def allowed(
    dialect: Dialect,
    grants: Iterable[DGrant],
    owners: Mapping[Obj, str],
    user: str,
    groups: Iterable[str],
    operation: str,
    obj: Obj,
) -> bool:
    """Whether ``dialect`` lets ``user`` (in ``groups``) perform ``operation`` on ``obj``."""
    return State(dialect, grants, owners).allowed(user, groups, operation, obj)
