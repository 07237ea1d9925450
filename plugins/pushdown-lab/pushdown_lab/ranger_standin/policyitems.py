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

__all__ = ["ADMIN_ACCESS", "ANY_ACCESS", "Item", "RoleBook", "roles_of"]

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


class RoleBook:
    """Who holds which role, indexed once (RangerRolesUtil): directly, through a group (or
    ``public``), or through a member role (a member role's holders hold the containing role)."""

    def __init__(self, roles: Iterable[dict[str, Any]]) -> None:
        self.by_user: dict[str, set[str]] = {}
        self.by_group: dict[str, set[str]] = {}
        self.containing: dict[str, set[str]] = {}
        for role in roles:
            name = str(role["name"])
            for kind, index in self._indexes():
                for member in role.get(kind) or []:
                    index.setdefault(str(member.get("name")), set()).add(name)

    def _indexes(self) -> tuple[tuple[str, dict[str, set[str]]], ...]:
        return (("users", self.by_user), ("groups", self.by_group), ("roles", self.containing))

    def moved(self, gone: Iterable[dict[str, Any]], added: Iterable[dict[str, Any]]) -> RoleBook:
        """A new book: this one without the roles ``gone`` and with the roles ``added`` (the
        same as a book of the roles now, built from the change alone). This book is left
        as it was (a member's set that changes is a new set in the new book)."""
        book = RoleBook(())
        book.by_user, book.by_group, book.containing = (
            dict(self.by_user),
            dict(self.by_group),
            dict(self.containing),
        )
        copied: set[tuple[str, str]] = set()
        for roles, adding in ((gone, False), (added, True)):
            for role in roles:
                name = str(role["name"])
                for kind, index in book._indexes():
                    for member in role.get(kind) or []:
                        key = str(member.get("name"))
                        if (kind, key) not in copied:
                            copied.add((kind, key))
                            index[key] = set(index.get(key, ()))
                        if adding:
                            index[key].add(name)
                        else:
                            index[key].discard(name)
                            if not index[key]:
                                del index[key]
                                copied.discard((kind, key))
        return book

    def roles_of(self, user: str, groups: Iterable[str]) -> frozenset[str]:
        held = set(self.by_user.get(user, ()))
        for group in {*groups, GROUP_PUBLIC}:
            held.update(self.by_group.get(group, ()))
        frontier = list(held)
        while frontier:
            for outer in self.containing.get(frontier.pop(), ()):
                if outer not in held:
                    held.add(outer)
                    frontier.append(outer)
        return frozenset(held)


def roles_of(roles: Iterable[dict[str, Any]], user: str, groups: Iterable[str]) -> frozenset[str]:
    """The roles a user holds (see :class:`RoleBook`)."""
    return RoleBook(roles).roles_of(user, groups)
