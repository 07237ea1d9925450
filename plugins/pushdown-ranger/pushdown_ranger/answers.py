"""What one apply wrote, as Ranger answered it: the read-back of the touched keys.

Ranger answers every create and update with the object as it now stores it, and bumps
versions by one per write (a policy write: its service's policy version; a role write:
the role version). After an apply, when the versions moved by exactly pushdown's own
writes, nobody else wrote meanwhile, and the snapshot read before the apply, with the
answers put in place of the touched keys, is what Ranger holds: no second bulk read.
When the versions say anything else, the backend reads everything again.
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Hashable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

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

    def patched_policies(self, before: Mapping[tuple[str, Any], Json]) -> Mapping[tuple[str, Any], Json]:
        """``before`` (the read's, never changed in place) with the policies written put in
        place (:func:`patched`): ``before`` itself when none was written."""
        return patched(before, self.policies)

    def patched_roles(self, before: Mapping[str, Json]) -> Mapping[str, Json]:
        """``before`` with the roles written put in place (:func:`patched`): ``before``
        itself when none was written (a grant's sync: the read's roles, not copied)."""
        return patched(before, self.roles)


K = TypeVar("K", bound=Hashable)

#: the most answers a :class:`Patched` holds over its read before it is folded into one
#: dict again (a copy of every key, once per as many written keys)
FOLD_AT = 1024
#: the keys copied to make the mappings :func:`patched` made, all its calls (what a test bounds)
copied = 0
_LOCK = threading.Lock()


class Patched(Mapping[K, Json]):
    """A read's mapping (``base``, never changed) with the answers of the syncs since put in
    place (``over``: replaced or added keys, never one deleted), iterated as the dict a copy
    with the answers put in would be (``base``'s order, then the keys added, as added). Made
    from the last one by copying ``over`` alone, never every key: a read-back after a sync's
    writes (a role's member added, a table's policy made) costs the writes, not the estate
    (before: a copy of every role, or policy, each read-back: ~0.35 ms at issue 30's estate).
    Never changed once made: a snapshot another thread holds reads it unchanged."""

    __slots__ = ("_base", "_len", "_over")

    def __init__(self, base: dict[K, Json], over: dict[K, Json], size: int) -> None:
        self._base, self._over, self._len = base, over, size

    def __getitem__(self, key: K) -> Json:
        found = self._over.get(key)
        return found if found is not None else self._base[key]

    def get(self, key: K, default: Any = None) -> Any:
        found = self._over.get(key)
        return found if found is not None else self._base.get(key, default)

    def __contains__(self, key: object) -> bool:
        return key in self._over or key in self._base

    def __len__(self) -> int:
        return self._len

    def __iter__(self) -> Iterator[K]:
        base, over = self._base, self._over
        yield from base
        yield from (k for k in over if k not in base)

    def __reduce__(self) -> tuple[Any, ...]:
        return dict, (dict(self.items()),)  # pickled as the dict it stands for


def patched(before: Mapping[K, Json], answers: Mapping[K, Json | None]) -> Mapping[K, Json]:
    """``before`` (never changed in place) with ``answers`` put in place (``None``: deleted),
    as the dict a copy with them put in would be: ``before`` itself when there are none; a
    :class:`Patched` over ``before``'s read moved by the answers alone (the answers of the
    syncs since copied, at most :data:`FOLD_AT`, not every key); a copy of every key when a
    key of the read is deleted (a role or a policy removed: its place in the order moves), or
    the answers since the read reach :data:`FOLD_AT` or as many as the read holds (folded
    into one dict again: a copy of at most twice the keys written since, or one of every key
    once per :data:`FOLD_AT` keys written)."""
    global copied
    if not answers and isinstance(before, (dict, Patched)):
        return before
    if isinstance(before, Patched):
        base, over = before._base, before._over
    elif type(before) is dict:
        base, over = before, {}
    else:
        base, over = dict(before), {}
    size = len(before)
    fresh = dict(over)
    for key, answer in answers.items():
        was = key in fresh or key in base
        if answer is None:
            if key in base:
                fresh = {}  # a key of the read deleted: a plain copy, every key
                break
            fresh.pop(key, None)
        else:
            fresh[key] = answer
        size += (answer is not None) - was
    else:
        if len(fresh) < min(FOLD_AT, len(base)):
            with _LOCK:
                copied += len(fresh)
            return Patched(base, fresh, size)
    out = dict(before)
    for key, answer in answers.items():
        if answer is None:
            out.pop(key, None)
        else:
            out[key] = answer
    with _LOCK:
        copied += len(out)
    return out
