"""The scope an event touched: where a backend must look again."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pushdown.model import events as ev
from pushdown.model.principals import Principal, PrincipalKind
from pushdown.model.securables import DATA_TYPES, ObjectRef, SecurableType

if TYPE_CHECKING:
    from pushdown.model.state import Model


@dataclass(frozen=True)
class Region:
    """Users (``None``: every user) crossed with object subtrees (``None``: everything)."""

    users: frozenset[str] | None
    roots: frozenset[ObjectRef] | None

    def covers(self, user: str | None, obj: ObjectRef | None) -> bool:
        """Whether a fact about ``user`` on ``obj`` lies in the region. A fact on a container
        (a database-level grant) overlaps every root below it, so it counts too."""
        if self.users is not None and (user is None or user not in self.users):
            return False
        if self.roots is None:
            return True
        if obj is None:
            return False
        return any(node in self.roots for node in obj.path) or any(r.is_within(obj) for r in self.roots)


@dataclass(frozen=True)
class Scope:
    """Where a backend must look again: object subtrees for every user (``objects``),
    principals on every object (``principals``), a principal on a subtree (``pairs``:
    a role's grant on an object touches that role's holders there and nowhere else),
    or everything. Groups and roles resolve to users against the current model."""

    full: bool = False
    objects: frozenset[ObjectRef] = frozenset()
    principals: frozenset[Principal] = frozenset()
    pairs: frozenset[tuple[Principal, ObjectRef]] = frozenset()

    @classmethod
    def everything(cls) -> Scope:
        return cls(full=True)

    @classmethod
    def nothing(cls) -> Scope:
        return cls()

    @classmethod
    def of(
        cls,
        objects: Iterable[ObjectRef] = (),
        principals: Iterable[Principal] = (),
        pairs: Iterable[tuple[Principal, ObjectRef]] = (),
    ) -> Scope:
        return cls(False, frozenset(objects), frozenset(principals), frozenset(pairs))

    @classmethod
    def union(cls, scopes: Iterable[Scope]) -> Scope:
        """All of ``scopes`` at once (linear; ``a | b | c …`` would copy the sets each time)."""
        objects: set[ObjectRef] = set()
        principals: set[Principal] = set()
        pairs: set[tuple[Principal, ObjectRef]] = set()
        for s in scopes:
            if s.full:
                return cls.everything()
            objects |= s.objects
            principals |= s.principals
            pairs |= s.pairs
        return cls(False, frozenset(objects), frozenset(principals), frozenset(pairs))

    def __or__(self, other: Scope) -> Scope:
        if self.full or other.full:
            return Scope.everything()
        return Scope(
            False,
            self.objects | other.objects,
            self.principals | other.principals,
            self.pairs | other.pairs,
        )

    @property
    def empty(self) -> bool:
        return not (self.full or self.objects or self.principals or self.pairs)

    def resolve(self, model: Model) -> Resolved:
        """The regions of this scope, principals turned into model users now."""
        if self.full:
            return Resolved((Region(None, None),))
        regions: list[Region] = []
        if self.objects:
            regions.append(Region(None, frozenset(self.objects)))
        users = frozenset(u for p in self.principals for u in users_of(model, p))
        if users:
            regions.append(Region(users, None))
        by_principal: dict[Principal, set[ObjectRef]] = {}
        for principal, obj in self.pairs:
            by_principal.setdefault(principal, set()).add(obj)
        by_roots: dict[frozenset[ObjectRef], set[str]] = {}
        for principal, objs in sorted(by_principal.items()):
            by_roots.setdefault(frozenset(objs), set()).update(users_of(model, principal))
        for roots, holders in sorted(by_roots.items(), key=lambda item: sorted(item[0])):
            # a grant to a principal nobody holds still names its objects, which may change
            # what others get there (Ranger: a capitalised twin of a schema withholds both),
            # so it reaches every user on them, never nothing
            regions.append(Region(frozenset(holders) if holders else None, roots))
        return Resolved(tuple(regions))

    def describe(self) -> str:
        if self.full:
            return "everything"
        parts = sorted(str(o) for o in self.objects) + sorted(str(p) for p in self.principals)
        parts += sorted(f"{p} on {o}" for p, o in self.pairs)
        if len(parts) > 6:
            return ", ".join(parts[:5]) + f" and {len(parts) - 5} more"
        return ", ".join(parts) or "nothing"


@dataclass(frozen=True)
class Resolved:
    """A scope as regions over model users: what a backend reads, compiles and diffs."""

    regions: tuple[Region, ...]

    @property
    def full(self) -> bool:
        return any(r.users is None and r.roots is None for r in self.regions)

    @property
    def empty(self) -> bool:
        return not self.regions

    def covers(self, user: str | None, obj: ObjectRef | None) -> bool:
        return any(r.covers(user, obj) for r in self.regions)

    def widened(self, widen: Callable[[ObjectRef], ObjectRef]) -> Resolved:
        """Each root replaced by ``widen(root)`` (a backend's coarsest exact container)."""
        out = []
        for r in self.regions:
            roots = None if r.roots is None else frozenset(widen(o) for o in r.roots)
            out.append(Region(r.users, roots))
        return Resolved(tuple(out))


def users_of(model: Model, principal: Principal) -> set[str]:
    """The users a principal stands for now: itself, a group's members, a role's holders."""
    if principal.kind is PrincipalKind.USER:
        return {principal.name}
    if principal.kind is PrincipalKind.GROUP:
        return set(model.groups.get(principal.name, ()))
    return model.holders_of(principal.name)


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
    return Scope.of(pairs={(Principal.role(e.role), e.object)})


def _scope_PrivilegesRevoked(e: ev.PrivilegesRevoked) -> Scope:
    return Scope.of(pairs={(Principal.role(e.role), e.object)})


def _scope_RoleGranted(e: ev.RoleGranted) -> Scope:
    return Scope.of(principals={e.principal, Principal.role(e.role)})


def _scope_RoleRevoked(e: ev.RoleRevoked) -> Scope:
    return Scope.of(principals={e.principal, Principal.role(e.role)})


def _scope_OwnerSet(e: ev.OwnerSet) -> Scope:
    owners = {Principal.user(u) for u in (e.owner, e.previous) if u is not None}
    if e.object.type not in DATA_TYPES and e.object.type is not SecurableType.METALAKE:
        return Scope.of(principals=owners)  # owning a role or a tag decides no data access
    return Scope.of(pairs={(p, e.object) for p in owners})


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
