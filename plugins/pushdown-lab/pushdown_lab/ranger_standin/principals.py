"""Users, groups and role references: Ranger Admin refuses names it does not know.

Ranger keeps users and groups (from usersync or its xusers API). A policy naming an unknown
role, group or user is refused (HTTP 400, "Operation denied. Role name: r specified in policy
does not exist in ranger admin.") unless the request says ``createPrincipalsIfAbsent=true``; a
role naming an unknown user, group or member role is refused ("user with name: u does not
exist ") unless ``createNonExistUserGroup=true``. Role references are always checked; users
and groups only when the stand-in is strict (``Standin(strict_principals=True)``), since
tests rarely model usersync. ``public``, ``{USER}`` and ``{OWNER}`` always exist.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from pushdown_lab.ranger_standin.errors import RangerError
from pushdown_lab.ranger_standin.validators import ITEM_KINDS

__all__ = ["Principals"]

BUILT_IN_USERS = frozenset({"{USER}", "{OWNER}", "admin"})
BUILT_IN_GROUPS = frozenset({"public"})


class Principals:
    """The users and groups Ranger knows, and how strictly names are checked."""

    def __init__(self, strict: bool = False) -> None:
        self.strict = strict
        self.users: set[str] = set(BUILT_IN_USERS)
        self.groups: set[str] = set(BUILT_IN_GROUPS)

    def check_policy(
        self,
        policy: dict[str, Any],
        role_exists: Callable[[str], bool],
        create: bool,
        create_role: Callable[[str], None],
    ) -> None:
        """Refuse (or, with ``create``, add) the unknown roles, groups and users a policy names."""
        items = [item for kind in ITEM_KINDS for item in policy.get(kind) or []]
        roles = _names(items, "roles")
        groups = _names(items, "groups")
        users = _names(items, "users")
        for name in sorted(r for r in roles if not role_exists(r)):
            if not create:
                raise _denied("Role", name)
            create_role(name)
        self._known(groups, self.groups, "Group", create)
        self._known(users, self.users, "User", create)

    def _known(self, names: set[str], known: set[str], label: str, create: bool) -> None:
        missing = sorted(names - known)
        if missing and self.strict and not create:
            raise _denied(label, missing[0])
        known.update(missing)

    def check_role(
        self,
        role: dict[str, Any],
        role_exists: Callable[[str], bool],
        create: bool,
        create_role: Callable[[str], None],
    ) -> None:
        """Refuse a role whose members Ranger does not know (unless ``create``)."""
        for kind, known, label in (("users", self.users, "user"), ("groups", self.groups, "Group")):
            missing = sorted(_member_names(role, kind) - known)
            if missing and self.strict and not create:
                raise RangerError(400, f"{label} with name: {missing[0]} does not exist ")
            known.update(missing)
        for name in sorted(n for n in _member_names(role, "roles") if not role_exists(n)):
            if not create:
                raise RangerError(400, f"Role with name: {name} does not exist ")
            create_role(name)


def _names(items: Iterable[dict[str, Any]], kind: str) -> set[str]:
    return {str(name) for item in items for name in item.get(kind) or [] if str(name).strip()}


def _member_names(role: dict[str, Any], kind: str) -> set[str]:
    return {str(m.get("name")) for m in role.get(kind) or [] if isinstance(m, dict) and m.get("name")}


def _denied(label: str, name: str) -> RangerError:
    return RangerError(
        400, f"Operation denied. {label} name: {name} specified in policy does not exist in ranger admin."
    )
