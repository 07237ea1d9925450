"""Principals: the users, groups and roles a grant or an ownership names."""

from __future__ import annotations

import enum
from dataclasses import dataclass


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
