"""Principals, and the scope an event touched: where a backend must look again."""

from __future__ import annotations

import enum
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from pushdown.securables import ObjectRef

if TYPE_CHECKING:
    from pushdown.model import Model


class PrincipalKind(enum.Enum):
    USER = "user"
    GROUP = "group"
    ROLE = "role"

    def __lt__(self, other: object) -> bool:
        if not isinstance(other, PrincipalKind):
            return NotImplemented
        return self.value < other.value


@dataclass(frozen=True, order=True)
class Principal:
    kind: PrincipalKind
    name: str

    @classmethod
    def user(cls, name: str) -> Principal:
        return cls(PrincipalKind.USER, name)

    @classmethod
    def group(cls, name: str) -> Principal:
        return cls(PrincipalKind.GROUP, name)

    @classmethod
    def role(cls, name: str) -> Principal:
        return cls(PrincipalKind.ROLE, name)

    @classmethod
    def parse(cls, text: str) -> Principal:
        kind, _, name = text.partition(" ")
        return cls(PrincipalKind(kind.lower()), name)

    def __str__(self) -> str:
        return f"{self.kind.value} {self.name}"


@dataclass(frozen=True)
class Scope:
    """A set of object subtrees and principals, or everything.

    A backend fact is in scope when its object lies within one of ``objects``
    or it concerns one of ``principals`` (a role's scope covers the role itself;
    backends widen a group or role to its members where they expand them).
    """

    full: bool = False
    objects: frozenset[ObjectRef] = frozenset()
    principals: frozenset[Principal] = frozenset()

    @classmethod
    def everything(cls) -> Scope:
        return cls(full=True)

    @classmethod
    def nothing(cls) -> Scope:
        return cls()

    @classmethod
    def of(cls, objects: Iterable[ObjectRef] = (), principals: Iterable[Principal] = ()) -> Scope:
        return cls(False, frozenset(objects), frozenset(principals))

    def __or__(self, other: Scope) -> Scope:
        if self.full or other.full:
            return Scope.everything()
        return Scope(False, self.objects | other.objects, self.principals | other.principals)

    @property
    def empty(self) -> bool:
        return not (self.full or self.objects or self.principals)

    def covers_object(self, obj: ObjectRef) -> bool:
        return self.full or any(node in self.objects for node in obj.path)

    def covers_principal(self, principal: Principal) -> bool:
        return self.full or principal in self.principals

    def covers(self, obj: ObjectRef | None, principal: Principal | None) -> bool:
        if self.full:
            return True
        if obj is not None and self.covers_object(obj):
            return True
        return principal is not None and principal in self.principals

    def with_members(self, model: Model) -> Scope:
        """Add the users that a group or role in scope reaches (for per-user backends)."""
        if self.full or not self.principals:
            return self
        users: set[Principal] = set()
        for p in self.principals:
            if p.kind is PrincipalKind.GROUP:
                users |= {Principal.user(u) for u in model.groups.get(p.name, ())}
            elif p.kind is PrincipalKind.ROLE:
                users |= {Principal.user(u) for u in model.holders_of(p.name)}
        return Scope(False, self.objects, self.principals | users)

    def describe(self) -> str:
        if self.full:
            return "everything"
        parts = sorted(str(o) for o in self.objects) + sorted(str(p) for p in self.principals)
        return ", ".join(parts) or "nothing"
