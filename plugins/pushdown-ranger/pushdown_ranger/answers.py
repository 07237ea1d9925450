"""What one apply wrote, as Ranger answered it: the read-back of the touched keys.

Ranger answers every create and update with the object as it now stores it, and bumps
versions by one per write (a policy write: its service's policy version; a role write:
the role version). After an apply, when the versions moved by exactly pushdown's own
writes, nobody else wrote meanwhile, and the snapshot read before the apply, with the
answers put in place of the touched keys, is what Ranger holds: no second bulk read.
When the versions say anything else, the backend reads everything again.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

Json = dict[str, Any]
Versions = tuple[tuple[str, Any, Any], ...]


@dataclass
class Written:
    #: (service, resource set) -> the policy as Ranger answered, or None once deleted
    policies: dict[tuple[str, Any], Json | None] = field(default_factory=dict)
    #: role name -> the role as Ranger answered, or None once deleted
    roles: dict[str, Json | None] = field(default_factory=dict)
    by_service: Counter[str] = field(default_factory=Counter)
    role_writes: int = 0
    #: narrowing policies written (:mod:`pushdown_ranger.companion`), by the key of the
    #: policy each narrows (None once deleted)
    narrowings: dict[tuple[str, Any], Json | None] = field(default_factory=dict)
    #: a key whose fact folds a narrowing policy was written: the read-back reads everything
    whole: bool = False

    def policy(self, key: tuple[str, Any], answer: Json | None) -> None:
        self.policies[key] = answer
        self.by_service[key[0]] += 1

    def narrowing(self, key: tuple[str, Any], answer: Json | None) -> None:
        self.narrowings[key] = answer
        self.by_service[key[0]] += 1
        self.whole = True

    def role(self, name: str, answer: Json | None) -> None:
        self.roles[name] = answer
        self.role_writes += 1

    def expected(self, before: Versions) -> Versions:
        """The versions Ranger shows when pushdown's writes were the only ones (none when
        the read-back must read everything: :attr:`whole`)."""
        if self.whole:
            return ()
        out = []
        for name, policy_version, role_version in before:
            if name and isinstance(policy_version, int):
                policy_version += self.by_service[name]
            if isinstance(role_version, int):
                role_version += self.role_writes
            out.append((name, policy_version, role_version))
        return tuple(out)

    def patched_policies(self, before: Mapping[tuple[str, Any], Json]) -> dict[tuple[str, Any], Json]:
        """``before`` (the read's, never changed in place) with the policies written put in
        place: a copy, or ``before`` itself when none was written."""
        if not self.policies and isinstance(before, dict):
            return before
        out = dict(before)
        for key, answer in self.policies.items():
            if answer is None:
                out.pop(key, None)
            else:
                out[key] = answer
        return out

    def patched_roles(self, before: Mapping[str, Json]) -> dict[str, Json]:
        """``before`` with the roles written put in place: a copy, or ``before`` itself when
        none was written (a grant's sync: the read's roles, every one, not copied again)."""
        if not self.roles and isinstance(before, dict):
            return before
        out = dict(before)
        for name, answer in self.roles.items():
            if answer is None:
                out.pop(name, None)
            else:
                out[name] = answer
        return out
