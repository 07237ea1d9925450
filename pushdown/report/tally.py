"""Counts taken while rows stream past, and the comparison with a previous report.

Nothing here holds the rows: the counts are per catalog and per user, and two reports
are compared by merging their rows, both in written (sorted) order.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from pushdown.report.schema import Row


@dataclass
class CatalogCount:
    rows: int = 0
    users: set[str] = field(default_factory=set)
    objects: set[str] = field(default_factory=set)
    #: (users, objects) counted elsewhere (a distributed report's aggregates), in place of the sets
    counted: tuple[int, int] | None = None

    @property
    def user_count(self) -> int:
        return len(self.users) if self.counted is None else self.counted[0]

    @property
    def object_count(self) -> int:
        return len(self.objects) if self.counted is None else self.counted[1]


@dataclass
class UserCount:
    rows: int = 0
    #: distinct (object, operation) pairs allowed: the width of the user's access
    access: int = 0
    catalogs: set[str] = field(default_factory=set)


@dataclass
class Tally:
    rows: int = 0
    catalogs: dict[str, CatalogCount] = field(default_factory=dict)
    users: dict[str, UserCount] = field(default_factory=dict)
    _last: tuple[str | None, ...] = ()

    def add(self, batch: Iterable[Row]) -> None:
        for row in batch:
            catalog, user, obj = row[0] or "", row[1] or "", row[2] or ""
            self.rows += 1
            per = self.catalogs.get(catalog)
            if per is None:
                per = self.catalogs[catalog] = CatalogCount()
            per.rows += 1
            per.users.add(user)
            per.objects.add(obj)
            mine = self.users.get(user)
            if mine is None:
                mine = self.users[user] = UserCount()
            mine.rows += 1
            mine.catalogs.add(catalog)
            key = row[:3] + row[4:5]
            if key != self._last:
                mine.access += 1
                self._last = key

    def widest(self, top: int) -> list[tuple[str, UserCount]]:
        return sorted(self.users.items(), key=lambda kv: (-kv[1].access, -kv[1].rows, kv[0]))[:top]

    def to_json(self) -> dict[str, Any]:
        return {
            "rows": self.rows,
            "catalogs": {
                c: {"rows": n.rows, "users": n.user_count, "objects": n.object_count}
                for c, n in sorted(self.catalogs.items())
            },
            "users": {
                u: {"rows": n.rows, "access": n.access, "catalogs": len(n.catalogs)}
                for u, n in sorted(self.users.items())
            },
        }


@dataclass
class Changes:
    """What changed since a previous report: rows added and removed, per user."""

    previous: str
    previous_created: str
    added: int = 0
    removed: int = 0
    by_user: dict[str, list[int]] = field(default_factory=dict)  # user -> [added, removed]
    #: when the two reports cover different operations: the ones compared (both cover them)
    only: tuple[str, ...] | None = None

    def note(self, user: str, index: int) -> None:
        counts = self.by_user.get(user)
        if counts is None:
            counts = self.by_user[user] = [0, 0]
        counts[index] += 1

    def busiest(self, top: int) -> list[tuple[str, int, int]]:
        ranked = sorted(self.by_user.items(), key=lambda kv: (-(kv[1][0] + kv[1][1]), kv[0]))
        return [(u, a, r) for u, (a, r) in ranked[:top]]

    def to_json(self) -> dict[str, Any]:
        return {
            "previous": self.previous,
            "previous_created": self.previous_created,
            "added": self.added,
            "removed": self.removed,
            "users": {u: {"added": a, "removed": r} for u, (a, r) in sorted(self.by_user.items())},
            **({} if self.only is None else {"operations_compared": list(self.only)}),
        }


def compare(old: Iterator[tuple[str, ...]], new: Iterator[tuple[str, ...]], changes: Changes) -> Changes:
    """Merge two reports' rows (each in sorted order) and count what one has and not the other."""
    a, b = next(old, None), next(new, None)
    while a is not None or b is not None:
        if b is None or (a is not None and a < b):
            assert a is not None
            changes.removed += 1
            changes.note(a[1], 1)
            a = next(old, None)
        elif a is None or b < a:
            changes.added += 1
            changes.note(b[1], 0)
            b = next(new, None)
        else:
            a, b = next(old, None), next(new, None)
    return changes
