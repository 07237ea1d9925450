"""Ranger policy items and roles: who an item names, which accesses it grants, who holds a role.

Follows RangerDefaultPolicyItemEvaluator: an item matches a user named in it (or ``{USER}``, any
user), a group of the user or ``public``, a role the user holds, or ``{OWNER}`` when the user
owns the resource; its accesses are widened by the service definition's ``impliedGrants``;
``_admin`` asks for ``delegateAdmin``; item conditions are not evaluated (Unsupported).
Role membership follows RangerRolesUtil: members of a role's member roles belong to it too.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from pushdown_lab.ranger_standin.options import Unsupported

__all__ = ["ADMIN_ACCESS", "ANY_ACCESS", "Item", "RoleBook", "StaleRoleBook", "roles_of"]

ANY_ACCESS = "_any"
ADMIN_ACCESS = "_admin"
USER_CURRENT = "{USER}"
RESOURCE_OWNER = "{OWNER}"
GROUP_PUBLIC = "public"


MARKERS = {
    "CREATE": "_create",
    "READ": "_read",
    "UPDATE": "_update",
    "DELETE": "_delete",
    "MANAGE": "_manage",
}


def implied_grants(service_def: dict[str, Any]) -> dict[str, list[str]]:
    """Access type (lower case) to the access types it implies (lower case), marker types too.

    Marker access types (``_CREATE``, ``_READ``, ``_UPDATE``, ``_DELETE``, ``_MANAGE``, ``_ALL``)
    are the service definition's ``markerAccessTypes`` if it lists them, else derived from the
    access types' categories, as Ranger's ServiceDefUtil does.
    """
    types = service_def.get("accessTypes") or []
    implied = {str(a["name"]).lower(): [str(x).lower() for x in a.get("impliedGrants") or []] for a in types}
    markers = service_def.get("markerAccessTypes")
    if markers:
        for marker in markers:
            implied[str(marker["name"]).lower()] = [str(x).lower() for x in marker.get("impliedGrants") or []]
        return implied
    derived: dict[str, list[str]] = {m: [] for m in [*MARKERS.values(), "_all"]}
    for access in types:
        name = str(access["name"]).lower()
        if name in derived:
            continue
        grants = [name, *implied.get(name, [])]
        derived["_all"].extend(grants)
        marker = MARKERS.get(str(access.get("category") or "").upper())
        if marker is not None:
            derived[marker].extend(grants)
    for marker, grants in derived.items():
        implied.setdefault(marker, sorted(set(grants)))
    return implied


@dataclass(frozen=True)
class Item:
    """One policy item, its accesses already widened by implied grants."""

    users: frozenset[str]
    groups: frozenset[str]
    roles: frozenset[str]
    accesses: frozenset[str]
    delegate_admin: bool
    conditions: bool

    @classmethod
    def of(cls, raw: dict[str, Any], implied: dict[str, list[str]]) -> Item:
        allowed: set[str] = set()
        for access in raw.get("accesses") or []:
            if access.get("isAllowed", True) is False or not access.get("type"):
                continue
            name = str(access["type"]).lower()
            allowed.add(name)
            allowed.update(implied.get(name, []))
        return cls(
            frozenset(raw.get("users") or []),
            frozenset(raw.get("groups") or []),
            frozenset(raw.get("roles") or []),
            frozenset(allowed),
            bool(raw.get("delegateAdmin")),
            bool(raw.get("conditions")),
        )

    def names(self, user: str, groups: frozenset[str], roles: frozenset[str], owner: str | None) -> bool:
        """Does the item apply to this user (by name, group, role or ownership)?"""
        if user and (USER_CURRENT in self.users or user in self.users):
            return True
        if GROUP_PUBLIC in self.groups or not self.groups.isdisjoint(groups):
            return True
        if roles and not self.roles.isdisjoint(roles):
            return True
        return RESOURCE_OWNER in self.users and bool(user) and user == owner

    def grants(self, access_type: str) -> bool:
        if access_type == ADMIN_ACCESS:
            return self.delegate_admin
        if access_type == ANY_ACCESS:
            return bool(self.accesses)
        return access_type.lower() in self.accesses

    def matches(
        self, user: str, groups: frozenset[str], roles: frozenset[str], owner: str | None, access_type: str
    ) -> bool:
        if not (self.names(user, groups, roles, owner) and self.grants(access_type)):
            return False
        if self.conditions:
            raise Unsupported("policy item conditions")
        return True


def first_match(
    items: Iterable[Item],
    exceptions: Iterable[Item],
    who: tuple[str, frozenset[str], frozenset[str], str | None],
    access_type: str,
) -> Item | None:
    """The first item that matches, unless an exception item matches too (Ranger's order)."""
    found = next((item for item in items if item.matches(*who, access_type)), None)
    if found is not None and any(ex.matches(*who, access_type) for ex in exceptions):
        return None
    return found


#: how many versions of one entry a role book's lineage keeps: a book older than that many
#: changes of an entry it reads refuses (:class:`StaleRoleBook`) rather than answer from another
KEPT_VERSIONS = 16

_KINDS = ("users", "groups", "roles")
_NOTHING: frozenset[str] = frozenset()
_MISSING: Any = object()

#: one entry's versions, oldest first: (version, the entry then)
_History = list[tuple[int, Any]]


class StaleRoleBook(RuntimeError):
    """A role book read after its lineage dropped a version it needs (never answered from another)."""


class _Lineage:
    """The entries of a built role book and of the books moved from it: per member (a user, a
    group, a member role) the role names it gives, and per role id the role object, each kept
    at the versions it changed (a book reads the newest version not after its own)."""

    def __init__(self, roles: list[dict[str, Any]]) -> None:
        self.head = 0
        self.base = roles
        self.indexes: tuple[dict[str, _History], ...] = ({}, {}, {})
        self.objects: dict[Any, _History] = {}
        #: (index, key) whose oldest versions were dropped (index 3: the role objects)
        self.cut: set[tuple[int, Any]] = set()

    def put(self, table: dict[Any, _History], at: tuple[int, Any], version: int, value: Any) -> None:
        history = table.get(at[1])
        if history is None:
            table[at[1]] = [(version, value)]
        elif len(history) < KEPT_VERSIONS:
            history.append((version, value))  # a reader of an older version reads before it
        else:
            self.cut.add(at)
            # a new list: a reader holding the old one still finds its version there
            table[at[1]] = [*history[1 - KEPT_VERSIONS :], (version, value)]

    def read(self, history: _History | None, at: tuple[int, Any], version: int) -> Any:
        if history is None:
            return _MISSING
        for changed, value in reversed(history):
            if changed <= version:
                return value
        if at in self.cut:
            raise StaleRoleBook(f"role book version {version} was dropped")
        return _MISSING


def _role_key(role: dict[str, Any]) -> Any:
    return role["id"] if "id" in role else ("object", id(role))


class RoleBook:
    """Who holds which role, indexed once (RangerRolesUtil): directly, through a group (or
    ``public``), or through a member role (a member role's holders hold the containing role).

    A book is a version of a lineage shared with the books moved from it (:meth:`moved`): a
    move writes the entries of the members of the changed roles alone, at a new version, and
    every book keeps reading its own version."""

    def __init__(self, roles: Iterable[dict[str, Any]]) -> None:
        listed = roles if isinstance(roles, list) else list(roles)
        built: tuple[dict[str, set[str]], ...] = ({}, {}, {})
        for role in listed:
            name = str(role["name"])
            for kind, index in zip(_KINDS, built, strict=True):
                for member in role.get(kind) or []:
                    index.setdefault(str(member.get("name")), set()).add(name)
        self._lineage = _Lineage(listed)
        for table, names in zip(self._lineage.indexes, built, strict=True):
            for member, held in names.items():
                table[member] = [(0, frozenset(held))]
        self.version = 0
        #: the entries the move that made this book wrote (0 for a built book)
        self.touched = 0

    def is_head(self) -> bool:
        """Whether no book was moved from this one yet (only the newest book is moved)."""
        return self.version == self._lineage.head

    def _names(self, index: int, key: str) -> frozenset[str]:
        history = self._lineage.indexes[index].get(key)
        if history is not None and history[-1][0] <= self.version:
            return history[-1][1]  # type: ignore[no-any-return]
        found = self._lineage.read(history, (index, key), self.version)
        return _NOTHING if found is _MISSING else found

    def moved(self, gone: Iterable[dict[str, Any]], added: Iterable[dict[str, Any]]) -> RoleBook:
        """A new book: this one without the roles ``gone`` and with the roles ``added`` (the
        same as a book of the roles now, built from the change alone). This book is left
        as it was (it keeps reading its version); the entries written are those of the
        members of ``gone`` and ``added`` only. A book moved already is copied first (its
        every entry: that is built afresh, not moved)."""
        if not self.is_head():
            return RoleBook(self.role_objects()).moved(gone, added)
        lineage = self._lineage
        changes: dict[tuple[int, str], set[str]] = {}
        objects: dict[Any, dict[str, Any] | None] = {}
        for roles, adding in ((gone, False), (added, True)):
            for role in roles:
                name = str(role["name"])
                for index, kind in enumerate(_KINDS):
                    for member in role.get(kind) or []:
                        at = (index, str(member.get("name")))
                        names = changes.get(at)
                        if names is None:
                            names = changes[at] = set(self._names(*at))
                        if adding:
                            names.add(name)
                        else:
                            names.discard(name)
                objects[_role_key(role)] = role if adding else None
        version = lineage.head + 1
        for (index, key), names in changes.items():
            lineage.put(lineage.indexes[index], (index, key), version, frozenset(names))
        for key, now in objects.items():
            lineage.put(lineage.objects, (3, key), version, now)
        lineage.head = version
        book = object.__new__(RoleBook)
        book._lineage, book.version, book.touched = lineage, version, len(changes) + len(objects)
        return book

    def role_objects(self) -> list[dict[str, Any]]:
        """The role objects of this book's version (every role: estate-sized), in the order
        they were given, then the roles a move added in id order."""
        lineage, version = self._lineage, self.version
        changed = {key: lineage.read(history, (3, key), version) for key, history in lineage.objects.items()}
        kept = [r for r in lineage.base if changed.get(_role_key(r), _MISSING) is _MISSING]
        moved = [r for r in changed.values() if r is not _MISSING and r is not None]
        if all("id" in r for r in [*kept, *moved]):
            return sorted([*kept, *moved], key=lambda r: int(r["id"]))
        return [*kept, *moved]

    def roles_of(self, user: str, groups: Iterable[str]) -> frozenset[str]:
        held = set(self._names(0, user))
        for group in {*groups, GROUP_PUBLIC}:
            held.update(self._names(1, group))
        frontier = list(held)
        while frontier:
            for outer in self._names(2, frontier.pop()):
                if outer not in held:
                    held.add(outer)
                    frontier.append(outer)
        return frozenset(held)


def roles_of(roles: Iterable[dict[str, Any]], user: str, groups: Iterable[str]) -> frozenset[str]:
    """The roles a user holds (see :class:`RoleBook`)."""
    return RoleBook(roles).roles_of(user, groups)
