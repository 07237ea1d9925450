"""The scope an event touched: where a backend must look again."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pushdown.model import events as ev
from pushdown.model.principals import Principal, PrincipalKind
from pushdown.model.securables import ObjectRef

if TYPE_CHECKING:
    from pushdown.model.state import Model


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


# -- where each event tells a backend to look again -------------------------------------


def _scope_UserAdded(e: ev.UserAdded) -> Scope:
    return Scope.of(principals={Principal.user(e.user)})


def _scope_UserRemoved(e: ev.UserRemoved) -> Scope:
    return Scope.of(principals={Principal.user(e.user)})


def _scope_GroupAdded(e: ev.GroupAdded) -> Scope:
    return Scope.of(principals={Principal.group(e.group)})


def _scope_GroupRemoved(e: ev.GroupRemoved) -> Scope:
    return Scope.of(principals={Principal.group(e.group)})


def _scope_GroupMemberAdded(e: ev.GroupMemberAdded) -> Scope:
    return Scope.of(principals={Principal.user(e.user)})


def _scope_GroupMemberRemoved(e: ev.GroupMemberRemoved) -> Scope:
    return Scope.of(principals={Principal.user(e.user)})


def _scope_RoleCreated(e: ev.RoleCreated) -> Scope:
    return Scope.of(principals={Principal.role(e.role)})


def _scope_RoleDeleted(e: ev.RoleDeleted) -> Scope:
    return Scope.of(principals={Principal.role(e.role)})


def _scope_PrivilegesGranted(e: ev.PrivilegesGranted) -> Scope:
    return Scope.of(objects={e.object}, principals={Principal.role(e.role)})


def _scope_PrivilegesRevoked(e: ev.PrivilegesRevoked) -> Scope:
    return Scope.of(objects={e.object}, principals={Principal.role(e.role)})


def _scope_RoleGranted(e: ev.RoleGranted) -> Scope:
    return Scope.of(principals={e.principal, Principal.role(e.role)})


def _scope_RoleRevoked(e: ev.RoleRevoked) -> Scope:
    return Scope.of(principals={e.principal, Principal.role(e.role)})


def _scope_OwnerSet(e: ev.OwnerSet) -> Scope:
    return Scope.of(objects={e.object})


def _scope_ServiceAdminsSet(e: ev.ServiceAdminsSet) -> Scope:
    return Scope.nothing()


def _scope_ObjectCreated(e: ev.ObjectCreated) -> Scope:
    return Scope.of(objects={e.object})


def _scope_ObjectRenamed(e: ev.ObjectRenamed) -> Scope:
    return Scope.of(objects={e.object, e.new_object})


def _scope_ObjectDropped(e: ev.ObjectDropped) -> Scope:
    return Scope.of(objects={e.object})


def _scope_ExternalMembersChanged(e: ev.ExternalMembersChanged) -> Scope:
    return Scope.of(principals={Principal.user(u) for u in e.added | e.removed})


_SCOPES: dict[type[ev.Event], Callable[[Any], Scope]] = {
    ev.UserAdded: _scope_UserAdded,
    ev.UserRemoved: _scope_UserRemoved,
    ev.GroupAdded: _scope_GroupAdded,
    ev.GroupRemoved: _scope_GroupRemoved,
    ev.GroupMemberAdded: _scope_GroupMemberAdded,
    ev.GroupMemberRemoved: _scope_GroupMemberRemoved,
    ev.RoleCreated: _scope_RoleCreated,
    ev.RoleDeleted: _scope_RoleDeleted,
    ev.PrivilegesGranted: _scope_PrivilegesGranted,
    ev.PrivilegesRevoked: _scope_PrivilegesRevoked,
    ev.RoleGranted: _scope_RoleGranted,
    ev.RoleRevoked: _scope_RoleRevoked,
    ev.OwnerSet: _scope_OwnerSet,
    ev.ServiceAdminsSet: _scope_ServiceAdminsSet,
    ev.ObjectCreated: _scope_ObjectCreated,
    ev.ObjectRenamed: _scope_ObjectRenamed,
    ev.ObjectDropped: _scope_ObjectDropped,
    ev.ExternalMembersChanged: _scope_ExternalMembersChanged,
}


def scope_of(event: ev.Event) -> Scope:
    """Where a backend must recompute its desired state after ``event``."""
    return _SCOPES[type(event)](event)


def _check_every_event_scoped() -> None:
    missing = sorted(set(ev.EVENT_TYPES.values()) - set(_SCOPES), key=lambda c: c.name)
    if missing:  # pragma: no cover - caught at import by every test run
        raise TypeError(f"events without a scope: {', '.join(c.name for c in missing)}")


_check_every_event_scoped()
