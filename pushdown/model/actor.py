"""Who makes a change, and the audit facts the journal keeps about each entity.

Every change is made by an :class:`Actor`: a user acting through an entry point (the
library, the CLI, a spec, the REST service, the daemon). The journal records the actor
with each event, and keeps per entity (a user, group, role, object or the metalake) who
created it and who last changed it, in the same transaction as the change.
"""

from __future__ import annotations

from dataclasses import dataclass

from pushdown.model import events as ev
from pushdown.model.securables import METALAKE, ObjectRef, SecurableType

#: The entry points a change comes through.
VIAS = ("library", "cli", "spec", "rest", "daemon", "source")


@dataclass(frozen=True)
class Actor:
    """The author of a change.

    ``trusted``: the configured administrator identity (the CLI and the spec loader act as
    it): recorded as the author, not checked against the requirement table. Every other
    actor's change is checked before anything is written."""

    user: str
    via: str = "library"
    request: str | None = None
    trusted: bool = False

    def __post_init__(self) -> None:
        if self.via not in VIAS:
            raise ValueError(f"via {self.via!r}: one of {', '.join(VIAS)}")

    def __str__(self) -> str:
        return f"{self.user} ({self.via}{', request ' + self.request if self.request else ''})"


@dataclass(frozen=True)
class Audit:
    """Gravitino's audit object for one entity: times are ISO-8601 UTC ending in ``Z``."""

    creator: str | None
    create_time: str
    last_modifier: str | None
    last_modified_time: str


#: An entity the audit keeps: ("user" | "group" | "role" | "object" | "metalake", name).
Entity = tuple[str, str]


def _object(obj: ObjectRef) -> Entity:
    if obj == METALAKE:
        return ("metalake", "")
    if obj.type is SecurableType.ROLE:
        return ("role", obj.names[0])
    return ("object", str(obj))


def touched(event: ev.Event) -> tuple[list[Entity], list[Entity], list[Entity]]:
    """What ``event`` does to the audited entities: (created, changed, removed)."""
    match event:
        case ev.UserAdded(user=u):
            return [("user", u)], [], []
        case ev.UserRemoved(user=u):
            return [], [], [("user", u)]
        case ev.GroupAdded(group=g):
            return [("group", g)], [], []
        case ev.GroupRemoved(group=g):
            return [], [], [("group", g)]
        case ev.GroupMemberAdded(group=g) | ev.GroupMemberRemoved(group=g):
            return [], [("group", g)], []
        case ev.RoleCreated(role=r):
            return [("role", r)], [], []
        case ev.RoleDeleted(role=r):
            return [], [], [("role", r)]
        case ev.PrivilegesGranted(role=r) | ev.PrivilegesRevoked(role=r):
            return [], [("role", r)], []
        case ev.RoleGranted(role=r, principal=p) | ev.RoleRevoked(role=r, principal=p):
            return [], [(p.kind.value, p.name)], []
        case ev.OwnerSet(object=o):
            return [], [_object(o)], []
        case ev.ObjectCreated(object=o):
            return [_object(o)], [], []
        case ev.ObjectDropped(object=o):
            return [], [], [_object(o)]
        case ev.ServiceAdminsSet():
            return [], [("metalake", "")], []
    return [], [], []


def mentions(event: ev.Event) -> set[str]:
    """Everything ``event`` names, as ``user NAME``, ``group NAME``, ``role NAME`` or an
    object's full name (``table c.s.t``; ``metalake`` for the metalake itself)."""
    out: set[str] = set()
    for field in ("user", "group", "role"):
        value = getattr(event, field, None)
        if isinstance(value, str):
            out.add(f"{field} {value}")
    for field in ("object", "new_object"):
        value = getattr(event, field, None)
        if isinstance(value, ObjectRef):
            out.add(str(value))
    principal = getattr(event, "principal", None)
    if principal is not None:
        out.add(str(principal))
    for field in ("owner", "previous"):
        value = getattr(event, field, None)
        if isinstance(value, str):
            out.add(f"user {value}")
    if isinstance(event, ev.ServiceAdminsSet):
        out |= {f"user {u}" for u in event.users}
    if isinstance(event, ev.ExternalMembersChanged):
        out |= {f"user {u}" for u in event.added | event.removed}
    return out
