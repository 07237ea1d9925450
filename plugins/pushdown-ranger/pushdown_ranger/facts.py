"""The facts the Ranger backend plans with: roles, and pushdown's share of policies.

- :class:`RoleFact` — a Ranger role pushdown manages (its name carries the configured
  prefix), with its member users and groups. Phase 0: created before the policies
  that name it, removed after them.
- :class:`PolicyFact` — pushdown's items on the one policy of a resource set in a
  service: ``(role, access)`` pairs allowed and denied. Its key is the resource set
  (Ranger allows one policy per resource set), so a change of items is one edit of
  that policy, never a delete and a create. Items pushdown did not make (they name no
  role with pushdown's prefixes) are not part of the fact and are left alone.
"""

from __future__ import annotations

import weakref
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property
from typing import Any

#: (resource name, values, is recursive), sorted by resource name
Resource = tuple[str, tuple[str, ...], bool]
#: (Ranger role name, access type)
Pair = tuple[str, str]

ROLE_PHASE = 0
POLICY_PHASE = 1


@dataclass(frozen=True)
class RoleFact:
    name: str
    users: frozenset[str] = frozenset()
    groups: frozenset[str] = frozenset()
    #: member roles (pushdown's roles have none: one found there was nested by hand)
    roles: frozenset[str] = frozenset()
    #: members flagged ``isAdmin`` (they may grant the role to anyone): pushdown sets none
    admins: frozenset[str] = frozenset()
    phase = ROLE_PHASE

    @cached_property
    def key(self) -> object:  # kept: every diff asks it of every role, twice per sync
        return ("role", self.name)

    def __eq__(self, other: object) -> bool:
        # one object when :func:`interned` (a read's and a compile's equal role): every
        # diff compares every role, twice per sync
        if self is other:
            return True
        if other.__class__ is not RoleFact:
            return NotImplemented
        assert isinstance(other, RoleFact)
        return _fields(self) == _fields(other)

    def __str__(self) -> str:
        members = [f"user {u}" for u in sorted(self.users)] + [f"group {g}" for g in sorted(self.groups)]
        members += [f"role {r}" for r in sorted(self.roles)]
        members += [f"admin {a}" for a in sorted(self.admins)]
        return f"role {self.name!r} [{', '.join(members) or 'no members'}]"

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "kind": "role",
            "name": self.name,
            "users": sorted(self.users),
            "groups": sorted(self.groups),
        }
        if self.roles:
            out["roles"] = sorted(self.roles)
        if self.admins:
            out["admins"] = sorted(self.admins)
        return out


def _fields(fact: RoleFact) -> tuple[object, ...]:
    return (fact.name, fact.users, fact.groups, fact.roles, fact.admins)


#: the RoleFact alive for each value of its fields (weakly: gone with the last holder)
_ROLES: weakref.WeakValueDictionary[tuple[object, ...], RoleFact] = weakref.WeakValueDictionary()


def interned(fact: RoleFact) -> RoleFact:
    """The RoleFact alive equal to ``fact`` (``fact`` itself when there is none): the roles a
    read holds and those a compile wants are then, where equal, one object."""
    return _ROLES.setdefault(_fields(fact), fact)


@dataclass(frozen=True)
class PolicyFact:
    service: str
    resources: tuple[Resource, ...]
    allow: frozenset[Pair] = frozenset()
    deny: frozenset[Pair] = frozenset()
    phase = POLICY_PHASE

    @cached_property
    def key(self) -> object:  # kept: the diff asks it of every policy, twice per sync
        return ("policy", self.service, self.resources)

    @cached_property
    def kept(self) -> dict[str, object]:
        """Answers worked out from this fact's fields alone, kept with it (a fact never
        changes; not compared): :func:`pushdown_ranger.scoping.shaped_database`'s, which
        the plan's diff asks of every policy it keeps apart by database."""
        return {}

    @property
    def empty(self) -> bool:
        return not (self.allow or self.deny)

    def describe_resources(self) -> str:
        return describe(self.resources)

    def __str__(self) -> str:
        parts = [f"policy {self.service}:{self.describe_resources()}"]
        if self.allow:
            parts.append("allow " + _pairs(self.allow))
        if self.deny:
            parts.append("deny " + _pairs(self.deny))
        return " ".join(parts)

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": "policy",
            "service": self.service,
            "resources": [[k, list(v), r] for k, v, r in self.resources],
            "allow": sorted(map(list, self.allow)),
            "deny": sorted(map(list, self.deny)),
        }


def describe(resources: tuple[Resource, ...]) -> str:
    return ",".join(f"{k}={'|'.join(v)}{'/**' if r else ''}" for k, v, r in resources)


def _pairs(pairs: frozenset[Pair]) -> str:
    by_role: dict[str, list[str]] = {}
    for role, access in sorted(pairs):
        by_role.setdefault(role, []).append(access)
    return "; ".join(f"{role!r}: {','.join(accesses)}" for role, accesses in by_role.items())


def fact_from_json(data: Mapping[str, Any]) -> RoleFact | PolicyFact:
    if data.get("kind") == "role":
        roles = frozenset(str(r) for r in data.get("roles") or ())
        admins = frozenset(str(a) for a in data.get("admins") or ())
        return RoleFact(str(data["name"]), frozenset(data["users"]), frozenset(data["groups"]), roles, admins)
    resources = tuple((str(k), tuple(v), bool(r)) for k, v, r in data["resources"])
    allow = frozenset((str(a), str(b)) for a, b in data["allow"])
    deny = frozenset((str(a), str(b)) for a, b in data["deny"])
    return PolicyFact(str(data["service"]), resources, allow, deny)
