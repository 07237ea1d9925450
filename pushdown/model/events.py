"""Privilege-change events: frozen facts with stable names, journalled with every change.

An event says what happened; :func:`pushdown.reconcile.scope.scope_of` says where a
backend must look again. It never says what a backend should do: backends recompute the desired
state of that scope from the current model (level-triggered).
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from typing import Any, ClassVar

from pushdown.model.principals import Principal
from pushdown.model.privileges import Condition, Privilege
from pushdown.model.securables import ObjectRef


@dataclass(frozen=True)
class Event:
    name: ClassVar[str] = "event"


    def to_json(self) -> str:
        fields = {f.name: _encode(getattr(self, f.name)) for f in dataclasses.fields(self)}
        return json.dumps({"name": self.name, **fields}, sort_keys=True, ensure_ascii=False)


def _encode(value: Any) -> Any:
    if isinstance(value, ObjectRef | Principal):
        return str(value)
    if isinstance(value, dict):
        return {k: _encode(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, frozenset, set)):
        items = [_encode(v) for v in value]
        return sorted(items) if isinstance(value, (frozenset, set)) else items
    if hasattr(value, "value"):
        return value.value
    return value


@dataclass(frozen=True)
class UserAdded(Event):
    name: ClassVar[str] = "user_added"
    user: str


@dataclass(frozen=True)
class UserRemoved(Event):
    name: ClassVar[str] = "user_removed"
    user: str


@dataclass(frozen=True)
class GroupAdded(Event):
    name: ClassVar[str] = "group_added"
    group: str


@dataclass(frozen=True)
class GroupRemoved(Event):
    name: ClassVar[str] = "group_removed"
    group: str


@dataclass(frozen=True)
class GroupMemberAdded(Event):
    name: ClassVar[str] = "group_member_added"
    group: str
    user: str


@dataclass(frozen=True)
class GroupMemberRemoved(Event):
    name: ClassVar[str] = "group_member_removed"
    group: str
    user: str


@dataclass(frozen=True)
class RoleCreated(Event):
    name: ClassVar[str] = "role_created"
    role: str


@dataclass(frozen=True)
class RoleDeleted(Event):
    name: ClassVar[str] = "role_deleted"
    role: str


@dataclass(frozen=True)
class PrivilegesGranted(Event):
    name: ClassVar[str] = "privileges_granted"
    role: str
    object: ObjectRef
    privileges: frozenset[Privilege]
    condition: Condition


@dataclass(frozen=True)
class PrivilegesRevoked(Event):
    name: ClassVar[str] = "privileges_revoked"
    role: str
    object: ObjectRef
    privileges: frozenset[Privilege]
    condition: Condition


@dataclass(frozen=True)
class RoleGranted(Event):
    name: ClassVar[str] = "role_granted"
    role: str
    principal: Principal


@dataclass(frozen=True)
class RoleRevoked(Event):
    name: ClassVar[str] = "role_revoked"
    role: str
    principal: Principal


@dataclass(frozen=True)
class OwnerSet(Event):
    name: ClassVar[str] = "owner_set"
    object: ObjectRef
    owner: str | None
    previous: str | None = None


@dataclass(frozen=True)
class ServiceAdminsSet(Event):
    name: ClassVar[str] = "service_admins_set"
    users: frozenset[str]


@dataclass(frozen=True)
class ObjectCreated(Event):
    name: ClassVar[str] = "object_created"
    object: ObjectRef
    properties: tuple[tuple[str, str], ...] = ()
    owner: str | None = None


@dataclass(frozen=True)
class ObjectRenamed(Event):
    name: ClassVar[str] = "object_renamed"
    object: ObjectRef
    new_object: ObjectRef


@dataclass(frozen=True)
class ObjectDropped(Event):
    name: ClassVar[str] = "object_dropped"
    object: ObjectRef


@dataclass(frozen=True)
class ExternalMembersChanged(Event):
    """An outside directory (``pushdown_resolve_group_members``) now says other members."""

    name: ClassVar[str] = "external_members_changed"
    group: str
    added: frozenset[str] = frozenset()
    removed: frozenset[str] = frozenset()


EVENT_TYPES: dict[str, type[Event]] = {
    cls.name: cls
    for cls in (
        UserAdded,
        UserRemoved,
        GroupAdded,
        GroupRemoved,
        GroupMemberAdded,
        GroupMemberRemoved,
        RoleCreated,
        RoleDeleted,
        PrivilegesGranted,
        PrivilegesRevoked,
        RoleGranted,
        RoleRevoked,
        OwnerSet,
        ServiceAdminsSet,
        ObjectCreated,
        ObjectRenamed,
        ObjectDropped,
        ExternalMembersChanged,
    )
}


def event_from_json(text: str) -> Event:
    """Rebuild an event from :meth:`Event.to_json` output."""
    data = json.loads(text)
    cls = EVENT_TYPES[data.pop("name")]
    kwargs = {f.name: _decode(str(f.type), data[f.name]) for f in dataclasses.fields(cls) if f.name in data}
    return cls(**kwargs)


def _decode(type_: str, value: Any) -> Any:
    if value is None:
        return None
    decoders: dict[str, Any] = {
        "ObjectRef": ObjectRef.parse,
        "Principal": Principal.parse,
        "Condition": Condition,
        "frozenset[ObjectRef]": lambda v: frozenset(map(ObjectRef.parse, v)),
        "frozenset[Privilege]": lambda v: frozenset(map(Privilege, v)),
        "frozenset[str]": frozenset,
        "tuple[tuple[str, str], ...]": lambda v: tuple(tuple(p) for p in v),
    }
    for key, decode in decoders.items():
        if type_.startswith(key):
            return decode(value)
    return value
